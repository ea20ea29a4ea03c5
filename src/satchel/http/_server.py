"""Serving an app with Hypercorn on the running event loop (asyncio or trio).

:func:`listen` binds and listens first, so a caller knows the port (``0`` picks a free
one) and can say where it listens before serving; :func:`serve` hands that socket to
Hypercorn and returns after a graceful shutdown once ``shutdown_trigger`` returns.

What Hypercorn itself answers never reaches the app, so it is not JSON: a request it
cannot parse (a NUL in a header, a garbage request line, two ``Content-Length``) gets an
empty 400 (501 for an unknown transfer coding, 431 for headers past
``h11_max_incomplete_size``) with ``Connection: close``. It offers no hook for the body.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from typing import TYPE_CHECKING, Final, cast

from hypercorn.config import Config

from ._reading import DEFAULT_READ_TIMEOUT, checked_read_timeout

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from hypercorn.typing import Framework
    from starlette.types import ASGIApp

#: The host names that are the loopback interface whatever the resolver says.
LOOPBACK_NAMES: Final = frozenset({"localhost"})
#: Seconds open connections get to finish once shutdown starts.
GRACEFUL_SECONDS: Final = 5.0
#: Connections the kernel holds before they are accepted (capped by
#: ``net.core.somaxconn``). Hypercorn's 100 reset connections when a thousand clients
#: (agent hooks open one per prompt) connected at once.
BACKLOG: Final = 2048


def is_loopback(host: str) -> bool:
    """Whether ``host`` is the loopback interface: ``localhost`` or a loopback address
    (``127.0.0.0/8``, ``::1``). Other names are not resolved: they count as not."""
    name = host.strip("[]").lower()
    if name in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def listen(host: str, port: int) -> socket.socket:
    """A TCP socket bound to ``host``:``port`` and listening (port 0: a free port; the
    socket's ``getsockname()`` says which).

    Raises:
        OSError: the address cannot be resolved or bound.
    """
    name = host.strip("[]")
    family, kind, proto, _, address = socket.getaddrinfo(
        name, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
    )[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(BACKLOG)
    except BaseException:
        sock.close()
        raise
    return sock


def url_of(sock: socket.socket) -> str:
    """``http://HOST:PORT`` for a listening socket (IPv6 in brackets)."""
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}"


async def serve(
    app: ASGIApp,
    sock: socket.socket,
    *,
    shutdown_trigger: Callable[[], Awaitable[None]],
    graceful_seconds: float = GRACEFUL_SECONDS,
    read_timeout: float = DEFAULT_READ_TIMEOUT,
) -> None:
    """Serve ``app`` on the listening ``sock`` with Hypercorn on the running loop
    (asyncio or trio) until ``shutdown_trigger`` returns, then stop gracefully. The
    socket is Hypercorn's from then on (it closes it).

    Args:
        app: the ASGI app (:func:`satchel.http.create_app`'s bounds a request's body).
        sock: a listening socket (:func:`listen`).
        shutdown_trigger: returns when the service should stop.
        graceful_seconds: how long open requests may go on once it stops.
        read_timeout: seconds a connection may take to send a request's headers, from
            when it opens or from its last answer; past it the connection is closed
            without an answer. It is also how long an idle connection is kept.

    Raises:
        InvalidRequestError: ``read_timeout`` is not a positive number of seconds.
    """
    idle_seconds = checked_read_timeout(read_timeout)  # before the socket is handed over
    config = Config()
    config.bind = [f"fd://{sock.detach()}"]
    config.backlog = BACKLOG  # Hypercorn listens on the socket again with its own
    config.loglevel = "WARNING"  # the caller says where it listens; errors still show
    config.accesslog = None
    config.graceful_timeout = graceful_seconds
    config.include_server_header = False
    # Hypercorn's idle timer runs from a connection's start (or its last answer) until a
    # request's headers are parsed, so it bounds headers sent a byte at a time. Its
    # read_timeout is not used: it bounds each read, and would cut a client off while
    # a long prepare runs; the app bounds the body (408) instead.
    config.keep_alive_timeout = idle_seconds
    framework = cast("Framework", app)  # an ASGI 3 app, as Hypercorn's types spell it
    if _on_asyncio():
        from hypercorn.asyncio import serve as serve_asyncio

        await serve_asyncio(framework, config, shutdown_trigger=shutdown_trigger, mode="asgi")
    else:
        from hypercorn.trio import serve as serve_trio

        await serve_trio(framework, config, shutdown_trigger=shutdown_trigger, mode="asgi")


def _on_asyncio() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:  # no asyncio loop in this thread: trio runs it
        return False
    return True
