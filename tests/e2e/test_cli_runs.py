"""`telic runs` on a ledger with more runs than one page (issue 21 item 3),
and the CLI's manners (issue 42 item 4).

One `telic serve` child starts 130 runs in two modes and cancels some of them;
the CLI then lists them a page at a time (`--before`, the printed `next:`
command), all at once (`--all`), and filtered (`--status`, `--mode`), as a
table and as JSON. telic_list_runs keeps its contract (limit 1..100, newest
updated first).

CliMannersTest runs the real binary for what a person meets: shell
completion sourced in bash (and zsh's parsed when zsh is installed), colour
on a terminal (a pty) but not with NO_COLOR or in a pipe, tables as wide as
the terminal, run id prefixes (an ambiguous one lists the runs), "did you
mean" for commands and options, the request in `runs` and `show`, `runs`
without a ledger, hints that keep --db, a human `doctor`, and `replay`
labelling each step with its own phase.
"""

import fcntl
import json
import os
import pty
import re
import shlex
import shutil
import struct
import subprocess
import sys
import termios
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from mcp_client import Workspace, run_tests, serve, telic_binary  # noqa: E402

RUNS = 130


class RunsPagingTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.ws = Workspace()
        mcp = serve(cls.ws)
        try:
            mcp.initialize()
            cls.started = []  # oldest first
            cls.cancelled = set()
            for i in range(RUNS):
                mode = "analyze_and_fix" if i % 3 == 0 else "report_only"
                started = mcp.ok("telic_start_run", {"original_request": f"request {i}", "mode": mode})
                run = started["run"]
                cls.started.append((run["createdAt"], run["runId"], mode))
                if i % 10 == 0:
                    mcp.ok("telic_cancel_run", {"run_id": run["runId"], "action_id": started["nextAction"]["id"],
                                                "expected_run_version": run["version"]})
                    cls.cancelled.add(run["runId"])
            cls.list_runs = mcp.call("telic_list_runs", {"limit": 101})
            cls.list_runs_100 = mcp.ok("telic_list_runs", {"limit": 100})
        finally:
            mcp.close()

    @classmethod
    def tearDownClass(cls):
        cls.ws.close()

    def cli(self, *args, expect=0):
        proc = subprocess.run([telic_binary(), *args], env=self.ws.env(), capture_output=True, timeout=60)
        out, err = proc.stdout.decode(), proc.stderr.decode()
        self.assertEqual(proc.returncode, expect, f"telic {' '.join(args)}: {err}{out[:400]}")
        return out, err

    def json_pages(self, *args):
        """Follows nextCursor from the first page; (run ids, number of pages)."""
        ids, pages, before = [], 0, []
        while True:
            out, _ = self.cli("runs", "--json", *args, *before)
            page = json.loads(out)
            pages += 1
            ids += [run["runId"] for run in page["runs"]]
            if page["nextCursor"] is None:
                return ids, pages
            self.assertEqual(page["nextCursor"], ids[-1])
            before = ["--before", page["nextCursor"]]

    def newest_first(self, keep=lambda run_id, mode: True):
        """The promised order: createdAt descending, then runId ascending
        (two runs can be created within one millisecond)."""
        runs = sorted(self.started, key=lambda run: run[1])
        runs.sort(key=lambda run: run[0], reverse=True)
        return [run_id for _, run_id, mode in runs if keep(run_id, mode)]

    def test_json_pages_list_every_run_once_newest_created_first(self):
        ids, pages = self.json_pages("--limit", "50")
        self.assertEqual(pages, 3)
        self.assertEqual(ids, self.newest_first())

    def test_all_lists_every_run_in_one_document(self):
        out, _ = self.cli("runs", "--all", "--json")
        page = json.loads(out)
        self.assertIsNone(page["nextCursor"])
        self.assertEqual([run["runId"] for run in page["runs"]], self.newest_first())
        self.assertEqual(set(page["runs"][0]), set(self.list_runs_100["runs"][0]),
                         "the CLI's rows are telic_list_runs' RunSummary")
        table, _ = self.cli("runs", "--all")
        lines = table.splitlines()
        self.assertTrue(lines[0].startswith("RUN"))
        self.assertEqual(len(lines), RUNS + 2)  # header, rule, one line per run
        self.assertNotIn("next:", table)

    def test_the_printed_next_command_lists_the_following_page(self):
        seen, args, pages = [], ["runs", "--status", "running", "--limit", "40"], 0
        while True:
            out, _ = self.cli(*args)
            pages += 1
            lines = out.splitlines()
            next_lines = [line for line in lines if line.startswith("next: ")]
            rows = [line for line in lines[2:] if not line.startswith("next: ")]
            seen += [row.split()[0] for row in rows]
            for row in rows:
                self.assertEqual(row.split()[3], "running")
            if not next_lines:
                break
            command = shlex.split(next_lines[0][len("next: "):])
            self.assertEqual(command[0], "telic")
            args = command[1:]
            self.assertIn("--status", args, "the next command keeps the filters")
        self.assertEqual(seen, self.newest_first(lambda run_id, mode: run_id not in self.cancelled))
        self.assertEqual(pages, 3)

    def test_filters_by_status_and_mode(self):
        ids, _ = self.json_pages("--status", "cancelled", "--limit", "5")
        self.assertEqual(ids, self.newest_first(lambda run_id, mode: run_id in self.cancelled))
        ids, _ = self.json_pages("--mode", "analyze_and_fix", "--limit", "7")
        self.assertEqual(ids, self.newest_first(lambda run_id, mode: mode == "analyze_and_fix"))
        ids, _ = self.json_pages("--mode", "report_only", "--status", "cancelled")
        self.assertEqual(ids, self.newest_first(
            lambda run_id, mode: mode == "report_only" and run_id in self.cancelled))
        out, _ = self.cli("runs", "--json", "--mode", "fix_only")
        self.assertEqual(json.loads(out), {"nextCursor": None, "runs": []})

    def test_bad_arguments_are_refused_with_a_reason(self):
        _, err = self.cli("runs", "--before", "run_does_not_exist", expect=1)
        self.assertIn("Unknown cursor run_does_not_exist", err)
        _, err = self.cli("runs", "--limit", "101", expect=2)
        self.assertIn("--limit", err)
        _, err = self.cli("runs", "--status", "finished", expect=2)
        self.assertIn("--status", err)
        _, err = self.cli("runs", "--mode", "yolo", expect=2)
        self.assertIn("--mode", err)
        _, err = self.cli("runs", "--all", "--limit", "5", expect=2)
        self.assertIn("excludes", err)

    def test_telic_list_runs_keeps_its_contract(self):
        self.assertTrue(self.list_runs.get("isError"), "limit 101 is refused as before")
        runs = self.list_runs_100["runs"]
        self.assertEqual(len(runs), 100)
        updated = [run["updatedAt"] for run in runs]
        self.assertEqual(updated, sorted(updated, reverse=True), "newest updated first")


