"""tools/lib.sh helpers, run in bash against a private apt configuration."""

import os
import pathlib
import re
import subprocess
import tempfile
import time
import unittest

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def lib_sh(script, env=None, apt_conf=""):
    """Run SCRIPT after sourcing tools/lib.sh, with apt reading only the
    sources and settings given in APT_CONF (a tempdir holds the rest)."""
    with tempfile.TemporaryDirectory() as d:
        for sub in ("parts", "lists", "conf.d"):
            os.mkdir(os.path.join(d, sub))
        conf = os.path.join(d, "apt.conf")
        with open(conf, "w") as f:
            f.write(f'Dir::Etc::SourceList "{d}/sources.list";\n'
                    f'Dir::Etc::SourceParts "{d}/parts";\n'
                    f'Dir::Etc::Parts "{d}/conf.d";\n'
                    f'Dir::State::Lists "{d}/lists";\n' + apt_conf)
        ours = ("KPKEYS_", "POE", "_KPKEYS_", "DEBIAN_MIRROR", "SMP", "NUMA", "HUGEPAGES",
                "OOPS", "BOOT_TIMEOUT", "MEM", "CLOCK", "KCONFIG_ALLOW_MISSING")
        e = {k: v for k, v in os.environ.items()
             if not k.lower().endswith("_proxy") and not k.startswith(ours)}
        e.update(APT_CONFIG=conf, KPKEYS_CACHE=os.path.join(d, "cache"), **(env or {}))
        return subprocess.run(["bash", "-c", f'. "{TOP}/tools/lib.sh"; {script}'],
                              env=e, capture_output=True, text=True, cwd=d)


class DebianMirror(unittest.TestCase):
    SHOW = 'debian_mirror; echo "$DEBIAN_MIRROR ${http_proxy:-no-proxy}"'

    def run_with(self, sources=None, deb822=None, extra="", env=None):
        # apt.conf cannot create files: write the sources from the script.
        pre = ""
        if sources is not None:
            pre += f'cat >"$(dirname "$APT_CONFIG")/sources.list" <<"EOF"\n{sources}EOF\n'
        if deb822 is not None:
            pre += f'cat >"$(dirname "$APT_CONFIG")/parts/host.sources" <<"EOF"\n{deb822}EOF\n'
        return lib_sh(pre + self.SHOW, env=env, apt_conf=extra)

    def codename(self):
        with open("/etc/os-release") as f:
            return next(ln.split("=", 1)[1].strip().strip('"') for ln in f
                        if ln.startswith("VERSION_CODENAME="))

    def test_one_line_sources_main_archive_not_security(self):
        c = self.codename()
        r = self.run_with(sources=f"deb file:///srv/sec {c}-security main\n"
                                  f"# deb file:///srv/old {c} main\n"
                                  f"deb [arch=amd64] file:///srv/main/ {c} main contrib\n")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.split(), ["file:///srv/main", "no-proxy"])

    def test_deb822_sources(self):
        c = self.codename()
        r = self.run_with(deb822=f"Types: deb\nURIs: file:///srv/sec\nSuites: {c}-security\n"
                                 f"Components: main\n\n"
                                 f"Types: deb\nURIs: file:///srv/main\nSuites: {c} {c}-updates\n"
                                 f"Components: main\n")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.split()[0], "file:///srv/main")

    def test_apt_proxy_is_exported(self):
        r = self.run_with(sources=f"deb file:///srv/main {self.codename()} main\n",
                          extra='Acquire::http::Proxy "http://127.0.0.1:3142";\n')
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.split(), ["file:///srv/main", "http://127.0.0.1:3142"])

    def test_no_archive_is_a_clear_error(self):
        r = self.run_with(sources="")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("no Debian archive in the host's apt sources", r.stderr)
        self.assertIn("DEBIAN_MIRROR", r.stderr)

    def test_environment_overrides(self):
        r = self.run_with(sources="", env={"DEBIAN_MIRROR": "file:///srv/other/"})
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.split()[0], "file:///srv/other")

    def test_unusable_scheme_is_refused(self):
        r = self.run_with(sources="", env={"DEBIAN_MIRROR": "mirror+file:/etc/mirrors"})
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("not an http://", r.stderr)


