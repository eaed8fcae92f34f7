"""tools/splats on a log with one report of each shape: a WARN between its
cut-here and end-trace markers, a user-space line after a report, a lockdep report, two hits of one
sleeping-in-atomic BUG (one title, counted twice) and an oops followed by
the panic it causes (one oops, not two)."""

import os
import subprocess
import tempfile
import unittest

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SPLATS = os.path.join(TOP, "tools", "splats")
DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")


def run(log):
    return subprocess.run([SPLATS, log], capture_output=True, text=True)


class Splats(unittest.TestCase):
    def test_sample(self):
        r = run(os.path.join(DATA, "splats-sample.log"))
        self.assertEqual(r.returncode, 1)
        lines = r.stdout.splitlines()
        self.assertEqual(lines[-1], "splats: 4 splats, 1 oops (4 titles)")
        self.assertIn("      2 x atomic-sleep: BUG: sleeping function called from "
                      "invalid context at mm/slub.c:N", lines)
        self.assertIn("      1 x lockdep: WARNING: possible circular locking dependency detected", lines)
        # The WARN's report runs from its marker to its end marker.
        i = lines.index('--- first report of "warn: WARNING: mm/foo.c:N at bar, CPU#N: '
                        'swapper/N/N" (log line 3) ---')
        self.assertTrue(lines[i + 1].endswith("------------[ cut here ]------------"))
        self.assertTrue(lines[i + 6].endswith("---[ end trace 0000000000000000 ]---"))
        # A report ends where the guest's own lines begin, and at the
        # first line without a printk timestamp.
        self.assertNotIn("kpkeys-guest: kselftest-begin x", r.stdout)
        self.assertNotIn("# a diagnostic line from user space", r.stdout)

    def test_clean_log(self):
        with tempfile.NamedTemporaryFile("w", suffix=".log") as f:
            f.write("[    0.000000] Booting Linux on physical CPU 0x0\n"
                    "kpkeys-guest: done\n")
            f.flush()
            r = run(f.name)
        self.assertEqual(r.returncode, 0)
        self.assertEqual(r.stdout.strip(), "splats: 0 splats, 0 oops (0 titles)")


if __name__ == "__main__":
    unittest.main()
