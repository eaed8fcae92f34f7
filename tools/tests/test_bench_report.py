"""Tests of bench/report.py: the smoke check of make check, the cost model
and the corrections the report applies to the emulator's records."""

import importlib.util
import io
import os
import subprocess
import tempfile
import unittest

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_spec = importlib.util.spec_from_file_location("bench_report",
                                               os.path.join(TOP, "bench", "report.py"))
report = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(report)
DATA = os.path.join(os.path.dirname(__file__), "data", "bench")


def record(row, rep, **kv):
    base = dict(insns=0, insns_el0=0, insns_el1=0, por_el1_writes=0, isb=0, dsb=0,
                tlbi_bcast=0, tlbi_local=0, exceptions=0, irqs=0, window_insns=0, dmb=0)
    base.update(kv)
    return "poe-bench: row=%s rep=%d %s\n" % (
        row, rep, " ".join("%s=%d" % (k, v) for k, v in base.items()))


class SmokeCheck(unittest.TestCase):
    """make check's assertions on the records of the two matrix boots."""

    def test_real_records_pass(self):
        self.assertTrue(report.smoke_check(os.path.join(DATA, "smoke-baseline.records"),
                                           os.path.join(DATA, "smoke-hardened.records"),
                                           out=io.StringIO()))

    def test_baseline_writing_por_el1_fails(self):
        with tempfile.TemporaryDirectory() as d:
            b, h = os.path.join(d, "b"), os.path.join(d, "h")
            common = dict(insns=1000, insns_el1=900, exceptions=1, dsb=3, tlbi_bcast=1)
            with open(b, "w") as f:
                f.write(record("smoke/fork", 0, por_el1_writes=2, **common))
            with open(h, "w") as f:
                f.write(record("smoke/fork", 0, por_el1_writes=4, window_insns=50, **common))
            self.assertFalse(report.smoke_check(b, h, out=io.StringIO()))

    def test_missing_row_fails(self):
        with tempfile.TemporaryDirectory() as d:
            b = os.path.join(d, "b")
            with open(b, "w") as f:
                f.write(record("other", 0, insns=1))
            self.assertFalse(report.smoke_check(b, os.path.join(d, "absent"),
                                                out=io.StringIO()))


class CostModel(unittest.TestCase):
    K = dict(ipc=2.0, isb=10, por_el1_write=1, tlbi_bcast=100, tlbi_local=5, dsb=3,
             exception=20, tlb_l2_hit=2, tlb_walk=50)

    def test_modeled_cycles(self):
        c = dict(insns=1000, insns_el0=200, insns_el1=800, isb=2, por_el1_writes=2,
                 tlbi_bcast=1, tlbi_local=1, dsb=1, exceptions=1, irqs=1)
        # 800/2 + 2*10 + 2*1 + 100 + 5 + 3 + 2*20 = 570 system, 200/2 user
        self.assertEqual(report.modeled(c, self.K, "sys"), 570)
        self.assertEqual(report.modeled(c, self.K, "user"), 100)
        self.assertEqual(report.modeled(c, self.K), 670)

    def test_tlb_term(self):
        c = dict(insns=1000, insns_el0=200, insns_el1=800, isb=0, por_el1_writes=0,
                 tlbi_bcast=0, tlbi_local=0, dsb=0, exceptions=0, irqs=0,
                 tlb_l1_miss_el0=10, tlb_walk_el0=4, tlb_l1_miss_el1=20, tlb_walk_el1=5)
        # EL1: 800/2 + (20-5)*2 L2 TLB hits + 5*50 walks = 680
        # EL0: 200/2 + (10-4)*2 + 4*50 = 312
        self.assertEqual(report.modeled(c, self.K, "sys"), 680)
        self.assertEqual(report.modeled(c, self.K, "user"), 312)
        self.assertEqual(report.modeled(c, self.K), 992)

    def test_records_without_tlb_counts_have_no_tlb_term(self):
        c = dict(insns=1000, insns_el0=200, insns_el1=800, isb=0, por_el1_writes=0,
                 tlbi_bcast=0, tlbi_local=0, dsb=0, exceptions=0, irqs=0)
        self.assertEqual(report.tlb_cycles(c, self.K, 0), 0)
        self.assertEqual(report.tlb_cycles(c, self.K, 1), 0)

    def test_repository_model_has_every_constant(self):
        consts, calib, ticks = report.read_model(os.path.join(TOP, "bench", "cost-model"))
        self.assertEqual(set(consts), set(self.K))
        for low, high in consts.values():
            self.assertLessEqual(low, high)
        self.assertEqual(calib["row"], "fork/h:0")
        self.assertTrue(ticks)


