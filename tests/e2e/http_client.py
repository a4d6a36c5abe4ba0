"""Helpers for telic's HTTP end-to-end tests (standard library only):
`telic serve --http` as a child process, a small MCP Streamable HTTP client,
and a throwaway PostgreSQL server (scripts/pg-test-server)."""

import atexit
import http.client
import json
import os
import re
import subprocess
import tempfile
import threading
import time
import unittest

from mcp_client import telic_binary
from output_schemas import ToolCallWatcher

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PG_SCRIPT = os.path.join(ROOT, "scripts", "pg-test-server")
PROTOCOL = "2025-11-25"
READY = re.compile(r"Telic MCP ready for .* at http://([^/]+)/mcp")


class HttpServer:
    """`telic serve --http HOST:0 ...` as a child; .port is the bound port."""

    def __init__(self, env, *extra_args, listen="127.0.0.1:0", expect_ready=True):
        self.proc = subprocess.Popen([telic_binary(), "serve", "--http", listen, *extra_args], env=env,
                                     stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.stderr_lines = []
        self.address = None
        self._ready = threading.Event()
        threading.Thread(target=self._pump, daemon=True).start()
        if expect_ready:
            if not self._ready.wait(60) or self.address is None:
                self.kill()
                raise AssertionError(f"telic serve --http did not become ready: {''.join(self.stderr_lines)}")
            self.host, port = self.address.rsplit(":", 1)
            self.port = int(port)

    def _pump(self):
        for raw in self.proc.stderr:
            line = raw.decode("utf-8", "replace")
            self.stderr_lines.append(line)
            match = READY.search(line)
            if match:
                self.address = match.group(1)
                self._ready.set()
        self._ready.set()

    def stderr(self):
        return "".join(self.stderr_lines)

    def connection(self, timeout=30):
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)

    def client(self, **kwargs):
        return McpHttpClient(self, **kwargs)

    def stop(self, timeout=20):
        if self.proc.poll() is None:
            self.proc.terminate()
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


class HttpError(AssertionError):
    pass


class McpHttpClient:
    """One MCP session over one keep-alive HTTP connection."""

    def __init__(self, server, token=None, headers=None):
        self.server = server
        self.conn = server.connection()
        self.token = token
        self.extra = dict(headers or {})
        self.session = None
        self.next_id = 1
        self.watcher = ToolCallWatcher()  # every tools/call result is checked against its outputSchema

    def headers(self, session=True, version=True):
        headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        if session and self.session:
            headers["Mcp-Session-Id"] = self.session
        if version and self.session:
            headers["MCP-Protocol-Version"] = PROTOCOL
        headers.update(self.extra)
        return headers

    def post(self, body, headers=None):
        """Raw POST /mcp; returns (status, headers dict, body bytes)."""
        data = body if isinstance(body, bytes) else body.encode("utf-8")
        for attempt in range(2):
            try:
                self.conn.request("POST", "/mcp", body=data, headers=headers or self.headers())
                response = self.conn.getresponse()
                answer = response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
                self._check_tool_results(data, answer[2])
                return answer
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                # The server closed an idle keep-alive connection; one fresh try.
                self.conn.close()
                self.conn = self.server.connection()
                if attempt:
                    raise
        raise AssertionError("unreachable")

    def _check_tool_results(self, sent, body):
        """Checks a tools/call reply (plain JSON or SSE data lines) against its outputSchema."""
        self.watcher.sent(sent)
        if not self.watcher.pending:
            return
        text = body.decode("utf-8", "replace")
        candidates = [text] + [line[5:].strip() for line in text.splitlines() if line.startswith("data:")]
        for candidate in candidates:
            try:
                self.watcher.received(json.loads(candidate))
            except ValueError:
                continue
        self.watcher.pending.clear()  # a request answered without its reply here (202, error) has no result to check
        self.watcher.raise_failures()

    def initialize(self):
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": "initialize",
                   "params": {"protocolVersion": PROTOCOL, "capabilities": {},
                              "clientInfo": {"name": "telic-e2e-http", "version": "1"}}}
        self.next_id += 1
        status, headers, body = self.post(json.dumps(message), self.headers(session=False, version=False))
        if status != 200:
            raise HttpError(f"initialize: HTTP {status}: {body[:300]!r}")
        self.session = headers.get("mcp-session-id")
        assert self.session, "no Mcp-Session-Id on the initialize response"
        status, _, _ = self.post(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        assert status == 202, status
        return json.loads(body)["result"]

    def request(self, method, params=None):
        msg_id = self.next_id
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if params is not None:
            message["params"] = params
        status, _, body = self.post(json.dumps(message))
        if status != 200:
            raise HttpError(f"{method}: HTTP {status}: {body[:300]!r}")
        reply = json.loads(body)
        assert reply.get("id") == msg_id, f"reply id {reply.get('id')} != {msg_id}"
        return reply

    def call(self, name, arguments):
        reply = self.request("tools/call", {"name": name, "arguments": arguments})
        assert "result" in reply, reply
        return reply["result"]

    def ok(self, name, arguments):
        result = self.call(name, arguments)
        assert not result.get("isError"), f"{name} failed: {result}"
        return result["structuredContent"]

    def close(self):
        self.conn.close()


def psql(url, sql):
    """Runs SQL with psql (from the postgresql package) outside telic."""
    subprocess.run(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", url, "-c", sql], check=True,
                   stdout=subprocess.DEVNULL)


class Postgres:
    """TELIC_TEST_POSTGRES_URL, or a private server for this test process."""

    _shared = None

    def __init__(self):
        self.dir = None
        self.url = os.environ.get("TELIC_TEST_POSTGRES_URL") or None
        self.reason = None
        if self.url:
            return
        self.dir = tempfile.mkdtemp(prefix="telic-pg-", dir="/tmp")
        proc = subprocess.run(["bash", PG_SCRIPT, "start", self.dir], capture_output=True, text=True)
        if proc.returncode == 0 and proc.stdout.strip():
            self.url = proc.stdout.strip()
        else:
            self.reason = (proc.stderr.strip() or f"pg-test-server exited {proc.returncode}")
            self.stop()

    @classmethod
    def shared(cls):
        if cls._shared is None:
            cls._shared = Postgres()
            # Stopped when the test process exits, whether or not its module
            # calls stop_shared (test_bundle and test_retention did not, and
            # left their servers running after the suite).
            atexit.register(cls.stop_shared)
        return cls._shared

    @classmethod
    def stop_shared(cls):
        if cls._shared is not None:
            cls._shared.stop()

    def stop(self):
        if self.dir:
            subprocess.run(["bash", PG_SCRIPT, "stop", self.dir], capture_output=True)
            self.dir = None

    def new_database_url(self):
        """A URL whose search_path is a fresh, empty schema."""
        schema = "e2e_" + os.urandom(6).hex()
        psql(self.url, f"CREATE SCHEMA {schema}")
        separator = "&" if "?" in self.url else "?"
        return f"{self.url}{separator}options=-csearch_path%3D{schema}"


def require_postgres(test):
    """Skips (or, with TELIC_REQUIRE_POSTGRES=1, fails) without a server."""
    pg = Postgres.shared()
    if pg.url:
        return pg
    if os.environ.get("TELIC_REQUIRE_POSTGRES") == "1":
        test.fail(f"PostgreSQL required but unavailable: {pg.reason}")
    raise unittest.SkipTest(f"SKIPPED: no PostgreSQL server: {pg.reason}")


def wait_until(predicate, timeout=10, step=0.05):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if predicate():
            return True
        time.sleep(step)
    return False
