"""tools/checkpatch-justified keeps checkpatch's output in the cache, keyed by
the patch and by checkpatch itself. Run against a fake scripts/checkpatch.pl
that records every call, in a temporary workbench and cache.
"""

import os
import shutil
import subprocess
import tempfile
import unittest

TOOLS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")

# Reports a long line when the patch has the word "long"; exits 2 (as perl
# does when it dies) when it has "crash". Every call appends to calls.log.
FAKE_CHECKPATCH = """#!/bin/sh
for f; do p=$f; done
echo "$p" >>"$(dirname "$0")/../calls.log"
grep -q crash "$p" && { echo "died"; exit 2; }
grep -q long "$p" && { echo "WARNING:LONG_LINE: line length exceeds 100 columns"; exit 1; }
exit 0
"""

PATCH = """From 0123456789abcdef0123456789abcdef01234567 Mon Sep 17 00:00:00 2001
From: Ada Lovelace <ada@kernel-test.dev>
Date: Sun, 1 Nov 2026 10:00:00 +0000
Message-ID: <20261201100000.1-ada@kernel-test.dev>
In-Reply-To: <20261201100000.0-ada@kernel-test.dev>
References: <20261201100000.0-ada@kernel-test.dev>
Subject: [PATCH] mm: kpkeys: add a key

Why it is needed.

Signed-off-by: Ada Lovelace <ada@kernel-test.dev>
---

Notes:
    checkpatch: LONG_LINE: a table

 mm/pgtable.c | 1 +
 1 file changed, 1 insertion(+)

diff --git a/mm/pgtable.c b/mm/pgtable.c
--- a/mm/pgtable.c
+++ b/mm/pgtable.c
@@ -1 +1,2 @@
 int pgtable;
+int key; /* BODY */
"""


class CheckpatchCache(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="kpkeys-test-")
        self.top = os.path.join(self.dir, "top")
        scripts = os.path.join(self.top, "build", "linux", "scripts")
        os.makedirs(scripts)
        os.makedirs(os.path.join(self.top, "tools"))
        for f in ("checkpatch-justified", "lib.sh", "versions"):
            shutil.copy2(os.path.join(TOOLS, f), os.path.join(self.top, "tools", f))
        self.checkpatch = os.path.join(scripts, "checkpatch.pl")
        self.write(self.checkpatch, FAKE_CHECKPATCH)
        os.chmod(self.checkpatch, 0o755)
        self.write(os.path.join(scripts, "spelling.txt"), "abandonned||abandoned\n")
        self.calls = os.path.join(self.top, "build", "linux", "calls.log")
        self.env = {k: v for k, v in os.environ.items()
                    if not k.startswith(("KPKEYS_", "POE", "_KPKEYS_"))}
        self.env["KPKEYS_CACHE"] = os.path.join(self.dir, "cache")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def write(self, path, text):
        with open(path, "w") as f:
            f.write(text)

    def patch(self, name, text):
        path = os.path.join(self.dir, name)
        self.write(path, text)
        return path

    def check(self, *patches):
        """Run the tool; return (exit status, output, checkpatch calls so far)."""
        r = subprocess.run([os.path.join(self.top, "tools", "checkpatch-justified"), *patches],
                           env=self.env, capture_output=True, text=True)
        calls = []
        if os.path.exists(self.calls):
            with open(self.calls) as f:
                calls = f.read().split()
        return r.returncode, r.stdout, len(calls)

    def test_the_same_patch_is_checked_once(self):
        p = self.patch("0001-a.patch", PATCH.replace("BODY", "long"))
        first = self.check(p)
        second = self.check(p)
        self.assertEqual(first[2], 1)
        self.assertEqual(second[2], 1, "checkpatch ran again on the same patch")
        self.assertEqual(first[:2], second[:2])
        self.assertIn("justified in the notes: WARNING:LONG_LINE", second[1])

    def test_threading_headers_do_not_count(self):
        self.check(self.patch("0001-a.patch", PATCH))
        mail = PATCH.replace("20261201100000", "20261202113000")
        status, out, calls = self.check(self.patch("v1-0001-a.patch", mail))
        self.assertEqual((status, calls), (0, 1), out)

    def test_a_change_in_the_patch_is_checked(self):
        self.check(self.patch("0001-a.patch", PATCH))
        status, out, calls = self.check(self.patch("0001-a.patch", PATCH.replace("BODY", "long body")))
        self.assertEqual(calls, 2)
        self.assertIn("WARNING:LONG_LINE", out)
        # The notes justify it; drop the justification and the cached
        # output must still fail the patch.
        unjustified = PATCH.replace("BODY", "long body").replace("checkpatch: LONG_LINE", "a note")
        status, out, calls = self.check(self.patch("0001-a.patch", unjustified))
        self.assertEqual((status, calls), (1, 3), out)
        self.assertIn("not justified: WARNING:LONG_LINE", out)

    def test_a_new_checkpatch_checks_again(self):
        p = self.patch("0001-a.patch", PATCH)
        self.check(p)
        self.write(self.checkpatch, FAKE_CHECKPATCH + "# a new version\n")
        self.assertEqual(self.check(p)[2], 2)

    def test_a_checkpatch_that_died_is_not_kept(self):
        p = self.patch("0001-a.patch", PATCH.replace("BODY", "crash"))
        self.assertEqual(self.check(p)[0], 1)
        status, out, calls = self.check(p)
        self.assertEqual((status, calls), (1, 2), out)


if __name__ == "__main__":
    unittest.main()
