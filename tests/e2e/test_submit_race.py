"""Racing telic_submit_artifact through two telic instances on one store.

Two `telic serve --http` processes share one PostgreSQL database (the
PostgreSQL tests) or one SQLite file (the SQLite tests). Runs of the
analyze_and_fix example are started and grounded, then waves of concurrent
submissions hit both instances, every contender of a run holding the same
tokens (action_id and expected_run_version):

* Phase artifacts (test_race_of_conflicting_phase_artifacts): a ProblemFrame
  wave, then a TaskContract wave against the winning frame. On half of the
  runs the contenders send DIFFERENT bodies (different goals / objectives;
  half of them under one shared artifact id, half under ids of their own), on
  the other half the IDENTICAL body. Exactly one submission is accepted per run
  and wave; every other one gets `stale_version` or `conflict` (PROTOCOL
  PROTOCOL §5.2: a phase artifact has no replay path, so an identical resubmission
  loses like a different one).
* Supporting artifacts (test_race_of_scenario_spec_submissions): a
  ScenarioSpec does not bump the run version, so the version check cannot
  order contenders. Identical specs must all be answered with the one stored
  artifact (idempotent replay, PROTOCOL §5.2: same metadata, no new event); different
  specs for one ProblemFrame may be stored once (TEL-093), the rest lose with
  `already_exists` (same id) or `resource_exhausted` (another id).
* Denied WorkResults (test_race_of_identical_denied_work_results): runs
  driven to the executor phase, then identical WorkResults whose action
  target leaves the repository. A DENY record does not bump the run version
  either; every contender must be answered `permission_denied` and the trace
  must hold exactly one DENY `permission_checked` event per run (D7), not
  one per contender that read the trace before the first record landed.

Afterwards, for every run: exactly the winners' artifacts were added (no
orphan of a loser, none twice, in order), each stored body equals its
winner's body, exactly one trace event per accepted submission, sequences
1..n without gaps, the hash chain verifies (`telic verify`), and
telic_replay_run on both instances and `telic replay` report no difference.

TELIC_SUBMIT_RACE_RUNS sets the number of runs of the phase-artifact races
(default 32: 32 runs x 2 waves x 16 contenders = 1,024 conflicting
submissions per store), TELIC_SUBMIT_RACE_SMALL_RUNS those of the
ScenarioSpec races (default 16: 256 submissions per store).
"""

# covers TEL-004 TEL-007 TEL-012 TEL-093 TEL-184 TEL-185

import copy
import os
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from http_client import HttpServer, McpHttpClient, Postgres, require_postgres  # noqa: E402
import scenario as sc  # noqa: E402
from mcp_client import Workspace, run_tests, telic_binary  # noqa: E402
from test_multi_instance import Race, verify  # noqa: E402

CONTENDERS = 16
# Each instance serves 32 connections at once (HttpOptions.worker_threads, D-P9)
# and a keep-alive connection holds its worker: 7 racing sessions per instance
# leave workers for the test's own reader session, so no contender waits for
# an idle connection to time out (with the former 8 workers, 7 was the most).
RACE_THREADS = 14
PHASE_LOSING_CODES = {"stale_version", "conflict"}
# A different ScenarioSpec loses to the stored one: its id is taken
# (already_exists) or the frame already has its one spec (resource_exhausted).
SUPPORTING_LOSING_CODES = {"already_exists", "resource_exhausted"}
RUBRIC = "artifact://system/rubrics/contract-readiness-v1"
# The stored `scenario_presentation_stored` event, as a canonical TraceEvent.
SPEC_EVENT = "artifact_recorded"


def count(codes, code):
    codes[code] = codes.get(code, 0) + 1


def summarize(deviations):
    return "; ".join(f"{kind}: {len(details)} (e.g. {details[0]})" for kind, details in deviations.items())


