"""The worker's end of the wire: length-prefixed JSON frames over the socket to the parent.

Owns :class:`_Channel` (blocking writes, non-blocking reads, a ``poll(2)`` wait with the event
loop blocked) and :func:`_call_frame` (a tool call's frame built as text). The parent's end is
:mod:`.framing`. No engine, no job loop here; it must not import :mod:`.parent` or
:mod:`.worker_jobs`.
"""

from __future__ import annotations

import json
import math
import select
import socket
import time
from typing import Any

import anyio

_HEADER = 4
_READ_CHUNK = 1 << 16
# The parent is trusted, but a frame this large means something is badly wrong.
_MAX_FRAME = 1 << 30
_RESULT_MAX_DEPTH_MESSAGE = "the script's result could not be encoded as JSON"
# Made once: ``json.dumps`` with options builds a new encoder for every message.
_ENCODE = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
# For text UTF-8 cannot carry (a lone surrogate, which a script's str may hold):
# escaped, it decodes on the other side to the same str.
_ENCODE_ASCII = json.JSONEncoder(separators=(",", ":")).encode
# ``raw_decode``: a frame holds exactly one JSON text with no whitespace around it,
# so ``decode``'s two whitespace scans are not needed (the end is checked instead).
_RAW_DECODE = json.JSONDecoder().raw_decode


class _Channel:
    """Length-prefixed JSON over the socket shared with the parent (worker side).

    The socket stays blocking for writes (the parent always reads; a frame is one
    ``send`` call). Reads use ``MSG_DONTWAIT``: :meth:`recv` waits for readiness on
    the event loop, :meth:`poll` in ``poll(2)`` with the event loop blocked.
    """

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self._fd = sock.fileno()
        self._buf = bytearray()
        self._eof = False
        self._poller = select.poll()
        self._poller.register(self._fd, select.POLLIN)

    @staticmethod
    def encode(message: dict[str, Any]) -> bytes:
        """One frame: 4-byte big-endian length, then compact UTF-8 JSON."""
        try:
            data = _ENCODE(message).encode()
        except UnicodeEncodeError:  # a lone surrogate: \u escapes
            data = _ENCODE_ASCII(message).encode()
        return len(data).to_bytes(_HEADER, "big") + data

    def send(self, message: dict[str, Any]) -> None:
        """Write one message."""
        self.write(self.encode(message))

    def write(self, frame: bytes) -> None:
        """Write one encoded frame completely."""
        self._sock.sendall(frame)

    def _parse(self) -> dict[str, Any] | None:
        """The next complete message in the buffer, if any (a bad frame closes the channel)."""
        if len(self._buf) < _HEADER:
            return None
        size = int.from_bytes(self._buf[:_HEADER], "big")
        if size > _MAX_FRAME:
            self._eof = True
            return None
        if len(self._buf) < _HEADER + size:
            return None
        text = self._buf[_HEADER : _HEADER + size].decode()
        del self._buf[: _HEADER + size]
        return self._decode(text)

    def _decode(self, text: str) -> dict[str, Any] | None:
        """The JSON object ``text`` holds (anything else closes the channel)."""
        message, end = _RAW_DECODE(text)
        if end != len(text) or type(message) is not dict:
            self._eof = True
            return None
        return message

    def _read(self) -> bool:
        """Append what the socket holds now; ``False``: nothing there (the channel may be at EOF)."""
        try:
            chunk = self._sock.recv(_READ_CHUNK, socket.MSG_DONTWAIT)
        except BlockingIOError:
            return False
        except OSError:
            self._eof = True
            return False
        if not chunk:
            self._eof = True
            return False
        self._buf += chunk
        return True

    async def recv(self) -> dict[str, Any] | None:
        """The next message, or ``None`` when the parent has gone away."""
        while True:
            message = self._parse()
            if message is not None:
                return message
            if self._eof:
                return None
            if not self._read() and not self._eof:
                await anyio.wait_readable(self._fd)

    def poll(self, timeout: float, spin: float = 0.0) -> dict[str, Any] | None:
        """The next message if one arrives within ``timeout`` seconds, else ``None``.

        Blocks the thread (and so the event loop): the first ``spin`` seconds on
        non-blocking reads, then in ``poll(2)``. ``None`` also at EOF (then
        :meth:`recv` reports it to the job loop). Called right after a request
        was sent, so it waits before it reads: one ``poll`` and one ``recv`` per
        reply.
        """
        message = self._parse()
        if message is not None or self._eof:
            return message
        start = time.perf_counter()
        if spin <= 0 and not self._buf and timeout > 0:
            # the usual case: one poll(2), one recv that holds exactly one frame
            if not self._poller.poll(math.ceil(timeout * 1000)):
                return None
            try:
                chunk = self._sock.recv(_READ_CHUNK, socket.MSG_DONTWAIT)
            except BlockingIOError:
                chunk = None  # a spurious wake-up: the loop below waits on
            except OSError:
                self._eof = True
                return None
            if chunk is not None:
                if not chunk:
                    self._eof = True
                    return None
                size = len(chunk) - _HEADER
                if size >= 0 and int.from_bytes(chunk[:_HEADER], "big") == size:
                    return self._decode(chunk[_HEADER:].decode())
                self._buf += chunk
                message = self._parse()
                if message is not None or self._eof:
                    return message
        while True:
            elapsed = time.perf_counter() - start
            if elapsed >= timeout:
                return None
            if elapsed >= spin and not self._poller.poll(math.ceil((timeout - elapsed) * 1000)):
                return None
            if not self._read():
                if self.at_eof():  # (or it was only a spurious wake-up)
                    return None
                continue
            message = self._parse()
            if message is not None or self.at_eof():
                return message

    def at_eof(self) -> bool:
        """True once the parent has gone away (or sent something unreadable)."""
        return self._eof


_JSON_CONSTANTS = {True: "true", False: "false", None: "null"}


def _call_frame(call_id: str, tool: str, arguments: dict[str, Any], tool_json: str = "") -> bytes:
    """The frame of ``{"op": "call", "id", "tool", "args"}``, as :meth:`_Channel.encode` makes it.

    Built as text: the encoder object sets itself up again for every dict it
    encodes, which costs more than the whole message. Flat arguments (str keys;
    str, int, bool or ``None`` values) are written here too; anything else goes
    through the encoder. Raises what the encoder raises for data that is not JSON.
    ``tool_json``: ``tool`` as JSON text, if the caller has it already.
    """
    if type(arguments) is dict:
        parts = []
        for key, value in arguments.items():
            kind = type(value)
            if type(key) is not str:
                break
            if kind is str:
                text = _ENCODE(value)
            elif kind is int:
                text = int.__repr__(value)
            elif kind is bool or value is None:
                text = _JSON_CONSTANTS[value]
            else:
                break
            parts.append(_ENCODE(key) + ":" + text)
        else:
            args = "{" + ",".join(parts) + "}"
            tool_json = tool_json or _ENCODE(tool)
            data = f'{{"op":"call","id":{_ENCODE(call_id)},"tool":{tool_json},"args":{args}}}'
            try:
                payload = data.encode()
            except UnicodeEncodeError:  # a lone surrogate: the encoder escapes it
                pass
            else:
                return len(payload).to_bytes(_HEADER, "big") + payload
    return _Channel.encode({"op": "call", "id": call_id, "tool": tool, "args": arguments})
