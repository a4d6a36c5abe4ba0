"""`telic ui` in a real browser (issue 19): Debian's chromium, headless,
driven by python3-selenium through chromium-driver. Nothing downloads a
browser. Three runs in one SQLite ledger:

- the run `telic demo` produces (analyze_and_fix, completed);
- a run driven over MCP (tests/e2e/scenario.py) with a clarification
  (answered), a denied out-of-permission write and a task graph mirrored from
  its WorkPlans, whose request and ProblemFrame carry HTML/script payloads;
- a run left open to watch live updates arrive without a reload.

Each page must load with no console error, show what it should, link where
it should, and execute nothing from stored text. Screenshots go to
$TELIC_UI_SCREENSHOTS (default build/ui-screenshots). Without chromium the
test is skipped, except in CI (env CI set), where that is a failure."""

import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import unittest

from http_client import Postgres
from mcp_client import McpProcess, make_git_repo, run_tests, telic_binary
import scenario as sc

try:
    from selenium import webdriver
except ImportError:  # a Python other than Debian's: use Debian's python3-selenium
    sys.path.append("/usr/lib/python3/dist-packages")
    try:
        from selenium import webdriver
    except ImportError:
        webdriver = None
if webdriver is not None:
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
SHOTS = os.environ.get("TELIC_UI_SCREENSHOTS") or os.path.join(ROOT, "build", "ui-screenshots")

PAYLOAD = ("<script>window.__pwned = 1</script><img src=x onerror=\"window.__pwned = 2; alert(2)\">"
           "<svg onload=\"window.__pwned = 3\"></svg> & \"quoted\" 'single'")

CLARIFICATION = {
    "schemaVersion": "1.0", "id": "clarification-01", "runId": "${run}",
    "question": "Should the fix also change the farewell <b>message</b>?",
    "reason": "permission_expanding", "divergence": "A wider change needs authority this run does not have.",
    "evidenceInspected": ["${request}"], "blockedBoundary": "scope of the fix",
    "responseConstraints": "Pick one choice id.",
    "responseChoices": [
        {"id": "greeting-only", "label": "Greeting only", "consequence": "Fix only the greeting.",
         "authorityEffect": "within_current_authority", "runEffect": "resume"},
        {"id": "stop", "label": "Stop", "consequence": "Stop the run.",
         "authorityEffect": "within_current_authority", "runEffect": "cancel"},
        {"id": "bigger", "label": "Bigger change", "consequence": "Start a new, wider run.",
         "authorityEffect": "requires_new_run", "runEffect": "new_run"}],
    "permissionExpansionRequired": True, "rationaleSummary": "Scope is a user decision."}


def browser_missing():
    """Why no browser test can run here, or None."""
    if webdriver is None:
        return "python3-selenium is not installed"
    for path in (CHROMIUM, CHROMEDRIVER):
        if not os.path.exists(path):
            return f"{path} is not installed"
    return None


MISSING = browser_missing()
if MISSING and os.environ.get("CI"):
    raise SystemExit(f"test_ui: {MISSING}; CI needs chromium, chromium-driver and python3-selenium (scripts/setup)")


class UiServer:
    """`telic ui --db LEDGER --http 127.0.0.1:0` (or `argv`), its URL read from stderr."""

    def __init__(self, ledger, cwd, argv=None):
        argv = argv or [telic_binary(), "ui", "--db", ledger, "--http", "127.0.0.1:0"]
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                     text=True, cwd=cwd)
        self.url = None
        deadline = time.time() + 30
        while time.time() < deadline:
            line = self.proc.stderr.readline()
            if not line:
                break
            found = re.search(r"Telic UI at (http://\S+/ui/)", line)
            if found:
                self.url = found.group(1)
                break
        if not self.url:
            self.proc.kill()
            raise RuntimeError("telic ui did not print its URL")
        threading.Thread(target=self.proc.stderr.read, daemon=True).start()

    def close(self):
        self.proc.terminate()
        self.proc.wait(timeout=20)