class RunCorrections(unittest.TestCase):
    """A two-kernel run: tick correction, vmalloc rows net of the empty insmod."""

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        d = self.dir.name
        with open(os.path.join(d, "kernels"), "w") as f:
            f.write("baseline | c0 | head | qemu-virt bench baseline | /o | | \n")
            f.write("HEAD | c0 | head | qemu-virt bench defconfig-hardened | /o | | \n")
        for name, extra in (("baseline", 0), ("HEAD", 500)):
            with open(os.path.join(d, name + ".records"), "w") as f:
                for rep in range(5):
                    f.write(record("idle/1s", rep, insns=10000, insns_el1=10000, isb=10,
                                   irqs=100))
                    # 7 ticks of 100 instructions and 0.1 ISB each, in 3
                    # interrupts (a late timer interrupt runs missed ticks)
                    f.write(record("fork/h:0", rep, insns=100700 + extra,
                                   insns_el1=100700 + extra, isb=1 + extra // 100,
                                   irqs=3))
                    f.write(record("vmalloc/empty", rep, insns=5000, insns_el1=5000))
                    f.write(record("vm_map_ram/p:1/h:0", rep, insns=45000 + extra,
                                   insns_el1=45000 + extra))
            with open(os.path.join(d, name + ".log"), "w") as f:
                for rep in range(5):
                    f.write("kpkeys-bench: row=vm_map_ram/p:1/h:0 rep=%d loops=100\n" % rep)
                    f.write("kpkeys-bench: row=idle/1s rep=%d ticks=100\n" % rep)
                    f.write("kpkeys-bench: row=fork/h:0 rep=%d ticks=7\n" % rep)
                    f.write("kpkeys-bench: row=fork/h:0 rep=%d ptes=262144\n" % rep)
                for i, row in enumerate(["idle/1s", "fork/h:0", "vmalloc/empty",
                                         "vm_map_ram/p:1/h:0"], 1):
                    f.write("ok %d %s\n" % (i, row))
        self.bench = report.Bench(d)

    def tearDown(self):
        self.dir.cleanup()

    def test_ticks_are_subtracted(self):
        # the guest's jiffies count, not the interrupts
        r = self.bench.reps("baseline", "fork/h:0")[0]
        self.assertAlmostEqual(r["insns"], 100000)
        self.assertAlmostEqual(r["isb"], 1 - 0.7)
        self.assertEqual(r["irqs"], 0)

    def test_instruction_clock_runs_are_not_tick_corrected(self):
        # make bench's runs: ticks follow instructions, they are a real cost
        with open(os.path.join(self.dir.name, "meta"), "w") as f:
            f.write("mem=3G reps=5 rows=all clock=insns cmdline=arm64.nomops qemu=11.1.3\n")
        r = report.Bench(self.dir.name).reps("baseline", "fork/h:0")[0]
        self.assertEqual((r["insns"], r["isb"], r["irqs"]), (100700, 1, 3))

    def test_vmalloc_rows_are_net_of_the_empty_insmod(self):
        self.assertEqual(self.bench.reps("baseline", "vm_map_ram/p:1/h:0")[0]["insns"], 40000)
        self.assertEqual(self.bench.unit("baseline", "vm_map_ram/p:1/h:0", "loops"), 100)

    def test_overhead_and_significance(self):
        k = self.bench.sets["low"]
        # net instructions 40500 vs 40000, no events: +1.25% at any IPC
        self.assertAlmostEqual(
            self.bench.overhead("HEAD", "baseline", "vm_map_ram/p:1/h:0", k), 0.0125)
        self.assertEqual(self.bench.significance("HEAD", "baseline", "vm_map_ram/p:1/h:0"),
                         "(R) ")
        self.assertEqual(self.bench.problems, [])

    def test_goals(self):
        # fork/h:0: 500 instructions and 5 ISBs more on 100000 (tick-corrected):
        # +0.57% with the low constants (IPC 1, ISB 15), +1.10% with the
        # high ones (IPC 2, ISB 60): the 1% goal is missed under the high set.
        # vm_map_ram: +1.25%, within its 5%.
        text, missed = self.bench.goals()
        self.assertEqual(missed, ["fork/h:0"])
        line = [x for x in text.splitlines() if x.startswith("| fork/h:0 |")][0]
        self.assertIn("+0.57% … +1.10%", line)
        self.assertIn("not met** under the high constants (by 0.10 points)", line)
        self.assertIn("ISB +0.60%", line)
        # per section: 5 ISBs over the 512 PTE tables of 1 GiB
        sect = [x for x in text.splitlines() if x.startswith("| fork/h:0 | 512 |")][0]
        self.assertIn("| 0.010 |", sect)

    def test_pgt_cache_counters(self):
        # HEAD's guest reports the cache's counters per repetition; the
        # goals show their medians, and nothing for a kernel without them
        with open(os.path.join(self.dir.name, "HEAD.log"), "a") as f:
            for rep, misses in enumerate((1, 2, 2, 3, 9)):
                f.write("kpkeys-bench: row=fork/h:0 rep=%d pgt_cache_cached=200 "
                        "pgt_cache_hits=512 pgt_cache_misses=%d pgt_cache_refills=%d "
                        "pgt_cache_drains=1 pgt_cache_tlb_flushes=%d "
                        "pgt_cache_direct=0 pgt_cache_zero_batches=%d\n"
                        % (rep, misses, misses, misses + 1, 30 + rep))
                # a kernel from before the zero batches
                f.write("kpkeys-bench: row=munmap/h:0 rep=%d pgt_cache_cached=0 "
                        "pgt_cache_hits=0 pgt_cache_misses=0 pgt_cache_refills=0 "
                        "pgt_cache_drains=%d pgt_cache_tlb_flushes=%d "
                        "pgt_cache_direct=0\n" % (rep, misses, misses))
        text, _ = report.Bench(self.dir.name).goals()
        self.assertIn("| fork/h:0 | 512 | 2 | 2 | 1 | 3 | 0 | 32 | - | - |", text.splitlines())
        self.assertIn("| munmap/h:0 | 0 | 0 | 0 | 2 | 2 | 0 | - | - | - |", text.splitlines())
        self.assertNotIn("page-table cache", self.bench.goals()[0])

    def test_goals_not_checked_without_baseline(self):
        # a HEAD-only run compares nothing: it must not say "all met"
        with open(os.path.join(self.dir.name, "kernels"), "w") as f:
            f.write("HEAD | c0 | head | qemu-virt bench defconfig-hardened | /o | | \n")
        os.remove(os.path.join(self.dir.name, "baseline.records"))
        bench = report.Bench(self.dir.name)
        self.assertEqual(bench.goals(), (None, None))
        bench.report()
        with open(os.path.join(self.dir.name, "summary.txt")) as f:
            summary = f.read()
        self.assertIn("issue 9 goals: not checked", summary)
        self.assertNotIn("all met", summary)


