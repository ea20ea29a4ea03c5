"""Serving a satchel MCP server: over stdio, or streamable HTTP on the loopback interface."""

from __future__ import annotations

import contextlib
import io
import sys
from typing import TYPE_CHECKING, Final

import anyio
from mcp.server.stdio import stdio_server

from ._lines import DescriptorLines, StdinMessages
from ._server import create_server

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Iterator

    import uvicorn

    import satchel

#: Where the streamable-HTTP endpoint is served.
HTTP_PATH: Final = "/mcp"
LOOPBACK: Final = "127.0.0.1"


async def serve_stdio(runtime: satchel.Runtime, *, allow_erase: bool = False) -> None:
    """Serve ``runtime``'s tools over this process's stdin and stdout until stdin closes
    (with ``erase_memory`` when ``allow_erase``: :func:`create_server`).

    While serving, stdout carries nothing but the protocol: the SDK points file
    descriptor 1 at stderr for everything else (logs, stray prints) and restores it after.
    Every line read is answered (:mod:`._lines`): one that holds no JSON-RPC message with
    a JSON-RPC error, so a client never waits for an answer that cannot come. stdin is
    read as lines arrive, never by a thread blocked on it, so cancelling this call ends
    it at once, also while the host keeps stdin open.
    """
    server = create_server(runtime, allow_erase=allow_erase)
    # The SDK writes stdout; stdin is read here (StdinMessages), not by the SDK's reader,
    # which is handed an empty stream: that reader drops a line it cannot read.
    async with stdio_server(stdin=anyio.wrap_file(io.StringIO())) as (unread, write):
        await unread.aclose()
        messages = StdinMessages(DescriptorLines(sys.stdin.fileno()), write.send)
        await server.run(messages, write, server.create_initialization_options())


async def serve_http(
    runtime: satchel.Runtime,
    *,
    port: int,
    allow_erase: bool = False,
    shutdown_trigger: Callable[[], Awaitable[object]] | None = None,
) -> None:
    """Serve ``runtime``'s tools as a streamable-HTTP endpoint at
    ``http://127.0.0.1:PORT/mcp`` (asyncio only: it runs on uvicorn), with
    ``erase_memory`` when ``allow_erase`` (:func:`create_server`).

    Without ``shutdown_trigger`` it serves until SIGINT or SIGTERM (uvicorn's own
    handlers, which raise the signal again once stopped). With one, signals are the
    caller's: it serves until the trigger returns, then shuts down gracefully; if the
    trigger returns a second time, at once.

    The endpoint listens on the loopback interface only and has no authentication;
    the SDK's DNS-rebinding protection accepts only loopback Host and Origin headers.
    """
    import uvicorn  # a dependency of the MCP SDK; imported only when HTTP is served

    server = create_server(runtime, allow_erase=allow_erase)
    app = server.streamable_http_app(streamable_http_path=HTTP_PATH, host=LOOPBACK)
    config = uvicorn.Config(
        app, host=LOOPBACK, port=port, log_level="warning", access_log=False, lifespan="on"
    )
    if shutdown_trigger is None:
        await uvicorn.Server(config).serve()
        return
    served = _server_leaving_signals(config)

    async def stop() -> None:
        await shutdown_trigger()
        served.should_exit = True
        await shutdown_trigger()
        served.force_exit = True

    async with anyio.create_task_group() as group:
        group.start_soon(stop)
        await served.serve()
        group.cancel_scope.cancel()


def _server_leaving_signals(config: uvicorn.Config) -> uvicorn.Server:
    """A uvicorn server that leaves signals alone: its own handlers would replace the
    caller's while it serves and raise the signal again afterwards, into whatever code
    runs then (a KeyboardInterrupt in the runtime's close, or a cancellation lost)."""
    import uvicorn

    class Server(uvicorn.Server):
        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            yield

    return Server(config)
