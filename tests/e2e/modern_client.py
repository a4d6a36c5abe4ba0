"""MCP 2026-07-28 clients for the e2e tests (raw JSON-RPC, standard library
only): every request carries its protocol version, client capabilities and
client info in `_meta`; there is no initialize and no session. Over HTTP the
Mcp-Method / Mcp-Name / MCP-Protocol-Version headers mirror the body."""

import base64
import json

MODERN = "2026-07-28"


def meta(capabilities=None, version=MODERN, **extra):
    value = {"io.modelcontextprotocol/protocolVersion": version,
             "io.modelcontextprotocol/clientCapabilities": capabilities or {},
             "io.modelcontextprotocol/clientInfo": {"name": "telic-e2e-modern", "version": "1"}}
    value.update(extra)
    return value


def with_meta(params=None, **kwargs):
    params = dict(params or {})
    params["_meta"] = meta(**kwargs)
    return params


def header_value(text):
    """Mcp-Name encoding: plain when header-safe, else =?base64?...?=."""
    safe = all(0x20 <= ord(c) <= 0x7e for c in text) and text == text.strip()
    if safe and not (text.startswith("=?base64?") and text.endswith("?=")):
        return text
    return "=?base64?" + base64.b64encode(text.encode("utf-8")).decode("ascii") + "?="


def mirrored_headers(message):
    headers = {"MCP-Protocol-Version": MODERN, "Mcp-Method": message["method"]}
    params = message.get("params") or {}
    if message["method"] in ("tools/call", "prompts/get"):
        headers["Mcp-Name"] = header_value(params.get("name", ""))
    elif message["method"] == "resources/read":
        headers["Mcp-Name"] = header_value(params.get("uri", ""))
    elif message["method"] in ("tasks/get", "tasks/update", "tasks/cancel"):
        headers["Mcp-Name"] = header_value(params.get("taskId", ""))
    return headers


class _ToolCalls:
    """ok()/call() like the legacy clients, so scenario.Driver can drive either."""

    def call(self, name, arguments=None):
        reply = self.request("tools/call", {"name": name, "arguments": arguments or {}})
        assert "result" in reply, reply
        assert reply["result"]["resultType"] == "complete", reply
        return reply["result"]

    def ok(self, name, arguments=None):
        result = self.call(name, arguments)
        assert not result.get("isError"), f"{name} failed: {result}"
        payload = result["structuredContent"]
        assert payload["ok"] is True
        assert json.loads(result["content"][0]["text"]) == payload
        return payload


class ModernStdio(_ToolCalls):
    """2026-07-28 over a running McpProcess (no initialize)."""

    def __init__(self, process, capabilities=None):
        self.process = process
        self.capabilities = capabilities or {}

    def request(self, method, params=None, **meta_args):
        meta_args.setdefault("capabilities", self.capabilities)
        return self.process.request(method, with_meta(params, **meta_args))


class ModernHttp(_ToolCalls):
    """2026-07-28 over an McpHttpClient's connection (no session)."""

    def __init__(self, http_client, capabilities=None):
        self.http = http_client
        self.capabilities = capabilities or {}
        self.next_id = 1000

    def base_headers(self):
        headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        if self.http.token:
            headers["Authorization"] = f"Bearer {self.http.token}"
        return headers

    def message(self, method, params=None, **meta_args):
        meta_args.setdefault("capabilities", self.capabilities)
        self.next_id += 1
        return {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": with_meta(params, **meta_args)}

    def post(self, message, headers=None, drop=(), override=None):
        """POSTs `message` with the mirrored headers (minus `drop`, changed by
        `override`); returns (status, headers, parsed body or None)."""
        all_headers = dict(self.base_headers(), **mirrored_headers(message))
        for name in drop:
            all_headers.pop(name, None)
        all_headers.update(override or {})
        all_headers.update(headers or {})
        status, response_headers, body = self.http.post(json.dumps(message), all_headers)
        return status, response_headers, (json.loads(body) if body else None)

    def request(self, method, params=None, **meta_args):
        message = self.message(method, params, **meta_args)
        status, headers, reply = self.post(message)
        assert "mcp-session-id" not in headers, "a 2026-07-28 reply must not mint a session"
        assert status == 200, f"{method}: HTTP {status}: {reply}"
        assert reply["id"] == message["id"]
        return reply
