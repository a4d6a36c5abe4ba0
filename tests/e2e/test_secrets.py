"""Credentials in artifacts other than Evidence (issue 40, row 8), over real
stdio MCP, the real CLI and the viewer over HTTP.

A credential in a submitted artifact body (here a ProblemFrame's goal) is
refused with its JSON pointer and its kind, and nothing is stored. The run's
request (its UserMessage) is stored exactly, but every presentation masks it:
`telic artifact` (unless --reveal), `show`, `runs`, `trace`, the OTLP export
and the viewer's runs list, run page and artifact page. `telic export` keeps
the exact bytes and says so."""

import json
import os
import re
import subprocess
import sys
import threading
import time
import unittest
import urllib.parse
import urllib.request

from mcp_client import Workspace, run_tests, serve, telic_binary
import scenario as sc

# One canary of each kind: the secret itself, and the kind the refusal names.
CANARIES = {
    "aws": ("AKIAZ7Q4VXW2M9K3L8PD", "AWS access key id"),
    "github": ("ghp_Zq8Xw3Vn5Lm2Kp7Rt9Yb4Hc6Jd1Fg0Sa2Ee3", "GitHub token"),
    "pem": ("-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAz9Lq0vYt3\n-----END RSA PRIVATE KEY-----",
            "private key block"),
    "bearer": ("Authorization: Bearer z9Lq0vYt3Wc8Nf2Hb7Rk4Mx", "authorization header"),
    "jwt": ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ6OUxxMHZZdDMifQ.Qm9vZ2llV29vZ2llQ2FuYXJ5",
            "JSON Web Token"),
}


def secret_part(canary):
    """The part of a canary that must never be shown (a header's token)."""
    return canary.split("Bearer ")[-1] if "Bearer " in canary else canary.splitlines()[1] if "\n" in canary else canary


