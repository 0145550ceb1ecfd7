"""A hand-written stdio MCP server whose tool list the SDK refuses: one tool has no inputSchema.

It cannot be written with the SDK, which always sends an ``inputSchema``; real servers in
other languages do omit it. Speaks just enough JSON-RPC: initialize, tools/list, tools/call.
"""

from __future__ import annotations

import json
import sys

TOOLS = [
    {"name": "bare", "description": "A tool without inputSchema."},
    {"name": "echo", "inputSchema": {"type": "object", "properties": {"x": {"type": "string"}}}},
]


def reply(request_id: object, result: object) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    message = json.loads(line)
    method, request_id = message.get("method"), message.get("id")
    if request_id is None:
        continue  # a notification
    if method == "initialize":
        reply(
            request_id,
            {
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "raw", "version": "1"},
            },
        )
    elif method == "tools/list":
        reply(request_id, {"tools": TOOLS})
    elif method == "tools/call":
        params = message["params"]
        text = f"{params['name']} {json.dumps(params.get('arguments') or {}, sort_keys=True)}"
        reply(request_id, {"content": [{"type": "text", "text": text}]})
    else:
        sys.stdout.write(
            json.dumps(
                {"jsonrpc": "2.0", "id": request_id, "error": {"code": -32601, "message": method}}
            )
            + "\n"
        )
        sys.stdout.flush()
