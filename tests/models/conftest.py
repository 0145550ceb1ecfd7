"""A scripted model server on 127.0.0.1 for the provider adapter tests.

:class:`ProtocolServer` speaks HTTP/1.1 in a thread: each POST is recorded
(path, headers, JSON body) and answered by the next scripted :class:`Exchange` —
a server-sent-event stream, or an HTTP error with a JSON body. An exchange with
``hold=True`` keeps its stream open after its events until the client goes away
(``disconnected`` is then set), which is how the abort tests prove the HTTP
request was cancelled. The protocol framing of each provider is built by the
test modules; this file knows only SSE.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest


@dataclass
class Exchange:
    """One scripted answer: SSE ``events`` (``(event name or None, data)``) or an error."""

    events: list[tuple[str | None, Any]] = field(default_factory=list)
    status: int = 200
    body: Any = None
    hold: bool = False
    done_marker: bool = False  # OpenAI Chat ends its stream with `data: [DONE]`


@dataclass
class Recorded:
    """One request the server received."""

    path: str
    headers: dict[str, str]
    body: Any


class ProtocolServer:
    """The scripted server; see the module docstring."""

    def __init__(self) -> None:
        self.exchanges: list[Exchange] = []
        self.requests: list[Recorded] = []
        self.holding = threading.Event()
        self.disconnected = threading.Event()
        self.stop = threading.Event()
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = raw.decode("utf-8", "replace")
                with server._lock:
                    server.requests.append(
                        Recorded(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                    )
                    exchange = server.exchanges.pop(0) if server.exchanges else None
                if exchange is None:
                    exchange = Exchange(
                        status=500, body={"error": {"message": "no scripted answer"}}
                    )
                if exchange.status != 200:
                    self._json(exchange.status, exchange.body)
                    return
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("cache-control", "no-cache")
                self.send_header("connection", "close")
                self.end_headers()
                try:
                    for name, data in exchange.events:
                        text = data if isinstance(data, str) else json.dumps(data)
                        frame = (f"event: {name}\n" if name else "") + f"data: {text}\n\n"
                        self.wfile.write(frame.encode("utf-8"))
                        self.wfile.flush()
                    if exchange.hold:
                        server.holding.set()
                        # Keep the stream open; a comment line (ignored by SSE parsers)
                        # finds out when the client has closed the connection.
                        while not server.stop.wait(0.02):
                            self.wfile.write(b": keep-alive\n\n")
                            self.wfile.flush()
                        return
                    if exchange.done_marker:
                        self.wfile.write(b"data: [DONE]\n\n")
                        self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    server.disconnected.set()
                finally:
                    self.close_connection = True

            def _json(self, status: int, body: Any) -> None:
                data = json.dumps(body).encode("utf-8")
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    def script(self, *exchanges: Exchange | dict[str, Any]) -> None:
        """Queue answers (an :class:`Exchange` or its fields as a dict) for the next requests."""
        with self._lock:
            self.exchanges.extend(
                e if isinstance(e, Exchange) else Exchange(**e) for e in exchanges
            )

    def start(self) -> None:
        """Serve in a background thread."""
        self.thread.start()

    def close(self) -> None:
        """Stop serving (held streams end)."""
        self.stop.set()
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server() -> Iterator[ProtocolServer]:
    """A started :class:`ProtocolServer`, closed after the test."""
    instance = ProtocolServer()
    instance.start()
    try:
        yield instance
    finally:
        instance.close()