class SecretsTest(unittest.TestCase):
    def setUp(self):
        self.ws = Workspace()
        self.scenario = sc.load("analyze_and_fix")

    def tearDown(self):
        self.ws.close()

    def telic(self, *args, check=True):
        proc = subprocess.run([telic_binary(), *args], env=self.ws.env(), capture_output=True, text=True, timeout=60)
        if check:
            self.assertEqual(proc.returncode, 0, proc.stderr)
        return proc

    def start_run_with(self, canary):
        """A run whose request holds `canary`; returns (run id, request artifact id)."""
        server = serve(self.ws)
        try:
            driver = sc.Driver(server, self.scenario, self.ws.repo)
            driver.write_repository()
            request = f"Fix the greeting. The deploy log shows {canary} in the output."
            driver.start(original_request=request)
            run_id = driver.run["runId"]
            request_id = driver.names["request"].rsplit("/", 1)[1]
            stored = server.ok("telic_get_artifact", {"run_id": run_id, "artifact_id": request_id})["artifact"]
            self.assertEqual(stored["body"]["content"], request, "the request is stored exactly")
            events = json.dumps(server.ok("telic_get_trace", {"run_id": run_id, "limit": 500})["events"])
            self.assertNotIn(secret_part(canary), events)
        finally:
            server.close()
        return run_id, request_id

    # covers TEL-186: the request's credential is kept in the ledger but never shown by the CLI or in the trace.
    def test_request_canaries_are_masked_by_every_cli_presentation(self):
        for name, (canary, _) in CANARIES.items():
            with self.subTest(canary=name):
                run_id, request_id = self.start_run_with(canary)
                secret = secret_part(canary)
                for args in (["artifact", run_id, request_id], ["artifact", "--json", f"artifact://{run_id}/{request_id}"],
                             ["show", run_id], ["show", "--json", run_id], ["status", run_id], ["runs"],
                             ["runs", "--json"], ["trace", run_id], ["trace", "--json", run_id],
                             ["export", run_id, "--otlp"]):
                    shown = self.telic(*args)
                    self.assertNotIn(secret, shown.stdout + shown.stderr, args)
                masked = self.telic("artifact", "--json", run_id, request_id)
                self.assertIn("[REDACTED:", json.loads(masked.stdout)["artifact"]["body"]["content"])
                self.assertRegex(masked.stderr, r"^telic: values that look like credentials are shown as \[REDACTED")
                revealed = self.telic("artifact", "--json", "--reveal", run_id, request_id)
                self.assertIn(canary, json.loads(revealed.stdout)["artifact"]["body"]["content"])
                self.assertEqual(revealed.stderr, "")

    def test_export_keeps_the_exact_request_and_says_so(self):
        canary = CANARIES["aws"][0]
        run_id, _ = self.start_run_with(canary)
        bundle = os.path.join(self.ws.base, "run.bundle.json")
        exported = self.telic("export", run_id, "-o", bundle)
        self.assertIn("keeps the run's request exactly, with 1 value that look", exported.stderr)
        with open(bundle, encoding="utf-8") as handle:
            self.assertIn(canary, handle.read())
        self.telic("verify", "--bundle", bundle)
        plain_run, _ = self.start_run_with("nothing secret here")
        quiet = self.telic("export", plain_run, "-o", bundle + ".2")
        self.assertNotIn("keeps the run's request", quiet.stderr)

    def test_viewer_masks_the_request_and_cannot_be_probed(self):
        canary = CANARIES["github"][0]
        run_id, request_id = self.start_run_with(canary)
        ui = subprocess.Popen([telic_binary(), "ui", "--http", "127.0.0.1:0"], env=self.ws.env(),
                              stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            url = None
            deadline = time.time() + 30
            while time.time() < deadline and not url:
                found = re.search(r"Telic UI at (http://\S+/ui/)", ui.stderr.readline())
                url = found.group(1) if found else None
            self.assertTrue(url, "telic ui printed its URL")
            threading.Thread(target=ui.stderr.read, daemon=True).start()

            def page(path):
                with urllib.request.urlopen(url + path, timeout=20) as response:
                    return response.read().decode("utf-8")
            for path in ("", f"runs/{run_id}", f"runs/{run_id}/artifacts/{request_id}"):
                html = page(path)
                self.assertNotIn(canary, html, path)
                self.assertIn("[REDACTED:credential]", html, path)
            self.assertIn('id="masked"', page(f"runs/{run_id}/artifacts/{request_id}"))
            # The text filter matches the masked request: the secret cannot be guessed a prefix at a time.
            probe = page("?q=" + urllib.parse.quote(canary[:8]))
            self.assertNotIn(f'data-run-id="{run_id}"', probe)
            self.assertIn(f'data-run-id="{run_id}"', page("?q=greeting"))
        finally:
            ui.terminate()
            ui.wait(timeout=20)

    def test_a_credential_in_a_problem_frame_goal_is_refused_with_its_pointer(self):
        server = serve(self.ws)
        try:
            driver = sc.Driver(server, self.scenario, self.ws.repo)
            driver.write_repository()
            driver.start()
            step = driver.run_steps(until="frames the problem")
            run_id = driver.run["runId"]
            before = server.ok("telic_get_run", {"run_id": run_id})
            for name, (canary, kind) in CANARIES.items():
                with self.subTest(canary=name):
                    body = driver.body(step)
                    body["goal"] = f"Fix the greeting; the CI secret {canary} leaked into the log."
                    failure = server.fails("telic_submit_artifact", driver.submit_args(step, body))
                    self.assertIn(f"Artifact body /goal holds a likely credential ({kind}); nothing was stored",
                                  failure["error"])
                    self.assertNotIn(secret_part(canary), json.dumps(failure))
                    self.assertEqual(server.ok("telic_get_run", {"run_id": run_id}), before)
            # A member name is reported at its object, so the pointer never echoes the secret either
            # (a supporting artifact is scanned before its schema and its phase).
            evidence = {"schemaVersion": "1.0", "id": "evidence-x", "runId": run_id, CANARIES["aws"][0]: "x"}
            failure = server.fails("telic_submit_artifact", dict(driver.tokens(), artifact_type="Evidence",
                                                                 body=evidence))
            self.assertIn("Artifact body (root) has a member name holding a likely credential", failure["error"])
            self.assertNotIn(CANARIES["aws"][0], json.dumps(failure))
            events = json.dumps(server.ok("telic_get_trace", {"run_id": run_id, "limit": 500})["events"])
            for canary, _ in CANARIES.values():
                self.assertNotIn(secret_part(canary), events)
            # The same frame without the canary is accepted.
            driver.do(step)
            self.assertEqual(driver.run["phase"], "agent_2_compile")
        finally:
            server.close()


if __name__ == "__main__":
    run_tests(sys.argv)
