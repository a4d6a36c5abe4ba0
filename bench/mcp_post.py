#!/usr/bin/env python3
"""One MCP POST to a local `telic serve --http`, for the HTTP bench scripts.

Usage: bench/mcp_post.py PORT SESSION BODY
  SESSION "": BODY is the initialize request; prints the new Mcp-Session-Id.
  otherwise:  prints the response body."""

import http.client
import sys


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    port, session, body = sys.argv[1], sys.argv[2], sys.argv[3]
    conn = http.client.HTTPConnection("127.0.0.1", int(port), timeout=30)
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    if session:
        headers["Mcp-Session-Id"] = session
    conn.request("POST", "/mcp", body=body, headers=headers)
    response = conn.getresponse()
    data = response.read().decode()
    print(response.getheader("Mcp-Session-Id") if not session else data)


if __name__ == "__main__":
    main()
