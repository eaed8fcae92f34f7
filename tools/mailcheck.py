#!/usr/bin/env python3
"""Checks of the mails git format-patch prepared for sending (tools/send-check).

Each check returns a list of problems (empty: it passed). The command line
prints one line per check, "PASS name: what" or "FAIL name: what", and
exits 1 if any failed:

  tools/mailcheck.py DIR --version N --count N --sender "Name <email>" --base SHA
                     [--prefix "PATCH RFC"]
"""

import argparse
import email
import email.policy
import email.utils
import os
import re
import sys

PREFIX = "PATCH RFC"


def subject_re(prefix):
    return re.compile(r"^\[" + re.escape(prefix) + r" v(\d+) (\d+)/(\d+)\] \S")


class Mail:
    def __init__(self, path):
        self.path = path
        self.name = os.path.basename(path)
        with open(path, "rb") as f:
            self.msg = email.message_from_binary_file(f, policy=email.policy.default)

    def header(self, name):
        value = self.msg[name]
        return None if value is None else str(value).strip()

    def body(self):
        part = self.msg.get_body(preferencelist=("plain",))
        return part.get_content() if part is not None else ""

    def numbering(self):
        """(version, m, n) from "[PATCH RFC vV m/n] ...", or None."""
        m = subject_re(PREFIX).match(self.header("Subject") or "")
        return tuple(int(x) for x in m.groups()) if m else None


def load(directory):
    """The mails of DIR, in file-name order (format-patch numbers them)."""
    names = sorted(n for n in os.listdir(directory) if n.endswith(".patch"))
    return [Mail(os.path.join(directory, n)) for n in names]


def check_parse(mails):
    problems = []
    if not mails:
        return ["no mails"]
    for m in mails:
        if m.msg.defects:
            problems.append(f"{m.name}: {', '.join(type(d).__name__ for d in m.msg.defects)}")
        for h in ("From", "Date", "Subject", "Message-ID"):
            if not m.header(h):
                problems.append(f"{m.name}: no {h}:")
        if not m.body().strip():
            problems.append(f"{m.name}: empty body")
    ids = [m.header("Message-ID") for m in mails]
    if len(set(ids)) != len(ids):
        problems.append("two mails share a Message-ID")
    return problems


def check_subjects(mails, version, count):
    """"[PREFIX vV m/n]" on every mail, m = 0 (cover letter) to n, in order."""
    problems = []
    for i, m in enumerate(mails):
        num = m.numbering()
        if num is None:
            problems.append(f"{m.name}: subject {m.header('Subject')!r} is not \"[{PREFIX} v{version} {i}/{count}] ...\"")
        elif num != (version, i, count):
            problems.append(f"{m.name}: [{PREFIX} v{num[0]} {num[1]}/{num[2]}], expected v{version} {i}/{count}")
    if len(mails) != count + 1:
        problems.append(f"{len(mails)} mails for {count} patches and a cover letter")
    return problems


def check_thread(mails):
    """Shallow threading: every patch answers the cover letter, and only it."""
    if not mails:
        return ["no mails"]
    cover, patches = mails[0], mails[1:]
    problems = []
    if cover.numbering() is None or cover.numbering()[1] != 0:
        problems.append(f"{cover.name}: the first mail is not the cover letter (0/n)")
    if cover.header("In-Reply-To"):
        problems.append(f"{cover.name}: the cover letter answers {cover.header('In-Reply-To')}")
    root = cover.header("Message-ID")
    for m in patches:
        for h in ("In-Reply-To", "References"):
            if m.header(h) != root:
                problems.append(f"{m.name}: {h}: {m.header(h)}, not the cover letter's {root}")
    return problems


def check_sender(mails, sender):
    """Every mail is from SENDER and every patch carries its Signed-off-by."""
    name, addr = email.utils.parseaddr(sender)
    problems = []
    for i, m in enumerate(mails):
        from_ = m.msg["From"]
        got = from_.addresses[0] if from_ is not None and from_.addresses else None
        if got is None or (got.display_name, got.addr_spec.lower()) != (name, addr.lower()):
            problems.append(f"{m.name}: From: {m.header('From')}, not {sender}")
        if i and f"\nSigned-off-by: {name} <{addr}>\n" not in "\n" + m.body():
            problems.append(f"{m.name}: no Signed-off-by: {name} <{addr}>")
    return problems


def check_recipients(mails):
    """Every mail has the same To: and Cc: (the series goes to everyone)."""
    problems = []
    first = mails[0] if mails else None
    if first is None or not first.header("To"):
        return ["the cover letter has no To:"]
    for m in mails[1:]:
        for h in ("To", "Cc"):
            if m.header(h) != first.header(h):
                problems.append(f"{m.name}: {h}: differs from the cover letter's")
    return problems


def check_base(mails, base):
    cover = mails[0] if mails else None
    if cover is None or f"\nbase-commit: {base}\n" not in "\n" + cover.body():
        return [f"the cover letter has no \"base-commit: {base}\" line"]
    return []


def main():
    global PREFIX
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--version", type=int, required=True)
    ap.add_argument("--count", type=int, required=True)
    ap.add_argument("--sender", required=True)
    ap.add_argument("--base", required=True)
    ap.add_argument("--prefix", default=PREFIX)
    args = ap.parse_args()
    PREFIX = args.prefix

    try:
        mails = load(args.dir)
    except Exception as e:  # a mail that does not even load fails everything
        print(f"FAIL parse: {e}")
        return 1
    checks = [
        ("parse", lambda: check_parse(mails),
         f"{len(mails)} mails parse, each with From, Date, Subject and its own Message-ID"),
        ("subjects", lambda: check_subjects(mails, args.version, args.count),
         f"[{PREFIX} v{args.version} 0/{args.count}] to {args.count}/{args.count}, in order"),
        ("thread", lambda: check_thread(mails),
         f"{len(mails) - 1} patch{'es answer' if len(mails) != 2 else ' answers'} the cover letter (In-Reply-To and References)"),
        ("sender", lambda: check_sender(mails, args.sender),
         f"every mail from {args.sender}, every patch signed off by it"),
        ("recipients", lambda: check_recipients(mails),
         "every mail has the cover letter's To: and Cc:"),
        ("base-commit", lambda: check_base(mails, args.base),
         f"the cover letter names base-commit {args.base[:12]}"),
    ]
    failed = 0
    for name, check, what in checks:
        problems = check()
        if problems:
            failed += 1
            print(f"FAIL {name}: {problems[0]}" + (f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""))
            for p in problems[1:10]:
                print(f"    {p}")
        else:
            print(f"PASS {name}: {what}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
