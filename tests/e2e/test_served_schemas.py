"""The schemas telic serves to hosts are accepted by stock JSON Schema
validators with their defaults (issue 22 item 5): every artifact schema
(`telic schema TYPE`, the same bundle a NextAction embeds), the schemas of
a real NextAction and every tool's tools/list outputSchema. (tools/list
inputSchemas are draft-07, as the reference's SDK serves them, and unchanged:
they only need to be valid draft-07 with no telic keyword.)

Checked with python3-jsonschema (Draft 2020-12 meta-schema, plus a keyword
check as strict as Ajv's strict mode: every keyword must belong to the 2020-12
vocabularies, and no `format` is used, since Ajv2020 without ajv-formats
throws on any format), and with Ajv itself (`new Ajv2020()`) when npm can
install it; that case skips only when the npm registry is unreachable.

Run: python3 test_served_schemas.py /path/to/telic"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import jsonschema

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcp_client import Workspace, run_tests, serve, telic_binary  # noqa: E402

# JSON Schema 2020-12: core, applicator, validation, unevaluated, meta-data,
# format-annotation and content vocabularies.
KEYWORDS = {
    "$schema", "$id", "$ref", "$anchor", "$dynamicRef", "$dynamicAnchor", "$vocabulary", "$comment", "$defs",
    "allOf", "anyOf", "oneOf", "not", "if", "then", "else", "dependentSchemas", "prefixItems", "items", "contains",
    "properties", "patternProperties", "additionalProperties", "propertyNames", "unevaluatedItems",
    "unevaluatedProperties", "type", "enum", "const", "multipleOf", "maximum", "exclusiveMaximum", "minimum",
    "exclusiveMinimum", "maxLength", "minLength", "pattern", "maxItems", "minItems", "uniqueItems", "maxContains",
    "minContains", "maxProperties", "minProperties", "required", "dependentRequired", "title", "description",
    "default", "deprecated", "readOnly", "writeOnly", "examples", "contentEncoding", "contentMediaType",
    "contentSchema"}
MAPS = {"properties", "patternProperties", "$defs", "dependentSchemas"}  # name -> subschema
DATA = {"enum", "const", "default", "examples", "required", "dependentRequired", "$vocabulary"}

AJV_CHECK = r"""
const Ajv2020 = require("ajv/dist/2020").default;
const schemas = JSON.parse(require("fs").readFileSync(process.argv[2], "utf8"));
let failed = 0;
for (const [name, schema] of Object.entries(schemas)) {
  try { new Ajv2020().compile(schema); } catch (e) { failed++; console.log(name + ": " + e.message); }
}
process.exit(failed ? 1 : 0);
"""


def unknown_keywords(schema, pointer=""):
    """Pointers of keywords outside the 2020-12 vocabularies (and of any format)."""
    found = []
    if isinstance(schema, bool):
        return found
    for key, value in schema.items():
        here = f"{pointer}/{key}"
        if key not in KEYWORDS or key == "format":
            found.append(here)
        elif key in MAPS:
            for name, sub in value.items():
                found += unknown_keywords(sub, f"{here}/{name}")
        elif key in DATA:
            continue
        elif isinstance(value, dict):
            found += unknown_keywords(value, here)
        elif isinstance(value, list):
            for i, sub in enumerate(value):
                if isinstance(sub, (dict, bool)):
                    found += unknown_keywords(sub, f"{here}/{i}")
    return found


class ServedSchemasTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.schemas = {}
        types = subprocess.run([telic_binary(), "schema", "--list"], capture_output=True, text=True, check=True)
        for artifact_type in types.stdout.split():
            done = subprocess.run([telic_binary(), "schema", artifact_type], capture_output=True, text=True,
                                  check=True)
            cls.schemas["schema " + artifact_type] = json.loads(done.stdout)
        ws = Workspace()
        try:
            server = serve(ws)
            server.initialize()
            tools = server.request("tools/list")["result"]["tools"]
            cls.tool_schemas = {tool["name"]: tool["inputSchema"] for tool in tools}
            for tool in tools:  # every tool's outputSchema (issue 20 item 3) is served 2020-12 too
                cls.schemas["outputSchema " + tool["name"]] = tool["outputSchema"]
            started = server.ok("telic_start_run", {"original_request": "Explain what src/app.ts does",
                                                    "mode": "plan_only"})
            action = started["nextAction"]
            cls.schemas["nextAction " + action["requiredOutputType"]] = action["requiredOutputSchema"]
            for name, schema in action["additionalOutputSchemas"].items():
                cls.schemas["nextAction additional " + name] = schema
            server.close()
        finally:
            ws.close()

    def test_a_next_action_serves_what_telic_schema_prints(self):
        served = [name for name in self.schemas if name.startswith("nextAction")]
        self.assertGreaterEqual(len(served), 2)
        for name in served:
            self.assertEqual(self.schemas[name], self.schemas["schema " + name.split()[-1]], name)

    def test_every_served_schema_is_valid_draft_2020_12_with_known_keywords_only(self):
        self.assertGreater(len(self.schemas), 15)
        for name, schema in self.schemas.items():
            with self.subTest(name):
                jsonschema.Draft202012Validator.check_schema(schema)
                self.assertEqual(unknown_keywords(schema), [])
                self.assertEqual(schema.get("$schema", "https://json-schema.org/draft/2020-12/schema"),
                                 "https://json-schema.org/draft/2020-12/schema")

    def test_tool_input_schemas_are_valid_draft_07_without_telic_keywords(self):
        self.assertGreater(len(self.tool_schemas), 20)
        for name, schema in self.tool_schemas.items():
            with self.subTest(name):
                jsonschema.Draft7Validator.check_schema(schema)
                self.assertNotIn('"x-', json.dumps(schema))

    def test_the_byte_cap_is_stated_where_the_keyword_was(self):
        text = json.dumps(self.schemas["schema ProblemFrame"])
        self.assertNotIn("x-maxUtf8Bytes", text)
        self.assertIn("At most 32768 UTF-8 bytes", text)

    def test_stock_validation_agrees_with_telic_on_a_timestamp(self):
        evidence = self.schemas["schema Evidence"]
        timestamp = {"$defs": evidence["$defs"], "$ref": "#/$defs/Timestamp"}
        validator = jsonschema.Draft202012Validator(timestamp)
        for good in ["2026-07-15T10:05:00Z", "2026-07-15T10:05:00.123+02:00", "2026-07-15T10:05-05:00"]:
            self.assertTrue(validator.is_valid(good), good)
        for bad in ["2026-07-15 10:05:00Z", "2026-13-01T00:00:00Z", "2026-07-15T24:00:00Z", "2026-07-15T10:05:00"]:
            self.assertFalse(validator.is_valid(bad), bad)

    def test_ajv2020_with_defaults_compiles_every_served_schema(self):
        npm = shutil.which("npm")
        node = shutil.which("node")
        if not npm or not node:
            self.skipTest("npm/node not installed")
        work = tempfile.mkdtemp(prefix="telic-ajv-")
        try:
            install = subprocess.run([npm, "install", "--no-audit", "--no-fund", "--prefix", work, "ajv@8"],
                                     capture_output=True, text=True, timeout=300)
            if install.returncode != 0:
                self.skipTest("npm registry unreachable: " + install.stderr[-300:])
            with open(os.path.join(work, "schemas.json"), "w") as f:
                json.dump(self.schemas, f)
            with open(os.path.join(work, "check.js"), "w") as f:
                f.write(AJV_CHECK)
            done = subprocess.run([node, os.path.join(work, "check.js"), os.path.join(work, "schemas.json")],
                                  capture_output=True, text=True, cwd=work, timeout=120)
            self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        finally:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    run_tests(sys.argv)
