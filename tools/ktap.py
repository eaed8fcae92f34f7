#!/usr/bin/env python3
"""Read the results out of a guest's serial log.

A log holds, in order: the kernel log with the KTAP that built-in KUnit
suites print at boot, then, from the first "kpkeys-guest:" line on, blocks
our guest init frames with "kpkeys-guest: kselftest-begin X" /
"kselftest-end X rc=N" (TAP from the kselftest runner), "guest-begin P" /
"guest-end P rc=N" (TAP from our own guest programs) and "kunit-begin S" /
"kunit-end S rc=N" (KTAP of a KUnit suite run again through debugfs, e.g.
after kexec or resume), then "kpkeys-guest: done". A built-in test_vmalloc
prints one "Summary:" line per test in the kernel log: they form the suite
test_vmalloc. LKDTM's kselftests (lkdtm:*) oops on purpose: kernel failure
messages inside their blocks are left to LKDTM's runner to judge.

    tools/ktap.py report NAME=LOG[=SUITE SUITE...] ...
        print the kpkeys verdict of every boot (its kpkeys KUnit and
        kselftest cases and LKDTM's page-table writes, the emulator's
        strict-mode stops and delivered faults), then a table per suite, then
        "guest: N passed, N failed, N skipped"; exit 1 on any failure,
        including a listed suite (KUnit, or test_vmalloc) that did not run.
        A suite's long list of skips is one line (count and reason); the
        log has every case.
"""

import re
import sys
from dataclasses import dataclass, field

PASS, FAIL, SKIP = "pass", "fail", "skip"

TIMESTAMP = re.compile(r"^\[\s*\d+\.\d+\]\s?")
RESULT = re.compile(
    r"^(?P<indent>\s*)(?P<ok>not ok|ok) (?P<num>\d+)\s*(?:- )?(?P<name>[^#]*?)"
    r"\s*(?:#\s*(?P<directive>SKIP|TODO)\b\s*(?P<reason>.*))?$",
    re.IGNORECASE,
)
SUBTEST = re.compile(r"^(?P<indent>\s*)# Subtest: (?P<name>.+?)\s*$")
# Kernel messages that mean the run is broken whatever the tests said.
KERNEL_FAILURE = re.compile(
    r"Kernel panic|Internal error: Oops|BUG: |WARNING: CPU: \d+ PID|"
    r"Unable to handle kernel|kernel BUG at|watchdog: BUG: soft lockup")
# lib/test_vmalloc.c: "Summary: NAME passed: N failed: N xfailed: N ..."
VMALLOC = re.compile(r"Summary: (?P<name>\w+) passed: \d+ failed: (?P<failed>\d+)"
                     r"(?: xfailed: (?P<xfailed>\d+))?")
# tools/boot's first line: "kpkeys-boot: kernel=K poe=on (OPTS) smp=N ..."
BOOT = re.compile(r"^kpkeys-boot: kernel=\S+ poe=(?P<poe>\w+)(?: \((?P<opts>[^)]*)\))?")
# The emulator's strict mode stops QEMU with "poe-emu: strict: WHY" and a
# "poe-emu:   vcpu ..." line; with strict_allow= the allowed ones say so.
STRICT_ALLOWED = "poe-emu: strict: allowed denied EL1 access"
STATS = re.compile(r"^poe-stats: total (?P<fields>.*)$")
# More skips than this in one suite are one line of the report.
SKIP_LIST_MAX = 8
# Why whole families of a suite's cases skip, where the skip lines only
# name the case (arm64:hwcap prints "ok N # SKIP sigbus_AES").
SKIP_REASONS = {
    "arm64:hwcap": "probes that cannot run: the feature is absent from "
                   "-cpu max, or the test has no SIGILL/SIGBUS probe for it",
}


@dataclass
class Case:
    name: str
    status: str
    reason: str = ""


@dataclass
class Suite:
    name: str
    kind: str
    cases: list = field(default_factory=list)

    def count(self, status):
        return sum(1 for c in self.cases if c.status == status)


def status_of(m):
    if (m.group("directive") or "").upper() == "SKIP":
        return SKIP
    return PASS if m.group("ok") == "ok" else FAIL


def strip_timestamp(line):
    return TIMESTAMP.sub("", line.rstrip("\r\n"))