if __name__ == "__main__":
    unittest.main()


class Bbml3Table(unittest.TestCase):
    """Boots with BBML3 advertised: read beside the others, compared there."""

    def run_dir(self, with_bbml3):
        d = self.dir.name
        with open(os.path.join(d, "kernels"), "w") as f:
            f.write("baseline | c0 | head | qemu-virt bench baseline | /o | | \n")
            f.write("HEAD | c0 | head | qemu-virt bench defconfig-hardened | /o | | \n")
        walks = {"baseline": 20, "HEAD": 20, "baseline-bbml3": 0, "HEAD-bbml3": 100}
        for name, w in walks.items():
            if name.endswith("-bbml3") and not with_bbml3:
                continue
            with open(os.path.join(d, name + ".records"), "w") as f:
                for rep in range(3):
                    f.write(record("fork/h:0", rep, insns=100000, insns_el1=100000,
                                   tlb_access_el1=50000, tlb_l1_miss_el1=w,
                                   tlb_walk_el1=w))
            with open(os.path.join(d, name + ".log"), "w") as f:
                f.write("kpkeys-bench: row=fork/h:0 rep=0 ptes=262144\n")
        with open(os.path.join(d, "meta"), "w") as f:
            f.write("mem=3G reps=3 rows=all clock=insns tlb=1 bbml3=1\n")
        return report.Bench(d)

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.dir.cleanup()

    def test_without_bbml3_boots_no_table(self):
        self.assertIsNone(self.run_dir(False).bbml3_table())

    def test_pages_against_blocks_and_head_against_baseline(self):
        table = self.run_dir(True).bbml3_table()
        row = [line for line in table.splitlines() if line.startswith("| fork/h:0 ")][0]
        # walks at 15 (low) and 150 (high) cycles, 100000 instructions at
        # IPC 1 (low) and 2 (high): baseline's 20 walks +0.30% … +6.00%,
        # HEAD's 100 against none +1.50% … +30.00%, all of it TLB term
        self.assertEqual([c.strip() for c in row.split("|")[2:6]],
                         ["+0.30% … +6.00%", "+1.50% … +30.00%", "+1.50% … +30.00%",
                          "**not met**"])


