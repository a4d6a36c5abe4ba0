#!/usr/bin/env python3
"""`telic install HOST` / `telic uninstall HOST` end to end (issue 22 section 1)
for every host, in temporary project and home folders that already hold the
user's own configuration: the written files parse, the MCP command each host
would run starts telic and lists its tools over stdio (a real process), the
hook command each host would run answers in that host's format, `telic
doctor` reports the install current, a reinstall changes no byte, and
uninstall brings back the original bytes of both folders."""
import hashlib
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import tomllib
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcp_client import McpProcess, make_git_repo, run_tests, telic_binary  # noqa: E402

VSCODE_USER = os.path.join(".config", "Code", "User")
CLINE_MCP = os.path.join(VSCODE_USER, "globalStorage", "saoudrizwan.claude-dev", "settings", "cline_mcp_settings.json")

# The user's own configuration before telic: unrelated keys telic must keep
# (and give back byte for byte). Paths relative to the project, or "~/" for home.
USER_FILES = {
    ".mcp.json": '{\n    "mcpServers": {"github": {"command": "gh-mcp"}},\n    "note": "mine"\n}\n',
    ".claude/settings.json": '{"model": "opus", "hooks": {"Stop": [{"hooks": []}]}}',
    ".codex/config.toml": '# my Codex settings\nmodel = "gpt-5"   # keep\n\n[mcp_servers.docs]\ncommand = "docs-mcp"\n',
    ".cursor/mcp.json": '{"mcpServers": {}, "x-extra": [1, 2, 3]}',
    ".gemini/settings.json": '{"theme": "Default", "hooks": {"BeforeTool": []}}',
    ".vscode/mcp.json": '{"inputs": [], "servers": {"other": {"type": "stdio", "command": "other"}}}',
    ".roo/mcp.json": '{"mcpServers": {"fs": {"command": "fs-mcp", "disabled": true}}}',
    "~/" + CLINE_MCP: '{"mcpServers": {"brave": {"command": "brave", "autoApprove": []}}}',
    "~/.gemini/antigravity/mcp_config.json": '{"mcpServers": {"maps": {"serverUrl": "https://maps.example/mcp"}}}',
}

# Per host: the scope(s) installed, where the MCP entry lives (scope base,
# path, format, keys) and the hook (path, how to find its command, host name).
HOSTS = {
    "claude-code": {"user": False, "mcp": (".mcp.json", "json", ["mcpServers", "telic"]),
                    "hook": (".claude/settings.json", lambda c: c["hooks"]["PreToolUse"][0]["hooks"][0]["command"])},
    "codex": {"user": False, "mcp": (".codex/config.toml", "toml", ["mcp_servers", "telic"]),
              "hook": (".codex/hooks.json", lambda c: c["hooks"]["PreToolUse"][0]["hooks"][0]["command"])},
    "cursor": {"user": False, "mcp": (".cursor/mcp.json", "json", ["mcpServers", "telic"]),
               "hook": (".cursor/hooks.json", lambda c: c["hooks"]["beforeShellExecution"][0]["command"])},
    "cline": {"user": True, "mcp": (CLINE_MCP, "json", ["mcpServers", "telic"]),
              "hook": ("Documents/Cline/Hooks/PreToolUse", None)},
    "roo-code": {"user": False, "mcp": (".roo/mcp.json", "json", ["mcpServers", "telic"]), "hook": None},
    "kiro": {"user": False, "mcp": (".kiro/agents/telic.json", "json", ["mcpServers", "telic"]), "hook": None},
    "kiro-ide": {"user": False, "mcp": (".kiro/settings/mcp.json", "json", ["mcpServers", "telic"]), "hook": None},
    "antigravity": {"user": True, "mcp": (".gemini/antigravity/mcp_config.json", "json", ["mcpServers", "telic"]),
                    "hook": None},
    "gemini-cli": {"user": False, "mcp": (".gemini/settings.json", "json", ["mcpServers", "telic"]),
                   "hook": (".gemini/settings.json", lambda c: c["hooks"]["BeforeTool"][0]["hooks"][0]["command"])},
    "vscode": {"user": False, "mcp": (".vscode/mcp.json", "json", ["servers", "telic"]), "hook": None},
}