def parse_kunit(lines):
    """KTAP from the kernel log: nesting by 4-space indentation.

    A suite's "# Subtest:" header and its cases sit at the same indentation;
    the suite's own result line sits one level up. Parameterised cases are
    nested subtests: they count as one case of their suite.
    """
    suites, stack = [], []  # stack: [indent, name, Suite or None]
    for raw in lines:
        line = strip_timestamp(raw)
        m = SUBTEST.match(line)
        if m:
            suite = Suite(m.group("name"), "kunit") if not stack else None
            stack.append([len(m.group("indent")), m.group("name"), suite])
            continue
        m = RESULT.match(line)
        if not m or not stack:
            continue
        indent, name = len(m.group("indent")), m.group("name").strip()
        case = Case(name, status_of(m), (m.group("reason") or "").strip())
        top = stack[-1]
        if indent < top[0]:
            stack.pop()  # the result line that closes subtest "top"
            if top[2] is not None:
                if not top[2].cases:
                    top[2].cases.append(case)  # suite failed or skipped as a whole
                suites.append(top[2])
            elif stack:
                stack[0][2].cases.append(case)
        elif indent == top[0] and len(stack) == 1:
            top[2].cases.append(case)
    return suites


def parse_vmalloc(lines):
    """The summary lines of a built-in test_vmalloc: a case per test."""
    suite = Suite("test_vmalloc", "kernel")
    for line in lines:
        m = VMALLOC.search(line)
        if not m:
            continue
        failed, xfailed = int(m.group("failed")), int(m.group("xfailed") or 0)
        suite.cases.append(Case(m.group("name"), FAIL if failed else PASS,
                                f"{failed} failed" if failed else
                                f"{xfailed} expected failures" if xfailed else ""))
    return [suite] if suite.cases else []


def parse_tap(lines, suite):
    """Plain TAP (our guest programs, or a kselftest's own output)."""
    for line in lines:
        m = RESULT.match(line)
        if m and not m.group("indent"):
            suite.cases.append(Case(m.group("name").strip(), status_of(m),
                                    (m.group("reason") or "").strip()))
    return suite


def parse_kselftest(lines, name):
    """Output of run_kselftest.sh for one test: the program's own TAP is
    prefixed with "# ". Its cases count if it printed any; otherwise the
    program itself is the single case."""
    suite = Suite(name, "kselftest")
    inner = [ln[2:] for ln in lines if ln.startswith("# ")]
    parse_tap(inner, suite)
    outer = Suite(name, "kselftest")
    parse_tap([ln for ln in lines if not ln.startswith("#")], outer)
    if not outer.cases:
        outer.cases.append(Case(name, FAIL, "runner printed no result"))
    prog = outer.cases[-1]
    if not suite.cases or prog.status != PASS:
        # A crashed or skipped program says more than the cases it printed.
        if prog.status == SKIP and not prog.reason:
            prog.reason = next((ln[2:].strip() for ln in reversed(lines)
                                if ln.startswith("# ") and "SKIP" in ln), "")
        if prog.status == FAIL and suite.cases and not suite.count(FAIL):
            suite.cases.append(Case("exit status", FAIL, prog.name))
        elif not suite.cases or prog.status == SKIP:
            suite.cases = [prog]
    return suite


@dataclass
class Emulator:
    """What the POE emulator said during a run (all boots of its log)."""
    poe: str = ""          # "on"/"off" from tools/boot's line, "" if unknown
    strict: bool = False
    stops: list = field(default_factory=list)  # strict-mode stops (unexpected)
    allowed: int = 0       # denied EL1 accesses let through by strict_allow=
    faults: int = None     # faults delivered, every EL (poe-stats total)
    faults_el1: int = None  # of which at EL1, if the emulator counts them


@dataclass
class Run:
    name: str
    suites: list
    problems: list  # run-level failures: crash, timeout, no power-off
    notes: list
    emu: Emulator = field(default_factory=Emulator)
    log: str = ""


BLOCK = re.compile(r"^kpkeys-guest: (kselftest|guest|kunit)-begin (\S+)")