@unittest.skipIf(MISSING, f"browser test skipped: {MISSING} (install chromium chromium-driver python3-selenium)")
class UiBrowserTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.base = tempfile.mkdtemp(prefix="telic-ui-e2e-")
        cls.ledger = cls.make_ledger()
        demo = subprocess.run([telic_binary(), "demo", "--db", cls.ledger, "--workdir", os.path.join(cls.base, "demo")],
                              capture_output=True, text=True, timeout=120)
        if demo.returncode != 0:
            raise RuntimeError("telic demo failed: " + demo.stderr)
        cls.demo_run = re.search(r"telic show (\S+)", demo.stdout).group(1)
        repo = make_git_repo(os.path.join(cls.base, "repo"))
        env = dict(os.environ, TELIC_REPOSITORY_ROOT=repo, TELIC_STATE_DIR=os.path.join(cls.base, "state"))
        cls.server = McpProcess([telic_binary(), "serve", "--db", cls.ledger], env)
        cls.scenario = sc.load("analyze_and_fix")
        cls.rich = cls.drive_rich_run(repo)
        cls.live = sc.Driver(cls.server, cls.scenario, repo)
        cls.live.start()
        cls.ui = UiServer(cls.ledger, cls.base)
        options = webdriver.ChromeOptions()
        for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                    "--window-size=1400,1800", "--no-first-run", "--disable-extensions"):
            options.add_argument(arg)
        options.binary_location = CHROMIUM
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        cls.driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
        cls.driver.set_page_load_timeout(30)
        os.makedirs(SHOTS, exist_ok=True)

    # The store every process of this class reads and writes (--db).
    shot_prefix = ""

    @classmethod
    def make_ledger(cls):
        # Its own folder: the ledger's folder is the state directory, which grounding never reads.
        os.makedirs(os.path.join(cls.base, "ledger"))
        return os.path.join(cls.base, "ledger", "telic.sqlite3")

    @classmethod
    def drive_rich_run(cls, repo):
        """The scenario with a clarification, a denial and payloads; returns its Driver."""
        d = sc.Driver(cls.server, cls.scenario, repo)
        d.write_repository()
        d.start(original_request=cls.scenario["start"]["original_request"] + "\n" + PAYLOAD)
        d.run_steps(until="frames the problem")
        body = sc.substitute(CLARIFICATION, d.names)
        d._update(cls.server.ok("telic_submit_artifact", dict(d.tokens(), artifact_type="ClarificationRequest", body=body)))
        d._update(cls.server.ok("telic_submit_artifact", dict(d.tokens(), clarification_response="greeting-only")))
        artifacts = cls.server.ok("telic_get_run", {"run_id": d.run["runId"]})["artifacts"]
        answer = [a for a in artifacts if a["type"] == "UserMessage"][-1]["id"]
        run_id = d.run["runId"]
        frame_step = d.step("frames the problem")
        frame = d.body(frame_step)
        frame["goal"] = "Fix the greeting. " + PAYLOAD
        refs = [f"artifact://{run_id}/clarification-01", f"artifact://{run_id}/{answer}"]
        d._update(cls.server.ok("telic_submit_artifact", dict(d.submit_args(frame_step, frame), source_refs=refs)))
        started = False
        for step in cls.scenario["steps"]:
            if "frames the problem" in step.get("say", ""):
                started = True
                continue
            if not started:
                continue
            if "reports the fix" in step.get("say", ""):
                denied = d.body(step)
                denied["actions"][0]["target"] = "README.md"
                denied["filesChanged"][0]["path"] = "README.md"
                failure = cls.server.fails("telic_submit_artifact", d.submit_args(step, denied))
                assert failure["code"] == "permission_denied", failure
            d.do(step)
        assert d.run["status"] == "completed", d.run
        return d

    @classmethod
    def tearDownClass(cls):
        for close in (lambda: cls.driver.quit(), lambda: cls.ui.close(), lambda: cls.server.close()):
            try:
                close()
            except Exception:  # noqa: BLE001 - best effort cleanup
                pass
        shutil.rmtree(cls.base, ignore_errors=True)

    # --- helpers ---

    def open(self, path, shot=None):
        self.driver.get(self.ui.url.rstrip("/").removesuffix("/ui") + path)
        self.assertNoConsoleErrors(path)
        self.assertNotPwned()
        if shot:
            self.driver.save_screenshot(os.path.join(SHOTS, self.shot_prefix + shot))

    def assertNoConsoleErrors(self, where):
        errors = [e for e in self.driver.get_log("browser") if e["level"] == "SEVERE"]
        self.assertEqual(errors, [], f"console errors on {where}")

    def assertNotPwned(self):
        self.assertIsNone(self.driver.execute_script("return window.__pwned"), "stored text executed as script")
        self.assertEqual(self.driver.find_elements(By.CSS_SELECTOR, "main img, main script"), [])

    def text(self, css):
        return self.driver.find_element(By.CSS_SELECTOR, css).text

    def texts(self, css):
        return [e.text for e in self.driver.find_elements(By.CSS_SELECTOR, css)]

    # --- tests ---

    def test_runs_page_lists_every_run_and_filters(self):
        self.open("/ui/", "runs.png")
        rows = self.driver.find_elements(By.CSS_SELECTOR, "tr.run")
        ids = [r.get_attribute("data-run-id") for r in rows]
        self.assertEqual(set(ids), {self.demo_run, self.rich.run["runId"], self.live.run["runId"]})
        self.assertEqual(ids[0], self.live.run["runId"])  # newest first
        self.assertIn("The greeting printed by src/greet.py says 'Helo'", self.text(f"tr[data-run-id='{self.demo_run}']"))
        self.open("/ui/?status=completed&q=window.__PWNED")
        ids = [r.get_attribute("data-run-id") for r in self.driver.find_elements(By.CSS_SELECTOR, "tr.run")]
        self.assertEqual(ids, [self.rich.run["runId"]])
        self.open("/ui/?topology=micro")
        self.assertEqual(self.driver.find_elements(By.CSS_SELECTOR, "tr.run"), [])
        self.open("/ui/?limit=1")
        self.driver.find_element(By.ID, "next-page").click()
        self.assertNoConsoleErrors("next page")
        self.assertIn("before=" + self.live.run["runId"], self.driver.current_url)
        # A run link leads to the run page.
        self.open("/ui/")
        self.driver.find_element(By.CSS_SELECTOR, f"tr[data-run-id='{self.demo_run}'] a.run-link").click()
        self.assertEqual(self.text("#run-id"), self.demo_run)

    def test_demo_run_page(self):
        run_id = self.demo_run
        self.open(f"/ui/runs/{run_id}", "run-demo.png")
        self.assertIn("says 'Helo' instead of 'Hello'", self.text("#request"))
        self.assertEqual(self.text("#run-status"), "completed")
        self.assertEqual(self.text("#run-mode"), "analyze_and_fix")
        self.assertEqual(self.text("#run-topology"), "forensic")
        self.assertIn("verified", self.text("#verify"))
        self.assertEqual(self.driver.find_element(By.CSS_SELECTOR, "#verify [data-ok]").get_attribute("data-ok"), "true")
        self.assertEqual(self.driver.find_element(By.CSS_SELECTOR, "#replay [data-ok]").get_attribute("data-ok"), "true")
        taken = {n.get_attribute("data-id") for n in self.driver.find_elements(By.CSS_SELECTOR, "#phase-diagram g.node.taken")}
        self.assertTrue({"context_grounding", "agent_1_frame", "agent_3_evidence_reverify", "agent_5_report", "completed"} <= taken)
        self.assertNotIn("agent_2_revise", taken)
        current = [n.get_attribute("data-id") for n in self.driver.find_elements(By.CSS_SELECTOR, "#phase-diagram g.node.current")]
        self.assertEqual(current, ["completed"])
        events = self.driver.find_elements(By.CSS_SELECTOR, "#timeline-body tr")
        trace = self.server.ok("telic_get_trace", {"run_id": run_id, "limit": 500})["events"]
        self.assertEqual(len(events), len(trace))
        allowed = self.driver.find_elements(By.CSS_SELECTOR, "tr.permission_checked .capability")
        self.assertIn("repository.write", [a.text for a in allowed])
        self.assertEqual(self.driver.find_elements(By.CSS_SELECTOR, "tr.deny"), [])
        # Issue 38: observed vs claimed at a glance. The demo commits its repository, so telic shares the work
        # tree, checks the host's FileChange and stores its own diff and test run (observed) under require_observed;
        # the host's Evidence is claimed.
        self.assertIn("shared", self.text("#observation-worktree"))
        self.assertEqual(self.text("#observation-policy"), "require_observed")
        provenance = [e.get_attribute("data-provenance")
                      for e in self.driver.find_elements(By.CSS_SELECTOR, "#artifacts [data-provenance]")]
        self.assertIn("observed", provenance)
        self.assertIn("claimed", provenance)
        self.assertEqual(int(self.text("#observed-count")), provenance.count("observed"))
        self.assertEqual(int(self.text("#claimed-count")), provenance.count("claimed"))
        claims = self.driver.find_elements(By.CSS_SELECTOR, "#report-claims li.report-claim")
        self.assertTrue(claims)
        for claim in claims:
            self.assertIn(claim.get_attribute("data-provenance"), ("observed", "claimed"))
            self.assertTrue(claim.find_elements(By.CSS_SELECTOR, "ul .provenance"))
        cited = [p.text for claim in claims for p in claim.find_elements(By.CSS_SELECTOR, "ul .provenance")]
        self.assertGreaterEqual(cited.count("observed"), 2, cited)  # the fix's claim cites telic's diff and check
        # The artifact graph: every artifact a node; a node leads to its page.
        artifacts = self.server.ok("telic_get_run", {"run_id": run_id})["artifacts"]
        nodes = self.driver.find_elements(By.CSS_SELECTOR, "#artifact-graph a.nodelink")
        self.assertEqual(len(nodes), len(artifacts))
        self.driver.find_element(By.CSS_SELECTOR, "#artifact-graph g.node[data-id='frame-01']").click()
        self.assertNoConsoleErrors("artifact graph link")
        self.assertTrue(self.driver.current_url.endswith(f"/ui/runs/{run_id}/artifacts/frame-01"))
        self.assertEqual(self.text("#artifact-id"), "frame-01")

    def test_artifact_page(self):
        run_id = self.demo_run
        self.open(f"/ui/runs/{run_id}/artifacts/frame-01", "artifact.png")
        self.assertEqual(self.text("#artifact-type"), "ProblemFrame")
        stored = self.server.ok("telic_get_artifact", {"run_id": run_id, "artifact_id": "frame-01"})["artifact"]
        self.assertEqual(self.text("#artifact-sha256"), stored["sha256"])
        self.assertEqual(self.driver.find_element(By.CSS_SELECTOR, "#integrity [data-ok]").get_attribute("data-ok"), "true")
        self.assertIn('"goal": "Find why the greeting is misspelled and correct it."', self.text("#body"))
        # An artifact:// reference inside the body is a link to that artifact.
        ref = self.driver.find_element(By.CSS_SELECTOR, "#body a.ref")
        target = ref.text
        ref.click()
        self.assertNoConsoleErrors("reference link")
        self.assertEqual(self.text("#artifact-id"), target.rsplit("/", 1)[1])
        self.driver.find_element(By.ID, "run-link").click()
        self.assertEqual(self.text("#run-id"), run_id)

    def test_denial_clarification_and_payloads(self):
        run_id = self.rich.run["runId"]
        self.open(f"/ui/runs/{run_id}", "run.png")
        # The request shows literally, payload and all, and nothing ran.
        self.assertEqual(self.text("#request"), self.scenario["start"]["original_request"] + "\n" + PAYLOAD)
        self.assertEqual(self.text("#budget-clarification"), "0 of 1")
        steps = self.texts("#path li")
        at = steps.index("clarification")
        self.assertEqual(steps[at - 1:at + 2], ["agent_1_frame", "clarification", "agent_1_frame"])
        self.assertEqual(steps[-1], "completed")
        # The refused WorkResult is in the timeline with its code and pointer,
        # though the run's trace and version never recorded it.
        refused = self.driver.find_elements(By.CSS_SELECTOR, "#timeline-body tr.rejected")
        self.assertEqual(len(refused), 1)
        self.assertEqual(refused[0].find_element(By.CSS_SELECTOR, ".code").text, "permission_denied")
        self.assertEqual(refused[0].find_element(By.CSS_SELECTOR, ".tool").text, "telic_submit_artifact")
        self.assertTrue(refused[0].find_element(By.CSS_SELECTOR, ".refusal").text)
        self.assertEqual(self.text("#outcome-refused"), "1")
        self.assertEqual(self.text("#outcome-denials"), "1")
        # "only errors and denials" leaves exactly the denial and the refusal.
        self.driver.find_element(By.ID, "only-problems").click()
        shown = [r for r in self.driver.find_elements(By.CSS_SELECTOR, "#timeline-body tr") if r.is_displayed()]
        self.assertEqual(len(shown), 2)
        self.assertTrue(all("deny" in r.get_attribute("class") or "rejected" in r.get_attribute("class") for r in shown))
        self.driver.save_screenshot(os.path.join(SHOTS, self.shot_prefix + "run-problems.png"))
        self.driver.find_element(By.ID, "only-problems").click()
        denials = self.driver.find_elements(By.CSS_SELECTOR, "#timeline-body tr.deny")
        self.assertEqual(len(denials), 1)
        denial = denials[0]
        self.assertEqual(denial.find_element(By.CSS_SELECTOR, ".capability").text, "repository.write")
        self.assertEqual(denial.find_element(By.CSS_SELECTOR, ".target").text, "README.md")
        self.assertEqual(denial.find_element(By.CSS_SELECTOR, "[data-decision]").text, "deny")
        self.assertIn("plan-fix", denial.find_element(By.CSS_SELECTOR, ".layer").text)
        self.assertTrue(denial.find_element(By.CSS_SELECTOR, ".rule").text)
        # It stands out: the row is painted with the denial colour (ui.css --bad-bg).
        self.assertEqual(denial.find_element(By.CSS_SELECTOR, "td").value_of_css_property("background-color"),
                         "rgba(251, 229, 227, 1)")
        clarification = self.driver.find_element(By.CSS_SELECTOR, "#timeline-body tr.clarification_requested")
        self.assertEqual(clarification.find_element(By.CSS_SELECTOR, ".question").text,
                         "Should the fix also change the farewell <b>message</b>?")
        self.assertEqual([c.get_attribute("data-choice") for c in clarification.find_elements(By.CSS_SELECTOR, ".choice")],
                         ["greeting-only", "stop", "bigger"])
        self.assertEqual(clarification.find_element(By.CSS_SELECTOR, ".choice.chosen").get_attribute("data-choice"), "greeting-only")
        self.assertEqual(clarification.find_element(By.CSS_SELECTOR, ".answer").text, "greeting-only")
        # The ProblemFrame's payload, literally, on its page.
        self.open(f"/ui/runs/{run_id}/artifacts/frame-01", "artifact-payload.png")
        self.assertIn("Fix the greeting. " + PAYLOAD.replace('"', '\\"'), self.text("#body"))
        # The task graph mirrored from the WorkPlans; its link from the run page.
        self.open(f"/ui/runs/{run_id}")
        self.driver.find_element(By.ID, "tasks-link").click()
        self.assertNoConsoleErrors("tasks link")
        self.assertNotPwned()
        self.driver.save_screenshot(os.path.join(SHOTS, self.shot_prefix + "tasks.png"))
        names = self.texts("#tasks .task-name")
        self.assertEqual(names, ["plan-diagnosis/diagnose", "plan-fix/fix"])
        self.assertEqual(self.texts("#tasks [data-state]"), ["completed", "completed"])
        self.assertEqual(len(self.driver.find_elements(By.CSS_SELECTOR, "#task-graph g.node.task-completed")), 2)
        self.driver.find_element(By.ID, "run-link").click()
        self.assertEqual(self.text("#run-id"), run_id)

    def test_live_update_without_reload(self):
        run_id = self.live.run["runId"]
        self.open(f"/ui/runs/{run_id}", "live-before.png")
        before = len(self.driver.find_elements(By.CSS_SELECTOR, "#timeline-body tr"))
        self.driver.execute_script("window.__same_page = true")
        WebDriverWait(self.driver, 5).until(lambda d: "on" in d.find_element(By.ID, "live").get_attribute("class"))
        self.live.do(self.scenario["steps"][0])  # ground: new events commit now
        committed = time.time()
        WebDriverWait(self.driver, 5, poll_frequency=0.05).until(
            lambda d: len(d.find_elements(By.CSS_SELECTOR, "#timeline-body tr")) > before)
        seen = time.time() - committed
        self.assertLess(seen, 1.5, "the new event took too long to appear")
        self.assertTrue(self.driver.execute_script("return window.__same_page === true"), "the page was reloaded")
        types = [r.get_attribute("data-event-type") for r in self.driver.find_elements(By.CSS_SELECTOR, "#timeline-body tr")]
        self.assertIn("context_source_stored", types)
        WebDriverWait(self.driver, 3).until(lambda d: d.find_element(By.ID, "run-phase").text == "agent_1_frame")
        self.assertNoConsoleErrors("live update")
        self.driver.save_screenshot(os.path.join(SHOTS, self.shot_prefix + "live-after.png"))

    def boxes(self, css):
        return self.driver.execute_script(
            "return Array.from(document.querySelectorAll(arguments[0])).map(e => {"
            " const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; })", css)

    def assertNoOverlap(self, css):
        boxes = self.boxes(css)
        self.assertTrue(boxes, f"nothing matches {css}")
        for i, a in enumerate(boxes):
            self.assertGreater(a[2] - a[0], 0, f"{css} #{i} has no width")
            for j in range(i + 1, len(boxes)):
                b = boxes[j]
                overlap = a[0] < b[2] - 0.5 and b[0] < a[2] - 0.5 and a[1] < b[3] - 0.5 and b[1] < a[3] - 0.5
                self.assertFalse(overlap, f"{css}: #{i} {a} overlaps #{j} {b}")

    def test_run_page_opens_with_the_outcome_and_draws_labels_apart(self):
        run_id = self.rich.run["runId"]
        self.open(f"/ui/runs/{run_id}", "run-light.png")
        outcome = self.driver.find_element(By.ID, "outcome")
        self.assertLess(outcome.rect["y"], 200, "the outcome is not on the first screen")
        self.assertLess(outcome.rect["y"], self.driver.find_element(By.ID, "timeline").rect["y"])
        self.assertEqual(self.text("#outcome-status").lower(), "completed")  # shown upper-case by the stylesheet
        self.assertIn("UserReport", self.text("#outcome-summary"))
        self.assertTrue(self.text("#outcome-duration"))
        # The path as steps: none overlaps another, each label fits its box.
        self.assertNoOverlap("#path li")
        # The whole machine waits behind a toggle; opened, no two labels meet.
        machine = self.driver.find_element(By.ID, "machine")
        self.assertIsNone(machine.get_attribute("open"))
        machine.find_element(By.TAG_NAME, "summary").click()
        self.assertIsNotNone(machine.get_attribute("open"))
        self.assertEqual(self.driver.find_elements(By.CSS_SELECTOR, "#phase-diagram text.elabel"), [])
        self.assertNoOverlap("#phase-diagram g.node rect")
        self.assertNoOverlap("#phase-diagram g.node text")
        fits = self.driver.execute_script(
            "return Array.from(document.querySelectorAll('#phase-diagram g.node')).every(g => {"
            " const r = g.querySelector('rect').getBoundingClientRect();"
            " return Array.from(g.querySelectorAll('text')).every(t => { const b = t.getBoundingClientRect();"
            " return b.left >= r.left - 0.5 && b.right <= r.right + 0.5; }); })")
        self.assertTrue(fits, "a node label runs out of its box")
        # Times since the start and short references in the timeline.
        self.assertTrue(self.text("#timeline-body tr td.when").startswith("+"))
        ref = self.driver.find_element(By.CSS_SELECTOR, "#timeline-body a.ref")
        self.assertFalse(ref.text.startswith("artifact://"))
        self.assertTrue(ref.get_attribute("title").startswith(f"artifact://{run_id}/"))
        # An ended run does not poll.
        live = self.driver.find_element(By.ID, "live")
        self.assertEqual(live.get_attribute("data-ended"), "true")
        time.sleep(0.6)
        self.assertNotIn("on", live.get_attribute("class").split())

    def test_dark_mode_follows_the_system(self):
        run_id = self.rich.run["runId"]
        self.driver.execute_cdp_cmd("Emulation.setEmulatedMedia",
                                    {"features": [{"name": "prefers-color-scheme", "value": "dark"}]})
        try:
            self.open(f"/ui/runs/{run_id}", "run-dark.png")
            background = self.driver.execute_script("return getComputedStyle(document.body).backgroundColor")
            self.assertEqual(background, "rgb(18, 21, 28)")
            card = self.driver.find_element(By.ID, "outcome").value_of_css_property("background-color")
            self.assertEqual(card, "rgba(26, 31, 41, 1)")
            self.open("/ui/", "runs-dark.png")
        finally:
            self.driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})
        self.open("/ui/")
        self.assertEqual(self.driver.execute_script("return getComputedStyle(document.body).backgroundColor"),
                         "rgb(247, 248, 250)")

    def test_keyboard_navigation_and_search(self):
        from selenium.webdriver.common.keys import Keys
        self.open("/ui/")
        body = self.driver.find_element(By.TAG_NAME, "body")
        body.send_keys("/")
        self.assertEqual(self.driver.switch_to.active_element.get_attribute("id"), "search")
        self.driver.switch_to.active_element.send_keys(Keys.ESCAPE)
        body.send_keys("j")
        rows = self.driver.find_elements(By.CSS_SELECTOR, "#runs tbody tr")
        self.assertIn("selected", rows[0].get_attribute("class"))
        body = self.driver.switch_to.active_element
        body.send_keys("j")
        self.assertIn("selected", rows[1].get_attribute("class"))
        self.assertNotIn("selected", rows[0].get_attribute("class"))
        outline = rows[1].value_of_css_property("outline-style")
        self.assertEqual(outline, "solid", "the selected row has no visible focus")
        self.driver.switch_to.active_element.send_keys("k")
        self.assertIn("selected", rows[0].get_attribute("class"))
        target = rows[0].get_attribute("data-run-id")
        self.driver.switch_to.active_element.send_keys(Keys.ENTER)
        WebDriverWait(self.driver, 5).until(lambda d: d.current_url.endswith("/ui/runs/" + target))
        self.assertEqual(self.text("#run-id"), target)
        # Search by a run id prefix; the pager counts and goes back.
        prefix = self.demo_run[:8]
        self.open("/ui/?q=" + prefix.upper())
        self.assertEqual([r.get_attribute("data-run-id") for r in self.driver.find_elements(By.CSS_SELECTOR, "tr.run")],
                         [self.demo_run])
        self.assertEqual(self.text("#page-range"), "runs 1–1 of 1")
        self.open("/ui/?limit=1")
        self.assertEqual(self.text("#page-range"), "runs 1–1 of 3")
        self.driver.find_element(By.ID, "next-page").click()
        self.assertEqual(self.text("#page-range"), "runs 2–2 of 3")
        self.driver.find_element(By.ID, "previous-page").click()
        self.assertEqual(self.text("#page-range"), "runs 1–1 of 3")
        self.assertEqual(self.driver.find_elements(By.ID, "previous-page"), [])
        # / on the server leads to the viewer.
        self.driver.get(self.ui.url.rstrip("/").removesuffix("/ui") + "/")
        self.assertTrue(self.driver.current_url.endswith("/ui/"))

    def test_security_headers_and_unknown_pages(self):
        import urllib.error
        import urllib.request
        with urllib.request.urlopen(self.ui.url) as response:
            self.assertIn("script-src 'self'", response.headers["Content-Security-Policy"])
            self.assertNotIn("unsafe-inline", response.headers["Content-Security-Policy"])
            self.assertEqual(response.headers["X-Content-Type-Options"], "nosniff")
        request = urllib.request.Request(self.ui.url, headers={"Host": "attacker.example"})
        with self.assertRaises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request)
        self.assertEqual(refused.exception.code, 403)
        # telic serve --http --ui: the same pages under /ui beside /mcp.
        served = UiServer(self.ledger, self.base, [telic_binary(), "serve", "--db", self.ledger, "--http", "127.0.0.1:0", "--ui"])
        try:
            self.driver.get(served.url + "runs/" + self.demo_run)
            self.assertNoConsoleErrors("serve --ui")
            self.assertEqual(self.text("#run-id"), self.demo_run)
            self.assertEqual(self.text("#run-status"), "completed")
        finally:
            served.close()
        self.driver.get(self.ui.url + "runs/no-such-run")
        self.assertIn("Run not found", self.text("#error"))
        self.driver.get_log("browser")  # the 404 itself is logged; nothing else should be


class UiBrowserPostgresTest(UiBrowserTest):
    """Every page of the test above, read from PostgreSQL: telic demo, serve and
    ui share one fresh schema of the test server (`--db postgresql://…`)."""

    shot_prefix = "pg-"

    @classmethod
    def make_ledger(cls):
        pg = Postgres.shared()
        if not pg.url:
            if os.environ.get("TELIC_REQUIRE_POSTGRES") == "1":
                raise RuntimeError(f"PostgreSQL required but unavailable: {pg.reason}")
            raise unittest.SkipTest(f"SKIPPED: no PostgreSQL server: {pg.reason}")
        return pg.new_database_url()


if __name__ == "__main__":
    try:
        run_tests(sys.argv)
    finally:
        Postgres.stop_shared()
