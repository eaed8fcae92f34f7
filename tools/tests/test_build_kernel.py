"""tools/build-kernel on a fake kernel tree: a git repository whose Makefile
records each make run, in checkouts at different paths sharing one cache."""

import os
import shutil
import subprocess
import tempfile
import unittest

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

FAKE_MAKEFILE = """\
# Stands in for Kbuild: configure (the last setting of each option wins, an
# option set to n or "is not set" is left out), then "compile" file.c into
# the Image.
allnoconfig:
\t@mkdir -p $(O) && sed -E 's/^# (CONFIG_[A-Z_]+) is not set/\\1=n/' $(KCONFIG_ALLCONFIG) | \\
\t\ttac | awk -F= '!seen[$$1]++' | tac | awk '!/=n$$/' >$(O)/.config
\t@echo "allnoconfig $(CURDIR)" >>$(O)/make.log
Image:
\t@mkdir -p $(O)/arch/arm64/boot && cat $(CURDIR)/file.c >$(O)/arch/arm64/boot/Image
\t@echo "Image $(CURDIR)" >>$(O)/make.log
"""


def git(*args, cwd):
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@localhost", *args],
                   cwd=cwd, check=True, capture_output=True)


class BuildKernel(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.cache = os.path.join(self.tmp, "cache")
        self.kernel = os.path.join(self.tmp, "kernel")
        os.makedirs(self.kernel)
        with open(os.path.join(self.kernel, "Makefile"), "w") as f:
            f.write(FAKE_MAKEFILE)
        self.write(self.kernel, "file.c", "v1\n")
        git("init", "-q", "-b", "main", cwd=self.kernel)
        git("add", "-A", cwd=self.kernel)
        git("commit", "-q", "-m", "base", cwd=self.kernel)

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def write(self, d, name, text):
        with open(os.path.join(d, name), "w") as f:
            f.write(text)

    def checkout(self, name):
        """A workbench checkout (tools/, one fragment) with build/linux."""
        top = os.path.join(self.tmp, name)
        shutil.copytree(os.path.join(TOP, "tools"), os.path.join(top, "tools"),
                        ignore=shutil.ignore_patterns("tests", "__pycache__"))
        os.makedirs(os.path.join(top, "configs"))
        self.write(os.path.join(top, "configs"), "t.config", "CONFIG_T=y\n")
        git("clone", "-q", self.kernel, os.path.join(top, "build", "linux"), cwd=self.tmp)
        return top

    def build(self, top, name="t"):
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("KPKEYS_", "POE", "_KPKEYS_", "KMAKE_", "KCONFIG_"))}
        env["KPKEYS_CACHE"] = self.cache
        r = subprocess.run([os.path.join(top, "tools", "build-kernel"), name, "t"],
                           env=env, capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        out = os.path.join(self.cache, "out", name)
        self.assertEqual(r.stdout.strip(), os.path.join(out, "arch/arm64/boot/Image"))
        return r

    def make_log(self, name="t"):
        with open(os.path.join(self.cache, "out", name, "make.log")) as f:
            return f.read().splitlines()

    def image(self, name="t"):
        with open(os.path.join(self.cache, "out", name, "arch/arm64/boot/Image")) as f:
            return f.read()

    def test_compiled_from_the_mirror_in_the_cache(self):
        self.build(self.checkout("a"))
        mirror = os.path.join(self.cache, "linux-src")
        self.assertEqual(self.make_log(), [f"allnoconfig {mirror}", f"Image {mirror}"])
        self.assertEqual(self.image(), "v1\n")

    def test_clone_at_another_path_builds_nothing(self):
        self.build(self.checkout("a"))
        r = self.build(self.checkout("elsewhere/b"))
        self.assertIn("unchanged since its last build", r.stderr)
        self.assertEqual(len(self.make_log()), 2)

    def test_uncommitted_and_untracked_edits_are_built(self):
        a = self.checkout("a")
        self.build(a)
        linux = os.path.join(a, "build", "linux")
        self.write(linux, "file.c", "v2 uncommitted\n")
        self.build(a)
        self.assertEqual(self.image(), "v2 uncommitted\n")
        self.write(linux, "new.c", "untracked\n")
        self.build(a)
        self.assertTrue(os.path.exists(os.path.join(self.cache, "linux-src", "new.c")))
        os.remove(os.path.join(linux, "new.c"))
        self.build(a)
        self.assertFalse(os.path.exists(os.path.join(self.cache, "linux-src", "new.c")))
        self.assertEqual(len(self.make_log()), 8)
        # The developer's index and HEAD are left alone.
        st = subprocess.run(["git", "status", "--porcelain"], cwd=linux,
                            capture_output=True, text=True).stdout
        self.assertEqual(st, " M file.c\n")

    def test_unchanged_files_keep_their_mtime(self):
        a = self.checkout("a")
        self.write(os.path.join(a, "build", "linux"), "other.c", "x\n")
        self.build(a)
        other = os.path.join(self.cache, "linux-src", "other.c")
        before = os.stat(other).st_mtime_ns
        self.write(os.path.join(a, "build", "linux"), "file.c", "v3\n")
        self.build(a)
        self.assertEqual(os.stat(other).st_mtime_ns, before)

    def test_missing_image_is_rebuilt(self):
        a = self.checkout("a")
        self.build(a)
        os.remove(os.path.join(self.cache, "out", "t", "arch/arm64/boot/Image"))
        self.build(a)
        self.assertEqual(self.image(), "v1\n")
        self.assertEqual(len(self.make_log()), 4)

    def test_selftests_are_not_part_of_the_kernel(self):
        a = self.checkout("a")
        linux = os.path.join(a, "build", "linux")
        for d in ("tools/testing/selftests", "tools/lib"):
            os.makedirs(os.path.join(linux, d))
        self.write(linux, "tools/testing/selftests/t.c", "test v1\n")
        self.write(linux, "tools/lib/l.c", "lib v1\n")
        self.build(a)
        self.write(linux, "tools/testing/selftests/t.c", "test v2\n")
        r = self.build(a)
        self.assertIn("unchanged since its last build", r.stderr)
        self.assertEqual(len(self.make_log()), 2)
        # The rest of tools/ can be part of a kernel build (objtool,
        # resolve_btfids): a change there builds.
        self.write(linux, "tools/lib/l.c", "lib v2\n")
        self.build(a)
        self.assertEqual(len(self.make_log()), 4)

    def test_broken_mirror_is_recreated(self):
        a = self.checkout("a")
        self.build(a)
        mirror = os.path.join(self.cache, "linux-src")
        shutil.rmtree(os.path.join(mirror, ".git", "objects"))
        self.write(os.path.join(a, "build", "linux"), "file.c", "v4\n")
        r = self.build(a)
        self.assertIn("kernel source mirror", r.stderr)
        self.assertIn("is broken: recreating it", r.stderr)
        self.assertEqual(self.image(), "v4\n")

    def test_later_fragment_overrides_earlier(self):
        a = self.checkout("a")
        self.write(os.path.join(a, "configs"), "u.config", "# CONFIG_T is not set\n")
        env = dict(os.environ, KPKEYS_CACHE=self.cache)
        for frags, ok in ((["t", "u"], True), (["u", "t"], True), (["t"], True)):
            r = subprocess.run([os.path.join(a, "tools", "build-kernel"), "t", *frags],
                               env=env, capture_output=True, text=True)
            self.assertEqual(r.returncode == 0, ok, r.stderr)
        with open(os.path.join(self.cache, "out", "t", ".config")) as f:
            self.assertEqual(f.read(), "CONFIG_T=y\n")

    def test_tree_outside_the_checkout_is_built_in_place(self):
        a = self.checkout("a")
        env = dict(os.environ, KPKEYS_CACHE=self.cache, KPKEYS_LINUX=self.kernel)
        r = subprocess.run([os.path.join(a, "tools", "build-kernel"), "t", "t"], env=env,
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(self.make_log(), [f"allnoconfig {os.path.realpath(self.kernel)}",
                                           f"Image {os.path.realpath(self.kernel)}"])
        self.assertFalse(os.path.exists(os.path.join(self.cache, "linux-src")))


if __name__ == "__main__":
    unittest.main()
