"""The tracer satchel reports spans to (OpenTelemetry API only: the SDK, if any, is the
host's).

Stores open DB spans with it and the orchestration the spans of a prepare, so it lives
in the vocabulary; the pure layers (recall policy, Builder) never trace. The
orchestration owns the spans of a prepare and its metrics
(``satchel.orchestration._telemetry``). docs/telemetry.md lists every span, attribute
and metric, and the conventions they follow.

When no provider is given and the host has installed none (the API's proxy provider is
still in place when the runtime opens), satchel uses a null tracer: an unobserved span
costs ~14 µs here, about 6% of a small prepare. Nothing here ever puts a query, content,
a session id or a record id on a span; scope names only where the host opts in
(``open_runtime(trace_identifiers=True)``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from opentelemetry import trace

from ._errors import InvalidRequestError, SatchelError

if TYPE_CHECKING:
    from opentelemetry.trace import Tracer, TracerProvider


def satchel_version() -> str:
    """satchel's installed version, as its tracer and meter report it."""
    from importlib import metadata  # on first use: importing it costs ~15 ms

    try:
        return metadata.version("satchel")
    except metadata.PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "0"


class _NullSpan:
    """A span nobody observes: entering, leaving and attributes cost a method call."""

    def __enter__(self) -> _NullSpan:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def set_attribute(self, key: str, value: object) -> None:
        return None

    def end(self) -> None:
        return None

    def is_recording(self) -> bool:
        return False


class _NullTracer:
    _span = _NullSpan()

    def start_as_current_span(self, name: str, *args: Any, **kwargs: Any) -> _NullSpan:
        return self._span

    def start_span(self, name: str, *args: Any, **kwargs: Any) -> _NullSpan:
        return self._span


def check_provider(provider: object, field: str = "tracer_provider") -> None:
    """Refuse anything but an OpenTelemetry ``TracerProvider`` or None, naming ``field``.

    Raises:
        InvalidRequestError: ``provider`` is neither.
    """
    if provider is not None and not isinstance(provider, trace.TracerProvider):
        raise InvalidRequestError(f"{field} must be an opentelemetry TracerProvider or None")


def tracer(provider: TracerProvider | None) -> Tracer:
    """satchel's tracer from ``provider``, else from the global provider if one is set."""
    if provider is None and isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider):
        return cast("Tracer", _NullTracer())
    return trace.get_tracer("satchel", satchel_version(), tracer_provider=provider)


def error_type(error: BaseException) -> str:
    """``error.type`` for ``error``: its class's public name (``satchel.StoreError``,
    ``TimeoutError``), never its message, which could quote a request."""
    kind = type(error)
    if isinstance(error, SatchelError):
        return f"satchel.{kind.__qualname__}"
    module = kind.__module__
    return kind.__qualname__ if module == "builtins" else f"{module}.{kind.__qualname__}"