class Environment(unittest.TestCase):
    """Values the scripts cannot use stop them (exit 2) before any work;
    unknown KPKEYS_*/POE_* names are reported."""

    def source(self, **env):
        return lib_sh("echo sourced", env=env)

    def test_bad_values_exit_2(self):
        for var, val in (("POE", "bogus"), ("POE", "ON"), ("SMP", "0"), ("SMP", "two"),
                         ("NUMA", "-1"), ("HUGEPAGES", "64k"), ("OOPS", "ignore"),
                         ("BOOT_TIMEOUT", "10s"), ("MEM", "1X"), ("CLOCK", "icount"),
                         ("KCONFIG_ALLOW_MISSING", "yes")):
            with self.subTest(var=var, val=val):
                r = self.source(**{var: val})
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertIn(f"error: {var}={val}: ", r.stderr)
                self.assertNotIn("sourced", r.stdout)

    def test_good_values_pass(self):
        r = self.source(POE="off", SMP="4", NUMA="2", HUGEPAGES="0", OOPS="continue",
                        BOOT_TIMEOUT="900", MEM="3G", CLOCK="insns",
                        KCONFIG_ALLOW_MISSING="1")
        self.assertEqual((r.returncode, r.stdout, r.stderr), (0, "sourced\n", ""))

    def test_unknown_names_warn(self):
        r = self.source(POE_OPT="strict=on", KPKEYS_CACH="/tmp", POE_OPTS="stats=on")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("POE_OPT is set but nothing reads it", r.stderr)
        self.assertIn("KPKEYS_CACH is set but nothing reads it", r.stderr)
        self.assertNotIn("POE_OPTS is set", r.stderr)

    def test_every_variable_the_scripts_read_is_known(self):
        # A name the scripts read but lib.sh does not know would be
        # reported as a typo when a user sets it.
        known = set(re.search(r'^KNOWN_VARIABLES="([^"]*)"',
                              (pathlib.Path(TOP) / "tools/lib.sh").read_text(), re.M).group(1).split())
        read = set()
        for f in (pathlib.Path(TOP) / "tools").rglob("*"):
            if f.is_file() and "tests" not in f.parts and f.suffix not in (".py", ".pyc"):
                for m in re.finditer(r'\$\{?((?:KPKEYS|POE)_[A-Z_]+)\b(?!=)',
                                     f.read_text(errors="replace")):
                    read.add(m.group(1))
        for v in ("KPKEYS_TESTS", "POE_PROGS", "POE_OVERRIDE"):
            read.discard(v)  # tools/matrix's own table variables
        self.assertLessEqual(read, known, sorted(read - known))

    def test_unknown_names_warn_once_per_run(self):
        r = lib_sh('bash -c ". \\"$TOP/tools/lib.sh\\""', env={"POE_OPT": "x"})
        self.assertEqual(r.stderr.count("POE_OPT is set"), 1, r.stderr)


class NewestOfSeries(unittest.TestCase):
    """The fallback when a pinned package version has left the archive."""

    def newest(self, series, versions):
        r = lib_sh(f'newest_of_series "{series}" <<"EOF"\n' + "\n".join(versions) + "\nEOF\n")
        self.assertEqual(r.returncode, 0, r.stderr)
        return r.stdout.strip()

    def test_qemu_takes_the_newest_debian_revision_of_its_series(self):
        self.assertEqual(self.newest("1:11.1", ["1:10.0.13+ds-0+deb13u1", "1:11.1.3+ds-2~bpo13+1",
                                                "1:11.10.0+ds-1", "1:11.1.2+ds-1~bpo13+1"]),
                         "1:11.1.3+ds-2~bpo13+1")

    def test_linux_source_series_is_not_a_string_prefix(self):
        self.assertEqual(self.newest("7.3", ["7.30.1-1", "7.3.4-1~bpo13+1", "7.3.10-1~bpo13+1"]),
                         "7.3.10-1~bpo13+1")

    def test_nothing_of_the_series_prints_nothing(self):
        self.assertEqual(self.newest("1:11.1", ["1:10.0.13+ds-0+deb13u1", "1:11.2.0+ds-1"]), "")


