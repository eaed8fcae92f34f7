"""Tests of tools/ktap.py on serial logs captured from real boots."""

import io
import os
import tempfile
import unittest

from tools import ktap

DATA = os.path.join(os.path.dirname(__file__), "data")


def load(name):
    with open(os.path.join(DATA, name), errors="replace") as f:
        return ktap.parse_log(name, f.read())


def suite(run, name):
    return next(s for s in run.suites if s.name == name)


class KUnitWithFailuresAndPanic(unittest.TestCase):
    """A development boot: KUnit ran, several cases failed, no initramfs."""

    def setUp(self):
        self.run = load("kunit-kpkeys-panic.log")

    def test_counts_cases_of_the_suite(self):
        s = suite(self.run, "kpkeys_hardened_pgtables")
        self.assertEqual((s.count(ktap.PASS), s.count(ktap.FAIL), s.count(ktap.SKIP)), (6, 13, 0))

    def test_names_the_failed_cases(self):
        s = suite(self.run, "kpkeys_hardened_pgtables")
        failed = [c.name for c in s.cases if c.status == ktap.FAIL]
        self.assertIn("hardirq_inside_window_cannot_write", failed)
        self.assertNotIn("set_memory_pkey_rejects_invalid_pkey", failed)

    def test_panic_and_missing_init_are_run_failures(self):
        self.assertTrue(any("Kernel panic" in p for p in self.run.problems))
        self.assertTrue(any("did not reach 'done'" in p for p in self.run.problems))

    def test_keeps_emulator_statistics(self):
        self.assertTrue(any(n.startswith("poe-stats: total") for n in self.run.notes))


class UserPkeyKselftests(unittest.TestCase):
    """A hardened boot under the emulator where the rseq/POR_EL0 bug hit
    (a kernel without the rseq fix)."""

    def setUp(self):
        self.run = load("kselftest-user-pkeys.log")

    def test_protection_keys_cases_are_counted(self):
        s = suite(self.run, "mm:protection_keys")
        self.assertEqual((s.count(ktap.PASS), s.count(ktap.FAIL)), (462, 0))

    def test_rseq_failure_is_a_failure(self):
        s = suite(self.run, "mm:pkey_sighandler_tests")
        c = next(c for c in s.cases if c.name == "test_sigsegv_handler_cannot_access_stack")
        self.assertEqual(c.status, ktap.FAIL)
        self.assertEqual((s.count(ktap.PASS), s.count(ktap.FAIL)), (4, 1))

    def test_kunit_suites_of_the_boot(self):
        self.assertEqual(suite(self.run, "usercopy").count(ktap.PASS), 4)
        self.assertEqual(self.run.problems, [])


class KexecAndResume(unittest.TestCase):
    """tools/resume-tests: the suite run through debugfs by the second kernel
    (kexec) and by the resumed system (two boots, one log)."""

    def test_suite_of_the_second_kernel(self):
        run = load("resume-kexec.log")
        s = suite(run, "kpkeys_hardened_pgtables")
        self.assertEqual((s.kind, s.count(ktap.PASS), s.count(ktap.FAIL)), ("kunit", 21, 0))
        self.assertEqual(run.problems, [])

    def test_suite_of_the_resumed_system(self):
        run = load("resume-hibernate.log")
        s = suite(run, "kpkeys_hardened_pgtables")
        self.assertEqual((s.kind, s.count(ktap.PASS), s.count(ktap.FAIL)), ("kunit", 21, 0))
        self.assertEqual([x.name for x in run.suites], ["kpkeys_hardened_pgtables"])
        self.assertEqual(run.problems, [])

    def test_strict_stop_in_the_relocation_copy_fails(self):
        run = load("resume-kexec-unfixed.log")
        self.assertIn("guest did not reach 'done' (hang, crash or timeout)", run.problems)
        self.assertIn("expected suite kpkeys_hardened_pgtables did not run",
                      ktap.load(["k=" + os.path.join(DATA, "resume-kexec-unfixed.log")
                                 + "=kpkeys_hardened_pgtables"])[0].problems)
        self.assertTrue(any("unexpected EL1 overlay violation" in n for n in run.notes))

    def test_kunit_block_without_results_fails(self):
        run = ktap.parse_log("synthetic", "kpkeys-guest: begin\n"
                             "kpkeys-guest: kunit-begin nosuch\n"
                             "kpkeys-guest: kunit-end nosuch rc=1\n"
                             "kpkeys-guest: done\n")
        self.assertEqual([(c.status, c.reason) for c in suite(run, "nosuch").cases],
                         [(ktap.FAIL, "printed no KTAP result")])