def parse_log(name, text):
    lines = [strip_timestamp(ln) for ln in text.splitlines()]
    try:
        start = lines.index(next(ln for ln in lines if ln.startswith("kpkeys-guest: ")))
    except StopIteration:
        start = len(lines)
    suites = parse_kunit(lines[:start]) + parse_vmalloc(lines[:start])
    problems, notes, oops_expected = [], [], set()
    i = start
    while i < len(lines):
        m = BLOCK.match(lines[i])
        if not m:
            i += 1
            continue
        kind, what = m.groups()
        end = next((j for j in range(i + 1, len(lines))
                    if lines[j].startswith(f"kpkeys-guest: {kind}-end {what} ")), None)
        body = lines[i + 1:end if end is not None else len(lines)]
        if kind == "kselftest":
            suites.append(parse_kselftest(body, what))
            if what.startswith("lkdtm:"):
                oops_expected.update(range(i, end if end is not None else len(lines)))
        elif kind == "kunit":
            ran = [s for s in parse_kunit(body) if s.name == what]
            suites += ran or [Suite(what, "kunit", [Case(what, FAIL, "printed no KTAP result")])]
        else:
            suites.append(parse_tap(body, Suite(what, "guest")))
            if not suites[-1].cases:
                suites[-1].cases.append(Case(what, FAIL, "printed no TAP result"))
        if end is None:
            problems.append(f"{kind} {what} did not finish")
            break
        i = end + 1
    for n, ln in enumerate(lines):
        if KERNEL_FAILURE.search(ln) and n not in oops_expected:
            problems.append("kernel: " + ln.strip())
        if ln.startswith("kpkeys-boot: TIMEOUT"):
            problems.append("boot timed out")
        if ln.startswith("poe-emu: strict") or ln.startswith("poe-stats: total"):
            notes.append(ln.strip())
    if not any(ln.startswith("kpkeys-guest: done") for ln in lines):
        problems.append("guest did not reach 'done' (hang, crash or timeout)")
    return Run(name, suites, problems, notes, parse_emulator(lines))


def parse_emulator(lines):
    emu = Emulator()
    for n, ln in enumerate(lines):
        m = BOOT.match(ln)
        if m:
            emu.poe = m.group("poe")
            emu.strict = emu.strict or "strict=on" in (m.group("opts") or "").split(",")
        elif ln.startswith(STRICT_ALLOWED):
            emu.allowed += 1
        elif (ln.startswith("poe-emu: strict: ") and n + 1 < len(lines)
              and lines[n + 1].startswith("poe-emu:   vcpu")):
            emu.stops.append(ln[len("poe-emu: strict: "):].strip())
        m = STATS.match(ln)
        if m:
            fields = dict(f.split("=", 1) for f in m.group("fields").split() if "=" in f)
            if "faults" in fields:
                emu.faults = (emu.faults or 0) + int(fields["faults"])
            if "faults_el1" in fields:
                emu.faults_el1 = (emu.faults_el1 or 0) + int(fields["faults_el1"])
            emu.poe = emu.poe or "on"
    return emu


def counts(suites):
    return tuple(sum(s.count(st) for s in suites) for st in (PASS, FAIL, SKIP))


def verdict(run, out):
    """The lines that say whether kpkeys works in this boot."""
    bad = list(run.problems)
    lines = []
    for label, kind, prefix in (("kpkeys KUnit", "kunit", "kpkeys"),
                                ("kpkeys kselftests", "kselftest", "kpkeys:"),
                                ("LKDTM page-table writes", "kselftest", "lkdtm:PGTABLE_")):
        ours = [s for s in run.suites if s.kind == kind and s.name.startswith(prefix)]
        if not ours:
            if kind == "kunit":
                lines.append(f"{label}: none in this boot")
            continue
        p, f, sk = counts(ours)
        why = most_common([c.reason for s in ours for c in s.cases if c.status == SKIP])
        lines.append(f"{label}: {p} passed, {f} failed, {sk} skipped"
                     + (f" ({why})" if sk and why else ""))
        if f:
            bad.append(f"{f} {label} case{'s' if f > 1 else ''} failed")
    emu = run.emu
    if emu.poe == "off":
        lines.append("emulator: off (no POE: the kpkeys cases that need it skip)")
    elif emu.poe or emu.faults is not None or emu.stops:
        text = f"emulator, {'strict' if emu.strict else 'not strict'}: "
        if emu.strict:
            text += f"{len(emu.stops)} unexpected EL1 overlay fault{'s' if len(emu.stops) != 1 else ''}; "
            bad += [f"emulator stopped: {w}" for w in emu.stops]
        if emu.faults is None:
            text += "no fault count (no poe-stats line: QEMU did not exit normally, or ran without stats=on)"
        elif emu.faults_el1 is not None:
            text += f"{emu.faults} faults delivered, {emu.faults_el1} of them at EL1 fixups"
        else:
            text += f"{emu.faults} faults delivered (EL0 and EL1 fixups together)"
        if emu.allowed:
            text += f"; {emu.allowed} denied EL1 accesses let through by strict_allow="
        lines.append(text)
    print(f"{run.name}: kpkeys {'FAILED' if bad else 'ok'}", file=out)
    for ln in lines:
        print(f"    {ln}", file=out)
    for b in bad[:3]:
        print(f"    FAILED  {b}", file=out)
    if len(bad) > 3:
        print(f"    ... {len(bad) - 3} more in the tables below", file=out)