class WaitUnlocked(unittest.TestCase):
    """tools/boot waits for the previous QEMU's lock on a disk image to go."""

    # Locks the file, says so, and on a line on stdin writes FILE.released
    # and exits, which drops the lock.
    HOLD = ("import fcntl, sys\n"
            "f = open(sys.argv[1], 'r+')\n"
            "fcntl.lockf(f, fcntl.LOCK_EX)\n"
            "print('locked', flush=True)\n"
            "sys.stdin.readline()\n"
            "open(sys.argv[1] + '.released', 'w').close()\n")

    def setUp(self):
        d = tempfile.mkdtemp()
        self.addCleanup(subprocess.run, ["rm", "-rf", d])
        self.path = os.path.join(d, "swap.img")
        pathlib.Path(self.path).write_text("x")

    def hold(self):
        """A process that locks the file, as QEMU does its image."""
        p = subprocess.Popen(["python3", "-c", self.HOLD, self.path],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        for f in (p.stdin, p.stdout):
            self.addCleanup(f.close)
        self.addCleanup(p.wait)
        self.addCleanup(p.kill)
        self.assertEqual(p.stdout.readline().strip(), "locked")
        return p

    def wait_unlocked(self, timeout, holder=None):
        """wait_unlocked's status. With HOLDER, the lock's holder is told to
        let go once the helper has found the lock and started waiting: a
        sleep earlier in PATH notes each of the helper's waits."""
        bin_dir = os.path.join(os.path.dirname(self.path), "bin")
        os.mkdir(bin_dir)
        waited = os.path.join(bin_dir, "waited")
        with open(os.path.join(bin_dir, "sleep"), "w") as f:
            f.write(f'#!/bin/sh\ntouch "{waited}"\nexec /bin/sleep "$@"\n')
        os.chmod(os.path.join(bin_dir, "sleep"), 0o755)
        # lib.sh runs with errexit: the status is tested where it is kept.
        script = f'wait_unlocked "{self.path}" {timeout} && echo rc=0 || echo "rc=$?"'
        r = subprocess.Popen(["bash", "-c", f'. "{TOP}/tools/lib.sh"; {script}'],
                             env=dict(os.environ, PATH=bin_dir + ":" + os.environ["PATH"]),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        while holder is not None and r.poll() is None:
            if os.path.exists(waited):
                holder.stdin.write("go\n")
                holder.stdin.flush()
                holder = None
            else:
                time.sleep(0.01)
        out, err = r.communicate(timeout=timeout + 30)
        self.assertEqual(err, "")
        return out.strip(), os.path.exists(waited)

    def test_returns_when_nothing_holds_a_lock(self):
        self.assertEqual(self.wait_unlocked(10), ("rc=0", False))

    def test_returns_once_the_lock_is_gone(self):
        holder = self.hold()
        self.assertEqual(self.wait_unlocked(30, holder), ("rc=0", True))
        # The holder writes .released before it lets go: it did.
        self.assertTrue(os.path.exists(self.path + ".released"))

    def test_gives_up_while_the_lock_stays(self):
        holder = self.hold()
        self.assertEqual(self.wait_unlocked(1), ("rc=1", True))
        self.assertIsNone(holder.poll())
        self.assertFalse(os.path.exists(self.path + ".released"))


if __name__ == "__main__":
    unittest.main()
