"""A minimal MCP client for telic's end-to-end tests: a real child process
speaking newline-delimited JSON-RPC over real pipes. Standard library only."""

import json
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import unittest

from output_schemas import ToolCallWatcher

READY = "Telic MCP ready for"


def telic_binary():
    path = os.environ.get("TELIC_BIN")
    if not path:
        raise RuntimeError("TELIC_BIN is not set; run through run_tests(sys.argv)")
    return path


def make_git_repo(root, files=None):
    """Creates a git repository with one commit of `files` (path -> text)."""
    os.makedirs(root, exist_ok=True)
    files = files or {"README.md": "# demo\n", "src/app.ts": "export const answer = 42;\n"}
    for rel, text in files.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
    env = dict(os.environ, GIT_CONFIG_GLOBAL="/dev/null", GIT_CONFIG_SYSTEM="/dev/null")
    for args in (["init", "-q"], ["add", "-A"],
                 ["-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-qm", "init"]):
        subprocess.run(["git", *args], cwd=root, check=True, env=env)
    return root


def reset_git_repo(root):
    """Restores a repository made by make_git_repo to its commit: tracked files back, untracked ones removed."""
    env = dict(os.environ, GIT_CONFIG_GLOBAL="/dev/null", GIT_CONFIG_SYSTEM="/dev/null")
    subprocess.run(["git", "checkout", "-q", "--", "."], cwd=root, check=True, env=env)
    subprocess.run(["git", "clean", "-qfd"], cwd=root, check=True, env=env)


def sha256_file(path):
    """The wire form of a file's digest ("sha256:<64 hex>"), or None when no file is there."""
    import hashlib
    if not os.path.isfile(path):
        return None
    with open(path, "rb") as handle:
        return "sha256:" + hashlib.sha256(handle.read()).hexdigest()


def apply_file_change(repo, path, change, marker="changed by the host"):
    """Does to `repo`/`path` what a FileChange of `change` (created, modified, deleted) claims, and returns
    (beforeHash, afterHash) as telic observes them: the host changes the files it claims."""
    full = os.path.join(repo, path)
    before = sha256_file(full)
    if change == "deleted":
        os.remove(full)
    else:
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "a", encoding="utf-8") as handle:
            handle.write(f"// {marker}\n")
    return before, sha256_file(full)


class Workspace:
    """A temporary repository and state directory, removed on close."""

    def __init__(self):
        self.base = tempfile.mkdtemp(prefix="telic-e2e-")
        self.repo = make_git_repo(os.path.join(self.base, "repo"))
        self.state = os.path.join(self.base, "state")

    def env(self, **extra):
        env = dict(os.environ, TELIC_REPOSITORY_ROOT=self.repo, TELIC_STATE_DIR=self.state)
        env.update(extra)
        return env

    def close(self):
        shutil.rmtree(self.base, ignore_errors=True)