class SyntheticKtap(unittest.TestCase):
    """Shapes the captured logs do not contain (lines in the kernel's format)."""

    LOG = """\
[    1.0] KTAP version 1
[    1.0] 1..2
[    1.0]     KTAP version 1
[    1.0]     # Subtest: alpha
[    1.0]     1..3
[    1.0]     ok 1 first
[    1.0]     ok 2 second # SKIP POE not present
[    1.0]         KTAP version 1
[    1.0]         # Subtest: param
[    1.0]         ok 1 p0
[    1.0]         not ok 2 p1
[    1.0]     not ok 3 param
[    1.0] not ok 1 alpha
[    1.0]     KTAP version 1
[    1.0]     # Subtest: beta
[    1.0]     1..1
[    1.0] ok 2 beta # SKIP no hardware
kpkeys-guest: begin kernel=7.3.4 cpus=2
kpkeys-guest: kselftest-begin arm64:hwcap
TAP version 13
1..1
# timeout set to 45
# selftests: arm64: hwcap
# TAP version 13
# 1..2
# ok 1 cpuinfo_match_POE
# ok 2 sigill_POE # SKIP no POE
ok 1 selftests: arm64: hwcap
kpkeys-guest: kselftest-end arm64:hwcap rc=0
kpkeys-guest: kselftest-begin mm:protection_keys
TAP version 13
1..1
# selftests: mm: protection_keys
# segfault
not ok 1 selftests: mm: protection_keys # exit=139
kpkeys-guest: kselftest-end mm:protection_keys rc=1
kpkeys-guest: done
"""

    def setUp(self):
        self.run = ktap.parse_log("synthetic", self.LOG)

    def test_parameterised_case_counts_once(self):
        s = suite(self.run, "alpha")
        self.assertEqual([c.status for c in s.cases], [ktap.PASS, ktap.SKIP, ktap.FAIL])

    def test_skip_reason_is_kept(self):
        self.assertEqual(suite(self.run, "alpha").cases[1].reason, "POE not present")

    def test_suite_skipped_as_a_whole(self):
        s = suite(self.run, "beta")
        self.assertEqual([(c.status, c.reason) for c in s.cases], [(ktap.SKIP, "no hardware")])

    def test_kselftest_cases_come_from_the_program(self):
        s = suite(self.run, "arm64:hwcap")
        self.assertEqual((s.count(ktap.PASS), s.count(ktap.SKIP)), (1, 1))

    def test_crashed_kselftest_fails(self):
        s = suite(self.run, "mm:protection_keys")
        self.assertEqual(s.count(ktap.FAIL), 1)
        self.assertEqual(self.run.problems, [])

    def test_report_totals(self):
        with open(os.devnull, "w") as null:
            t = ktap.report([self.run], out=null)
        self.assertEqual((t[ktap.PASS], t[ktap.FAIL], t[ktap.SKIP]), (2, 2, 3))


class VmallocAndLkdtm(unittest.TestCase):
    """test_vmalloc's summaries at boot, and an LKDTM test that oopses on
    purpose (lines in the kernel's and the runners' formats)."""

    LOG = """\
[    9.0] Summary: fix_size_alloc_test passed: 1 failed: 0 xfailed: 0 repeat: 1 loops: 500 avg: 98 usec
[    9.1] Summary: align_shift_alloc_test passed: 0 failed: 0 xfailed: 1 repeat: 1 loops: 500 avg: 3 usec
[    9.2] Summary: vm_map_ram_test passed: 0 failed: 1 xfailed: 0 repeat: 1 loops: 500 avg: 7 usec
kpkeys-guest: begin kernel=7.3.4 cpus=2
kpkeys-guest: kselftest-begin lkdtm:PGTABLE_WRITE_KERNEL.sh
TAP version 13
1..1
# selftests: lkdtm: PGTABLE_WRITE_KERNEL.sh
[   20.0] Unable to handle kernel write to read-only memory at virtual address ffff800080a01000
[   20.0] Internal error: Oops: 000000009600004f [#1]  SMP
# [   20.0] lkdtm: attempting a plain write to the kernel PTE of ffff800082a6c000 at ffff000040a01360
# PGTABLE_WRITE_KERNEL: saw 'write to read-only memory': ok
ok 1 selftests: lkdtm: PGTABLE_WRITE_KERNEL.sh
kpkeys-guest: kselftest-end lkdtm:PGTABLE_WRITE_KERNEL.sh rc=0
kpkeys-guest: kselftest-begin kpkeys:hardened_pgtables
TAP version 13
1..1
# selftests: kpkeys: hardened_pgtables
[   21.0] Internal error: Oops: 0000000096000004 [#2]  SMP
not ok 1 selftests: kpkeys: hardened_pgtables # exit=139
kpkeys-guest: kselftest-end kpkeys:hardened_pgtables rc=1
kpkeys-guest: done
"""

    def setUp(self):
        self.run = ktap.parse_log("vmalloc-lkdtm", self.LOG)

    def test_vmalloc_summaries_are_a_suite(self):
        s = suite(self.run, "test_vmalloc")
        self.assertEqual([(c.name, c.status) for c in s.cases],
                         [("fix_size_alloc_test", ktap.PASS),
                          ("align_shift_alloc_test", ktap.PASS),
                          ("vm_map_ram_test", ktap.FAIL)])
        self.assertEqual(s.cases[1].reason, "1 expected failures")

    def test_lkdtm_oops_is_left_to_lkdtm(self):
        self.assertEqual(suite(self.run, "lkdtm:PGTABLE_WRITE_KERNEL.sh").count(ktap.PASS), 1)
        self.assertEqual(self.run.problems,
                         ["kernel: Internal error: Oops: 0000000096000004 [#2]  SMP"])

    def test_expected_suite_may_be_test_vmalloc(self):
        with tempfile.NamedTemporaryFile("w", suffix=".log") as f:
            f.write(self.LOG)
            f.flush()
            run, = ktap.load([f"a={f.name}=test_vmalloc nosuch"])
        self.assertEqual([p for p in run.problems if "did not run" in p],
                         ["expected suite nosuch did not run"])


