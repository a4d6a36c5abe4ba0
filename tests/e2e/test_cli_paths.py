"""Every path a `telic` subcommand takes (issue 40, item 4): given a directory,
a FIFO, /dev/zero (through a symbolic link in a scratch folder) or a missing
file, each command ends promptly with exit
status 1 and one error line on stderr beginning "telic:" (never an abort or
a hang), or does what it documents for that input.

The options come from the CLI's definitions (src/cli/commands.cc,
bundle_command.cc, graph_commands.cc, retention_command.cc,
check_command.cc): --repo and --db of every command that has them, FILE of
validate, import and report parse, --bundle of verify, -o of export,
--policy and --action @FILE of check, --workdir of demo, --auth-token-file
of serve and ui, and the state directory's config.json.

Documented exceptions: `check` reports usage errors with status 2; `doctor`
reports its checks on stdout with status 1; `serve` (stdio) ends a failed
start with one "Telic MCP failed:" line; `export -o` refuses a directory,
FIFO or device as the file it would replace; `broker-gate` is a hook and always
answers on stdout with status 0. A directory is the ordinary value of --repo
and --workdir, a missing file of -o, --db (serve, import: a new ledger) and
config.json; those may succeed."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

from mcp_client import make_git_repo, run_tests, serve, Workspace, telic_binary

KINDS = ("directory", "fifo", "device", "missing")
TIMEOUT = 10  # seconds: a FIFO opened for reading without a writer would block forever


class CliPathsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.ws = Workspace()
        server = serve(cls.ws)
        try:
            started = server.ok("telic_start_run", {"mode": "analyze_and_fix", "original_request": "Fix the greeting.",
                                                    "host_capabilities": ["repository.read"]})
            cls.run_id = started["run"]["runId"]
            artifacts = server.ok("telic_get_run", {"run_id": cls.run_id})["artifacts"]
            cls.request_id = next(a["id"] for a in artifacts if a["type"] == "UserMessage")
        finally:
            server.close()
        cls.bundle = os.path.join(cls.ws.base, "run.bundle.json")
        subprocess.run([telic_binary(), "export", cls.run_id, "-o", cls.bundle], env=cls.ws.env(), check=True,
                       capture_output=True, timeout=60)
        cls.artifact = os.path.join(cls.ws.base, "request.json")
        with open(cls.artifact, "w", encoding="utf-8") as handle:
            handle.write(subprocess.run([telic_binary(), "artifact", "--json", cls.run_id, cls.request_id],
                                        env=cls.ws.env(), check=True, capture_output=True, text=True,
                                        timeout=60).stdout)
        cls.policy = os.path.join(cls.ws.base, "policy.json")
        with open(cls.policy, "w", encoding="utf-8") as handle:
            json.dump({"mode": "fix_only"}, handle)

    @classmethod
    def tearDownClass(cls):
        cls.ws.close()

    def setUp(self):
        self.scratch = tempfile.mkdtemp(prefix="telic-paths-")

    def tearDown(self):
        shutil.rmtree(self.scratch, ignore_errors=True)

    def path_of(self, kind):
        if kind == "directory":
            path = os.path.join(self.scratch, "a-directory")
            os.makedirs(path, mode=0o700, exist_ok=True)  # owner-only, as --auth-token-file requires
            return path
        if kind == "fifo":
            path = os.path.join(self.scratch, "a-fifo")
            if not os.path.exists(path):
                os.mkfifo(path, 0o600)
            return path
        if kind == "device":
            # /dev/zero through a link in the scratch folder: a telic that wrote beside or over
            # the path it was given (a SQLite journal, a renamed bundle) would do so here, not in /dev.
            path = os.path.join(self.scratch, "zero")
            if not os.path.lexists(path):
                os.symlink("/dev/zero", path)
            return path
        return os.path.join(self.scratch, "missing", "file")

    def run_telic(self, argv, env, stdin=""):
        try:
            return subprocess.run([telic_binary(), *argv], env=env, input=stdin, capture_output=True, text=True,
                                  timeout=TIMEOUT, cwd=self.scratch)
        except subprocess.TimeoutExpired:
            self.fail(f"telic {' '.join(argv)} did not finish within {TIMEOUT} s")

    def check(self, label, argv, kind, ok_kinds=(), env=None, codes=(1,), prefix="telic:", stdin=""):
        with self.subTest(case=label, kind=kind):
            proc = self.run_telic(argv, env or self.ws.env(), stdin)
            where = f"telic {' '.join(argv)} ({kind}): rc {proc.returncode}, stderr {proc.stderr!r}"
            self.assertNotIn(proc.returncode, (-6, -11, 134, 139), where)
            if proc.returncode == 0 and kind in ok_kinds:
                return
            self.assertIn(proc.returncode, codes, where)
            if prefix is None:
                return
            lines = proc.stderr.splitlines()
            self.assertEqual(len(lines), 1, where)
            self.assertTrue(lines[0].startswith(prefix), where)

    def test_repo_and_db_of_every_command(self):
        run, art = self.run_id, self.request_id
        commands = [["runs"], ["runs", "--json"], ["show", run], ["status", run], ["trace", run], ["artifact", run, art],
                    ["verify", run], ["ground", "fix the greeting"], ["replay", run], ["tasks"],
                    ["runs", "delete", "no-such-run"], ["runs", "prune", "--older-than", "30d", "--dry-run"], ["runs", "deleted"],
                    ["export", run], ["import", self.bundle], ["validate", self.artifact], ["serve"], ["mcp"],
                    ["ui", "--http", "127.0.0.1:0"], ["install", "claude-code"], ["uninstall", "claude-code"]]
        for command in commands:
            name = command[0]
            for option in ("--repo", "--db"):
                if option == "--db" and name in ("install", "uninstall"):
                    continue  # they take no ledger
                for kind in KINDS:
                    if name == "ui" and option == "--repo" and kind == "directory":
                        continue  # a valid repository: the viewer serves until stopped
                    ok = set()
                    if option == "--repo" and kind == "directory":
                        ok.add(kind)
                    if option == "--db" and kind == "missing" and name in ("serve", "mcp", "import"):
                        ok.add(kind)
                    if name == "validate" or (name == "ground" and option == "--db"):
                        ok.update(KINDS)  # they read no ledger
                    prefix = "Telic MCP failed:" if name in ("serve", "mcp") else "telic:"
                    env = self.ws.env(HOME=os.path.join(self.scratch, "home"))
                    self.check(f"{' '.join(command)} {option}", command + [option, self.path_of(kind)], kind, ok,
                               env=env, prefix=prefix)

    def test_doctor_reports_a_bad_path_in_its_checks(self):
        for option in ("--repo", "--db"):
            for kind in KINDS:
                proc = self.run_telic(["doctor", "--json", option, self.path_of(kind)], self.ws.env())
                self.assertNotIn(proc.returncode, (-6, -11, 134, 139))
                if option == "--repo" and kind == "directory":
                    continue
                if option == "--db" and kind == "missing":
                    continue  # no ledger yet is a valid state
                self.assertEqual(proc.returncode, 1, (option, kind, proc.stdout, proc.stderr))
                self.assertFalse(json.loads(proc.stdout)["ok"])

    def test_file_arguments(self):
        for kind in KINDS:
            p = self.path_of(kind)
            self.check("validate FILE", ["validate", p], kind)
            self.check("import FILE", ["import", p], kind)
            self.check("verify --bundle", ["verify", "--bundle", p], kind)
            self.check("report parse FILE", ["report", "parse", p], kind)
            self.check("export -o", ["export", self.run_id, "-o", p], kind)
            self.check("check --policy", ["check", "--policy", p, "--action", "{}"], kind, codes=(2,))
            self.check("check --action @FILE", ["check", "--policy", self.policy, "--action", "@" + p], kind, codes=(2,))
            if kind not in ("directory", "missing"):  # a folder of the demo's own: an ordinary value
                self.check("demo --workdir", ["demo", "--workdir", p], kind)

    def test_auth_token_file(self):
        for kind in KINDS:
            p = self.path_of(kind)
            for command in (["serve", "--http", "127.0.0.1:0"], ["ui", "--http", "127.0.0.1:0"]):
                self.check(f"{command[0]} --auth-token-file", command + ["--auth-token-file", p], kind)

    def test_state_config_file(self):
        config = os.path.join(self.ws.state, "config.json")
        for kind in KINDS:
            if os.path.lexists(config):
                if os.path.isdir(config) and not os.path.islink(config):
                    os.rmdir(config)
                else:
                    os.unlink(config)
            if kind == "directory":
                os.mkdir(config)
            elif kind == "fifo":
                os.mkfifo(config, 0o600)
            elif kind == "device":
                os.symlink("/dev/zero", config)
            self.check("serve with config.json", ["serve"], kind, ok_kinds=("missing",), prefix="Telic MCP failed:")
        if os.path.lexists(config):
            os.unlink(config)

    def test_broker_gate_always_answers(self):
        for option in ("--repo", "--db"):
            for kind in KINDS:
                proc = self.run_telic(["broker-gate", option, self.path_of(kind)], self.ws.env(),
                                      stdin=json.dumps({"tool_name": "Read", "tool_input": {"file_path": "x"}}))
                self.assertEqual(proc.returncode, 0, (option, kind, proc.stderr))
                self.assertTrue(proc.stdout.strip(), (option, kind))


if __name__ == "__main__":
    run_tests(sys.argv)
