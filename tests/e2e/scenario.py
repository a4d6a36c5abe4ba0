"""Drives a scenario from examples/*.json over MCP the way a host would.

A scenario is a start request, a repository (path -> text) and steps: ground,
submit (type + body template), answer (clarification), write_file (the host's
own work). Templates use ${run}, ${request}, ${now} and ${manifest}."""

import copy
import json
import os
import re
import time

EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples")


def load(name):
    with open(os.path.join(EXAMPLES, name + ".json"), encoding="utf-8") as handle:
        return json.load(handle)


def substitute(value, names):
    if isinstance(value, str):
        return re.sub(r"\$\{(\w+)\}", lambda m: names[m.group(1)], value)
    if isinstance(value, list):
        return [substitute(v, names) for v in value]
    if isinstance(value, dict):
        return {k: substitute(v, names) for k, v in value.items()}
    return value


def merge_run(known, reported):
    """The run record after a result: a lean result reports the run's state
    fields and the members that changed (docs/API.md "Profiles"), merged into
    what is known of the same run; a default result reports it whole."""
    if known and known.get("runId") == reported.get("runId"):
        return dict(known, **reported)
    return reported


def merge_action(known, reported):
    """The NextAction after a result: a lean state change leaves out the
    members equal to the answered action's and names them in `unchanged`."""
    if known is None or "unchanged" not in reported:
        return reported
    action = {key: known[key] for key in reported["unchanged"] if key in known}
    action.update({key: value for key, value in reported.items() if key != "unchanged"})
    return action


def input_refs(action):
    """A NextAction's input references in either profile: a lean action names
    the run's own artifacts by ID in `inputIds` (docs/API.md "Profiles")."""
    if "inputIds" in action:
        return [f"artifact://{action['runId']}/{i}" for i in action["inputIds"]]
    return action["inputRefs"]


def now_iso():
    return time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())


class Driver:
    """One run of a scenario on `server` (an McpProcess) in repository `repo`."""

    def __init__(self, server, scenario, repo):
        self.server = server
        self.scenario = copy.deepcopy(scenario)
        self.repo = repo
        self.run = None
        self.action = None
        self.names = {}

    def write_repository(self):
        for rel, text in self.scenario.get("repository", {}).items():
            path = os.path.join(self.repo, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(text)

    def start(self, **overrides):
        args = dict(self.scenario["start"], **overrides)
        payload = self.server.ok("telic_start_run", args)
        self._update(payload)
        run_id = self.run["runId"]
        envelope = self.server.ok("telic_get_artifact", {"run_id": run_id, "artifact_id": run_id})["artifact"]["body"]
        self.names = {"run": run_id, "request": envelope["originalRequestRef"], "now": now_iso(), "manifest": ""}
        return payload

    def _update(self, payload):
        if "run" in payload:
            self.run = merge_run(self.run, payload["run"])
        if "nextAction" in payload:
            self.action = merge_action(self.action, payload["nextAction"])

    def tokens(self):
        return {"run_id": self.run["runId"], "action_id": self.action["id"], "expected_run_version": self.run["version"]}

    def body(self, step):
        return substitute(step["body"], self.names)

    def submit_args(self, step, body=None):
        args = dict(self.tokens(), artifact_type=step["submit"], body=body if body is not None else self.body(step))
        if "source_refs" in step:
            args["source_refs"] = substitute(step["source_refs"], self.names)
        return args

    def do(self, step):
        """Performs one step; returns the tool payload (or None for host work)."""
        if "ground" in step:
            payload = self.server.ok("telic_ground_context", dict(self.tokens(), **step["ground"]))
            self._update(payload)
            self.names["manifest"] = payload["nextAction"].get("contextManifestRef") or ""
            return payload
        if "write_file" in step:
            spec = step["write_file"]
            with open(os.path.join(self.repo, spec["path"]), "w", encoding="utf-8") as handle:
                handle.write(spec["content"])
            return None
        if "answer" in step:
            payload = self.server.ok("telic_submit_artifact", dict(self.tokens(), clarification_response=step["answer"]))
            self._update(payload)
            return payload
        payload = self.server.ok("telic_submit_artifact", self.submit_args(step))
        self._update(payload)
        return payload

    def run_steps(self, until=None):
        """Runs steps in order; stops before the step whose `say` contains `until`."""
        for step in self.scenario["steps"]:
            if until and until in step.get("say", ""):
                return step
            self.do(step)
        return None

    def step(self, say):
        return next(s for s in self.scenario["steps"] if say in s.get("say", ""))
