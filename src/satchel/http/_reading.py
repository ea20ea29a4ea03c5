"""How the service reads a request from a client it cannot trust to finish it.

- The body must arrive within ``read_timeout`` seconds of the request's headers: past
  it the request is answered 408 and the connection closed. Without the bound, a client
  that declares ``Content-Length: 1000`` and sends 7 bytes holds its connection, and
  the task serving it, forever. (The headers are the server's to bound:
  :func:`satchel.http.serve` closes a connection that sends none in time.)
- An answer given before the body was read to its end (401, 413, 415, 408 ...) says
  ``Connection: close``. The server closes such a connection whatever the answer says,
  and a pooled client that was not told would send its next request down it.

It is a plain ASGI middleware, outside the app's others (the SERVER span sees its
408). It never reads a body the endpoint
did not ask for: a refused body is not drained, its connection is closed instead.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Final

import anyio

import satchel

from ._errors import HttpError

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

#: Seconds a request's body may take to arrive once its headers have (and, in
#: ``satchel.http.serve``, seconds a connection may take to send a request's headers).
DEFAULT_READ_TIMEOUT: Final = 10.0
#: The HTTP versions whose connections a ``Connection`` header governs (HTTP/2 and later
#: forbid the header: a refused stream ends alone).
_CONNECTION_VERSIONS: Final = frozenset({"1.0", "1.1"})


def checked_read_timeout(value: object) -> float:
    """``value`` as a read timeout: a positive, finite number of seconds.

    Raises:
        InvalidRequestError: it is not one (the message names ``read_timeout``).
    """
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise satchel.InvalidRequestError("read_timeout must be a positive number of seconds")
    if not 0 < value < math.inf:
        raise satchel.InvalidRequestError("read_timeout must be a positive number of seconds")
    return float(value)


def request_timeout(seconds: float) -> HttpError:
    """A 408: the body did not arrive in time (the connection is closed after it)."""
    return HttpError(
        408, "request_timeout", f"the request body did not arrive within {seconds:g} s"
    )


class RequestReading:
    """ASGI middleware: a deadline on each request's body, and ``Connection: close`` on
    an answer given before the body was read to its end."""

    def __init__(self, app: ASGIApp, *, read_timeout: float) -> None:
        self.app = app
        self.read_timeout = read_timeout

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        closes = scope.get("http_version") in _CONNECTION_VERSIONS
        # HTTP/2 frames a body without announcing it: the deadline holds until its end.
        body = _Body(receive, self.read_timeout, expected=not closes or _has_body(scope))

        async def answer(message: Message) -> None:
            if message["type"] == "http.response.start" and closes and not body.complete:
                headers = [*message.get("headers", ()), (b"connection", b"close")]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, body.receive, answer)


class _Body:
    """The request's ``receive``, bounded by a deadline until the body's last part."""

    def __init__(self, receive: Receive, seconds: float, *, expected: bool) -> None:
        self._receive = receive
        self._seconds = seconds
        # From the moment the app has the headers: the body's whole time, not per chunk,
        # so a client dribbling a byte a second is bounded too.
        self._deadline = anyio.current_time() + seconds
        self.complete = not expected

    async def receive(self) -> Message:
        if self.complete:  # what is left to wait for is the client leaving: no bound
            return await self._receive()
        try:
            with anyio.fail_after(max(self._deadline - anyio.current_time(), 0.0)):
                message = await self._receive()
        except TimeoutError:
            raise request_timeout(self._seconds) from None
        if message["type"] == "http.request" and not message.get("more_body", False):
            self.complete = True
        return message


def _has_body(scope: Scope) -> bool:
    """Whether the headers announce a body (a length other than 0, or a transfer
    coding); without either, HTTP/1.1 has none (RFC 9112 section 6.3)."""
    for name, value in scope["headers"]:
        if name == b"transfer-encoding" or (name == b"content-length" and value.strip() != b"0"):
            return True
    return False