class Verdict(unittest.TestCase):
    """The report's first lines: whether kpkeys works in each boot."""

    def report(self, *runs):
        out = io.StringIO()
        totals = ktap.report(list(runs), out=out)
        return out.getvalue(), totals

    def test_strict_boot_leads_with_kunit_and_faults(self):
        text, _ = self.report(load("kselftest-user-pkeys.log"))
        head = text.splitlines()[:4]
        self.assertEqual(head[0], "== kpkeys verdict")
        # The rseq bug fails a user-pkey suite (below), not kpkeys.
        self.assertEqual(head[1], "kselftest-user-pkeys.log: kpkeys ok")
        self.assertIn("kpkeys KUnit: none in this boot", head[2])
        self.assertIn("emulator, strict: 0 unexpected EL1 overlay faults; 154 faults delivered",
                      head[3])

    def test_strict_stop_is_an_unexpected_fault(self):
        text, _ = self.report(load("resume-kexec-unfixed.log"))
        self.assertIn("resume-kexec-unfixed.log: kpkeys FAILED", text)
        self.assertIn("1 unexpected EL1 overlay fault;", text)
        self.assertIn("FAILED  emulator stopped: unexpected EL1 overlay violation", text)
        self.assertIn("no fault count", text)

    def test_kpkeys_cases_and_their_failures(self):
        text, _ = self.report(load("kunit-kpkeys-panic.log"))
        self.assertIn("kpkeys KUnit: 6 passed, 13 failed, 0 skipped", text)
        self.assertIn("FAILED  13 kpkeys KUnit cases failed", text)

    def test_el1_faults_and_poe_off(self):
        on = ktap.parse_log("on", "kpkeys-boot: kernel=K poe=on (strict=on,stats=on) smp=2\n"
                                  "kpkeys-guest: done\n"
                                  "poe-stats: total por_el1_writes=1 faults=9 faults_el1=2\n")
        off = ktap.parse_log("off", "kpkeys-boot: kernel=K poe=off smp=2\n"
                                    "[    1.0]     # Subtest: kpkeys_hardened_pgtables\n"
                                    "[    1.0]     ok 1 a # SKIP POE not present\n"
                                    "[    1.0] ok 1 kpkeys_hardened_pgtables\n"
                                    "kpkeys-guest: done\n")
        text, _ = self.report(on, off)
        self.assertIn("9 faults delivered, 2 of them at EL1 fixups", text)
        self.assertIn("off: kpkeys ok\n    kpkeys KUnit: 0 passed, 0 failed, 1 skipped (POE not present)\n"
                      "    emulator: off", text)

    def test_long_skip_list_is_one_line(self):
        cases = "".join(f"# ok {i} # SKIP sig{'ill' if i % 3 else 'bus'}_F{i}\n" for i in range(1, 13))
        run = ktap.parse_log("hw", "kpkeys-guest: begin\n"
                             "kpkeys-guest: kselftest-begin arm64:hwcap\n"
                             f"# 1..13\n# ok 13 cpuinfo_match_POE\n{cases}"
                             "ok 1 selftests: arm64: hwcap\n"
                             "kpkeys-guest: kselftest-end arm64:hwcap rc=0\n"
                             "kpkeys-guest: done\n")
        run.log = "boot-hw.log"
        text, totals = self.report(run)
        skips = [ln for ln in text.splitlines() if ln.strip().startswith("skipped")]
        self.assertEqual(skips, ["    skipped 12 cases: probes that cannot run: the feature is "
                                 "absent from -cpu max, or the test has no SIGILL/SIGBUS probe "
                                 "for it (8 sigill, 4 sigbus); the list is in boot-hw.log"])
        self.assertEqual(totals[ktap.SKIP], 12)

    def test_kpkeys_kselftests_and_lkdtm_page_table_writes(self):
        run = ktap.parse_log("vmalloc-lkdtm", VmallocAndLkdtm.LOG)
        text, _ = self.report(run)
        verdict = text.split("\n\n")[0]
        self.assertIn("kpkeys kselftests: 0 passed, 1 failed, 0 skipped", verdict)
        self.assertIn("LKDTM page-table writes: 1 passed, 0 failed, 0 skipped", verdict)
        self.assertIn("vmalloc-lkdtm: kpkeys FAILED", verdict)

    def test_short_skip_list_is_kept(self):
        text, _ = self.report(load("kselftest-user-pkeys.log"))
        self.assertIn("    skipped test_kfree_rcu: can't do kfree_rcu() when test is built-in", text)


if __name__ == "__main__":
    unittest.main()
