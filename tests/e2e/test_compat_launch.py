"""Drop-in launch compatibility (PROTOCOL §1): the ways host configs
written for the reference server start it, the default state directory,
start-up refusals and clean shutdown.

- `telic mcp` with only TELIC_REPOSITORY_ROOT set (the npx form)
- `node <pack>/dist/mcp/server.js` with no arguments (launcher/server.js)
- a `"cwd": "."` start with no Telic environment at all
- state dir inside the repository, missing root, stdin EOF, SIGTERM/SIGINT
"""

# covers TEL-247 TEL-250 TEL-019 TEL-001 TEL-021

import hashlib
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from mcp_client import READY, McpProcess, make_git_repo, run_tests, telic_binary  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
LAUNCHER_DIR = os.path.normpath(os.path.join(HERE, "..", "..", "launcher"))
LAUNCHER = os.path.join(LAUNCHER_DIR, "server.js")
LAUNCHER_FILES = ("server.js", "server.cjs", "server.mjs", "package.json")
NODE = shutil.which("node")
NOT_FOUND_LINE = "Telic MCP failed: telic binary not found (set TELIC_BIN or put telic on PATH)\n"
# Tools the current build must list (TEL-247 names the nine core tools; this
# list grows as tools land, and (b) checks that the launcher lists exactly
# what `telic mcp` lists).
CORE_TOOLS = {"telic_start_run", "telic_get_next_action", "telic_cancel_run", "telic_list_runs",
              "telic_get_run", "telic_get_artifact", "telic_get_trace"}
TELIC_VARS = ("TELIC_REPOSITORY_ROOT", "TELIC_STATE_DIR", "TELIC_BIN", "XDG_STATE_HOME")


def state_key(root):
    """First 24 hex chars of SHA-256 over the repository's real path (PROTOCOL §1.3)."""
    return hashlib.sha256(os.path.realpath(root).encode("utf-8")).hexdigest()[:24]


def tree(root):
    """Every path under root (dirs and files), for 'nothing was created' checks."""
    found = set()
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            found.add(os.path.relpath(os.path.join(dirpath, name), root))
    return found


class Sandbox:
    """A repository plus a private HOME and XDG_STATE_HOME, all in one temp dir."""

    def __init__(self):
        self.base = os.path.realpath(tempfile.mkdtemp(prefix="telic-compat-"))
        self.repo = make_git_repo(os.path.join(self.base, "repo"))
        self.home = os.path.join(self.base, "home")
        self.xdg = os.path.join(self.base, "xdg")
        os.makedirs(self.home)

    def env(self, xdg=True, **extra):
        """The caller's environment without any Telic variable, HOME redirected."""
        env = {k: v for k, v in os.environ.items() if k not in TELIC_VARS}
        env["HOME"] = self.home
        if xdg:
            env["XDG_STATE_HOME"] = self.xdg
        env.update(extra)
        return env

    def default_state_dir(self, xdg=True):
        base = self.xdg if xdg else os.path.join(self.home, ".local", "state")
        return os.path.join(base, "telic", "repositories", state_key(self.repo))

    def close(self):
        shutil.rmtree(self.base, ignore_errors=True)


def copy_launcher(folder):
    """Copies the launcher's files into folder (a pack's dist/mcp); returns server.js there."""
    os.makedirs(folder, exist_ok=True)
    for name in LAUNCHER_FILES:
        shutil.copy(os.path.join(LAUNCHER_DIR, name), os.path.join(folder, name))
    return os.path.join(folder, "server.js")


def tool_names(mcp):
    reply = mcp.request("tools/list", {})
    names = [tool["name"] for tool in reply["result"]["tools"]]
    assert len(names) == len(set(names)), names
    return names


def stop(mcp):
    if mcp.proc.poll() is None:
        mcp.kill()