# A shell call each host's hook sees, and how its deny looks (no run: a strict install denies).
HOOK_PAYLOADS = {
    "claude-code": ({"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "ls"}},
                    lambda a: a.get("hookSpecificOutput", {}).get("permissionDecision") == "deny"),
    "codex": ({"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "ls"}},
              lambda a: a.get("hookSpecificOutput", {}).get("permissionDecision") == "deny"),
    "cursor": ({"hook_event_name": "beforeShellExecution", "command": "ls", "cwd": "."},
               lambda a: a.get("permission") == "deny"),
    "cline": ({"hookName": "PreToolUse", "preToolUse": {"toolName": "execute_command", "parameters": {"command": "ls"}}},
              lambda a: a.get("cancel") is True),
    "gemini-cli": ({"hook_event_name": "BeforeTool", "tool_name": "run_shell_command",
                    "tool_input": {"command": "ls"}}, lambda a: a.get("decision") == "deny"),
}


def snapshot(root):
    """Every path under root with its bytes (None for folders) and mode."""
    found = {}
    for dirpath, dirnames, filenames in os.walk(root):
        if ".git" in dirnames and dirpath == root:
            dirnames.remove(".git")
        for name in dirnames:
            found[os.path.relpath(os.path.join(dirpath, name), root)] = None
        for name in filenames:
            path = os.path.join(dirpath, name)
            with open(path, "rb") as handle:
                found[os.path.relpath(path, root)] = (handle.read(), os.stat(path).st_mode)
    return found


class InstallTest(unittest.TestCase):
    def setUp(self):
        self.base = os.path.realpath(tempfile.mkdtemp(prefix="telic-install-"))
        self.project = make_git_repo(os.path.join(self.base, "project"))
        self.home = os.path.join(self.base, "home")
        os.makedirs(self.home)
        for rel, text in USER_FILES.items():
            path = os.path.join(self.home, rel[2:]) if rel.startswith("~/") else os.path.join(self.project, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as handle:
                handle.write(text)

    def tearDown(self):
        shutil.rmtree(self.base, ignore_errors=True)

    def env(self):
        env = {k: v for k, v in os.environ.items() if not k.startswith("TELIC_") and k != "XDG_STATE_HOME"}
        env.update(HOME=self.home, XDG_STATE_HOME=os.path.join(self.base, "state"))
        return env

    def telic(self, *args):
        done = subprocess.run([telic_binary(), *args], capture_output=True, env=self.env(), cwd=self.project,
                              timeout=120)
        self.assertEqual(done.returncode, 0, done.stderr.decode() + done.stdout.decode())
        return done.stdout.decode()

    def load(self, path, fmt):
        with open(path, "rb") as handle:
            return tomllib.load(handle) if fmt == "toml" else json.load(handle)

    def check_mcp_launches(self, host, spec):
        rel, fmt, keys = spec["mcp"]
        config = self.load(os.path.join(self.home if spec["user"] else self.project, rel), fmt)
        entry = config
        for key in keys:
            entry = entry[key]
        self.assertEqual(entry["command"], os.path.realpath(telic_binary()))
        self.assertEqual(entry["args"], ["serve", "--profile", "lean"])  # the lean profile (issue 39)
        # Start what the host would start, from the project, and list tools.
        mcp = McpProcess([entry["command"], *entry["args"]], self.env(), cwd=self.project)
        try:
            mcp.initialize()
            names = {tool["name"] for tool in mcp.request("tools/list", {})["result"]["tools"]}
            self.assertIn("telic_start_run", names, host)
            self.assertIn("telic_check_tool_action", names, host)
        finally:
            self.assertEqual(mcp.close(), 0)

    def check_hook_answers(self, host, spec, strict=False):
        rel, find = spec["hook"]
        path = os.path.join(self.home if spec["user"] else self.project, rel)
        if find is None:  # a hook script (Cline): run the file itself
            self.assertTrue(os.access(path, os.X_OK), path)
            argv = [path]
        else:
            argv = ["/bin/sh", "-c", find(self.load(path, "json"))]
        payload, denies = HOOK_PAYLOADS[host]
        done = subprocess.run(argv, input=json.dumps(payload).encode(), capture_output=True, env=self.env(),
                              cwd=self.project, timeout=60)
        self.assertEqual(done.returncode, 0, done.stderr)
        answer = json.loads(done.stdout)
        # No run is active: a strict install denies, the default leaves the call to the host.
        self.assertEqual(denies(answer), strict, f"{host}: {answer}")

    def test_every_host_installs_launches_reinstalls_and_uninstalls(self):
        original_project, original_home = snapshot(self.project), snapshot(self.home)
        for host, spec in HOSTS.items():
            with self.subTest(host=host):
                scope = ["--user"] if spec["user"] else []
                self.telic("install", host, *scope)
                # Every JSON / TOML file the install left parses.
                for root in (self.project, self.home):
                    for rel, value in snapshot(root).items():
                        if value is None or rel.startswith(".telic/backups"):
                            continue
                        if rel.endswith(".json"):
                            self.load(os.path.join(root, rel), "json")
                        elif rel.endswith(".toml"):
                            self.load(os.path.join(root, rel), "toml")
                self.check_mcp_launches(host, spec)
                if spec["hook"]:
                    self.check_hook_answers(host, spec)
                doctor = json.loads(self.telic("doctor", "--json"))
                installs = doctor["checks"]["hosts"][host]["installs"]
                self.assertEqual([i["current"] for i in installs], [True], installs)
                self.assertEqual(installs[0]["hook"], "wired" if spec["hook"] else "host has no hook")
                self.assertEqual(installs[0]["gate"], "run" if spec["hook"] else "no hook")
        # The user's own keys are still there.
        self.assertEqual(self.load(os.path.join(self.project, ".mcp.json"), "json")["note"], "mine")
        self.assertEqual(self.load(os.path.join(self.project, ".codex/config.toml"), "toml")["mcp_servers"]["docs"],
                         {"command": "docs-mcp"})
        self.assertEqual(self.load(os.path.join(self.home, CLINE_MCP), "json")["mcpServers"]["brave"]["command"],
                         "brave")
        installed_project, installed_home = snapshot(self.project), snapshot(self.home)
        for host, spec in HOSTS.items():
            self.telic("install", host, *(["--user"] if spec["user"] else []))
        self.assertEqual(snapshot(self.project), installed_project, "a reinstall changes no byte")
        self.assertEqual(snapshot(self.home), installed_home, "a reinstall changes no byte")
        for host, spec in HOSTS.items():
            self.telic("uninstall", host, *(["--user"] if spec["user"] else []))
        self.assertEqual(snapshot(self.project), original_project)
        self.assertEqual(snapshot(self.home), original_home)
        # Uninstalling again is a no-op.
        self.assertIn("nothing to remove", self.telic("uninstall", "cursor"))

    def test_strict_gate_denies_outside_a_run_and_install_says_what_it_wired(self):
        # issue 42 item 1: install prints what it wired, the gate mode and the next step; doctor shows the mode
        out = self.telic("install", "claude-code")
        for needle in ("wired MCP server: %s" % os.path.join(self.project, ".mcp.json"),
                       "wired hook (telic broker-gate): %s" % os.path.join(self.project, ".claude/settings.json"),
                       "gate: run: while a telic run is active", "--gate strict", "next: restart claude-code",
                       "approve the `telic` MCP server"):
            self.assertIn(needle, out)
        for host, spec in HOSTS.items():
            if not spec["hook"]:
                continue
            with self.subTest(host=host):
                scope = ["--user"] if spec["user"] else []
                out = self.telic("install", host, "--gate", "strict", *scope)
                self.assertIn("gate: strict: ", out)
                self.check_hook_answers(host, spec, strict=True)
                installs = json.loads(self.telic("doctor", "--json"))["checks"]["hosts"][host]["installs"]
                self.assertEqual([(i["gate"], i["current"]) for i in installs], [("strict", True)], installs)
        # Back to the default: the hook is replaced in place, then removed.
        self.telic("install", "claude-code")
        settings = self.load(os.path.join(self.project, ".claude/settings.json"), "json")
        commands = [group["hooks"][0]["command"] for group in settings["hooks"]["PreToolUse"]]
        self.assertEqual(len(commands), 1, commands)
        self.assertTrue(commands[0].endswith("--outside-run host"), commands)

    def test_project_scope_of_user_only_hosts_and_user_scope_of_the_rest(self):
        original_project, original_home = snapshot(self.project), snapshot(self.home)
        out = self.telic("install", "cline")
        self.assertIn("telic install cline --user", out)
        self.assertTrue(os.access(os.path.join(self.project, ".clinerules/hooks/PreToolUse"), os.X_OK))
        for host in ("claude-code", "codex", "cursor", "gemini-cli", "vscode", "kiro-ide"):
            self.telic("install", host, "--user")
        self.assertIn("telic", self.load(os.path.join(self.home, ".claude.json"), "json")["mcpServers"])
        self.assertEqual(snapshot(self.project).keys() - original_project.keys(),
                         {".clinerules", ".clinerules/telic.md", ".clinerules/hooks", ".clinerules/hooks/PreToolUse"})
        self.telic("uninstall", "cline")
        for host in ("claude-code", "codex", "cursor", "gemini-cli", "vscode", "kiro-ide"):
            self.telic("uninstall", host, "--user")
        self.assertEqual(snapshot(self.project), original_project)
        self.assertEqual(snapshot(self.home), original_home)

    def test_jsonc_config_is_merged_keeping_comments(self):
        # covers issue 22 section 1: JSONC configs are merged, never refused for their comments
        jsonc = '{\n  // servers for this workspace\n  "servers": {\n    "docs": {"command": "docs"}, /* mine */\n  },\n}\n'
        path = os.path.join(self.project, ".vscode/mcp.json")
        with open(path, "w") as handle:
            handle.write(jsonc)
        before = snapshot(self.project)
        self.telic("install", "vscode")
        with open(path) as handle:
            merged = handle.read()
        self.assertTrue(merged.startswith('{\n  // servers for this workspace\n  "servers": {\n'
                                          '    "docs": {"command": "docs"},\n    "telic": {\n'), merged)
        self.assertTrue(merged.endswith('    }, /* mine */\n  },\n}\n'), merged)
        self.assertIn('"command": %s' % json.dumps(telic_binary()), merged)
        installed = snapshot(self.project)
        self.telic("install", "vscode")
        self.assertEqual(snapshot(self.project), installed, "a reinstall changes no byte")
        self.telic("uninstall", "vscode")
        self.assertEqual(snapshot(self.project), before)

    def test_refusals_change_nothing(self):
        invalid = '{\n  // servers for this workspace\n  "servers": \n'
        with open(os.path.join(self.project, ".vscode/mcp.json"), "w") as handle:
            handle.write(invalid)
        before = snapshot(self.project)
        done = subprocess.run([telic_binary(), "install", "vscode"], capture_output=True, env=self.env(),
                              cwd=self.project, timeout=60)
        self.assertEqual(done.returncode, 1)
        self.assertIn(b"is not valid JSON", done.stderr)
        self.assertEqual(snapshot(self.project), before)
        done = subprocess.run([telic_binary(), "install", "nosuchhost"], capture_output=True, env=self.env(),
                              cwd=self.project, timeout=60)
        self.assertEqual(done.returncode, 2)

    def run_telic(self, *args):
        return subprocess.run([telic_binary(), *args], capture_output=True, env=self.env(), cwd=self.project,
                              timeout=120)

    def test_a_forged_install_record_touches_nothing_outside_the_scope(self):
        # issue 40 row 1, on both scopes: a record shipped inside the scope names outside files
        outside = os.path.join(self.base, "outside")
        os.makedirs(os.path.join(outside, "emptydir"))
        files = {"v1.txt": "one\n", "v2.txt": "two\n", "v3.txt": "three\n", "v4.txt": "four\n",
                 "config.toml": "[keep]\nx = 1\n[cut]\ny = 2\n", "settings.json": '{"a": 1, "b": 2}'}
        for name, text in files.items():
            with open(os.path.join(outside, name), "w") as handle:
                handle.write(text)
        sha = {name: hashlib.sha256(text.encode()).hexdigest() for name, text in files.items()}
        record = lambda **kw: {"format": "file", "sha256": "0", "created": False, "backup": None, **kw}
        attacks = {
            "path ../outside": ([record(path="../outside/v1.txt", sha256=sha["v1.txt"], created=True)], []),
            "absolute path": ([record(path=os.path.join(outside, "v2.txt"), sha256=sha["v2.txt"], created=True)], []),
            "backup outside": ([record(path=".mcp.json", backup="../outside/v3.txt")], []),
            "forged backup overwrite": ([record(path="../outside/v4.txt", sha256=sha["v4.txt"],
                                               backup=".telic/backups/evil")], []),
            "toml cut": ([record(path="../outside/config.toml", format="toml", block="[cut]\ny = 2\n")], []),
            "json keys cut": ([record(path="../outside/settings.json", format="json",
                                      pieces=[{"keys": ["a"], "value": 1}])], []),
            "createdDirs outside": ([record(path=".mcp.json", format="json", pieces=[])], ["../outside/emptydir"]),
        }
        before = snapshot(outside)
        for scope, root in (([], self.project), (["--user"], self.home)):
            for name, (records, dirs) in attacks.items():
                with self.subTest(scope=scope, attack=name):
                    os.makedirs(os.path.join(root, ".telic/backups"), exist_ok=True)
                    with open(os.path.join(root, ".telic/backups/evil"), "w") as handle:
                        handle.write("the repository's bytes\n")
                    manifest = {"version": 1, "createdDirs": dirs,
                                "hosts": {"claude-code": {"binary": telic_binary(), "files": records}}}
                    with open(os.path.join(root, ".telic/installs.json"), "w") as handle:
                        json.dump(manifest, handle)
                    done = self.run_telic("uninstall", "claude-code", *scope)
                    self.assertEqual(done.returncode, 1, done.stdout)
                    self.assertIn(b"was not written by telic", done.stderr)
                    self.assertEqual(snapshot(outside), before)
                    shutil.rmtree(os.path.join(root, ".telic"))

    def test_install_does_not_write_through_a_symlink_leaving_the_repository(self):
        # issue 40 row 2
        os.makedirs(os.path.join(self.home, ".claude"), exist_ok=True)
        shutil.rmtree(os.path.join(self.project, ".claude"))
        os.symlink(os.path.join(self.home, ".claude"), os.path.join(self.project, ".claude"))
        home_before, project_before = snapshot(self.home), snapshot(self.project)
        done = self.run_telic("install", "claude-code")
        self.assertEqual(done.returncode, 1)
        self.assertIn(b"is a symlink to", done.stderr)
        self.assertIn(b"outside the scope", done.stderr)
        self.assertEqual(snapshot(self.home), home_before)
        self.assertEqual(snapshot(self.project), project_before)

    def test_deeply_nested_configs_are_refused_with_exit_1(self):
        # issue 40 row 3 (install part): 100,000 nested arrays, no crash
        deep = "[" * 100000 + "]" * 100000
        for rel, host, needle in ((".mcp.json", "claude-code", b".mcp.json: nested deeper than 64 levels at byte 64"),
                                  (".codex/config.toml", "codex", b"config.toml: nested deeper than 64 levels")):
            path = os.path.join(self.project, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as handle:
                handle.write(deep if rel.endswith(".json") else "a = " + deep + "\n")
            done = self.run_telic("install", host)
            self.assertEqual(done.returncode, 1, done.stderr)
            self.assertIn(needle, done.stderr)

if __name__ == "__main__":
    run_tests(sys.argv)