ESCAPE = "\x1b["


def run_in_pty(argv, env, columns=100):
    """Runs argv with stdout (and stderr) on a pseudo-terminal `columns` wide;
    (exit status, output with the terminal's CRLF turned back into LF)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
    proc = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=slave, stderr=slave, close_fds=True)
    os.close(slave)
    chunks = []
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(master)
    code = proc.wait(timeout=60)
    return code, b"".join(chunks).decode("utf-8", "replace").replace("\r\n", "\n")


class CliMannersTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.ws = Workspace()
        cls.db = os.path.join(cls.ws.state, "telic.sqlite3")
        mcp = serve(cls.ws)
        try:
            mcp.initialize()
            cls.runs = []
            for i in range(24):
                started = mcp.ok("telic_start_run", {"original_request": f"Fix bug number {i} in the parser " + "x" * 150,
                                                     "mode": "report_only"})
                cls.runs.append(started["run"]["runId"])
        finally:
            mcp.close()

    @classmethod
    def tearDownClass(cls):
        cls.ws.close()

    def cli(self, *args, expect=0, env=None):
        proc = subprocess.run([telic_binary(), *args], env=env or self.ws.env(), capture_output=True, timeout=60)
        out, err = proc.stdout.decode(), proc.stderr.decode()
        self.assertEqual(proc.returncode, expect, f"telic {' '.join(args)}: {err}{out[:400]}")
        return out, err

    def complete(self, *words):
        """What bash completes for the last of `words` after sourcing `telic completion bash`."""
        script, _ = self.cli("completion", "bash")
        path = os.path.join(self.ws.base, "telic.bash")
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(script)
        line = " ".join(shlex.quote(w) for w in words)
        program = (f"source {shlex.quote(path)}; COMP_WORDS=(telic {line}); COMP_CWORD={len(words)}; "
                   "_telic; printf '%s\\n' \"${COMPREPLY[@]}\"")
        done = subprocess.run(["bash", "-c", program], capture_output=True, text=True, timeout=30)
        self.assertEqual(done.returncode, 0, done.stderr)
        return [w for w in done.stdout.split("\n") if w]

    def test_bash_completes_commands_options_and_choices(self):
        self.assertEqual(self.complete("sh"), ["show"])
        self.assertEqual(set(self.complete("re")), {"report", "replay"})
        self.assertEqual(self.complete("runs", "--st"), ["--status"])
        self.assertEqual(set(self.complete("runs", "--status", "c")), {"completed", "cancelled"})
        self.assertEqual(set(self.complete("runs", "de")), {"delete", "deleted"})
        self.assertEqual(self.complete("runs", "delete", "--fo"), ["--force"])
        self.assertEqual(self.complete("--color", "al"), ["always"])
        self.assertEqual(self.complete("completion", "z"), [])  # a positional's value: left to the shell
        # The value of an option is not taken for a command.
        self.assertEqual(self.complete("show", "--db", "runs", "--j"), ["--json"])

    def test_zsh_completion_names_every_command_and_parses(self):
        script, _ = self.cli("completion", "zsh")
        self.assertTrue(script.startswith("#compdef telic\n"))
        for name in ("serve", "runs", "show", "trace", "doctor", "completion"):
            self.assertIn(f"'{name}:", script)
        if shutil.which("zsh") is None:
            self.skipTest("zsh is not installed: the script's syntax is not checked")
        path = os.path.join(self.ws.base, "_telic")
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(script)
        checked = subprocess.run(["zsh", "-n", path], capture_output=True, text=True, timeout=30)
        self.assertEqual(checked.returncode, 0, checked.stderr)

    def test_colour_follows_the_terminal(self):
        code, out = run_in_pty([telic_binary(), "runs"], self.ws.env(), columns=120)
        self.assertEqual(code, 0, out)
        self.assertIn(ESCAPE + "36mrunning" + ESCAPE + "0m", out, "a terminal gets colour")
        code, out = run_in_pty([telic_binary(), "runs"], self.ws.env(NO_COLOR="1"), columns=120)
        self.assertNotIn(ESCAPE, out, "NO_COLOR turns it off")
        code, out = run_in_pty([telic_binary(), "runs", "--color=never"], self.ws.env(), columns=120)
        self.assertNotIn(ESCAPE, out)
        out, _ = self.cli("runs")
        self.assertNotIn(ESCAPE, out, "a pipe gets none")
        out, _ = self.cli("runs", "--color", "always")
        self.assertIn(ESCAPE, out)

    def test_tables_are_as_wide_as_the_terminal(self):
        code, out = run_in_pty([telic_binary(), "runs"], self.ws.env(NO_COLOR="1"), columns=90)
        self.assertEqual(code, 0, out)
        lines = out.splitlines()
        self.assertTrue(lines[0].startswith("RUN"), out)
        self.assertTrue(all(len(line) <= 90 for line in lines), out)
        self.assertTrue(any(len(line) >= 85 for line in lines[2:]), "the request fills the rest: " + out)
        run = self.runs[0]
        for argv in (["trace", run], ["show", run]):
            out, _ = self.cli(*argv, env=self.ws.env(COLUMNS="80"))
            for line in out.splitlines():
                if not line.startswith(("repository", "see also")):
                    self.assertLessEqual(len(line), 80, f"{argv}: {line}")
        out, _ = self.cli("trace", run)
        self.assertNotRegex(out, r"\d{4}-\d\d-\d\dT", "no full timestamps by default")
        self.assertIn("+0 ms", out)

    def test_request_in_runs_and_show(self):
        out, _ = self.cli("runs", "--limit", "100")
        self.assertIn("Fix bug number 23 in the parser", out)
        out, _ = self.cli("show", self.runs[5])
        self.assertRegex(out, r"\nrequest +Fix bug number 5 in the parser x+…\n")

    def test_unique_prefixes_and_ambiguous_ones(self):
        run = self.runs[7]
        prefix = next(run[:n] for n in range(4, 36) if sum(r.startswith(run[:n]) for r in self.runs) == 1)
        for argv in (["show", prefix], ["trace", prefix], ["verify", prefix], ["replay", prefix],
                     ["status", prefix], ["export", prefix], ["tasks", prefix]):
            out, _ = self.cli(*argv)
        out, _ = self.cli("status", prefix)
        self.assertEqual(json.loads(out)["run"]["runId"], run)
        short = run[0]
        matches = [r for r in self.runs if r.startswith(short)]
        if len(matches) < 2:
            short = ""
            matches = []
        if short:
            _, err = self.cli("show", short, expect=1)
            self.assertIn(f"Run id prefix '{short}' is ambiguous: {len(matches)} runs match", err)
            for match in matches[:10]:
                self.assertIn("  " + match + "  running", err)
        _, err = self.cli("show", "zzzz", expect=1)
        self.assertIn("Run not found: zzzz", err)

    def test_did_you_mean(self):
        _, err = self.cli("shwo", expect=1)
        self.assertIn("'shwo' is not a telic command; did you mean 'show'?", err)
        _, err = self.cli("runs", "--limt", "5", expect=2)
        self.assertIn("unknown option '--limt'; did you mean '--limit'?", err)
        _, err = self.cli("trace", self.runs[0], "--tiem", "clock", expect=2)
        self.assertIn("did you mean '--time'?", err)

    def test_empty_states_and_hints(self):
        other = Workspace()
        try:
            out, _ = self.cli("runs", env=other.env())
            self.assertIn("No runs yet (no ledger at " + os.path.join(other.state, "telic.sqlite3") + ")", out)
            self.assertFalse(os.path.exists(other.state))
            missing = os.path.join(other.base, "nothing.sqlite3")
            _, err = self.cli("runs", "--db", missing, env=other.env(), expect=1)
            self.assertEqual(err, f"telic: No Telic ledger exists at {missing}\n")
        finally:
            other.close()
        out, _ = self.cli("runs", "--mode", "fix_only")
        self.assertEqual(out, "No runs match these filters.\n")
        out, _ = self.cli("runs", "--limit", "5", "--db", self.db)
        [hint] = [line for line in out.splitlines() if line.startswith("next: ")]
        command = shlex.split(hint[len("next: "):])
        self.assertEqual(command[command.index("--db") + 1], self.db, "the hint keeps --db")
        out, _ = self.cli(*command[1:])
        self.assertEqual(len([line for line in out.splitlines()[2:] if not line.startswith("next:")]), 5)

    def test_doctor_is_human_and_json_on_request(self):
        out, _ = self.cli("doctor")
        self.assertIn("\u2713 repository", out)
        self.assertIn("\u2713 ledger", out)
        self.assertRegex(out, r"all checks passed|some checks failed")
        self.assertNotIn("{", out)
        out, _ = self.cli("doctor", "--json")
        self.assertEqual(json.loads(out)["checks"]["ledger"]["integrity"], "ok")

    def test_replay_labels_each_step_with_its_own_phase(self):
        workdir = os.path.join(self.ws.base, "demo")
        self.cli("demo", "--workdir", workdir)
        db = os.path.join(workdir, "state", "telic.sqlite3")
        out, _ = self.cli("runs", "--json", "--db", db)
        [run] = [r["runId"] for r in json.loads(out)["runs"]]
        report = json.loads(self.cli("replay", run, "--json", "--db", db)[0])
        self.assertEqual(report["steps"][0]["phase"], "agent_5_report", "the wire's report is unchanged")
        out, _ = self.cli("replay", run, "--db", db)
        steps = [line.split() for line in out.splitlines() if line.startswith("  #")]
        by_type = {}
        for step in steps:
            by_type.setdefault(step[2], step[1])
        self.assertEqual(by_type["UserMessage"], "context_discovery")
        self.assertEqual(by_type["RunEnvelope"], "context_discovery")
        self.assertEqual(by_type["ProblemFrame"], "agent_1_frame")
        self.assertEqual(by_type["UserReport"], "user_report")
        self.assertNotIn("context_grounding", out, "one phase vocabulary: the protocol's")


if __name__ == "__main__":
    run_tests(sys.argv)