class CompatTestCase(unittest.TestCase):
    def setUp(self):
        self.box = Sandbox()
        self.addCleanup(self.box.close)

    def start(self, argv, env, cwd=None):
        mcp = McpProcess(argv, env, cwd=cwd)
        self.addCleanup(stop, mcp)
        return mcp

    def assert_ready_for(self, mcp, root):
        ready = [line for line in mcp.stderr_lines if READY in line]
        self.assertEqual(ready, [f"{READY} {os.path.realpath(root)}\n"])

    def start_run(self, mcp, request="Summarise the README, please.\n\u2603 \"q\""):
        payload = mcp.ok("telic_start_run", {"original_request": request, "mode": "report_only"})
        run = payload["run"]
        self.assertEqual((run["status"], run["version"]), ("running", 1))
        self.assertEqual(run["repositoryRoot"], os.path.realpath(self.box.repo))
        detail = mcp.ok("telic_get_run", {"run_id": run["runId"]})
        message = [a for a in detail["artifacts"] if a["type"] == "UserMessage"][0]
        body = mcp.ok("telic_get_artifact", {"run_id": run["runId"], "artifact_id": message["id"]})
        self.assertEqual(body["artifact"]["body"]["content"], request)
        return run

    def assert_default_state_dir(self, xdg=True):
        state = self.box.default_state_dir(xdg)
        self.assertTrue(os.path.isdir(state), f"default state dir {state} missing")
        self.assertEqual(stat.S_IMODE(os.stat(state).st_mode), 0o700)
        ledger = os.path.join(state, "telic.sqlite3")
        self.assertTrue(os.path.isfile(ledger), f"ledger {ledger} missing")
        self.assertEqual(stat.S_IMODE(os.stat(ledger).st_mode), 0o600)
        return state

    def run_refused(self, argv, env, cwd=None):
        """Runs a start that must be refused; returns its stderr."""
        proc = subprocess.run(argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
        err = proc.stderr.decode("utf-8", "replace")
        self.assertEqual(proc.returncode, 1, err)
        self.assertEqual(proc.stdout, b"")
        self.assertTrue(err.startswith("Telic MCP failed: "), err)
        self.assertEqual(err.count("\n"), 1, f"expected one stderr line: {err!r}")
        self.assertNotIn(READY, err)
        return err


class TelicMcpTest(CompatTestCase):
    def test_version_exits_zero(self):
        # Issue 22 section 5: `telic --version` exited 2.
        done = subprocess.run([telic_binary(), "--version"], capture_output=True, timeout=60)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertRegex(done.stdout.decode(), r"^telic \d+\.\d+\.\d+\n$")
        self.assertEqual(done.stderr, b"")

    def test_mcp_with_only_repository_root_uses_default_state_dir(self):
        # (a) the npx-style form: `telic mcp` + env.TELIC_REPOSITORY_ROOT
        mcp = self.start([telic_binary(), "mcp"], self.box.env(TELIC_REPOSITORY_ROOT=self.box.repo), cwd=self.box.home)
        self.assert_ready_for(mcp, self.box.repo)
        info = mcp.initialize()
        self.assertEqual(info["serverInfo"]["name"], "telic")
        self.assertLessEqual(CORE_TOOLS, set(tool_names(mcp)))
        self.start_run(mcp)
        self.assert_default_state_dir()
        self.assertEqual(mcp.close(), 0)
        self.assertEqual(tree(self.box.home), set(), "nothing may land in HOME when XDG_STATE_HOME is set")

    def test_home_fallback_when_xdg_state_home_is_unset(self):
        mcp = self.start([telic_binary(), "mcp"], self.box.env(xdg=False, TELIC_REPOSITORY_ROOT=self.box.repo))
        mcp.initialize()
        self.start_run(mcp)
        self.assert_default_state_dir(xdg=False)
        self.assertEqual(mcp.close(), 0)

    def test_cwd_dot_start_with_no_telic_environment(self):
        # (c) Roo-style `"cwd": "."`: no Telic variable, the working directory is the repository.
        before = tree(self.box.repo)
        mcp = self.start([telic_binary(), "mcp"], self.box.env(), cwd=self.box.repo)
        self.assert_ready_for(mcp, self.box.repo)
        mcp.initialize()
        self.assertLessEqual(CORE_TOOLS, set(tool_names(mcp)))
        self.start_run(mcp)
        self.assert_default_state_dir()
        self.assertEqual(mcp.close(), 0)
        self.assertEqual(tree(self.box.repo), before, "the server wrote into the repository")


@unittest.skipIf(NODE is None, "node is not on PATH: the launcher (launcher/server.js) cannot be run")
class LauncherTest(CompatTestCase):
    def test_launcher_grounds_working_directory_and_lists_same_tools(self):
        # (b) `node <pack>/dist/mcp/server.js` with no arguments, cwd = repository.
        direct = self.start([telic_binary(), "mcp"], self.box.env(TELIC_REPOSITORY_ROOT=self.box.repo))
        direct.initialize()
        expected = tool_names(direct)
        self.assertEqual(direct.close(), 0)

        before = tree(self.box.repo)
        mcp = self.start([NODE, LAUNCHER], self.box.env(TELIC_BIN=telic_binary()), cwd=self.box.repo)
        self.assert_ready_for(mcp, self.box.repo)
        mcp.initialize()
        self.assertEqual(tool_names(mcp), expected)
        self.start_run(mcp)
        self.assert_default_state_dir()
        self.assertEqual(mcp.close(), 0)
        self.assertEqual(tree(self.box.repo), before)
        self.assertEqual([line for line in mcp.stderr_lines if READY not in line], [])

    def test_launcher_passes_repository_root_from_environment(self):
        # The Kiro form sets TELIC_REPOSITORY_ROOT and starts the server from elsewhere.
        env = self.box.env(TELIC_BIN=telic_binary(), TELIC_REPOSITORY_ROOT=self.box.repo)
        mcp = self.start([NODE, LAUNCHER], env, cwd=self.box.home)
        self.assert_ready_for(mcp, self.box.repo)
        mcp.initialize()
        self.start_run(mcp)
        self.assertEqual(mcp.close(), 0)

    def isolated_node(self):
        """A bin dir holding only `node`, so PATH can't find a stray telic."""
        bindir = os.path.join(self.box.base, "nodebin")
        os.makedirs(bindir, exist_ok=True)
        link = os.path.join(bindir, "node")
        if not os.path.exists(link):
            os.symlink(os.path.realpath(NODE), link)
        return bindir, link

    def test_launcher_reports_missing_binary(self):
        # (d) a copy of server.js in an empty dir, TELIC_BIN pointing nowhere.
        bindir, node = self.isolated_node()
        pack = os.path.join(self.box.base, "pack", "dist", "mcp")
        script = copy_launcher(pack)
        for telic_bin in (os.path.join(self.box.base, "nowhere", "telic"), None):
            with self.subTest(TELIC_BIN=telic_bin):
                env = {"PATH": bindir, "HOME": self.box.home}
                if telic_bin:
                    env["TELIC_BIN"] = telic_bin
                proc = subprocess.run([node, script], env=env, cwd=self.box.repo, stdin=subprocess.DEVNULL,
                                      capture_output=True, timeout=60)
                self.assertEqual(proc.returncode, 1)
                self.assertEqual(proc.stdout, b"")
                self.assertEqual(proc.stderr.decode("utf-8"), NOT_FOUND_LINE)

    def test_launcher_lookup_order_arguments_and_exit_code(self):
        bindir, node = self.isolated_node()
        pack = os.path.join(self.box.base, "pack", "dist")
        script = copy_launcher(os.path.join(pack, "mcp"))
        pathdir = os.path.join(self.box.base, "pathbin")
        fakes = {
            "env": (os.path.join(self.box.base, "envbin", "telic"), 11),
            "beside": (os.path.join(pack, "mcp", "telic"), 12),
            "build": (os.path.join(pack, "build", "telic"), 13),
            "path": (os.path.join(pathdir, "telic"), 14),
        }
        for name, (path, code) in fakes.items():
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as handle:
                handle.write(f'#!/bin/sh\necho "fake={name} args=$*" >&2\nexit {code}\n')
            os.chmod(path, 0o755)
        # A non-executable file named telic is skipped, not run.
        os.makedirs(os.path.join(self.box.base, "plain"))
        with open(os.path.join(self.box.base, "plain", "telic"), "w") as handle:
            handle.write("not a program\n")

        def launch(telic_bin=None):
            env = {"PATH": os.pathsep.join(["", "relative/bin", os.path.join(self.box.base, "plain"), bindir, pathdir]),
                   "HOME": self.box.home}
            if telic_bin:
                env["TELIC_BIN"] = telic_bin
            return subprocess.run([node, script, "--extra"], env=env, cwd=self.box.repo, stdin=subprocess.DEVNULL,
                                  capture_output=True, timeout=60)

        steps = [("env", fakes["env"][0], None), ("beside", None, "env"), ("build", None, "beside"),
                 ("path", None, "build")]
        for expected, telic_bin, remove in steps:
            with self.subTest(expected=expected):
                if remove:
                    os.remove(fakes[remove][0])
                proc = launch(telic_bin)
                self.assertEqual(proc.stderr.decode(), f"fake={expected} args=serve --extra\n")
                self.assertEqual(proc.returncode, fakes[expected][1])
        with self.subTest("TELIC_BIN pointing nowhere falls through to PATH"):
            proc = launch(os.path.join(self.box.base, "nowhere"))
            self.assertEqual(proc.stderr.decode(), "fake=path args=serve --extra\n")
        with self.subTest("nothing left"):
            os.remove(fakes["path"][0])
            proc = launch()
            self.assertEqual((proc.returncode, proc.stderr.decode()), (1, NOT_FOUND_LINE))

    def child_pids(self, pid):
        pids = []
        task_dir = f"/proc/{pid}/task"
        for task in os.listdir(task_dir):
            try:
                with open(os.path.join(task_dir, task, "children")) as handle:
                    pids += [int(p) for p in handle.read().split()]
            except OSError:
                pass
        return pids

    def test_launcher_forwards_signals_and_eof(self):
        for how in ("SIGTERM", "SIGINT", "EOF"):
            with self.subTest(how=how):
                mcp = self.start([NODE, LAUNCHER], self.box.env(TELIC_BIN=telic_binary()), cwd=self.box.repo)
                mcp.initialize()
                children = self.child_pids(mcp.proc.pid) if os.path.isdir("/proc") else []
                if how == "EOF":
                    mcp.proc.stdin.close()
                else:
                    mcp.proc.send_signal(getattr(signal, how))
                self.assertEqual(mcp.proc.wait(timeout=30), 0)
                for pid in children:
                    self.assertFalse(os.path.exists(f"/proc/{pid}") and not self.is_zombie(pid),
                                     f"telic child {pid} outlived the launcher")

    @staticmethod
    def is_zombie(pid):
        try:
            with open(f"/proc/{pid}/stat") as handle:
                return handle.read().rsplit(")", 1)[1].split()[0] == "Z"
        except OSError:
            return True

    def module_project(self):
        """Marks the repository an ES-module package ("type":"module"), as many JS projects are."""
        with open(os.path.join(self.box.repo, "package.json"), "w") as handle:
            json.dump({"name": "esm-project", "type": "module"}, handle)

    def test_launcher_loads_in_a_type_module_project(self):
        # Issue 22 PROTOCOL §5: the launcher copied into .cursor/ (or .cline/, .roo/,
        # .kiro/) of a "type":"module" project loads, as server.js and server.mjs.
        self.module_project()
        script = copy_launcher(os.path.join(self.box.repo, ".cursor", "telic", "dist", "mcp"))
        for entry in (script, script[:-3] + ".mjs", script[:-3] + ".cjs"):
            with self.subTest(entry=os.path.basename(entry)):
                mcp = self.start([NODE, entry], self.box.env(TELIC_BIN=telic_binary()), cwd=self.box.repo)
                mcp.initialize()
                self.assertTrue(CORE_TOOLS <= set(tool_names(mcp)))
                self.assertEqual(mcp.close(), 0)
                self.assertNotIn("require is not defined", "".join(mcp.stderr_lines))

    def test_kiro_ide_launch_mjs_calls_start_stdio_server(self):
        # Issue 22 PROTOCOL §5: Kiro IDE's pack imports ./dist/mcp/server.js from an ES
        # module and calls startStdioServer(); it must exist and serve, in a
        # "type":"module" project too, and leave no telic behind when stdin ends.
        self.module_project()
        overlay = os.path.join(self.box.repo, ".kiro", "telic")
        copy_launcher(os.path.join(overlay, "dist", "mcp"))
        launch = os.path.join(overlay, "launch.mjs")
        with open(launch, "w") as handle:
            handle.write('import { dirname, resolve } from "node:path";\n'
                         'import { fileURLToPath } from "node:url";\n'
                         'const here = dirname(fileURLToPath(import.meta.url));\n'
                         'process.env.TELIC_REPOSITORY_ROOT = resolve(here, "../..");\n'
                         'const { startStdioServer } = await import("./dist/mcp/server.js");\n'
                         'await startStdioServer();\n')
        mcp = self.start([NODE, launch], self.box.env(TELIC_BIN=telic_binary()), cwd=self.box.home)
        self.assert_ready_for(mcp, self.box.repo)
        mcp.initialize()
        self.assertTrue(CORE_TOOLS <= set(tool_names(mcp)))
        children = self.child_pids(mcp.proc.pid)
        self.assertEqual(len(children), 1, children)
        mcp.proc.stdin.close()
        self.assertEqual(mcp.proc.wait(timeout=30), 0)
        self.assertFalse(os.path.exists(f"/proc/{children[0]}") and not self.is_zombie(children[0]))
        self.assertNotIn("is not a function", "".join(mcp.stderr_lines))

    def test_launcher_passes_startup_failure_through(self):
        before = tree(self.box.repo)
        env = self.box.env(TELIC_BIN=telic_binary(), TELIC_STATE_DIR=os.path.join(self.box.repo, ".telic"))
        err = self.run_refused([NODE, LAUNCHER], env, cwd=self.box.repo)
        self.assertIn("outside the repository", err)
        self.assertEqual(tree(self.box.repo), before)


class StartupRefusalTest(CompatTestCase):
    def test_state_dir_inside_or_around_repository_is_refused(self):
        # (e) the state dir must not lie inside the repository nor contain it.
        link = os.path.join(self.box.base, "link-to-repo")
        os.symlink(self.box.repo, link)
        cases = {
            "inside": os.path.join(self.box.repo, ".telic-state"),
            "nested": os.path.join(self.box.repo, "a", "b", "state"),
            "the repository itself": self.box.repo,
            "contains the repository": self.box.base,
            "inside through a symlink": os.path.join(link, "state"),
            "dot-dot back inside": os.path.join(self.box.base, "elsewhere", "..", "repo", "state"),
        }
        for name, state in cases.items():
            with self.subTest(name):
                before = tree(self.box.repo)
                base_before = set(os.listdir(self.box.base))
                env = self.box.env(TELIC_REPOSITORY_ROOT=self.box.repo, TELIC_STATE_DIR=state)
                err = self.run_refused([telic_binary(), "mcp"], env, cwd=self.box.home)
                self.assertIn("outside the repository", err)
                self.assertEqual(tree(self.box.repo), before, "something was created inside the repository")
                self.assertEqual(set(os.listdir(self.box.base)), base_before)
                self.assertFalse(os.path.exists(self.box.xdg))

    def test_symlinked_state_dir_or_odd_ledger_is_refused(self):
        # PROTOCOL §1.3: a state dir that is a symlink or not a directory, or ledger
        # files that are not regular files, refuse start-up.
        target = os.path.join(self.box.base, "real-state")
        os.makedirs(target)
        link = os.path.join(self.box.base, "state-link")
        os.symlink(target, link)
        not_dir = os.path.join(self.box.base, "state-file")
        with open(not_dir, "w") as handle:
            handle.write("x")
        odd_ledger = os.path.join(self.box.base, "odd-ledger")
        os.makedirs(os.path.join(odd_ledger, "telic.sqlite3"))
        odd_wal = os.path.join(self.box.base, "odd-wal")
        os.makedirs(odd_wal)
        os.symlink(not_dir, os.path.join(odd_wal, "telic.sqlite3-wal"))
        for name, state in {"symlink": link, "file": not_dir, "ledger is a directory": odd_ledger,
                            "wal is a symlink": odd_wal}.items():
            with self.subTest(name):
                env = self.box.env(TELIC_REPOSITORY_ROOT=self.box.repo, TELIC_STATE_DIR=state)
                self.run_refused([telic_binary(), "mcp"], env)
        self.assertEqual(os.listdir(target), [])
        self.assertEqual(os.listdir(odd_wal), ["telic.sqlite3-wal"])

    def test_missing_repository_root_is_refused(self):
        missing = os.path.join(self.box.base, "no-such-repo")
        err = self.run_refused([telic_binary(), "mcp"], self.box.env(TELIC_REPOSITORY_ROOT=missing))
        self.assertIn(missing, err)
        self.assertFalse(os.path.exists(missing))
        self.assertFalse(os.path.exists(self.box.xdg), "a state dir was created for a refused start")

    def test_stdin_eof_exits_zero(self):
        for command in ("mcp", "serve"):
            with self.subTest(command):
                mcp = self.start([telic_binary(), command], self.box.env(TELIC_REPOSITORY_ROOT=self.box.repo))
                mcp.initialize()
                self.assertEqual(mcp.close(), 0)

    def test_stdin_eof_before_initialize_exits_zero(self):
        mcp = self.start([telic_binary(), "mcp"], self.box.env(TELIC_REPOSITORY_ROOT=self.box.repo))
        self.assertEqual(mcp.close(), 0)

    def test_sigterm_and_sigint_exit_zero(self):
        for sig in (signal.SIGTERM, signal.SIGINT):
            with self.subTest(sig.name):
                mcp = self.start([telic_binary(), "mcp"], self.box.env(TELIC_REPOSITORY_ROOT=self.box.repo))
                mcp.initialize()
                self.start_run(mcp)
                mcp.proc.send_signal(sig)
                self.assertEqual(mcp.proc.wait(timeout=30), 0)
                # Idle (blocked reading stdin) is the common case; also signal
                # right after a request was sent.
                mcp = self.start([telic_binary(), "mcp"], self.box.env(TELIC_REPOSITORY_ROOT=self.box.repo))
                mcp.initialize()
                mcp.send_raw('{"jsonrpc":"2.0","id":9,"method":"ping"}\n')
                time.sleep(0.01)
                mcp.proc.send_signal(sig)
                self.assertEqual(mcp.proc.wait(timeout=30), 0)


if __name__ == "__main__":
    run_tests(sys.argv)
