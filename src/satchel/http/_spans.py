"""One OpenTelemetry SERVER span per request, the parent of satchel's own spans.

The span follows the HTTP semantic conventions: it is named ``METHOD ROUTE``
(``POST /v1/context/prepare``) and carries ``http.request.method``, ``http.route``
(the route's template, never the path, so no scope name), ``http.response.status_code``,
``url.scheme`` and, for a 5xx answer, ``error.type`` and an error status. A request
carrying W3C trace context (``traceparent``) continues that trace. No query text,
content, scope or token is ever put on it.

It is a plain ASGI middleware, so the endpoint runs inside the span's context on asyncio
and on trio alike, and the runtime's ``satchel.prepare_context`` span is its child.
"""

from __future__ import annotations

import re
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Final

from opentelemetry import propagate, trace

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

_KNOWN_METHODS: Final = frozenset(
    {"GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH"}
)
_CONVERTER: Final = re.compile(r"\{(\w+):\w+\}")


def route_template(path: str) -> str:
    """A Starlette route's path as ``http.route`` (and OpenAPI) spell it:
    ``/v1/memories/{scope:path}/{entry_id}`` is ``/v1/memories/{scope}/{entry_id}``."""
    return _CONVERTER.sub(r"{\1}", path)


def _version() -> str:
    try:
        return version("satchel")
    except PackageNotFoundError:  # running from a source tree
        return "0"


class ServerSpans:
    """ASGI middleware: each HTTP request runs inside a SERVER span."""

    def __init__(self, app: ASGIApp, *, tracer_provider: trace.TracerProvider | None) -> None:
        self.app = app
        self._tracer = trace.get_tracer("satchel.http", _version(), tracer_provider=tracer_provider)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        method = scope["method"]
        known = method in _KNOWN_METHODS
        attributes: dict[str, str] = {
            "http.request.method": method if known else "_OTHER",
            "url.scheme": scope.get("scheme", "http"),
        }
        if not known:
            attributes["http.request.method_original"] = method
        status = 500  # what the client gets if the app fails before answering

        async def send_status(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        carrier = {
            name.decode("latin-1"): value.decode("latin-1") for name, value in scope["headers"]
        }
        with self._tracer.start_as_current_span(
            attributes["http.request.method"] if known else "HTTP",
            context=propagate.extract(carrier),
            kind=trace.SpanKind.SERVER,
            attributes=attributes,
            record_exception=False,  # a traceback could quote a request's content
            set_status_on_exception=False,
        ) as span:
            try:
                await self.app(scope, receive, send_status)
            finally:
                route = scope.get("route")
                path = getattr(route, "path", None)
                if isinstance(path, str):
                    template = route_template(path)
                    span.set_attribute("http.route", template)
                    span.update_name(f"{method if known else 'HTTP'} {template}")
                span.set_attribute("http.response.status_code", status)
                if status >= 500:
                    span.set_attribute("error.type", str(status))
                    span.set_status(trace.Status(trace.StatusCode.ERROR))
