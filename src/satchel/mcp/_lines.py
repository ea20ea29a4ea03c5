"""stdio's lines: each one a JSON-RPC message for the server, or the error that answers it.

Over stdio a client writes one JSON-RPC message per line. The SDK's own stdin reader
decodes undecodable bytes as U+FFFD (changing what a client wrote) and drops a line it
cannot read without a word, so a client waiting for its answer waits forever. Here every
line that is not blank gets an answer: one that is not UTF-8 or not JSON a JSON-RPC parse
error (-32700, id null); JSON that is not a JSON-RPC request an invalid request (-32600,
with the request's id when it has a string or integer one, else null).

A lone surrogate (a ``\\ud800`` escape without its pair) is JSON that the SDK's reader
refuses. Inside a tool call's arguments it is passed on, so the tool refuses the argument
by name, as in process; anywhere else in a message it is a parse error, with the
request's id when it has a readable one. Nothing here ever writes such a string back: it
cannot be encoded, and an answer that cannot be written would end the server.
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any, Final, Protocol, Self

import anyio
import mcp.types as types
from mcp.shared.message import SessionMessage

from ._arguments import lone_surrogate

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable


NOT_UTF8: Final = "Parse error: the line is not UTF-8 text"
NOT_JSON: Final = "Parse error: the line is not JSON"
LONE_SURROGATE: Final = "Parse error: a string holds a lone surrogate, which is not Unicode text"
NOT_JSONRPC: Final = "Invalid request: the line is not a JSON-RPC 2.0 message"
#: The most bytes one read of stdin takes.
CHUNK: Final = 65536


def read_line(line: bytes) -> SessionMessage | types.JSONRPCError | None:
    """The message ``line`` carries (for the server), the error that answers it (for the
    client), or None for a blank line, which carries nothing."""
    if not line.strip():
        return None
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        return _error(None, types.PARSE_ERROR, NOT_UTF8)
    try:
        message = types.jsonrpc_message_adapter.validate_json(text, by_name=False)
    except ValueError:  # pydantic's ValidationError
        return _unread(text)  # the reader the SDK uses refused it: find out why
    if isinstance(message, types.JSONRPCNotification) and _has_id(text):
        # A request with an id that is not a string or an integer (null, a list): the
        # SDK reads it as a notification, and never answers it.
        return _error(None, types.INVALID_REQUEST, NOT_JSONRPC)
    return SessionMessage(message)


def _has_id(text: str) -> bool:
    try:
        return "id" in json.loads(text)
    except (ValueError, RecursionError):  # JSON the SDK's reader takes and Python's not
        return False


def _unread(text: str) -> SessionMessage | types.JSONRPCError:
    """What a line the SDK's reader refused carries, or the error that says why."""
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):  # an overlong integer is a bare ValueError
        return _error(None, types.PARSE_ERROR, NOT_JSON)
    request_id = _request_id(value)
    if lone_surrogate(_without_arguments(value)) is not None:
        return _error(request_id, types.PARSE_ERROR, LONE_SURROGATE)
    if lone_surrogate(value) is not None:  # in a tool call's arguments only
        try:
            message = types.jsonrpc_message_adapter.validate_python(value, by_name=False)
        except ValueError:  # pydantic's ValidationError
            pass
        else:
            if not (isinstance(message, types.JSONRPCNotification) and "id" in value):
                return SessionMessage(message)
    return _error(request_id, types.INVALID_REQUEST, NOT_JSONRPC)


def _request_id(value: object) -> types.RequestId | None:
    """The id of a request, if it has one an answer can carry: any object with a string
    or integer id (``{"id": 6}`` lacks its method, but its sender waits for answer 6),
    except a response (``result`` or ``error``), which is never answered."""
    if not isinstance(value, dict) or "result" in value or "error" in value:
        return None
    request_id = value.get("id")
    if isinstance(request_id, int) and not isinstance(request_id, bool):
        return request_id
    if isinstance(request_id, str) and lone_surrogate(request_id) is None:
        return request_id
    return None


def _without_arguments(value: object) -> object:
    """``value`` without the arguments of a tool call (the one place a lone surrogate is
    passed on, to be refused by name)."""
    if not isinstance(value, dict) or value.get("method") != "tools/call":
        return value
    params = value.get("params")
    if not isinstance(params, dict):
        return value
    bare: dict[str, Any] = {name: inner for name, inner in params.items() if name != "arguments"}
    return {**value, "params": bare}


def _error(request_id: types.RequestId | None, code: int, message: str) -> types.JSONRPCError:
    return types.JSONRPCError(
        jsonrpc="2.0", id=request_id, error=types.ErrorData(code=code, message=message)
    )


class Lines(Protocol):
    """Where :class:`StdinMessages` reads its lines."""

    async def readline(self) -> bytes:
        """The next line with its newline; the rest without one at the end; then b""."""
        ...


class DescriptorLines:
    """The lines of a file descriptor (stdin), read as they arrive.

    A read waits for the descriptor to be readable and then takes what is there, so a
    cancelled read leaves no thread blocked on stdin: a signal stops the server while the
    host still holds stdin open, and the process exits. A descriptor the event loop
    cannot watch (a regular file, ``/dev/null``) never blocks, and is read in a worker
    thread.
    """

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._buffer = bytearray()
        self._searched = 0  # the buffer's bytes known to hold no newline
        self._eof = False
        self._watchable = True

    async def readline(self) -> bytes:
        while not self._eof and self._buffer.find(b"\n", self._searched) < 0:
            self._searched = len(self._buffer)
            chunk = await self._read()
            self._eof = not chunk
            self._buffer += chunk
        end = self._buffer.find(b"\n", self._searched)
        cut = len(self._buffer) if end < 0 else end + 1
        line = bytes(self._buffer[:cut])
        del self._buffer[:cut]
        self._searched = 0
        return line

    async def _read(self) -> bytes:
        while self._watchable:
            try:
                await anyio.wait_readable(self._fd)
            except OSError:  # not a pipe, socket or terminal: a read never blocks
                self._watchable = False
                break
            try:
                return os.read(self._fd, CHUNK)
            except BlockingIOError:  # a non-blocking descriptor woke with nothing to read
                continue
        return await anyio.to_thread.run_sync(os.read, self._fd, CHUNK)


class StdinMessages:
    """The server's read stream over stdio: each message is read off ``lines`` when the
    server asks for the next one, and a line that holds none is answered on the spot
    through ``answer`` (the stream the SDK writes stdout from). No task of its own: the
    server's receive loop does the reading.

    Satisfies the SDK's ``ReadStream`` protocol. Closing it leaves ``lines`` open (stdin
    is the process's).
    """

    def __init__(self, lines: Lines, answer: Callable[[SessionMessage], Awaitable[None]]) -> None:
        self._lines = lines
        self._answer = answer
        self._closed = False

    async def receive(self) -> SessionMessage:
        """The next message.

        Raises:
            anyio.EndOfStream: stdin is closed (the host hung up).
            anyio.ClosedResourceError: this stream was closed.
        """
        while True:
            if self._closed:
                raise anyio.ClosedResourceError
            line = await self._lines.readline()
            if not line:
                raise anyio.EndOfStream
            read = read_line(line)
            if isinstance(read, SessionMessage):
                return read
            if read is not None:
                await self._answer(SessionMessage(read))

    async def aclose(self) -> None:
        self._closed = True

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> SessionMessage:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()
