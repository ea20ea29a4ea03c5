"""satchel embedded in a trio program: a line-based agent loop over TCP.

Each connection is one conversation (one satchel ``session_id``) in one scope. A client
sends one command per line and gets one JSON line back:

``remember TEXT``
    stores TEXT as a memory: ``{"ref": {"scope_id", "entry_id", "version"}}``.
``ask QUESTION``
    prepares the context for QUESTION: ``{"context": PACK or null, "fallback": null,
    "timeout" or "error"}``. Your model call would take it from here.

An agent must answer on time with or without memory, so the prepare runs under
``trio.move_on_after(runtime.deadline_for(request))``: past the request's deadline, or
if satchel fails, the answer goes on without context and says why in ``fallback``.

Run: ``python examples/trio_app.py [--db satchel.db] [--port 8767] [--scope demo]``
(needs ``satchel[trio]``), then talk to it with ``nc 127.0.0.1 8767``.
"""

from __future__ import annotations

import argparse
import functools
import itertools
import json
import logging
import signal
from typing import Any, Final

import trio

import satchel

logger = logging.getLogger("trio_app")
#: The pack's byte budget: what the agent's prompt can spare.
MAX_BYTES: Final = 4000
#: The longest command line read; a longer one ends the connection.
MAX_LINE_BYTES: Final = 65536


async def converse(
    runtime: satchel.Runtime, stream: trio.abc.Stream, *, scope: str, session_id: str
) -> None:
    """Answer the commands on ``stream``, one JSON line each, until the client leaves."""
    lines = LineReader(stream)
    while (line := await lines.readline()) is not None:
        answer = await answer_command(runtime, line, scope=scope, session_id=session_id)
        await stream.send_all(json.dumps(answer).encode() + b"\n")


async def answer_command(
    runtime: satchel.Runtime, line: str, *, scope: str, session_id: str
) -> dict[str, Any]:
    """The answer to one command line (an ``error`` for a malformed one)."""
    command, _, text = line.strip().partition(" ")
    try:
        if command == "remember":
            (ref,) = await runtime.add_memories(scope, [satchel.MemoryEntry(text=text)])
            return {"ref": {"scope_id": scope, "entry_id": ref.entry_id, "version": ref.version}}
        if command == "ask":
            prepare = satchel.PrepareContextRequest(
                scope_id=scope, query=text, max_bytes=MAX_BYTES, session_id=session_id
            )
            context, fallback = await context_within(runtime, prepare)
            return {"context": context, "fallback": fallback}
    except satchel.InvalidRequestError as exc:
        return {"error": str(exc)}
    return {"error": "commands: 'remember TEXT' or 'ask QUESTION'"}


async def context_within(
    runtime: satchel.Runtime, prepare: satchel.PrepareContextRequest
) -> tuple[str | None, str | None]:
    """The pack (None when nothing fits) and None; or None and why there is none.

    Raises:
        InvalidRequestError: the request is malformed (before anything runs).
    """
    deadline = runtime.deadline_for(prepare)  # math.inf (trio accepts it) when unbounded
    try:
        with trio.move_on_after(deadline):
            return (await runtime.prepare_context(prepare)).content, None
    except TimeoutError:  # satchel's own prepare_timeout (PrepareTimeoutError) came first
        pass
    except satchel.SatchelError:  # the store is down, a search failed: answer without memory
        logger.exception("no context: the prepare failed")
        return None, "error"
    # Only the deadline gets here: move_on_after cancelled the prepare, or satchel did.
    logger.warning("no context: the prepare overran its %.3g s deadline", deadline)
    return None, "timeout"


class LineReader:
    """Lines of UTF-8 text from a byte stream."""

    def __init__(self, stream: trio.abc.ReceiveStream) -> None:
        self._stream = stream
        self._buffer = bytearray()

    async def readline(self) -> str | None:
        """The next line without its end; None at the end of the stream (a last line
        without a newline is dropped, as is everything after an overlong line)."""
        while (end := self._buffer.find(b"\n")) < 0:
            if len(self._buffer) > MAX_LINE_BYTES:
                return None
            chunk = await self._stream.receive_some()
            if not chunk:
                return None
            self._buffer += chunk
        line = bytes(self._buffer[:end])
        del self._buffer[: end + 1]
        return line.decode("utf-8", errors="replace")


async def main(database: str, port: int, scope: str) -> None:
    sessions = itertools.count(1)
    # Signals are caught from the start: Ctrl-C or SIGTERM stops serving, then satchel
    # closes its store.
    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async with satchel.open_runtime(database) as runtime, trio.open_nursery() as nursery:

            async def connection(stream: trio.SocketStream) -> None:  # trio closes it
                await converse(runtime, stream, scope=scope, session_id=f"tcp-{next(sessions)}")

            serve = functools.partial(trio.serve_tcp, host="127.0.0.1")
            listeners = await nursery.start(serve, connection, port)
            host, bound = listeners[0].socket.getsockname()[:2]
            print(f"trio_app: listening on {host}:{bound} (scope {scope})", flush=True)
            async for _ in signals:
                nursery.cancel_scope.cancel()
                break


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="An agent loop over TCP with satchel context.")
    parser.add_argument("--db", default=":memory:")
    parser.add_argument("--port", type=int, default=8767)
    parser.add_argument("--scope", default="demo")
    args = parser.parse_args()
    trio.run(main, args.db, args.port, args.scope)
