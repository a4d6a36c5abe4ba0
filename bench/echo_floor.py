#!/usr/bin/env python3
"""The floor for bench/compare_reference.py: a process that answers every
JSON-RPC request over the same stdio pipes with a small fixed result and does
nothing else (no validation, no storage, no fsync). Written in Python, so it
is an upper bound of the transport floor, not the floor itself: a C++ echo is
cheaper still.

With FLOOR_REPLIES=FILE (a JSON object: tool name -> a tools/call result
object, e.g. one telic returned), a tools/call of that tool is answered with
that result, serialised once at start: the floor of a response of the same
size and shape (bench/issue18_table.py)."""

import json
import os
import sys

RESULT = {"content": [{"type": "text", "text": "{}"}],
          "structuredContent": {"ok": True, "run": {"runId": "floor"}}}


def main():
    replies = {}
    if os.environ.get("FLOOR_REPLIES"):
        with open(os.environ["FLOOR_REPLIES"], encoding="utf-8") as f:
            replies = {name: json.dumps(result, separators=(",", ":"), ensure_ascii=False)
                       for name, result in json.load(f).items()}
    default = json.dumps(RESULT)
    sys.stderr.write("Telic MCP ready for floor\n")
    sys.stderr.flush()
    out = sys.stdout
    for line in sys.stdin:
        message = json.loads(line)
        if "id" not in message:
            continue
        if message.get("method") == "initialize":
            result = json.dumps({"protocolVersion": "2025-11-25", "capabilities": {},
                                 "serverInfo": {"name": "floor", "version": "0"}})
        else:
            result = replies.get((message.get("params") or {}).get("name"), default)
        out.write('{"jsonrpc":"2.0","id":' + json.dumps(message["id"]) + ',"result":' + result + "}\n")
        out.flush()


if __name__ == "__main__":
    main()
