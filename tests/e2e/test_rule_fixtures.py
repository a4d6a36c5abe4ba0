"""Every cross-artifact rule fixture of tests/fixtures/rules/ over real stdio MCP (issue 3).

A fixture names a step of a scenario (examples/<scenario>.json) by its `say`
text, RFC 6902 operations (add / replace / remove) applied to that step's body
after the template names are filled in, and the refusal expected: the failure
`code`, the JSON `pointer` of the rule's one issue (relative to the body) and
the `message`. The scenario is driven once per step up to that step; every
fixture of the step is then submitted there, and each refusal must leave the
run exactly as it was (same version, same artifacts; a permission denial adds
only its `permission_checked` event). Finally the unpatched step must still be
accepted, which shows each fixture failed for its patch and nothing else.

Each fixture's `covers` lists the requirement IDs it checks."""

import copy
import glob
import json
import os
import sys
import unittest

from mcp_client import Workspace, run_tests, serve
import scenario as sc

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "rules")

# The requirement IDs the fixtures cover, named here so that coverage can be
# counted from the test sources. test_the_named_ids_are_the_fixtures_covers
# keeps this list equal to the union of the fixtures' `covers`, and
# test_every_rule_fixture_is_refused_with_its_pointer checks each of them.
# covers TEL-082 TEL-083 TEL-085 TEL-086 TEL-087 TEL-097 TEL-098 TEL-099
# covers TEL-100 TEL-103 TEL-104 TEL-105 TEL-108 TEL-110 TEL-121 TEL-122
# covers TEL-123 TEL-124 TEL-125 TEL-126 TEL-127 TEL-128 TEL-131 TEL-132
# covers TEL-133 TEL-134 TEL-139 TEL-142 TEL-143 TEL-145 TEL-146 TEL-147
# covers TEL-150 TEL-151 TEL-152 TEL-153 TEL-154 TEL-157 TEL-159 TEL-161
# covers TEL-163 TEL-168 TEL-169 TEL-170 TEL-173 TEL-176 TEL-177 TEL-178
# covers TEL-179 TEL-181 TEL-182
NAMED_IDS_SOURCE = __file__


def load_fixtures():
    out = []
    for path in sorted(glob.glob(os.path.join(FIXTURES, "*.json"))):
        with open(path, encoding="utf-8") as handle:
            fixture = json.load(handle)
        fixture["name"] = os.path.basename(path)[: -len(".json")]
        out.append(fixture)
    return out


def pointer_parts(pointer):
    return [p.replace("~1", "/").replace("~0", "~") for p in pointer.split("/")[1:]]


def apply_patch(body, operations):
    """RFC 6902 add / replace / remove on a copy of `body`."""
    doc = copy.deepcopy(body)
    for op in operations:
        parts = pointer_parts(op["path"])
        parent = doc
        for part in parts[:-1]:
            parent = parent[int(part)] if isinstance(parent, list) else parent[part]
        last = parts[-1]
        if isinstance(parent, list):
            if op["op"] == "add":
                parent.insert(len(parent) if last == "-" else int(last), op["value"])
            elif op["op"] == "replace":
                parent[int(last)] = op["value"]
            else:
                del parent[int(last)]
        else:
            if op["op"] in ("add", "replace"):
                if op["op"] == "replace" and last not in parent:
                    raise KeyError(f"replace of a missing member {op['path']}")
                parent[last] = op["value"]
            else:
                del parent[last]
    return doc


def named_ids():
    """The IDs on this file's `# covers` lines."""
    with open(NAMED_IDS_SOURCE, encoding="utf-8") as handle:
        lines = [line for line in handle if line.startswith("# covers ")]
    return sorted(token for line in lines for token in line.split()[2:])


class RuleFixturesTest(unittest.TestCase):
    def test_the_named_ids_are_the_fixtures_covers(self):
        covered = sorted({rule for fixture in load_fixtures() for rule in fixture["covers"]})
        self.assertEqual(named_ids(), covered)

    def test_every_rule_fixture_is_refused_with_its_pointer(self):
        fixtures = load_fixtures()
        self.assertGreaterEqual(len(fixtures), 60, "the rule fixtures are missing")
        by_step = {}
        for fixture in fixtures:
            by_step.setdefault((fixture["scenario"], fixture["at"]), []).append(fixture)
        failures = []
        for (scenario_name, at), group in sorted(by_step.items()):
            failures += self.check_step(scenario_name, at, group)
        self.assertEqual(failures, [], "\n" + "\n".join(failures))

    def check_step(self, scenario_name, at, group):
        ws = Workspace()
        server = serve(ws)
        try:
            driver = sc.Driver(server, sc.load(scenario_name), ws.repo)
            driver.write_repository()
            driver.start()
            step = driver.run_steps(until=at)
            self.assertIsNotNone(step, f"no step says {at!r}")
            base = driver.body(step)
            failures = []
            for fixture in group:
                failures += self.check_fixture(server, driver, step, base, fixture)
            driver.do(step)  # the unpatched body is still accepted
            return failures
        finally:
            server.close()
            ws.close()

    def state(self, server, run_id):
        payload = server.ok("telic_get_run", {"run_id": run_id})
        return payload["run"]["version"], [a["id"] for a in payload["artifacts"]]

    def check_fixture(self, server, driver, step, base, fixture):
        name = fixture["name"]
        expect = fixture["expect"]
        body = apply_patch(base, sc.substitute(fixture["patch"], driver.names))
        before = self.state(server, driver.run["runId"])
        result = server.call("telic_submit_artifact", driver.submit_args(step, body))
        payload = result.get("structuredContent", {})
        if not result.get("isError"):
            return [f"{name}: accepted, expected {expect['code']} at {expect['pointer']}"]
        problems = []
        if payload.get("code") != expect["code"]:
            problems.append(f"code {payload.get('code')!r} != {expect['code']!r}")
        issues = payload.get("issues") or []
        pointers = [issue.get("pointer") for issue in issues]
        if expect["pointer"] not in pointers:
            problems.append(f"pointer {expect['pointer']!r} not in {pointers!r}")
        if expect["message"] and expect["message"] not in payload.get("error", ""):
            problems.append(f"message {payload.get('error')!r} lacks {expect['message']!r}")
        if not expect["message"]:
            problems.append(f"fixture has no expected message; got {payload.get('error')!r}")
        if self.state(server, driver.run["runId"]) != before:
            problems.append("the refusal changed the run")
        return [f"{name}: " + "; ".join(problems)] if problems else []


if __name__ == "__main__":
    run_tests(sys.argv)
