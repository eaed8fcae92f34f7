"""tools/check's report of the stores in page-table windows
(`tools/check --window-stores FILE LIST`, section 7b of make check) on a
window_stores= file in the emulator's format, and the reviewed list
tools/window-stores itself."""

import os
import subprocess
import tempfile
import unittest

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

STORES = """\
poe-window-store: fn=memset stores=5120
poe-window-store: fn=__flush_tlb_range.constprop.0 stores=12
poe-window-store: fn=percpu_counter_add stores=7
poe-window-store: fn=? stores=3
poe-window-stores-total: pgtable=182003 stack=90211 other=5142 other_fns=4
poe-window-store-caller: fn=memset caller=pte_alloc_one stores=5000
poe-window-store-caller: fn=memset caller=a stores=60
poe-window-store-caller: fn=memset caller=b stores=50
poe-window-store-caller: fn=memset caller=c stores=10
poe-window-store-caller: fn=__flush_tlb_range.constprop.0 caller=change_protection stores=12
poe-window-store-caller: fn=percpu_counter_add caller=? stores=7
poe-window-store-target: fn=memset target=dynamic stores=5000
poe-window-store-target: fn=memset target=current stores=60
poe-window-store-target: fn=memset target=image:vm_node_stat stores=50
poe-window-store-target: fn=memset target=percpu:vm_event_states stores=10
poe-window-store-target: fn=percpu_counter_add target=current stores=7
poe-window-store-path: fn=memset path=pte_alloc_one<__pte_alloc<do_anonymous_page stores=4000
poe-window-store-path: fn=memset path=pte_alloc_one<__pte_alloc<copy_page_range stores=1000
poe-window-store-path: fn=percpu_counter_add path=? stores=7
"""


class Report(unittest.TestCase):
    def report(self, stores, listed):
        with tempfile.TemporaryDirectory() as d:
            f = os.path.join(d, "stores.txt")
            lst = os.path.join(d, "list")
            if stores is not None:
                with open(f, "w") as out:
                    out.write(stores)
            with open(lst, "w") as out:
                out.write(listed)
            r = subprocess.run([os.path.join(TOP, "tools", "check"), "--window-stores", f, lst],
                               capture_output=True, text=True, cwd=d)
            # awk's print > "file" writes files: none of those
            self.assertLessEqual(set(os.listdir(d)), {"stores.txt", "list"})
            return r

    def test_reviewed_by_name_clone_and_prefix(self):
        r = self.report(STORES, "# reviewed\n__flush_tlb_range   # the mm's ASID\n"
                                "percpu_*  # this CPU's counters\n\n")
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.splitlines()
        self.assertEqual(lines[0], "window stores to other memory (hardened boot): "
                                   "pgtable=182003 stack=90211 other=5142 other_fns=4")
        self.assertEqual(lines[1:], [
            "  memset stores=5120 (callers: pte_alloc_one 5000, a 60, b 50, +1 more) unreviewed",
            "      targets: dynamic 5000, current 60, image:vm_node_stat 50, +1 more",
            "      main path: pte_alloc_one<__pte_alloc<do_anonymous_page (4000)",
            "  __flush_tlb_range.constprop.0 stores=12 (callers: change_protection 12)",
            "  percpu_counter_add stores=7 (callers: ? 7)",
            "      targets: current 7",
            "      main path: ? (7)",
            "  ? stores=3 unreviewed",
            "window stores: 2 of 4 functions unreviewed (not in tools/window-stores), "
            "5123 of 5142 stores"])

    def test_a_name_is_no_prefix(self):
        r = self.report(STORES, "mem\npercpu_counter\n")
        self.assertIn("  memset stores=5120 (callers: pte_alloc_one 5000, a 60, b 50, "
                      "+1 more) unreviewed\n", r.stdout)
        self.assertIn("  percpu_counter_add stores=7 (callers: ? 7) unreviewed\n", r.stdout)

    def test_forty_functions_then_the_unreviewed_names(self):
        fns = "".join(f"poe-window-store: fn=f{i} stores={100 - i}\n" for i in range(43))
        r = self.report(fns + "poe-window-stores-total: pgtable=1 stack=1 other=3397 other_fns=43\n",
                        "f41 # a global counter\n")
        lines = r.stdout.splitlines()
        self.assertEqual(lines[40], "  f39 stores=61 unreviewed")
        self.assertEqual(lines[41], "  unreviewed after the first 40: f40 f42")
        self.assertEqual(lines[42], "window stores: 42 of 43 functions unreviewed "
                                    "(not in tools/window-stores), 3338 of 3397 stores")

    def test_no_stores_in_windows(self):
        r = self.report("poe-window-stores-total: pgtable=10 stack=5 other=0 other_fns=0\n", "")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.splitlines()[-1], "window stores: 0 of 0 functions unreviewed "
                                                    "(not in tools/window-stores), 0 of 0 stores")

    def test_missing_measurement_fails(self):
        for stores in (None, "poe-window-store: fn=memset stores=1\n"):
            r = self.report(stores, "")
            self.assertEqual(r.returncode, 1)
            self.assertIn("FAILED: window stores: no poe-window-stores-total line", r.stdout)


class ReviewedList(unittest.TestCase):
    def test_every_entry_says_where_its_addresses_come_from(self):
        with open(os.path.join(TOP, "tools", "window-stores")) as f:
            for n, line in enumerate(f, 1):
                if not line.strip() or line.lstrip().startswith("#"):
                    continue
                name, hash_, why = line.partition("#")
                self.assertTrue(hash_ and why.strip(), f"line {n}: no provenance comment: {line!r}")
                self.assertRegex(name.strip(), r"^[A-Za-z0-9_.$]+\*?$", f"line {n}: not one name")


if __name__ == "__main__":
    unittest.main()
