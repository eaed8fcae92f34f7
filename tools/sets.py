#!/usr/bin/env python3
"""The mail sets of the posting, as patches/sets describes them.

  tools/sets.py check SETS N          the sets cover patches 1-N, in order
  tools/sets.py list SETS             NAME FIRST LAST PREFIX DEPS, a line each
                                      (DEPS: the sets it needs, transitively,
                                      in order, comma-separated, or -)
  tools/sets.py cover SETS NAME COVER the cover letter text of set NAME
                                      (subject, blank line, text), COVER
                                      being the whole series' cover letter
                                      text (build/linux's branch description)
  tools/sets.py fill MAIL TEXT        put TEXT (subject, blank line, text) in
                                      the cover letter MAIL that git
                                      format-patch wrote with placeholders

See patches/sets for the format. Exit status 1 on a malformed file.
"""

import re
import sys
import textwrap

HEADER = re.compile(r"^set (?P<name>[a-z0-9][a-z0-9-]*) (?P<first>\d+)(?:-(?P<last>\d+))?"
                    r"(?P<opts>(?: \S+=\S+)*)\s*$")
SERIES_COVER = "@series-cover"


class SetsError(Exception):
    pass


def parse(path):
    sets, current = [], None
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if line.startswith("set "):
                m = HEADER.match(line)
                if not m:
                    raise SetsError(f"{path}:{n}: not \"set NAME FIRST-LAST [after=...] [prefix=...]\": {line}")
                opts = dict(o.split("=", 1) for o in m.group("opts").split())
                unknown = set(opts) - {"after", "prefix"}
                if unknown:
                    raise SetsError(f"{path}:{n}: unknown option {sorted(unknown)[0]}=")
                first = int(m.group("first"))
                current = {
                    "name": m.group("name"), "first": first,
                    "last": int(m.group("last") or first),
                    "after": opts["after"].split(",") if "after" in opts else [],
                    "prefix": opts.get("prefix", "PATCH RFC").replace("_", " "),
                    "lines": [], "line": n,
                }
                sets.append(current)
            elif current is not None:
                current["lines"].append(line)
            elif line.strip() and not line.startswith("#"):
                raise SetsError(f"{path}:{n}: text before the first set")
    for s in sets:
        text = "\n".join(s.pop("lines")).strip("\n").split("\n")
        s["subject"] = text[0].strip()
        s["body"] = "\n".join(text[2:]).strip("\n") if len(text) > 2 and not text[1].strip() else ""
    return sets


def problems(sets, count):
    found, names, expect = [], set(), 1
    if not sets:
        return ["no sets"]
    for s in sets:
        where = f"set {s['name']} (line {s['line']})"
        if s["name"] in names:
            found.append(f"{where}: a second set of that name")
        if s["first"] != expect:
            found.append(f"{where}: starts at patch {s['first']}, expected {expect} (sets are contiguous, in order)")
        if s["last"] < s["first"]:
            found.append(f"{where}: ends at {s['last']}, before it starts")
        for d in s["after"]:
            if d not in names:
                found.append(f"{where}: after={d}: no earlier set of that name")
        if not s["subject"]:
            found.append(f"{where}: no cover letter subject")
        if not s["body"]:
            found.append(f"{where}: no cover letter text (a subject, a blank line, the text)")
        names.add(s["name"])
        expect = s["last"] + 1
    if expect != count + 1:
        found.append(f"the sets cover patches 1-{expect - 1}, the series has {count}")
    return found


def deps(sets, name):
    """The sets NAME needs, transitively, in the order of the file."""
    by_name = {s["name"]: s for s in sets}
    need, todo = set(), list(by_name[name]["after"])
    while todo:
        d = todo.pop()
        if d not in need:
            need.add(d)
            todo += by_name[d]["after"]
    return [s["name"] for s in sets if s["name"] in need]


def plural(n, word):
    return f"{n} {word}{'' if n == 1 else 'es' if word.endswith('ch') else 's'}"


def cover(sets, name, series_cover):
    me = next(s for s in sets if s["name"] == name)
    series_lines = series_cover.strip("\n").split("\n")
    series_subject = series_lines[0].strip()
    series_body = "\n".join(series_lines[1:]).strip("\n")
    body = "\n".join(series_body if ln.strip() == SERIES_COVER else ln
                     for ln in me["body"].split("\n"))
    listing = []
    for i, s in enumerate(sets, 1):
        mark = "*" if s is me else " "
        listing.append(f"{mark} {i}. {s['subject']} ({plural(s['last'] - s['first'] + 1, 'patch')})")
    need = deps(sets, name)
    numbers = {s["name"]: i for i, s in enumerate(sets, 1)}
    if need:
        many = len(need) > 1
        applies = (f"It applies on the base-commit below after set{'s' if many else ''} "
                   + ", ".join(str(numbers[d]) for d in need)
                   + f" ({'their' if many else 'its'} patches are the prerequisite-patch-id lines).")
    else:
        applies = "It applies on the base-commit below on its own."
    intro = (f"This set is one of the {len(sets)} threads of the posting "
             f"\"{series_subject}\", in the order they apply (* this one):")
    trailer = ("Mail sets\n=========\n\n" + textwrap.fill(intro, 72) + "\n\n"
               + "\n".join(listing) + "\n\n" + textwrap.fill(applies, 72))
    return f"{me['subject']}\n\n{body}\n\n{trailer}\n"


def fill(mail, text):
    """Replace git format-patch's cover letter placeholders in MAIL."""
    subject, _, body = text.partition("\n\n")
    with open(mail) as f:
        content = f.read()
    for placeholder, value in (("*** SUBJECT HERE ***", subject.strip()),
                               ("*** BLURB HERE ***", body.strip("\n"))):
        if content.count(placeholder) != 1:
            raise SetsError(f"{mail}: no single {placeholder!r} to replace")
        content = content.replace(placeholder, value)
    with open(mail, "w") as f:
        f.write(content)


def main(argv):
    if len(argv) == 4 and argv[1] == "fill":
        try:
            with open(argv[3]) as f:
                fill(argv[2], f.read())
        except (OSError, SetsError) as e:
            print(f"sets: {e}", file=sys.stderr)
            return 1
        return 0
    if len(argv) < 3 or argv[1] not in ("check", "list", "cover"):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    try:
        sets = parse(argv[2])
    except (OSError, SetsError) as e:
        print(f"sets: {e}", file=sys.stderr)
        return 1
    if argv[1] == "check":
        found = problems(sets, int(argv[3]))
        for p in found:
            print(f"sets: {argv[2]}: {p}", file=sys.stderr)
        if found:
            return 1
        print(f"sets: {len(sets)} mail sets cover patches 1-{argv[3]}")
    elif argv[1] == "list":
        for s in sets:
            print(s["name"], s["first"], s["last"], s["prefix"].replace(" ", "_"),
                  ",".join(deps(sets, s["name"])) or "-")
    else:
        if argv[3] not in {s["name"] for s in sets}:
            print(f"sets: no set {argv[3]}", file=sys.stderr)
            return 1
        with open(argv[4]) as f:
            sys.stdout.write(cover(sets, argv[3], f.read()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
