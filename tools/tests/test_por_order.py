"""Tests of tools/check-por-order on disassembly shaped like objdump's."""

import importlib.machinery
import importlib.util
import os
import unittest

PATH = os.path.join(os.path.dirname(__file__), "..", "check-por-order")
loader = importlib.machinery.SourceFileLoader("por_order", PATH)
spec = importlib.util.spec_from_loader("por_order", loader)
por_order = importlib.util.module_from_spec(spec)
loader.exec_module(por_order)


def disasm(*funcs):
    """objdump -d --no-show-raw-insn text of (name, [insn, ...]) pairs."""
    lines, addr = [], 0xffff800080010000
    for name, insns in funcs:
        lines.append("%016x <%s>:" % (addr, name))
        for insn in insns:
            insn = insn.replace("@+8", "%x <%s+0x8>" % (addr + 8, name))
            insn = insn.replace("@+12", "%x <%s+0xc>" % (addr + 12, name))
            insn = insn.replace("@-4", "%x <%s>" % (addr - 4, name))
            lines.append("%16x:\t%s" % (addr, insn))
            addr += 4
        lines.append("")
    return "\n".join(lines)


def failures(*funcs):
    sites, failed = por_order.check(por_order.parse(disasm(*funcs)))
    return sites, [why for _, _, why in failed]


OPEN = "msr\ts3_0_c10_c2_4, x0"


class PorOrder(unittest.TestCase):
    def test_write_then_isb_passes(self):
        self.assertEqual(failures(("f", [OPEN, "isb", "str\tx1, [x2]"])), (1, []))

    def test_store_before_the_isb_fails(self):
        sites, failed = failures(("f", [OPEN, "str\tx1, [x2]", "isb"]))
        self.assertEqual(sites, 1)
        self.assertEqual(len(failed), 1)
        self.assertIn("store str", failed[0])

    def test_atomic_and_pair_stores_fail(self):
        for insn in ("ldclral\tx0, x2, [x1]", "stp\tx1, x2, [sp]", "swpal\tx0, x1, [x2]",
                     "dc\tzva, x3", "setp\t[x0]!, x1!, x2"):
            self.assertEqual(len(failures(("f", [OPEN, insn, "isb"]))[1]), 1, insn)

    def test_loads_and_barriers_before_the_isb_pass(self):
        self.assertEqual(failures(("f", [OPEN, "ldr\tx1, [x2]", "dsb\tishst", "isb"])), (1, []))

    def test_forward_branch_is_followed_on_both_paths(self):
        ok = ("f", [OPEN, "cbz\tw2, @+8", "dsb\tishst", "isb"])
        self.assertEqual(failures(ok), (1, []))
        bad = ("f", [OPEN, "cbz\tw2, @+8", "isb", "str\tx1, [x2]", "isb"])
        self.assertEqual(len(failures(bad)[1]), 1)

    def test_calls_and_backward_branches_fail(self):
        self.assertEqual(len(failures(("f", [OPEN, "bl\tffff800080000000 <g>", "isb"]))[1]), 1)
        self.assertEqual(len(failures(("f", ["nop", OPEN, "b\t@-4", "isb"]))[1]), 1)

    def test_function_end_before_the_isb_fails(self):
        sites, failed = failures(("f", [OPEN]), ("g", ["isb"]))
        self.assertIn("function ends", failed[0])

    def test_eret_synchronises(self):
        self.assertEqual(failures(("f", [OPEN, "ldp\tx0, x1, [sp]", "eret"])), (1, []))

    def test_other_registers_and_kvm_hyp_code_are_not_checked(self):
        self.assertEqual(failures(("f", ["msr\ts3_3_c10_c2_4, x0", "str\tx1, [x2]"])), (0, []))
        self.assertEqual(failures(("__kvm_nvhe_restore", [OPEN, "str\tx1, [x2]", "isb"])), (0, []))


if __name__ == "__main__":
    unittest.main()