class McpProcess:
    """`telic serve` (or any argv) as a child; send() writes one line."""

    def __init__(self, argv, env, cwd=None, wait_ready=True):
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env=env, cwd=cwd)
        self.lines = queue.Queue()
        self.stderr_lines = []
        self.next_id = 1
        self.watcher = ToolCallWatcher()  # every tools/call result is checked against its outputSchema
        threading.Thread(target=self._pump_stdout, daemon=True).start()
        self._stderr_thread = threading.Thread(target=self._pump_stderr, daemon=True)
        self._stderr_thread.start()
        if wait_ready:
            self.wait_for_stderr(READY)

    def _pump_stdout(self):
        for raw in self.proc.stdout:
            line = raw.decode("utf-8")
            try:
                self.watcher.received(json.loads(line))
            except ValueError:
                pass
            self.lines.put(line)
        self.lines.put(None)

    def _pump_stderr(self):
        for raw in self.proc.stderr:
            self.stderr_lines.append(raw.decode("utf-8", "replace"))

    def wait_for_stderr(self, needle, timeout=20):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if any(needle in line for line in self.stderr_lines):
                return
            if self.proc.poll() is not None:
                time.sleep(0.1)
                raise AssertionError(f"server exited ({self.proc.returncode}): {''.join(self.stderr_lines)}")
            time.sleep(0.01)
        raise AssertionError(f"no '{needle}' on stderr within {timeout}s")

    def send_raw(self, data):
        self.watcher.raise_failures()
        self.watcher.sent(data)
        self.proc.stdin.write(data if isinstance(data, bytes) else data.encode("utf-8"))
        self.proc.stdin.flush()

    def read(self, timeout=30):
        line = self.lines.get(timeout=timeout)
        if line is None:
            raise AssertionError("server closed stdout")
        self.watcher.raise_failures()
        return json.loads(line)

    def no_reply(self, wait=0.3):
        try:
            line = self.lines.get(timeout=wait)
        except queue.Empty:
            return True
        raise AssertionError(f"unexpected reply: {line}")

    def request(self, method, params=None, timeout=30):
        msg_id = self.next_id
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send_raw(json.dumps(message) + "\n")
        reply = self.read(timeout)
        assert reply.get("id") == msg_id, f"reply id {reply.get('id')} != {msg_id}: {reply}"
        return reply

    def notify(self, method, params=None):
        message = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self.send_raw(json.dumps(message) + "\n")

    def initialize(self, version="2025-11-25"):
        reply = self.request("initialize", {"protocolVersion": version, "capabilities": {},
                                            "clientInfo": {"name": "telic-e2e", "version": "1"}})
        self.notify("notifications/initialized")
        return reply["result"]

    def call(self, name, arguments=None, omit_arguments=False):
        """tools/call; returns the `result` object (content, structuredContent, isError)."""
        params = {"name": name}
        if not omit_arguments:
            params["arguments"] = arguments if arguments is not None else {}
        reply = self.request("tools/call", params)
        assert "result" in reply, reply
        return reply["result"]

    def ok(self, name, arguments=None):
        """Calls a tool that must succeed; returns structuredContent."""
        result = self.call(name, arguments)
        assert not result.get("isError"), f"{name} failed: {result}"
        payload = result["structuredContent"]
        assert payload["ok"] is True
        assert json.loads(result["content"][0]["text"]) == payload
        return payload

    def fails(self, name, arguments=None, omit_arguments=False):
        """Calls a tool that must fail as a tool result; returns structuredContent."""
        result = self.call(name, arguments, omit_arguments)
        assert result.get("isError") is True, f"{name} unexpectedly succeeded: {result}"
        payload = result["structuredContent"]
        assert payload["ok"] is False and payload["error"] and payload["code"]
        assert json.loads(result["content"][0]["text"]) == payload
        return payload

    def close(self, timeout=20):
        if self.proc.stdin and not self.proc.stdin.closed:
            try:
                self.proc.stdin.close()
            except BrokenPipeError:
                pass
        try:
            code = self.proc.wait(timeout=timeout)
        finally:
            self._stderr_thread.join(timeout=5)
        self.watcher.raise_failures()
        return code

    def kill(self):
        self.proc.kill()
        self.proc.wait()


def serve(workspace, *extra_args, **env):
    return McpProcess([telic_binary(), "serve", *extra_args], workspace.env(**env))


def run_tests(argv):
    """Entry point: argv[1] is the telic binary. Prints 'N passed, N failed'."""
    if len(argv) > 1:
        os.environ["TELIC_BIN"] = os.path.abspath(argv[1])
    suite = unittest.defaultTestLoader.loadTestsFromModule(sys.modules["__main__"])
    result = unittest.TextTestRunner(verbosity=2).run(suite)
    failed = len(result.failures) + len(result.errors)
    passed = result.testsRun - failed - len(result.skipped)
    print(f"{passed} passed, {failed} failed, {len(result.skipped)} skipped")
    sys.exit(0 if failed == 0 else 1)
