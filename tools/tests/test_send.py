"""Tests of the submission tools: the identity rule (tools/identity.sh),
tools/series refusing and --reauthor, and the mail checks of tools/send-check
(tools/mailcheck.py), on real git repositories and real format-patch output.

tools/series runs from a copy of tools/ in a temporary workbench whose
build/linux is a small repository with a "base" tag, so that nothing here can
touch this checkout's patches/ or build/linux.
"""

import os
import re
import shutil
import subprocess
import tempfile
import unittest

from tools import mailcheck, sets

TOOLS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
ADA = "Ada Lovelace <ada@kernel-test.dev>"
OLD = "kpkeys developers <dev@kpkeys.example.org>"
BEA = "Bea Other <bea@kernel-test.dev>"
# The test series' mail sets: the first two patches, then the third on top.
SETS = """# comment
set core 1-2
kpkeys: the core

What the core does.

set arm64 3 after=core prefix=PATCH
arm64: mm: key the tables

Needs the core.
"""


def run(args, cwd=None, env=None, check=True, stdin=None):
    p = subprocess.run(args, cwd=cwd, env=env, input=stdin, capture_output=True, text=True)
    if check and p.returncode != 0:
        raise AssertionError(f"{args} failed ({p.returncode}): {p.stderr}")
    return p


