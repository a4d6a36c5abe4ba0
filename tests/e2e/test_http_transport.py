"""`telic serve --http`: MCP Streamable HTTP (2025-11-25) end to end, and the
adversarial cases: foreign Origin/Host (DNS rebinding), missing/unknown
session, wrong protocol version, oversized body, slow client, batch request,
bad token. Each case runs against a real child process on a loopback port.
"""

# covers TEL-247 TEL-248 TEL-249 TEL-250 TEL-251

import json
import os
import shutil
import subprocess
import socket
import stat
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from http_client import HttpServer, McpHttpClient, PROTOCOL, wait_until  # noqa: E402
from mcp_client import McpProcess, Workspace, run_tests, telic_binary  # noqa: E402

TOKEN = "e2e-token-0123456789abcdef-secret"


def raw_request(port, data, timeout=30):
    """Sends raw bytes on a fresh connection; returns everything read until close."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(data)
        chunks = []
        while True:
            try:
                chunk = sock.recv(65536)
            except (ConnectionResetError, socket.timeout):
                break
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks)


def status_of(response):
    line = response.split(b"\r\n", 1)[0]
    return int(line.split()[1]) if line.startswith(b"HTTP/1.1") else None


class HttpTransportTest(unittest.TestCase):
    def setUp(self):
        self.ws = Workspace()
        self.addCleanup(self.ws.close)
        self.server = HttpServer(self.ws.env())
        self.addCleanup(self.server.kill)

    def client(self, **kwargs):
        client = McpHttpClient(self.server, **kwargs)
        self.addCleanup(client.close)
        return client

    def test_a_run_end_to_end_over_http(self):
        client = self.client()
        init = client.initialize()
        self.assertEqual(init["protocolVersion"], PROTOCOL)
        tools = {tool["name"] for tool in client.request("tools/list")["result"]["tools"]}
        self.assertLessEqual({"telic_start_run", "telic_ground_context", "telic_get_next_action", "telic_cancel_run",
                              "telic_list_runs", "telic_get_run", "telic_get_artifact", "telic_get_trace"}, tools)
        started = client.ok("telic_start_run", {"original_request": "explain the entry point", "mode": "report_only"})
        run, action = started["run"], started["nextAction"]
        # The workflow prompt renders without touching run state (TEL-249).
        client.request("prompts/get", {"name": "telic_workflow",
                                       "arguments": {"request": "explain the entry point", "mode": "report_only"}})
        self.assertEqual(client.ok("telic_get_run", {"run_id": run["runId"]})["run"]["version"], 1)
        grounded = client.ok("telic_ground_context", {"run_id": run["runId"], "action_id": action["id"],
                                                      "expected_run_version": run["version"]})
        self.assertEqual(grounded["run"]["version"], 2)
        cancelled = client.ok("telic_cancel_run", {"run_id": run["runId"], "action_id": grounded["nextAction"]["id"],
                                                   "expected_run_version": 2})
        self.assertEqual(cancelled["run"]["status"], "cancelled")
        trace = client.ok("telic_get_trace", {"run_id": run["runId"]})
        self.assertEqual([e["sequence"] for e in trace["events"]], list(range(1, len(trace["events"]) + 1)))
        status, _, _ = client.post(b"", {**client.headers(), "Content-Length": "0"})  # not JSON: 400
        self.assertEqual(status, 400)
        self.assertEqual(self.server.stop(), 0)  # SIGTERM: clean exit

    def test_foreign_origin_and_host_are_forbidden(self):
        client = self.client()
        client.initialize()
        for headers in ({"Origin": "https://evil.example"}, {"Origin": "null"},
                        {"Host": f"evil.example:{self.server.port}"},  # DNS rebinding, no Origin at all
                        {"Host": f"127.0.0.1.evil.example:{self.server.port}"}):
            status, response_headers, _ = self.client(headers=headers).post(
                json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}), {**client.headers(), **headers})
            self.assertEqual(status, 403, headers)
            self.assertNotIn("access-control-allow-origin", response_headers)
        # The server's own origin is fine, and is echoed exactly (never "*").
        own = f"http://127.0.0.1:{self.server.port}"
        status, response_headers, _ = client.post(json.dumps({"jsonrpc": "2.0", "id": 2, "method": "ping"}),
                                                  {**client.headers(), "Origin": own})
        self.assertEqual(status, 200)
        self.assertEqual(response_headers.get("access-control-allow-origin"), own)

    def test_missing_unknown_and_deleted_sessions(self):
        client = self.client()
        ping = json.dumps({"jsonrpc": "2.0", "id": 5, "method": "ping"})
        status, _, body = client.post(ping, client.headers())  # no session yet
        self.assertEqual(status, 400)
        self.assertIn("Mcp-Session-Id", json.loads(body)["error"]["message"])
        client.initialize()
        status, _, _ = client.post(ping, {**client.headers(), "Mcp-Session-Id": "f" * 64})
        self.assertEqual(status, 404)
        self.assertEqual(client.post(ping)[0], 200)
        client.conn.request("DELETE", "/mcp", headers=client.headers())
        response = client.conn.getresponse()
        response.read()
        self.assertEqual(response.status, 204)
        self.assertEqual(client.post(ping)[0], 404)
        client.initialize()  # a new session works again
        self.assertEqual(client.post(ping)[0], 200)

    def test_wrong_protocol_version(self):
        client = self.client()
        client.initialize()
        ping = json.dumps({"jsonrpc": "2.0", "id": 5, "method": "ping"})
        for version in ("1999-01-01", "2025-06-18", "latest"):
            status, _, _ = client.post(ping, {**client.headers(), "MCP-Protocol-Version": version})
            self.assertEqual(status, 400, version)
        fresh = self.client()
        status, _, _ = fresh.post(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                                              "params": {"protocolVersion": PROTOCOL, "capabilities": {},
                                                         "clientInfo": {"name": "x", "version": "1"}}}),
                                  {**fresh.headers(session=False), "MCP-Protocol-Version": "2000-01-01"})
        self.assertEqual(status, 400)

    def test_batch_request_is_rejected(self):
        client = self.client()
        client.initialize()
        batch = json.dumps([{"jsonrpc": "2.0", "id": 1, "method": "ping"}, {"jsonrpc": "2.0", "id": 2, "method": "ping"}])
        status, _, body = client.post(batch)
        self.assertEqual(status, 400)
        self.assertEqual(json.loads(body)["error"]["code"], -32600)
        status, _, body = client.post("{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": ")
        self.assertEqual(status, 400)
        self.assertEqual(json.loads(body)["error"]["code"], -32700)

    def test_oversized_body_and_head_are_refused(self):
        client = self.client()
        client.initialize()
        huge = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"x": "y" * (9 * 1024 * 1024)}})
        status, headers, _ = client.post(huge)
        self.assertEqual(status, 413)
        self.assertEqual(headers.get("connection"), "close")
        # A request head beyond 16 KiB: refused and the connection closed.
        head = (f"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:{self.server.port}\r\n" +
                "".join(f"X-Filler-{i}: {'z' * 100}\r\n" for i in range(400)) + "\r\n").encode()
        self.assertEqual(status_of(raw_request(self.server.port, head)), 400)
        # Chunked bodies are refused (the length must be known up front).
        chunked = (f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{self.server.port}\r\nContent-Type: application/json\r\n"
                   "Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n").encode()
        self.assertEqual(status_of(raw_request(self.server.port, chunked)), 411)
        self.assertEqual(self.client().initialize()["protocolVersion"], PROTOCOL)  # still serving

    def test_slow_clients_are_cut_off_and_do_not_block_others(self):
        port = self.server.port
        slow = []
        for kind in ("head", "body"):
            sock = socket.create_connection(("127.0.0.1", port), timeout=30)
            if kind == "head":
                sock.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # ... and never finishes the head
            else:
                sock.sendall(f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
                             "Content-Length: 1000\r\n\r\n{\"jsonrpc\"".encode())
            slow.append(sock)
        # A slowloris dripping one byte at a time is cut off by the whole-request deadline.
        drip = socket.create_connection(("127.0.0.1", port), timeout=30)
        slow.append(drip)
        stop = threading.Event()

        def dripper():
            try:
                for byte in b"GET /healthz HTTP/1.1\r\nX-Slow: " + b"a" * 100:
                    if stop.is_set():
                        return
                    drip.send(bytes([byte]))
                    time.sleep(0.5)
            except OSError:
                return

        threading.Thread(target=dripper, daemon=True).start()
        started = time.time()
        # Meanwhile a normal client is served at once.
        client = self.client()
        client.initialize()
        for _ in range(20):
            self.assertEqual(client.post(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}))[0], 200)
        self.assertLess(time.time() - started, 5)
        # Every slow connection is closed by the server within the 10 s request deadline (plus slack).
        for sock in slow:
            sock.settimeout(20)
            try:
                while sock.recv(4096):
                    pass
            except (ConnectionResetError, socket.timeout):
                pass
            sock.close()
        stop.set()
        self.assertLess(time.time() - started, 16)

    def test_keep_alive_serves_many_requests_per_connection(self):
        client = self.client()
        client.initialize()
        sock_before = client.conn.sock
        for i in range(300):
            status, headers, _ = client.post(json.dumps({"jsonrpc": "2.0", "id": i, "method": "ping"}))
            self.assertEqual(status, 200)
        self.assertIs(client.conn.sock, sock_before, "the connection was not kept alive")
        self.assertEqual(headers.get("keep-alive"), "timeout=5, max=1000")

    def test_health_and_get(self):
        conn = self.server.connection()
        for path, expected in (("/healthz", 200), ("/readyz", 200), ("/mcp", 405), ("/nope", 404)):
            conn.request("GET", path)
            response = conn.getresponse()
            response.read()
            self.assertEqual(response.status, expected, path)
        conn.close()


class HttpAuthTest(unittest.TestCase):
    def setUp(self):
        self.ws = Workspace()
        self.addCleanup(self.ws.close)
        self.token_file = os.path.join(self.ws.base, "token")
        with open(self.token_file, "w") as handle:
            handle.write(TOKEN + "\n")
        os.chmod(self.token_file, 0o600)

    def test_bad_or_missing_token_is_unauthorized(self):
        server = HttpServer(self.ws.env(), "--auth-token-file", self.token_file)
        self.addCleanup(server.kill)
        ping = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"})
        for token in (None, "wrong", TOKEN + "x", TOKEN[:-1]):
            client = McpHttpClient(server, token=token)
            with self.assertRaises(AssertionError):
                client.initialize()
            status, headers, _ = client.post(ping, client.headers())
            self.assertEqual(status, 401)
            self.assertIn("bearer", headers.get("www-authenticate", "").lower())
            client.close()
        good = McpHttpClient(server, token=TOKEN)
        good.initialize()
        self.assertEqual(good.post(ping)[0], 200)
        # A session id alone is not a credential.
        status, _, _ = good.post(ping, {k: v for k, v in good.headers().items() if k != "Authorization"})
        self.assertEqual(status, 401)
        good.close()
        self.assertEqual(server.stop(), 0)
        self.assertNotIn(TOKEN, server.stderr())  # never logged

    def test_non_loopback_needs_a_token_and_token_file_must_be_private(self):
        refused = HttpServer(self.ws.env(), listen="0.0.0.0:0", expect_ready=False)
        self.assertEqual(refused.proc.wait(30), 1)
        self.assertTrue(wait_until(lambda: "without --auth-token-file" in refused.stderr()), refused.stderr())
        os.chmod(self.token_file, 0o644)
        loose = HttpServer(self.ws.env(), "--auth-token-file", self.token_file, expect_ready=False)
        self.assertEqual(loose.proc.wait(30), 1)
        self.assertTrue(wait_until(lambda: "chmod 600" in loose.stderr()), loose.stderr())
        os.chmod(self.token_file, stat.S_IRUSR | stat.S_IWUSR)
        allowed = HttpServer(self.ws.env(), "--auth-token-file", self.token_file, listen="0.0.0.0:0")
        self.addCleanup(allowed.kill)
        client = McpHttpClient(allowed, token=TOKEN)
        # Reached through the loopback address: that Host is not the bound one, so it is refused...
        status, _, _ = client.post(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
        self.assertEqual(status, 403)
        client.close()
        self.assertEqual(allowed.stop(), 0)
        # ...unless allowed explicitly (as a load balancer's name would be).
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        named = HttpServer(self.ws.env(), "--auth-token-file", self.token_file, "--allow-host", f"127.0.0.1:{port}",
                           listen=f"0.0.0.0:{port}")
        self.addCleanup(named.kill)
        client = McpHttpClient(named, token=TOKEN)
        client.initialize()
        self.assertEqual(client.post(json.dumps({"jsonrpc": "2.0", "id": 9, "method": "ping"}))[0], 200)
        client.close()
        self.assertEqual(named.stop(), 0)

def initialize_message(msg_id=1):
    return json.dumps({"jsonrpc": "2.0", "id": msg_id, "method": "initialize",
                       "params": {"protocolVersion": PROTOCOL, "capabilities": {},
                                  "clientInfo": {"name": "flood", "version": "1"}}})


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class HttpAbuseTest(unittest.TestCase):
    """Hostile local clients: initialize floods, slowloris, a second server on
    the port, file options that are not regular files."""

    PING = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "ping"})

    def setUp(self):
        self.ws = Workspace()
        self.addCleanup(self.ws.close)

    def serve(self, *args):
        server = HttpServer(self.ws.env(), *args)
        self.addCleanup(server.kill)
        return server

    def client(self, server):
        client = McpHttpClient(server)
        self.addCleanup(client.close)
        return client

    def test_an_initialize_flood_cannot_lock_others_out(self):
        # covers TEL-250
        server = self.serve()
        working = self.client(server)
        working.initialize()
        count = [0]

        def flood(n):
            conn = server.connection()
            headers = {"Content-Type": "application/json", "Accept": "application/json"}
            for _ in range(n):
                conn.request("POST", "/mcp", body=initialize_message(), headers=headers)
                response = conn.getresponse()
                response.read()
                self.assertEqual(response.status, 200)
                count[0] += 1
            conn.close()

        threads = [threading.Thread(target=flood, args=(1050,)) for _ in range(4)]
        started = time.time()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        self.assertEqual(count[0], 4200)
        print(f"4,200 initialize POSTs in {time.time() - started:.1f} s", file=sys.stderr)
        # A fresh client initializes and works; the session made before the flood still works.
        fresh = self.client(server)
        self.assertEqual(fresh.initialize()["protocolVersion"], PROTOCOL)
        self.assertIn("tools", fresh.request("tools/list")["result"])
        self.assertEqual(fresh.post(self.PING)[0], 200)
        self.assertEqual(working.post(self.PING)[0], 200)

    def test_at_the_session_cap_the_least_recently_used_idle_session_is_evicted(self):
        server = self.serve("--http-max-sessions", "2")
        first, second, third = self.client(server), self.client(server), self.client(server)
        first.initialize()
        second.initialize()
        self.assertEqual(first.post(self.PING)[0], 200)  # second is now the least recently used
        third.initialize()  # at the cap: evicts second instead of refusing
        status, _, body = second.post(self.PING)
        self.assertEqual(status, 404)
        self.assertIn("initialize", json.loads(body)["error"]["message"])
        self.assertEqual(first.post(self.PING)[0], 200)
        self.assertEqual(third.post(self.PING)[0], 200)
        # The evicted client initializes again and loses nothing: its runs are in the ledger.
        run = first.ok("telic_start_run", {"original_request": "x", "mode": "plan_only"})["run"]["runId"]
        second.initialize()
        self.assertEqual(second.ok("telic_get_run", {"run_id": run})["run"]["runId"], run)

    def test_uninitialized_sessions_are_reaped_in_seconds_and_idle_ones_later(self):
        server = self.serve("--http-session-init-timeout", "1", "--http-session-idle-timeout", "3")
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        conn = server.connection()
        conn.request("POST", "/mcp", body=initialize_message(), headers=headers)
        response = conn.getresponse()
        response.read()
        pending = response.getheader("Mcp-Session-Id")
        working = self.client(server)
        working.initialize()  # sends notifications/initialized
        time.sleep(1.5)
        conn.request("POST", "/mcp", body=self.PING, headers={**headers, "Mcp-Session-Id": pending})
        response = conn.getresponse()
        response.read()
        self.assertEqual(response.status, 404)  # never initialized: gone after 1 s
        conn.close()
        self.assertEqual(working.post(self.PING)[0], 200)  # initialized: kept, and now used
        time.sleep(2)
        self.assertEqual(working.post(self.PING)[0], 200)  # 2 s idle < 3 s
        time.sleep(3.5)
        self.assertEqual(working.post(self.PING)[0], 404)  # 3.5 s idle > 3 s
        working.initialize()
        self.assertEqual(working.post(self.PING)[0], 200)

    def test_slowloris_from_one_address_leaves_the_server_answering(self):
        # 100 sockets from 127.0.0.1, one header byte each every 0.5 s, against
        # 32 workers; the head deadline is 2 s here (10 s by default).
        server = self.serve("--http-head-timeout", "2", "--http-body-timeout", "2")
        port = server.port
        slow = [socket.create_connection(("127.0.0.1", port), timeout=10) for _ in range(100)]
        slow_body = socket.create_connection(("127.0.0.1", port), timeout=10)
        slow_body.sendall(f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
                          "Content-Length: 1000\r\n\r\n".encode())
        stop = threading.Event()
        head = b"GET /healthz HTTP/1.1\r\nX-Slow: " + b"a" * 100

        def drip():
            for byte in head:
                for sock in slow:
                    try:
                        sock.send(bytes([byte]))
                    except OSError:
                        pass
                try:
                    slow_body.send(b" ")
                except OSError:
                    pass
                if stop.wait(0.5):
                    return

        dripper = threading.Thread(target=drip, daemon=True)
        dripper.start()
        started = time.time()
        time.sleep(0.6)  # every slow socket is open and has sent a byte
        latencies = []
        client = self.client(server)
        client.initialize()
        for _ in range(20):  # fresh connections from the same address, and a session
            begin = time.time()
            conn = server.connection(timeout=5)
            conn.request("GET", "/healthz")
            self.assertEqual(conn.getresponse().status, 200)
            conn.close()
            self.assertEqual(client.post(self.PING)[0], 200)
            latencies.append(time.time() - begin)
        print(f"slowloris x100: 20 probes, slowest {max(latencies) * 1000:.0f} ms", file=sys.stderr)
        self.assertLess(max(latencies), 1.0)
        # Each slow socket is answered 408 and closed by the total deadline, progress notwithstanding.
        for sock in slow + [slow_body]:
            sock.settimeout(5)
            data = b""
            try:
                while True:
                    chunk = sock.recv(4096)
                    if not chunk:
                        break
                    data += chunk
            except (ConnectionResetError, socket.timeout):
                pass
            self.assertTrue(data.startswith(b"HTTP/1.1 408 "), data[:80])
            sock.close()
        stop.set()
        self.assertLess(time.time() - started, 5)

    def test_two_servers_cannot_share_a_port(self):
        first = self.serve()
        address = f"127.0.0.1:{first.port}"
        for argv in (["serve", "--http", address], ["ui", "--http", address]):
            done = subprocess.run([telic_binary(), *argv], env=self.ws.env(), stdin=subprocess.DEVNULL,
                                  capture_output=True, text=True, timeout=60)
            self.assertEqual(done.returncode, 1, argv)
            self.assertIn(f"telic: {address} is in use", done.stderr, argv)
        # Every request still reaches the first server.
        client = self.client(first)
        client.initialize()
        for _ in range(10):
            self.assertEqual(client.post(self.PING)[0], 200)

    def test_file_options_that_are_not_regular_files_fail_with_an_error(self):
        fifo = os.path.join(self.ws.base, "fifo")
        os.mkfifo(fifo, 0o600)
        folder = os.path.join(self.ws.base, "folder")
        os.mkdir(folder, 0o700)
        missing = os.path.join(self.ws.base, "missing")
        for path in (folder, fifo, "/dev/zero", missing):
            for command in (["serve", "--http", "127.0.0.1:0"], ["ui", "--http", "127.0.0.1:0"]):
                for option in ("--auth-token-file", "--db"):
                    if option == "--db" and path == missing:
                        continue  # serve creates a new ledger there
                    argv = [*command, option, path]
                    done = subprocess.run([telic_binary(), *argv], env=self.ws.env(), stdin=subprocess.DEVNULL,
                                          capture_output=True, text=True, timeout=30)
                    self.assertEqual(done.returncode, 1, (argv, done.stderr))
                    self.assertEqual(len(done.stderr.strip().splitlines()), 1, (argv, done.stderr))
                    self.assertIn(path, done.stderr, argv)
                    self.assertNotIn("terminate", done.stderr, argv)


class HttpProgramTest(unittest.TestCase):
    """`telic` is built without HTTP and runs `telic-http` beside it for the
    commands that need it (src/cli/http_features.h, D-START1)."""

    def setUp(self):
        self.ws = Workspace()
        self.addCleanup(self.ws.close)

    def test_telic_itself_links_no_http_library(self):
        linked = subprocess.run(["ldd", telic_binary()], capture_output=True, text=True).stdout
        self.assertNotIn("httplib", linked)
        self.assertNotIn("libssl", linked)
        # Digests come from nettle; no OpenSSL, shared or static (D-START5).
        self.assertNotIn("libcrypto", linked)
        self.assertIn("libnettle", linked)
        symbols = subprocess.run(["nm", telic_binary()], capture_output=True, text=True).stdout
        self.assertNotIn("EVP_MD_fetch", symbols)
        beside = os.path.join(os.path.dirname(os.path.realpath(telic_binary())), "telic-http")
        self.assertIn("httplib", subprocess.run(["ldd", beside], capture_output=True, text=True).stdout)

    def test_without_telic_http_beside_it_the_http_commands_fail_clearly(self):
        alone = os.path.join(self.ws.base, "alone")
        os.mkdir(alone)
        shutil.copy(os.path.realpath(telic_binary()), os.path.join(alone, "telic"))
        env = self.ws.env()
        # Stdio serving needs no HTTP: the lone binary serves a run.
        server = McpProcess([os.path.join(alone, "telic"), "serve"], env, cwd=self.ws.repo)
        server.initialize()
        run_id = server.ok("telic_start_run", {"original_request": "x", "mode": "plan_only"})["run"]["runId"]
        server.close()
        for argv, prefix in ((["serve", "--http", "127.0.0.1:0"], "Telic MCP failed: "),
                             (["ui", "--http", "127.0.0.1:0"], "telic: "),
                             (["export", run_id, "--otlp", "http://127.0.0.1:9/v1/traces"], "telic: ")):
            done = subprocess.run([os.path.join(alone, "telic"), *argv], env=env, cwd=self.ws.repo,
                                  capture_output=True, text=True, timeout=60)
            self.assertEqual(done.returncode, 1, argv)
            self.assertTrue(done.stderr.startswith(prefix + "this command serves or sends HTTP"), done.stderr)
            self.assertIn(os.path.join(alone, "telic-http") + ": No such file or directory", done.stderr, argv)


if __name__ == "__main__":
    run_tests(sys.argv)
