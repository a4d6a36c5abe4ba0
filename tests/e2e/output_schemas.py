"""Checks every tools/call result the e2e clients receive against its tool's
outputSchema (issue 20 item 3), so every e2e test checks it automatically.

The schemas come from the telic binary under test: once per process, a
throwaway `telic serve` answers initialize and tools/list. A result whose
structuredContent violates its tool's outputSchema (or a tool without one, a
result without structuredContent, a text content that is not the same JSON,
an isError that disagrees with `ok`) raises OutputSchemaViolation; the clients
raise it in the test that received the result. Validation uses
python3-jsonschema's Draft 2020-12 validator."""

import atexit
import collections
import json
import os
import subprocess
import sys
import threading

try:
    import jsonschema
except ImportError:  # a Python other than Debian's: use Debian's python3-jsonschema (scripts/setup)
    sys.path.append("/usr/lib/python3/dist-packages")
    import jsonschema


class OutputSchemaViolation(AssertionError):
    pass


_lock = threading.Lock()
_validators = {}  # telic binary -> {tool name: Draft202012Validator}
checked = collections.Counter()  # tool name -> results that passed the check


@atexit.register
def _summary():
    """TELIC_E2E_SCHEMA_SUMMARY=1: print how many results of which tools were checked."""
    if os.environ.get("TELIC_E2E_SCHEMA_SUMMARY") and checked:
        print(f"output schemas: {sum(checked.values())} tools/call results of {len(checked)} tools checked: "
              + ", ".join(f"{name} {count}" for name, count in sorted(checked.items())), file=sys.stderr)


def _tools_list(binary):
    from mcp_client import Workspace  # noqa: E402 (mcp_client imports this module)
    ws = Workspace()
    try:
        lines = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
                  "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                             "clientInfo": {"name": "telic-e2e-schemas", "version": "1"}}},
                 {"jsonrpc": "2.0", "method": "notifications/initialized"},
                 {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}]
        done = subprocess.run([binary, "serve"], input="".join(json.dumps(m) + "\n" for m in lines).encode(),
                              capture_output=True, env=ws.env(), timeout=120)
        for raw in done.stdout.decode("utf-8").splitlines():
            reply = json.loads(raw)
            if reply.get("id") == 2:
                return reply["result"]["tools"]
        raise OutputSchemaViolation(f"no tools/list reply from {binary}: {done.stderr.decode()[-500:]}")
    finally:
        ws.close()


def validators(binary=None):
    """{tool: validator} of the binary under test (TELIC_BIN)."""
    binary = binary or os.environ.get("TELIC_BIN")
    with _lock:
        if binary not in _validators:
            table = {}
            for tool in _tools_list(binary):
                schema = tool.get("outputSchema")
                if schema is None:
                    continue
                jsonschema.Draft202012Validator.check_schema(schema)
                table[tool["name"]] = jsonschema.Draft202012Validator(schema)
            _validators[binary] = table
        return _validators[binary]


def _describe(error):
    """The pointer and message of a violation; for a oneOf, its closest branch's."""
    if error.context:
        error = jsonschema.exceptions.best_match(error.context)
    return f"/{'/'.join(str(p) for p in error.absolute_path)}: {error.message[:300]}"


def check_tool_result(name, result):
    """Raises OutputSchemaViolation unless `result` (a tools/call result
    object) conforms to tool `name`'s outputSchema."""
    table = validators()
    if name not in table:
        raise OutputSchemaViolation(f"tools/call {name}: the tool declares no outputSchema in tools/list")
    if not isinstance(result, dict) or "structuredContent" not in result:
        raise OutputSchemaViolation(f"tools/call {name}: result without structuredContent: {str(result)[:300]}")
    content = result["structuredContent"]
    errors = sorted(table[name].iter_errors(content), key=lambda e: list(e.absolute_path))
    if errors:
        details = "; ".join(_describe(e) for e in errors[:5])
        raise OutputSchemaViolation(f"tools/call {name}: structuredContent violates its outputSchema: {details}")
    texts = [c.get("text") for c in result.get("content", []) if isinstance(c, dict) and c.get("type") == "text"]
    if not texts or json.loads(texts[0]) != content:
        raise OutputSchemaViolation(f"tools/call {name}: the text content is not the structuredContent as JSON")
    if bool(result.get("isError")) == bool(content.get("ok")):
        raise OutputSchemaViolation(f"tools/call {name}: isError {result.get('isError')} but ok {content.get('ok')}")
    with _lock:
        checked[name] += 1


class ToolCallWatcher:
    """Remembers the ids of tools/call requests a client sends and checks the
    replies that answer them; a violation is kept until the client raises it
    (the watcher may run on a reader thread)."""

    def __init__(self):
        self.pending = {}
        self.failures = []
        # Benchmarks (bench/*.py) measure clients, and drive the reference
        # server too: they turn the check off with TELIC_CHECK_OUTPUT_SCHEMAS=0.
        self.enabled = os.environ.get("TELIC_CHECK_OUTPUT_SCHEMAS", "1") != "0"

    def sent(self, data):
        """Notes the tools/call requests in `data` (one or more JSON lines)."""
        if not self.enabled:
            return
        text = data.decode("utf-8", "replace") if isinstance(data, (bytes, bytearray)) else data
        for line in text.splitlines():
            if '"tools/call"' not in line:
                continue
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if isinstance(message, dict) and message.get("method") == "tools/call" and "id" in message:
                params = message.get("params")
                if isinstance(params, dict) and isinstance(params.get("name"), str):
                    self.pending[json.dumps(message["id"])] = params["name"]

    def received(self, reply):
        """Checks `reply` (a parsed JSON-RPC message) if it answers a tools/call."""
        if not isinstance(reply, dict) or "id" not in reply:
            return
        name = self.pending.pop(json.dumps(reply["id"]), None)
        if name is None or not isinstance(reply.get("result"), dict):
            return
        result = reply["result"]
        # Only a complete CallToolResult has an outputSchema to meet; an
        # interim result of 2026-07-28 (resultType "input_required", a task
        # handle) is not one.
        if result.get("resultType", "complete") != "complete" or ("task" in result and "content" not in result):
            return
        try:
            check_tool_result(name, result)
        except OutputSchemaViolation as violation:
            print(f"OUTPUT SCHEMA VIOLATION: {violation}", file=sys.stderr, flush=True)
            self.failures.append(violation)

    def raise_failures(self):
        if self.failures:
            raise self.failures.pop(0)