class RunUnderRace:
    """One run: its tokens, its state before the race, the contenders' bodies
    of each wave and the accepted artifacts in order."""

    def __init__(self, run_id, request_ref, identical):
        self.run_id = run_id
        self.request_ref = request_ref
        self.identical = identical
        self.version = None
        self.action_id = None
        self.base_artifacts = []
        self.base_events = []
        self.bodies = {}       # artifact type -> [body per contender]
        self.accepted = []     # (artifact type, body, trace event type), in order
        self.won_on = []       # instance index of each phase-artifact winner

    def uri(self, artifact_id):
        return f"artifact://{self.run_id}/{artifact_id}"

    def tokens(self):
        return {"run_id": self.run_id, "action_id": self.action_id, "expected_run_version": self.version}

    def frame(self):
        return next(body for kind, body, _ in self.accepted if kind == "ProblemFrame")


class SubmitRaceMixin:
    """The races, for a store given by self.db (a URL or a file path)."""

    def setUp(self):
        self.deviations = {}
        self.ws = Workspace()
        self.addCleanup(self.ws.close)
        self.scenario = sc.load("analyze_and_fix")
        for rel, text in self.scenario["repository"].items():
            path = os.path.join(self.ws.repo, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(text)
        self.templates = {step["submit"]: step["body"] for step in self.scenario["steps"] if "submit" in step}

    def deviate(self, kind, detail):
        """Records a breach of the contract that leaves the stored run usable,
        so that the race and every later check still run; the test fails on
        it at the end, listing them all."""
        self.deviations.setdefault(kind, []).append(detail)

    def start_servers(self):
        self.servers = [HttpServer(self.ws.env(), "--db", self.db) for _ in range(2)]
        for server in self.servers:
            self.addCleanup(server.kill)
        self.clients = []
        for server in self.servers:
            client = McpHttpClient(server)
            client.initialize()
            self.addCleanup(client.close)
            self.clients.append(client)

    def stop_servers(self):
        for client in self.clients:
            client.close()
        for server in self.servers:
            self.assertEqual(server.stop(), 0, server.stderr())

    # -- bodies ---------------------------------------------------------------

    @staticmethod
    def names(state):
        """What the scenario's body templates name: ${run}, ${request}, ${now}, ${manifest}."""
        return {"run": state.run_id, "request": state.request_ref, "now": sc.now_iso(), "manifest": ""}

    def template(self, state, artifact_type):
        return sc.substitute(self.templates[artifact_type], self.names(state))

    @staticmethod
    def contenders_of(base, state, contenders, stem, vary):
        """Identical copies of `base`, or variants: even ones keep the base id, odd ones get their own."""
        if state.identical:
            return [copy.deepcopy(base) for _ in range(contenders)]
        bodies = []
        for k in range(contenders):
            body = copy.deepcopy(base)
            body["id"] = f"{stem}-01" if k % 2 == 0 else f"{stem}-c{k:02d}"
            vary(body, k)
            bodies.append(body)
        return bodies

    def frames(self, state, contenders):
        base = self.template(state, "ProblemFrame")
        return self.contenders_of(base, state, contenders, "frame",
                                  lambda body, k: body.update(goal=f"{base['goal']} (contender {k})"))

    def contracts(self, state, contenders):
        base = self.template(state, "TaskContract")
        base["problemFrameRef"] = state.uri(state.frame()["id"])
        return self.contenders_of(base, state, contenders, "contract",
                                  lambda body, k: body.update(objective=f"{base['objective']} Variant {k}."))

    def scenario_spec(self, state, artifact_id, title):
        return {"schemaVersion": "1.0", "id": artifact_id, "runId": state.run_id,
                "problemFrameRef": state.uri(state.frame()["id"]), "title": title,
                "narrative": "The program greets a user and the greeting is misspelled.",
                "actor": "A user running the greeting program",
                "observableSymptoms": ["The greeting says 'Helo'."],
                "desiredOutcome": "The greeting is spelled correctly.",
                "sourceMap": [{"field": "observableSymptoms[0]", "sourceRefs": [state.request_ref]}],
                "promptReadinessRubricRef": RUBRIC,
                "rationaleSummary": "A sourced presentation of the frame; the frame stays authoritative."}

    def scenario_specs(self, state, contenders):
        if state.identical:
            return [self.scenario_spec(state, "scenario-01", "The misspelled greeting") for _ in range(contenders)]
        return [self.scenario_spec(state, "scenario-01" if k % 2 == 0 else f"scenario-c{k:02d}",
                                   f"The misspelled greeting, take {k}") for k in range(contenders)]

    # -- setting up and reading runs ------------------------------------------

    def prepare(self, runs):
        """Starts and grounds `runs` runs, alternating instances; records each
        run's artifacts and events before the race. Odd runs race identical
        bodies, even runs different ones."""
        states = []
        for i in range(runs):
            client = self.clients[i % 2]
            started = client.ok("telic_start_run", dict(self.scenario["start"]))
            run_id = started["run"]["runId"]
            envelope = client.ok("telic_get_artifact", {"run_id": run_id, "artifact_id": run_id})["artifact"]["body"]
            state = RunUnderRace(run_id, envelope["originalRequestRef"], identical=i % 2 == 1)
            grounded = self.clients[(i + 1) % 2].ok("telic_ground_context", {
                "run_id": run_id, "action_id": started["nextAction"]["id"], "expected_run_version": 1})
            self.assertEqual(grounded["run"]["phase"], "agent_1_frame")
            state.version, state.action_id = grounded["run"]["version"], grounded["nextAction"]["id"]
            state.base_artifacts = [a["id"] for a in client.ok("telic_get_run", {"run_id": run_id})["artifacts"]]
            state.base_events = self.events(client, run_id)
            states.append(state)
        return states

    def events(self, client, run_id):
        events, after = [], 0
        while True:
            page = client.ok("telic_get_trace", {"run_id": run_id, "after_sequence": after, "limit": 500})
            events += page["events"]
            if not page["hasMore"]:
                return events
            after = events[-1]["sequence"]

    # -- waves ----------------------------------------------------------------

    def wave(self, race, states, artifact_type, make_bodies, contenders):
        """Every contender of every run submits its body with the run's
        current tokens; contenders of one run are queued together so that
        they are in flight at the same time on both instances."""
        jobs = []
        for state in states:
            state.bodies[artifact_type] = make_bodies(state, contenders)
            for k, body in enumerate(state.bodies[artifact_type]):
                jobs.append(((state.run_id, k), "telic_submit_artifact",
                             dict(state.tokens(), artifact_type=artifact_type, body=body)))
        results = race.run(jobs)
        self.assertEqual(len(results), len(jobs), "every submission must be answered")
        return results

    def check_phase_wave(self, states, artifact_type, results):
        """Exactly one accepted submission per run; the rest lose cleanly."""
        by_run = {state.run_id: state for state in states}
        winners, codes = {}, {}
        for (run_id, k), _, server, error, payload in results:
            state = by_run[run_id]
            if error:
                count(codes, payload.get("code"))
                if payload.get("code") not in PHASE_LOSING_CODES:
                    self.deviate(f"a losing {artifact_type} answered another code than stale_version/conflict",
                                 f"run {run_id} contender {k}: {payload}")
                continue
            self.assertNotIn(run_id, winners, f"{artifact_type}: run {run_id} accepted two submissions "
                                              f"from version {state.version} (contenders {winners.get(run_id)} and {k})")
            self.assertEqual(payload["run"]["version"], state.version + 1, payload["run"])
            winners[run_id] = (k, server, payload)
        for state in states:
            self.assertIn(state.run_id, winners, f"{artifact_type}: run {state.run_id} accepted no submission")
            k, server, payload = winners[state.run_id]
            state.accepted.append((artifact_type, state.bodies[artifact_type][k], "phase_submitted"))
            state.won_on.append(server)
            state.version, state.action_id = payload["run"]["version"], payload["nextAction"]["id"]
        return codes

    def submit_frames_in_turn(self, states):
        """The unraced way to agent_2_compile: one ProblemFrame per run."""
        for i, state in enumerate(states):
            body = self.template(state, "ProblemFrame")
            payload = self.clients[i % 2].ok("telic_submit_artifact",
                                             dict(state.tokens(), artifact_type="ProblemFrame", body=body))
            state.accepted.append(("ProblemFrame", body, "phase_submitted"))
            state.version, state.action_id = payload["run"]["version"], payload["nextAction"]["id"]

    # -- checks of the stored runs --------------------------------------------

    def check_integrity(self, states):
        """What must hold whoever won: gapless, hash-chained trace; replay
        (MCP on both instances, and the CLI) re-derives the stored run."""
        env = self.ws.env()
        for i, state in enumerate(states):
            events = self.events(self.clients[i % 2], state.run_id)
            self.assertEqual([e["sequence"] for e in events], list(range(1, len(events) + 1)), state.run_id)
            self.assertEqual(len({e["id"] for e in events}), len(events), state.run_id)
            self.assertEqual(events[:len(state.base_events)], state.base_events, state.run_id)
            for client in self.clients:
                report = client.ok("telic_replay_run", {"run_id": state.run_id})["report"]
                self.assertTrue(report["stateCheck"]["consistent"], report["stateCheck"])
                self.assertEqual(report["stateCheck"]["differences"], [])
                self.assertTrue(all(step["digestStatus"] == "ok" for step in report["steps"]), report["steps"])
            verify(self, env, self.db, state.run_id)
            replay = subprocess.run([telic_binary(), "replay", state.run_id, "--db", self.db, "--json"], env=env,
                                    capture_output=True, text=True, timeout=120)
            self.assertEqual(replay.returncode, 0, replay.stdout + replay.stderr)

    def check_runs(self, states, phase):
        """The stored runs hold exactly the winners, traced once each."""
        for i, state in enumerate(states):
            reader = self.clients[(i + 1) % 2]
            detail = reader.ok("telic_get_run", {"run_id": state.run_id})
            self.assertEqual((detail["run"]["status"], detail["run"]["phase"], detail["run"]["version"]),
                             ("running", phase, state.version), state.run_id)
            self.assertEqual(detail["nextAction"]["id"], state.action_id)
            # Exactly the winners were added: no loser's artifact, none twice.
            stored = [(a["id"], a["type"]) for a in detail["artifacts"]]
            self.assertEqual([a for a, _ in stored[:len(state.base_artifacts)]], state.base_artifacts)
            self.assertEqual(stored[len(state.base_artifacts):],
                             [(body["id"], kind) for kind, body, _ in state.accepted],
                             f"run {state.run_id}: lost, orphaned or duplicated artifacts")
            # The stored bodies are the winners' bodies.
            for kind, body, _ in state.accepted:
                artifact = reader.ok("telic_get_artifact", {"run_id": state.run_id, "artifact_id": body["id"]})
                self.assertEqual(artifact["artifact"]["type"], kind)
                self.assertEqual(artifact["artifact"]["body"], body, f"run {state.run_id}: a loser's {kind} was stored")
            # A loser under an id of its own left nothing behind.
            if not state.identical:
                for kind, winner, _ in state.accepted:
                    loser = next((b for b in state.bodies.get(kind, []) if b["id"] != winner["id"]
                                  and not b["id"].endswith("-01")), None)
                    if loser is None:
                        continue
                    missing = reader.call("telic_get_artifact", {"run_id": state.run_id, "artifact_id": loser["id"]})
                    self.assertTrue(missing.get("isError"), f"run {state.run_id}: a losing {kind} was stored: {missing}")
                    self.assertEqual(missing["structuredContent"]["code"], "not_found")
            # Exactly one event per accepted submission, pointing at it.
            events = self.events(reader, state.run_id)
            new = events[len(state.base_events):]
            self.assertEqual([(e["eventType"], e["outputRefs"]) for e in new],
                             [(event, [state.uri(body["id"])]) for _, body, event in state.accepted],
                             f"run {state.run_id}: lost or duplicated events")

    def drive_to_execute(self, states):
        """Frame, contract, review, the read-only plan and its evidence, in
        turn: each run then waits for the executor's WorkResult."""
        steps = []
        for step in self.scenario["steps"]:
            if step.get("submit") == "WorkResult":
                break
            if "submit" in step:
                steps.append(step)
        for i, state in enumerate(states):
            for step in steps:
                body = sc.substitute(step["body"], self.names(state))
                payload = self.clients[i % 2].ok("telic_submit_artifact",
                                                 dict(state.tokens(), artifact_type=step["submit"], body=body))
                state.version, state.action_id = payload["run"]["version"], payload["nextAction"]["id"]
            self.assertEqual(payload["run"]["phase"], "agent_4_execute", payload["run"])
            state.base_artifacts = [a["id"] for a in self.clients[i % 2].ok("telic_get_run",
                                                                           {"run_id": state.run_id})["artifacts"]]
            state.base_events = self.events(self.clients[i % 2], state.run_id)

    def denied_results(self, state, contenders):
        """The scenario's first WorkResult, its read aimed outside the repository."""
        template = next(step["body"] for step in self.scenario["steps"] if step.get("submit") == "WorkResult")
        body = sc.substitute(template, self.names(state))
        body["actions"][0]["target"] = "../outside-the-repository.txt"
        return [copy.deepcopy(body) for _ in range(contenders)]

    # -- the races ------------------------------------------------------------

    def race_phase_artifacts(self, runs, contenders=CONTENDERS):
        started = time.time()
        self.start_servers()
        states = self.prepare(runs)
        prepared = time.time()
        race = Race(self.servers, threads=RACE_THREADS)
        frames = self.wave(race, states, "ProblemFrame", self.frames, contenders)
        frame_codes = self.check_phase_wave(states, "ProblemFrame", frames)
        contracts = self.wave(race, states, "TaskContract", self.contracts, contenders)
        contract_codes = self.check_phase_wave(states, "TaskContract", contracts)
        raced = time.time()
        submitted = len(frames) + len(contracts)
        accepted = sum(1 for result in frames + contracts if not result[3])
        by_instance = [sum(state.won_on.count(i) for state in states) for i in (0, 1)]
        print(f"\n  {self.store}: {submitted} conflicting phase-artifact submissions (ProblemFrame, TaskContract), "
              f"{runs} runs x 2 waves x {contenders}, {accepted} accepted (instance 0: {by_instance[0]}, "
              f"instance 1: {by_instance[1]}), losers {frame_codes} / {contract_codes}; prepare "
              f"{prepared - started:.1f} s, race {raced - prepared:.1f} s"
              + (f"\n  DEVIATIONS: {summarize(self.deviations)}" if self.deviations else ""), flush=True)
        self.assertEqual(accepted, 2 * runs)
        self.check_runs(states, "agent_1_review")
        self.check_integrity(states)
        print(f"  checks {time.time() - raced:.1f} s", flush=True)
        self.assertTrue(all(by_instance), f"both instances must win some races: {by_instance}")
        self.stop_servers()
        self.assertFalse(self.deviations, summarize(self.deviations))
        return submitted

    def race_scenario_specs(self, runs, contenders=CONTENDERS):
        started = time.time()
        self.start_servers()
        states = self.prepare(runs)
        self.submit_frames_in_turn(states)
        race = Race(self.servers, threads=RACE_THREADS)
        results = self.wave(race, states, "ScenarioSpec", self.scenario_specs, contenders)
        raced = time.time()
        # Collect every deviation first, so that a failure reports them all.
        by_run = {state.run_id: state for state in states}
        answers = {state.run_id: [] for state in states}
        for (run_id, k), _, _, error, payload in results:
            answers[run_id].append((k, error, payload))
        codes = {}
        for run_id, answered in answers.items():
            state = by_run[run_id]
            accepted = [(k, payload) for k, error, payload in answered if not error]
            for k, error, payload in answered:
                if error:
                    count(codes, payload.get("code"))
                    if state.identical:
                        self.deviate("identical ScenarioSpec not replayed idempotently",
                                     f"run {run_id} contender {k}: {payload.get('code')}: {payload.get('error')}")
                    elif payload.get("code") not in SUPPORTING_LOSING_CODES:
                        self.deviate("unexpected losing code", f"run {run_id} contender {k}: {payload}")
                elif (payload["run"]["version"], payload["nextAction"]["id"]) != (state.version, state.action_id):
                    self.deviate("a ScenarioSpec moved the run version", f"run {run_id}: {payload['run']}")
            if state.identical:
                metas = [payload["artifact"] for _, payload in accepted]
                if any(meta != metas[0] for meta in metas):
                    self.deviate("identical resubmissions answered with different metadata", f"run {run_id}: {metas}")
                if accepted:
                    state.accepted.append(("ScenarioSpec", state.bodies["ScenarioSpec"][0], SPEC_EVENT))
            elif len(accepted) != 1:
                self.deviate("not exactly one of different ScenarioSpecs accepted (TEL-093)",
                             f"run {run_id}: contenders {[k for k, _ in accepted]} accepted, "
                             f"ids {[payload['artifact']['id'] for _, payload in accepted]}")
            if not state.identical and accepted:
                state.accepted.append(("ScenarioSpec", state.bodies["ScenarioSpec"][accepted[0][0]], SPEC_EVENT))
        for i, state in enumerate(states):
            stored = [a["id"] for a in self.clients[i % 2].ok("telic_get_run", {"run_id": state.run_id})["artifacts"]
                      if a["type"] == "ScenarioSpec"]
            events = [e["outputRefs"] for e in self.events(self.clients[i % 2], state.run_id)
                      if e["eventType"] == SPEC_EVENT and any("/scenario-" in ref for ref in e["outputRefs"])]
            if len(stored) != 1 or len(events) != 1:
                self.deviate("not exactly one ScenarioSpec stored and traced per ProblemFrame",
                             f"run {state.run_id} ({'identical' if state.identical else 'different'} bodies): "
                             f"stored {stored}, events for {events}")
            elif state.identical and answers[state.run_id] and not answers[state.run_id][0][1]:
                # Every replay answered the stored artifact's own metadata.
                meta = self.clients[i % 2].ok("telic_get_artifact",
                                              {"run_id": state.run_id, "artifact_id": stored[0]})["artifact"]
                meta.pop("body")
                if answers[state.run_id][0][2]["artifact"] != meta:
                    self.deviate("an identical ScenarioSpec was answered with other metadata than the stored",
                                 f"run {state.run_id}: {answers[state.run_id][0][2]['artifact']} != {meta}")
        # Whoever won, the stored runs must stay verifiable and replayable.
        self.check_integrity(states)
        summary = summarize(self.deviations)
        print(f"\n  {self.store}: {len(results)} concurrent ScenarioSpec submissions, {runs} runs x {contenders} "
              f"({runs // 2} runs identical bodies, {runs - runs // 2} runs different), losers {codes}; "
              f"race {raced - started:.1f} s, checks {time.time() - raced:.1f} s"
              + (f"\n  DEVIATIONS: {summary}" if self.deviations else ""), flush=True)
        self.assertFalse(self.deviations, summary)
        self.check_runs(states, "agent_2_compile")
        # Unraced, the same calls behave as the contract says: an identical
        # resubmission replays, a second spec for the frame is refused.
        for i, state in enumerate(states):
            kind, body, _ = state.accepted[-1]
            again = self.clients[i % 2].ok("telic_submit_artifact",
                                           dict(state.tokens(), artifact_type=kind, body=body))
            self.assertEqual(again["artifact"]["id"], body["id"])
            other = self.scenario_spec(state, "scenario-late", "A late spec for the same frame")
            late = self.clients[i % 2].call("telic_submit_artifact",
                                            dict(state.tokens(), artifact_type="ScenarioSpec", body=other))
            self.assertEqual(late["structuredContent"].get("code"), "resource_exhausted", late)
        self.check_runs(states, "agent_2_compile")
        self.stop_servers()
        return len(results)


    def race_denied_work_results(self, runs, contenders=CONTENDERS):
        started = time.time()
        self.start_servers()
        states = self.prepare(runs)
        self.drive_to_execute(states)
        race = Race(self.servers, threads=RACE_THREADS)
        results = self.wave(race, states, "WorkResult", self.denied_results, contenders)
        raced = time.time()
        codes = {}
        for (run_id, k), _, _, error, payload in results:
            count(codes, payload.get("code") if error else "accepted")
            if not error or payload.get("code") != "permission_denied":
                self.deviate("a denied WorkResult was not answered permission_denied",
                             f"run {run_id} contender {k}: {payload}")
        for i, state in enumerate(states):
            events = self.events(self.clients[(i + 1) % 2], state.run_id)
            new = events[len(state.base_events):]
            denials = [e for e in new if e["eventType"] == "permission_checked"
                       and e["permissionDecision"]["decision"] == "deny"]
            if len(new) != 1 or len(denials) != 1:
                self.deviate("not exactly one DENY event per run for identical denied submissions",
                             f"run {state.run_id}: new events {[(e['eventType'], e.get('rationaleSummary')) for e in new]}")
            state.base_events = events  # the one DENY record is the run's state now
        print(f"\n  {self.store}: {len(results)} concurrent identical denied WorkResults, {runs} runs x {contenders}, "
              f"answers {codes}; race {raced - started:.1f} s"
              + (f"\n  DEVIATIONS: {summarize(self.deviations)}" if self.deviations else ""), flush=True)
        self.assertFalse(self.deviations, summarize(self.deviations))
        self.check_runs(states, "agent_4_execute")
        self.check_integrity(states)
        self.stop_servers()


class PostgresSubmitRaceTest(SubmitRaceMixin, unittest.TestCase):
    store = "PostgreSQL"

    def setUp(self):
        pg = require_postgres(self)
        super().setUp()
        self.db = pg.new_database_url()

    def test_race_of_conflicting_phase_artifacts(self):
        runs = int(os.environ.get("TELIC_SUBMIT_RACE_RUNS", "32"))
        submitted = self.race_phase_artifacts(runs)
        if runs >= 32:
            self.assertGreaterEqual(submitted, 1000)

    def test_race_of_scenario_spec_submissions(self):
        self.race_scenario_specs(int(os.environ.get("TELIC_SUBMIT_RACE_SMALL_RUNS", "16")))

    def test_race_of_identical_denied_work_results(self):
        self.race_denied_work_results(int(os.environ.get("TELIC_SUBMIT_RACE_SMALL_RUNS", "16")))


class SqliteSubmitRaceTest(SubmitRaceMixin, unittest.TestCase):
    """Two telic processes on one SQLite file: busy timeout + the same version check."""

    store = "SQLite"

    def setUp(self):
        super().setUp()
        os.makedirs(self.ws.state, mode=0o700, exist_ok=True)
        self.db = os.path.join(self.ws.state, "shared.sqlite3")

    def test_race_of_conflicting_phase_artifacts(self):
        runs = int(os.environ.get("TELIC_SUBMIT_RACE_RUNS", "32"))
        submitted = self.race_phase_artifacts(runs)
        if runs >= 32:
            self.assertGreaterEqual(submitted, 1000)

    def test_race_of_scenario_spec_submissions(self):
        self.race_scenario_specs(int(os.environ.get("TELIC_SUBMIT_RACE_SMALL_RUNS", "16")))

    def test_race_of_identical_denied_work_results(self):
        self.race_denied_work_results(int(os.environ.get("TELIC_SUBMIT_RACE_SMALL_RUNS", "16")))


def tearDownModule():
    Postgres.stop_shared()


if __name__ == "__main__":
    run_tests(sys.argv)