class PorTable(unittest.TestCase):
    """POR_EL1 writes by function (BENCH_PROFILE=1): tools/profile por adds
    the emulator's lines up by function, the report divides them per
    operation and repetition."""

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.dir.cleanup()

    def test_profile_por_adds_up_by_function(self):
        d = self.dir.name
        with open(os.path.join(d, "System.map"), "w") as f:
            f.write("ffff800080010000 T zap_pte_range\n"
                    "ffff800080010400 t kpkeys_open_write_window\n"
                    "ffff800080010480 T next_function\n")
        with open(os.path.join(d, "p"), "w") as f:
            f.write("poe-profile: row=r pc=0xffff800080010000 insns=5\n"
                    "poe-profile-por: row=r pc=0xffff800080010010 "
                    "lr=0xffff800080010490 opens=3 other=0\n"
                    "poe-profile-por: row=r pc=0xffff800080010040 "
                    "lr=0xffff800080010490 opens=0 other=3\n"
                    "poe-profile-por: row=r pc=0xffff800080010404 "
                    "lr=0xffff800080010020 opens=7 other=7\n"
                    "poe-profile-por: row=r pc=0xffff800080010404 "
                    "lr=0xffff800080010024 opens=1 other=1\n")
        out = subprocess.run([os.path.join(TOP, "tools", "profile"), "por",
                              os.path.join(d, "p"), os.path.join(d, "System.map")],
                             check=True, capture_output=True, text=True).stdout
        self.assertEqual(out, "r kpkeys_open_write_window zap_pte_range 8 8\n"
                              "r zap_pte_range next_function 3 3\n")

    def test_per_operation_and_repetition(self):
        d = self.dir.name
        with open(os.path.join(d, "kernels"), "w") as f:
            f.write("HEAD | c0 | head | qemu-virt bench defconfig-hardened | /o | | \n")
        with open(os.path.join(d, "HEAD.records"), "w") as f:
            for rep in range(2):
                f.write(record("fork/h:0", rep, insns=1000, insns_el1=1000))
        with open(os.path.join(d, "HEAD.log"), "w") as f:
            for rep in range(2):
                f.write("kpkeys-bench: row=fork/h:0 rep=%d ptes=4\n" % rep)
        with open(os.path.join(d, "meta"), "w") as f:
            f.write("mem=3G reps=2 rows=all clock=insns tlb=0 bbml3=0\n")
        bench = report.Bench(d)
        self.assertIsNone(bench.por_table())
        with open(os.path.join(d, "HEAD.por"), "w") as f:
            f.write("fork/h:0 copy_pte_range copy_page_range 16 16\n"
                    "fork/h:0 el1_irq ? 0 8\n")
        rows = bench.por_table().splitlines()[2:]
        # 2 repetitions of 4 PTEs each: divided by 8
        self.assertEqual(rows, [
            "| fork/h:0 | PTE | copy_pte_range | copy_page_range | 2.000 | 2.000 |",
            "| fork/h:0 | PTE | el1_irq | ? | 0.000 | 1.000 |"])