def most_common(reasons):
    reasons = [r for r in reasons if r]
    return max(set(reasons), key=reasons.count) if reasons else ""


def skip_summary(suite, skipped, log):
    """One line for a long list of skips: the count and why."""
    reasons = [c.reason or c.name for c in skipped]
    if len(set(reasons)) == 1:
        why = reasons[0]
    else:
        kinds = {}
        for r in reasons:
            k = re.split(r"[_ :]", r, maxsplit=1)[0] or r
            kinds[k] = kinds.get(k, 0) + 1
        top = sorted(kinds.items(), key=lambda kv: -kv[1])
        by = ", ".join(f"{n} {k}" for k, n in top[:4]) + (", ..." if len(top) > 4 else "")
        why = f"{SKIP_REASONS[suite.name]} ({by})" if suite.name in SKIP_REASONS else by
    where = f"; the list is in {log}" if log else ""
    return f"    skipped {len(skipped)} cases: {why}{where}"


def report(runs, out=sys.stdout):
    totals = {PASS: 0, FAIL: 0, SKIP: 0}
    print("== kpkeys verdict", file=out)
    for run in runs:
        verdict(run, out)
    for run in runs:
        print(f"\n== {run.name}", file=out)
        print(f"{'suite':44} {'kind':9} {'pass':>5} {'fail':>5} {'skip':>5}", file=out)
        for s in run.suites:
            print(f"{s.name:44} {s.kind:9} {s.count(PASS):5} {s.count(FAIL):5} {s.count(SKIP):5}",
                  file=out)
            skipped = [c for c in s.cases if c.status == SKIP]
            for c in s.cases:
                if c.status == FAIL:
                    print(f"    FAILED  {c.name}{': ' + c.reason if c.reason else ''}", file=out)
                elif c.status == SKIP and len(skipped) <= SKIP_LIST_MAX:
                    name = f"{c.name}: " if c.name else ""
                    print(f"    skipped {name}{c.reason or '(no reason given)'}", file=out)
            if len(skipped) > SKIP_LIST_MAX:
                print(skip_summary(s, skipped, run.log), file=out)
            for st in totals:
                totals[st] += s.count(st)
        for p in run.problems:
            print(f"    FAILED  run: {p}", file=out)
        totals[FAIL] += len(run.problems)
        if not run.suites:
            print("    FAILED  run: no test results found", file=out)
            totals[FAIL] += 1
        for n in run.notes:
            print(f"    {n}", file=out)
    return totals


def load(args):
    runs = []
    for a in args:
        name, path, *expect = a.split("=", 2)
        with open(path, errors="replace") as f:
            run = parse_log(name, f.read())
        run.log = path
        ran = {s.name for s in run.suites}
        run.problems += [f"expected suite {e} did not run"
                         for e in (expect[0].split() if expect else []) if e not in ran]
        runs.append(run)
    return runs


def main(argv):
    if len(argv) < 3 or argv[1] != "report":
        print(__doc__, file=sys.stderr)
        return 2
    t = report(load(argv[2:]))
    print(f"\nguest: {t[PASS]} passed, {t[FAIL]} failed, {t[SKIP]} skipped")
    return 1 if t[FAIL] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