class Workbench:
    """A temporary workbench: tools/ copied, no git identity anywhere, and
    build/linux = one base commit plus three commits by a placeholder, one
    co-developed, one with a note."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="kpkeys-test-")
        self.top = os.path.join(self.dir, "top")
        self.linux = os.path.join(self.top, "build", "linux")
        gitconfig = os.path.join(self.dir, "gitconfig")
        open(gitconfig, "w").close()
        self.env = {k: v for k, v in os.environ.items()
                    if not k.startswith("GIT_") and k != "KPKEYS_AUTHOR"}
        self.env.update(HOME=self.dir, GIT_CONFIG_GLOBAL=gitconfig, GIT_CONFIG_NOSYSTEM="1",
                        KPKEYS_CACHE=os.path.join(self.dir, "cache"))
        os.makedirs(os.path.join(self.top, "tools"))
        for f in ("series", "lib.sh", "versions", "identity.sh", "mail-sets", "sets.py"):
            shutil.copy2(os.path.join(TOOLS, f), os.path.join(self.top, "tools", f))
        os.makedirs(os.path.join(self.top, "patches"))
        with open(os.path.join(self.top, "patches", "sets"), "w") as f:
            f.write(SETS)
        self.git("init", "-q", cwd=self.top)
        os.makedirs(self.linux)
        self.git("init", "-q", "-b", "main")
        self.write("mm/pgtable.c", "int pgtable;\n")
        self.commit("Linux 7.3", "kpkeys <kpkeys@localhost>", "2000-01-01T00:00:00Z", sign=False)
        self.git("tag", "base")
        self.write("mm/pgtable.c", "int pgtable;\nint key;\n")
        self.commit("mm: kpkeys: add a key\n\nWhy it is needed.", OLD, "2026-11-01T10:00:00+00:00")
        self.git("notes", "add", "-m", "checkpatch: LONG_LINE: a table", env=self.as_(OLD))
        self.write("mm/kpkeys.c", "int kpkeys;\n")
        self.commit(f"mm: kpkeys: add kpkeys.c\n\nCo-developed-by: {BEA}\nSigned-off-by: {BEA}",
                    OLD, "2026-11-01T11:00:00Z")
        self.write("arch/arm64/mm/mmu.c", "int mmu;\n")
        self.commit("arm64: mm: key the tables\n\n# not a comment: a line that starts with #",
                    OLD, "2026-11-01T12:00:00Z")
        self.git("config", "branch.main.description",
                 "kpkeys: a test series\n\nThe cover letter's text.")

    def git(self, *args, cwd=None, env=None):
        return run(["git", *args], cwd=cwd or self.linux, env=env or self.env).stdout

    def write(self, path, text):
        path = os.path.join(self.linux, path)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)

    def as_(self, who, date=None):
        """The environment of a git command run by WHO (nobody is configured)."""
        name, email = re.match(r"(.*) <(.*)>", who).groups()
        env = dict(self.env, GIT_AUTHOR_NAME=name, GIT_AUTHOR_EMAIL=email,
                   GIT_COMMITTER_NAME=name, GIT_COMMITTER_EMAIL=email)
        if date:
            env.update(GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date)
        return env

    def commit(self, message, who, date, sign=True):
        env = self.as_(who, date)
        self.git("add", "-A", env=env)
        self.git("commit", "-q", "--cleanup=verbatim", "-m", message, *(["-s"] if sign else []), env=env)

    def tool(self, *args, author=None, check=False):
        env = dict(self.env, **({"KPKEYS_AUTHOR": author} if author is not None else {}))
        return run([os.path.join(self.top, "tools", "series"), *args], env=env, check=check)

    def identity_problem(self, ident):
        """identity_problem from tools/identity.sh: (status, reason)."""
        p = run(["bash", "-c", 'TOP=$1; . "$1/tools/identity.sh"; identity_problem "$2"', "-",
                 self.top, ident], env=self.env, check=False)
        return p.returncode, p.stdout.strip()

    def trees(self):
        return self.git("log", "--format=%T", "base..HEAD").split()

    def close(self):
        shutil.rmtree(self.dir, ignore_errors=True)


class IdentityRule(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.wb = Workbench()

    @classmethod
    def tearDownClass(cls):
        cls.wb.close()

    def test_people_are_accepted(self):
        for ident in (ADA, "Paul E. McKenney <paulmck@kernel.org>", "Zoë Ünal <z@arm.com>"):
            self.assertEqual(self.wb.identity_problem(ident), (0, ""), ident)

    def test_placeholders_are_refused(self):
        for ident in ("kpkeys <kpkeys@localhost>", "A Person <kpkeys@localhost>",
                      "kpkeys developers <dev@kernel-test.dev>", "KPKEYS <k@kernel-test.dev>",
                      "A Person <a@example.org>", "A Person <a@lists.example.org>",
                      "A Person <a@example.com>"):
            status, why = self.wb.identity_problem(ident)
            self.assertEqual(status, 1, ident)
            self.assertTrue(why, ident)

    def test_incomplete_identities_are_refused(self):
        for ident in ("", " <>", "A Person <>", "<a@kernel-test.dev>", "A Person a@kernel-test.dev",
                      "A Person <a>"):
            status, why = self.wb.identity_problem(ident)
            self.assertEqual(status, 1, repr(ident))
            self.assertIn("is not of the form", why)


class SeriesIdentity(unittest.TestCase):
    def setUp(self):
        self.wb = Workbench()
        self.patches = os.path.join(self.wb.top, "patches")

    def exported(self):
        return sorted(n for n in os.listdir(self.patches) if n.endswith(".patch"))

    def tearDown(self):
        self.wb.close()

    def test_refuses_without_an_identity(self):
        p = self.wb.tool()
        self.assertEqual(p.returncode, 1)
        self.assertIn("no identity", p.stderr)
        self.assertEqual(self.exported(), [])

    def test_refuses_a_placeholder_from_git_config(self):
        self.wb.git("config", "user.name", "kpkeys", cwd=self.wb.top)
        self.wb.git("config", "user.email", "kpkeys@localhost", cwd=self.wb.top)
        p = self.wb.tool()
        self.assertEqual(p.returncode, 1)
        self.assertIn("refusing identity", p.stderr)
        self.assertEqual(self.exported(), [])

    def test_refuses_commits_authored_by_someone_else(self):
        p = self.wb.tool(author=ADA)
        self.assertEqual(p.returncode, 1)
        self.assertIn("authored by " + OLD, p.stderr)
        self.assertIn("tools/series --reauthor", p.stderr)
        self.assertEqual(self.exported(), [])

    def test_reauthor_keeps_trees_notes_and_other_signoffs(self):
        trees = self.wb.trees()
        self.wb.tool("--reauthor", author=ADA, check=True)
        self.assertEqual(self.wb.trees(), trees)
        log = self.wb.git("log", "--format=%an <%ae>|%cn <%ce>|%aI", "base..HEAD").splitlines()
        self.assertEqual([l.split("|")[:2] for l in log], [[ADA, ADA]] * 3)
        self.assertEqual(log[-1].split("|")[2], "2026-11-01T10:00:00+00:00")
        messages = [self.wb.git("log", "-1", "--format=%B", f"HEAD~{i}") for i in range(3)]
        for m in messages:
            self.assertIn(f"Signed-off-by: {ADA}\n", m)
            self.assertNotIn(f"Signed-off-by: {OLD}", m)
        self.assertIn(f"Co-developed-by: {BEA}\nSigned-off-by: {BEA}\nSigned-off-by: {ADA}\n", messages[1])
        self.assertIn("\n# not a comment", messages[0])
        self.assertEqual(self.wb.git("notes", "show", "HEAD~2").strip(), "checkpatch: LONG_LINE: a table")
        # Now the export runs, and the cover letter is from the identity too.
        self.wb.tool(author=ADA, check=True)
        names = self.exported()
        self.assertEqual(len(names), 4)
        for n in names:
            with open(os.path.join(self.patches, n)) as f:
                self.assertIn(f"\nFrom: {ADA}\n", f.read(), n)
        # The round-trip check needs no identity (CI has none).
        p = self.wb.tool("--check")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("matches build/linux (3 patches)", p.stderr)

    def test_export_writes_each_mail_set(self):
        self.wb.tool("--reauthor", author=ADA, check=True)
        self.wb.tool(author=ADA, check=True)
        out = os.path.join(self.wb.top, "build", "sets")
        self.assertEqual(sorted(os.listdir(out)), ["01-core", "02-arm64"])
        core = mailcheck.load(os.path.join(out, "01-core"))
        arm64 = mailcheck.load(os.path.join(out, "02-arm64"))
        self.assertEqual([m.header("Subject") for m in core],
                         ["[PATCH RFC 0/2] kpkeys: the core", "[PATCH RFC 1/2] mm: kpkeys: add a key",
                          "[PATCH RFC 2/2] mm: kpkeys: add kpkeys.c"])
        self.assertEqual(arm64[0].header("Subject"), "[PATCH 0/1] arm64: mm: key the tables")
        for mails in (core, arm64):
            root = mails[0].header("Message-ID")
            self.assertEqual([m.header("In-Reply-To") for m in mails[1:]], [root] * (len(mails) - 1))
        base = self.wb.git("rev-parse", "base").strip()
        self.assertEqual(mailcheck.check_base(core, base), [])
        # The set on top names the core's patches, by patch id, and no other.
        ids = [run(["git", "patch-id", "--stable"], stdin=open(m.path).read()).stdout.split()[0]
               for m in core[1:]]
        body = arm64[0].body()
        self.assertEqual(re.findall(r"^prerequisite-patch-id: (\w+)$", body, re.M), ids)
        self.assertNotIn("prerequisite-patch-id", core[0].body())
        self.assertIn("What the core does.", core[0].body())
        self.assertIn("* 2. arm64: mm: key the tables (1 patch)", body)
        self.assertIn("after set 1 (its patches", body)

    def test_sets_that_do_not_cover_the_series_are_refused(self):
        self.wb.tool("--reauthor", author=ADA, check=True)
        with open(os.path.join(self.patches, "sets"), "w") as f:
            f.write(SETS.replace("set arm64 3", "set arm64 4"))
        p = self.wb.tool(author=ADA)
        self.assertEqual(p.returncode, 1)
        self.assertIn("starts at patch 4, expected 3", p.stderr)
        p = self.wb.tool("--check")
        self.assertEqual(p.returncode, 1)

    def test_check_ignores_even_a_placeholder_identity(self):
        self.wb.tool("--reauthor", author=ADA, check=True)
        self.wb.tool(author=ADA, check=True)
        p = self.wb.tool("--check", author="kpkeys <kpkeys@localhost>")
        self.assertEqual(p.returncode, 0, p.stderr)


class MailChecks(unittest.TestCase):
    """tools/mailcheck.py on the mails format-patch makes with tools/send-check's
    options, and on the same mails damaged."""

    def setUp(self):
        self.wb = Workbench()
        self.wb.tool("--reauthor", author=ADA, check=True)
        self.out = os.path.join(self.wb.dir, "send")
        env = self.wb.as_(ADA)
        self.wb.git("format-patch", "-q", "--notes", "--base=base", "--cover-letter",
                    "--cover-from-description=subject", "--subject-prefix=PATCH RFC", "-v", "2",
                    "--thread=shallow", "--to=linux-mm@kvack.org", f"--cc={BEA}",
                    "-o", self.out, "base..HEAD", env=env)
        self.base = self.wb.git("rev-parse", "base").strip()

    def tearDown(self):
        self.wb.close()

    def mails(self):
        return mailcheck.load(self.out)

    def edit(self, index, old, new):
        path = self.mails()[index].path
        with open(path) as f:
            text = f.read()
        self.assertIn(old, text)
        with open(path, "w") as f:
            f.write(text.replace(old, new, 1))

    def cli(self):
        return run(["python3", os.path.join(TOOLS, "mailcheck.py"), self.out, "--version", "2",
                    "--count", "3", "--sender", ADA, "--base", self.base], check=False)

    def test_prepared_mails_pass(self):
        p = self.cli()
        self.assertEqual(p.returncode, 0, p.stdout)
        self.assertEqual(len(p.stdout.splitlines()), 6)
        self.assertTrue(all(l.startswith("PASS ") for l in p.stdout.splitlines()), p.stdout)

    def test_a_patch_answering_another_patch_breaks_the_thread(self):
        mails = self.mails()
        cover_id, other = mails[0].header("Message-ID"), mails[1].header("Message-ID")
        self.edit(2, f"In-Reply-To: {cover_id}", f"In-Reply-To: {other}")
        problems = mailcheck.check_thread(self.mails())
        self.assertEqual(len(problems), 1)
        self.assertIn("v2-0002-", problems[0])
        self.assertIn("In-Reply-To", problems[0])
        p = self.cli()
        self.assertEqual(p.returncode, 1)
        self.assertIn("FAIL thread: v2-0002-", p.stdout)

    def test_a_missing_reference_breaks_the_thread(self):
        cover_id = self.mails()[0].header("Message-ID")
        self.edit(3, f"References: {cover_id}\n", "")
        self.assertIn("References: None", mailcheck.check_thread(self.mails())[0])

    def test_a_missing_mail_breaks_the_numbering(self):
        os.remove(self.mails()[2].path)
        problems = mailcheck.check_subjects(self.mails(), 2, 3)
        self.assertIn("expected v2 2/3", problems[0])
        self.assertIn("3 mails for 3 patches", problems[-1])

    def test_another_version_or_prefix_is_reported(self):
        self.assertTrue(mailcheck.check_subjects(self.mails(), 1, 3))
        self.edit(1, "[PATCH RFC v2 1/3]", "[PATCH v2 1/3]")
        self.assertIn("is not", mailcheck.check_subjects(self.mails(), 2, 3)[0])

    def test_a_shared_message_id_is_reported(self):
        mails = self.mails()
        self.edit(2, mails[2].header("Message-ID"), mails[1].header("Message-ID"))
        self.assertIn("share a Message-ID", mailcheck.check_parse(self.mails())[-1])

    def test_another_sender_and_missing_signoff_are_reported(self):
        self.assertIn("not Bea Other", mailcheck.check_sender(self.mails(), BEA)[0])
        self.edit(1, f"Signed-off-by: {ADA}\n", "")
        self.assertIn("no Signed-off-by", mailcheck.check_sender(self.mails(), ADA)[0])

    def test_the_base_commit_must_be_named(self):
        self.assertEqual(mailcheck.check_base(self.mails(), self.base), [])
        self.assertTrue(mailcheck.check_base(self.mails(), "0" * 40))


class SetsFile(unittest.TestCase):
    """tools/sets.py: the format of patches/sets and what it checks."""

    def parse(self, text):
        with tempfile.NamedTemporaryFile("w", suffix=".sets", delete=False) as f:
            f.write(text)
        self.addCleanup(os.unlink, f.name)
        return sets.parse(f.name)

    def test_the_test_sets_parse(self):
        parsed = self.parse(SETS)
        self.assertEqual([(s["name"], s["first"], s["last"], s["after"], s["prefix"]) for s in parsed],
                         [("core", 1, 2, [], "PATCH RFC"), ("arm64", 3, 3, ["core"], "PATCH")])
        self.assertEqual(parsed[1]["subject"], "arm64: mm: key the tables")
        self.assertEqual(parsed[1]["body"], "Needs the core.")
        self.assertEqual(sets.problems(parsed, 3), [])

    def test_gaps_overlaps_and_unknown_dependencies_are_problems(self):
        self.assertIn("starts at patch 3, expected 2",
                      sets.problems(self.parse(SETS.replace("set core 1-2", "set core 1-1")), 3)[0])
        self.assertIn("starts at patch 3, expected 4",
                      sets.problems(self.parse(SETS.replace("set core 1-2", "set core 1-3")), 3)[0])
        self.assertIn("after=nope",
                      sets.problems(self.parse(SETS.replace("after=core", "after=nope")), 3)[0])
        self.assertIn("the series has 4", sets.problems(self.parse(SETS), 4)[-1])
        self.assertIn("no cover letter text",
                      sets.problems(self.parse(SETS.replace("\nNeeds the core.\n", "\n")), 3)[0])

    def test_malformed_lines_are_refused(self):
        with self.assertRaises(sets.SetsError):
            self.parse("set core one-two\nsubject\n\ntext\n")
        with self.assertRaises(sets.SetsError):
            self.parse("text before\nset core 1\nsubject\n\ntext\n")
        with self.assertRaises(sets.SetsError):
            self.parse("set core 1 to=someone\nsubject\n\ntext\n")

    def test_dependencies_are_transitive(self):
        parsed = self.parse(SETS + "\nset tests 4 after=arm64\nsubject\n\ntext\n")
        self.assertEqual(sets.deps(parsed, "tests"), ["core", "arm64"])
        self.assertEqual(sets.deps(parsed, "core"), [])

    def test_the_series_cover_letter_goes_where_asked(self):
        parsed = self.parse(SETS.replace("What the core does.", "Above.\n\n@series-cover"))
        text = sets.cover(parsed, "core", "kpkeys: a test series\n\nThe cover letter's text.\n")
        self.assertTrue(text.startswith("kpkeys: the core\n\nAbove.\n\nThe cover letter's text.\n"))
        self.assertIn("\"kpkeys: a test series\"", text)
        self.assertIn("on its own.", text)


if __name__ == "__main__":
    unittest.main()
