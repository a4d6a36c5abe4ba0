#!/usr/bin/env python3
"""The floor for bench/compare_reference.py: a process that answers every
JSON-RPC request over the same stdio pipes with a small fixed result and does
nothing else (no validation, no storage, no fsync). Written in Python, so it
is an upper bound of the transport floor, not the floor itself: a C++ echo is
cheaper still."""

import json
import sys

RESULT = {"content": [{"type": "text", "text": "{}"}],
          "structuredContent": {"ok": True, "run": {"runId": "floor"}}}


def main():
    sys.stderr.write("Telic MCP ready for floor\n")
    sys.stderr.flush()
    out = sys.stdout
    for line in sys.stdin:
        message = json.loads(line)
        if "id" not in message:
            continue
        result = {"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {"name": "floor", "version": "0"}} \
            if message.get("method") == "initialize" else RESULT
        out.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
