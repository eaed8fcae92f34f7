"""The PREEMPT_RT and page-table-check rows of tools/config-matrix configure
like their base row, except for what PREEMPT_RT itself turns off. Real
Kconfig on build/linux: PREEMPT_RT needs EXPERT, which makes options visible
that are always on without it, and the allnoconfig base then turns them off
(the row once ran without madvise(), sysctl and rseq). Page table check has
dependencies of its own (EXCLUSIVE_SYSTEM_RAM) that a fragment could lose
without a word."""

import os
import re
import shutil
import subprocess
import tempfile
import unittest

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LINUX = os.path.join(TOP, "build", "linux")

# The fragments of the rt-4k-48 row and of its base, as tools/config-matrix
# lists them: its BASE_FRAGMENTS, then the row's own.
with open(os.path.join(TOP, "tools", "config-matrix")) as _f:
    _text = _f.read()
_common = re.search(r'^BASE_FRAGMENTS="([^"]*)"', _text, re.M).group(1).split()


def row_fragments(row):
    return _common + re.search(r"^%s\s*\|([^|]*)\|" % re.escape(row), _text,
                               re.M).group(1).split()


RT = row_fragments("rt-4k-48")
BASE = [f for f in RT if f != "matrix-rt"]
PTC = row_fragments("ptc-4k-48")

# What PREEMPT_RT may take away: transparent huge pages (and what depends
# on them: contpte, THP swap, the PMD PFN maps, MM_ID), queued rwlocks and
# softirqs on their own stack (RT has its own).
RT_CONSEQUENCES = {
    "ARCH_HAS_PMD_SOFTLEAVES", "ARCH_SUPPORTS_HUGE_PFNMAP", "ARCH_SUPPORTS_PMD_PFNMAP",
    "ARCH_WANT_PMD_MKWRITE", "ARM64_CONTPTE", "MM_ID", "QUEUED_RWLOCKS",
    "SOFTIRQ_ON_OWN_STACK", "THP_SWAP", "TRANSPARENT_HUGEPAGE",
    "TRANSPARENT_HUGEPAGE_ALWAYS", "TRANSPARENT_HUGEPAGE_SHMEM_HUGE_NEVER",
    "TRANSPARENT_HUGEPAGE_TMPFS_HUGE_NEVER",
}


def enabled(config):
    with open(config) as f:
        return {line.split("=")[0][len("CONFIG_"):] for line in f
                if line.startswith("CONFIG_") and line.rstrip().endswith("=y")}


@unittest.skipUnless(os.path.isfile(os.path.join(LINUX, "Makefile")),
                     "no kernel tree in build/linux (make tree)")
class RowsWithOneMoreFragment(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp()
        cls.base = cls.configure("base", BASE)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    @classmethod
    def configure(cls, name, fragments):
        frag = os.path.join(cls.tmp, name + ".fragments")
        with open(frag, "w") as out:
            for f in fragments:
                with open(os.path.join(TOP, "configs", f + ".config")) as inp:
                    out.write(inp.read())
        o = os.path.join(cls.tmp, name)
        subprocess.run(["make", "-s", "-C", LINUX, "O=" + o, "ARCH=arm64",
                        "CROSS_COMPILE=aarch64-linux-gnu-", "KCONFIG_ALLCONFIG=" + frag,
                        "allnoconfig"], check=True, capture_output=True)
        return enabled(os.path.join(o, ".config"))

    def test_rt_row_loses_only_what_rt_turns_off(self):
        rt = self.configure("rt", RT)
        self.assertIn("PREEMPT_RT", rt)
        self.assertEqual(sorted(self.base - rt - RT_CONSEQUENCES), [])

    def test_page_table_check_row_adds_only_page_table_check(self):
        self.assertEqual([f for f in PTC if f != "matrix-ptc"], BASE)
        ptc = self.configure("ptc", PTC)
        self.assertIn("KPKEYS_HARDENED_PGTABLES", ptc)
        self.assertEqual(sorted(self.base - ptc), [])
        # PAGE_TABLE_CHECK selects PAGE_EXTENSION; nothing else comes with it.
        self.assertEqual(sorted(ptc - self.base),
                         ["PAGE_EXTENSION", "PAGE_TABLE_CHECK", "PAGE_TABLE_CHECK_ENFORCED"])
