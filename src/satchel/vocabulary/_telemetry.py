"""The tracer and the instruments satchel reports to (OpenTelemetry API only: the SDK, if
any, is the host's).

Stores open DB spans with the tracer and the orchestration the spans of a prepare, so it
lives in the vocabulary; the pure layers (recall policy, Builder) never trace or measure.
docs/telemetry.md lists every span, attribute and metric, and the conventions they follow.

When no provider is given and the host has installed none (the API's proxy provider is
still in place when the runtime opens), satchel uses a null tracer and switches its
instruments off: an unobserved span costs ~14 µs here, about 6% of a small prepare, and
an unobserved measurement returns at its first line. Nothing here ever puts a query,
content, a session id or a record id on a span or a measurement; scope names only where
the host opts in (``open_runtime(trace_identifiers=True)``).
"""

from __future__ import annotations

import time
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any, Final, cast

from opentelemetry import metrics, trace
from opentelemetry.metrics._internal import _ProxyMeterProvider  # the API's "none installed"

from ._errors import InvalidRequestError, SatchelError, StoreError

if TYPE_CHECKING:
    from collections.abc import Sequence

    from opentelemetry.metrics import Histogram, Meter, MeterProvider
    from opentelemetry.trace import Span, Tracer, TracerProvider
    from opentelemetry.util.types import AttributeValue

    from ._requests import PreparedContext

#: The instruments (docs/telemetry.md gives each one's attributes). The GenAI memory
#: conventions define no metric, so all are satchel's own.
PREPARE_DURATION: Final = "satchel.prepare.duration"
RECALL_ROUNDS: Final = "satchel.recall.rounds"
RECALL_EXPANSIONS: Final = "satchel.recall.expansions"
PREPARE_ABSTENTIONS: Final = "satchel.prepare.abstentions"
CONTEXT_SIZE: Final = "satchel.context.size"
DROPPED_ITEMS: Final = "satchel.context.dropped_items"
STORE_ERRORS: Final = "satchel.store.errors"
#: Bucket boundaries for the histograms (the SDK's defaults suit milliseconds, not these).
_SECONDS: Final = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
_BYTES: Final = (0, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072, 262144)
_ROUNDS: Final = (1, 2, 3)


def _version() -> str:
    try:
        return version("satchel")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "0"


class _NullSpan:
    """A span nobody observes: entering, leaving and attributes cost a method call."""

    def __enter__(self) -> _NullSpan:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def set_attribute(self, key: str, value: object) -> None:
        return None


class _NullTracer:
    _span = _NullSpan()

    def start_as_current_span(self, name: str, *args: Any, **kwargs: Any) -> _NullSpan:
        return self._span


def check_provider(provider: object, field: str = "tracer_provider") -> None:
    """Refuse anything but an OpenTelemetry ``TracerProvider`` or None, naming ``field``.

    Raises:
        InvalidRequestError: ``provider`` is neither.
    """
    if provider is not None and not isinstance(provider, trace.TracerProvider):
        raise InvalidRequestError(f"{field} must be an opentelemetry TracerProvider or None")


def check_meter_provider(provider: object, field: str = "meter_provider") -> None:
    """Refuse anything but an OpenTelemetry ``MeterProvider`` or None, naming ``field``.

    Raises:
        InvalidRequestError: ``provider`` is neither.
    """
    if provider is not None and not isinstance(provider, metrics.MeterProvider):
        raise InvalidRequestError(f"{field} must be an opentelemetry MeterProvider or None")


def tracer(provider: TracerProvider | None) -> Tracer:
    """satchel's tracer from ``provider``, else from the global provider if one is set."""
    if provider is None and isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider):
        return cast("Tracer", _NullTracer())
    return trace.get_tracer("satchel", _version(), tracer_provider=provider)


def error_type(error: BaseException) -> str:
    """``error.type`` for ``error``: its class's public name (``satchel.StoreError``,
    ``TimeoutError``), never its message, which could quote a request."""
    kind = type(error)
    if isinstance(error, SatchelError):
        return f"satchel.{kind.__qualname__}"
    module = kind.__module__
    return kind.__qualname__ if module == "builtins" else f"{module}.{kind.__qualname__}"


class PrepareMetrics:
    """The instruments of one runtime's prepares, from ``provider`` (else the global one).

    Every measurement carries only low-cardinality attributes: a status, an assessment,
    an expansion action, a drop cause, an error type. Off (``enabled`` False) when no
    provider is given and none is installed: then each method returns at its first line.
    """

    def __init__(self, provider: MeterProvider | None) -> None:
        none_installed = isinstance(metrics.get_meter_provider(), _ProxyMeterProvider)
        self.enabled = not (provider is None and none_installed)
        meter: Meter = (
            metrics.get_meter("satchel", _version(), meter_provider=provider)
            if self.enabled
            else metrics.NoOpMeter("satchel")
        )
        self._duration = _histogram(
            meter,
            PREPARE_DURATION,
            "s",
            "Duration of a prepare, from a valid request to its pack.",
            _SECONDS,
        )
        self._rounds = _histogram(
            meter,
            RECALL_ROUNDS,
            "{round}",
            "Recall rounds a prepare ran (round 0 and expansions).",
            _ROUNDS,
        )
        self._size = _histogram(
            meter, CONTEXT_SIZE, "By", "Content bytes of the pack a prepare delivered.", _BYTES
        )
        self._expansions = meter.create_counter(
            RECALL_EXPANSIONS,
            unit="{round}",
            description="Expansion rounds run, by action and outcome.",
        )
        self._abstentions = meter.create_counter(
            PREPARE_ABSTENTIONS,
            unit="{prepare}",
            description="Prepares whose pack is empty, by assessment.",
        )
        self._dropped = meter.create_counter(
            DROPPED_ITEMS, unit="{item}", description="Fitted-out candidates, by cause."
        )
        self._store_errors = meter.create_counter(
            STORE_ERRORS, unit="{error}", description="Store calls of a prepare that failed."
        )

    def prepared(self, seconds: float, context: PreparedContext) -> None:
        """A prepare returned ``context`` after ``seconds``."""
        if not self.enabled:
            return
        self._duration.record(seconds, {"satchel.context.status": context.status})
        self._size.record(context.content_bytes)

    def failed(self, seconds: float, error: Exception) -> None:
        """A prepare raised ``error`` after ``seconds``."""
        if self.enabled:
            self._duration.record(seconds, {"error.type": error_type(error)})

    def recalled(
        self, rounds: int, assessment: str, *, empty: bool, dropped: Sequence[tuple[str, int]]
    ) -> None:
        """Recall ended after ``rounds`` rounds with the gate's ``assessment``; ``empty``
        when nothing was fitted; ``dropped`` counts what the fit left out, per cause."""
        if not self.enabled:
            return
        self._rounds.record(rounds)
        if empty:
            self._abstentions.add(1, {"satchel.recall.assessment": assessment})
        for cause, count in dropped:
            if count:
                self._dropped.add(count, {"satchel.drop.cause": cause})

    def expanded(self, action: str, *, committed: bool) -> None:
        """An expansion round of ``action`` ended, ``committed`` or discarded."""
        if not self.enabled:
            return
        attributes: dict[str, AttributeValue] = {
            "satchel.recall.round.action": action,
            "satchel.recall.round.committed": committed,
        }
        self._expansions.add(1, attributes)

    def timed(self) -> Timed:
        """A ``with`` block around one prepare: :meth:`Timed.done` records its duration
        and pack; an exception leaving the block records the failure."""
        return Timed(self)

    def failures(self, span: Span | None = None) -> Failures:
        """A ``with`` block that, for an exception leaving it, sets ``error.type`` on
        ``span`` and counts a store's error; the exception goes on."""
        return Failures(self, span)

    def store_failed(self, error: StoreError) -> None:
        if self.enabled:
            self._store_errors.add(1, {"error.type": error_type(error)})


class Timed:
    """See :meth:`PrepareMetrics.timed`."""

    __slots__ = ("_metrics", "_started")

    def __init__(self, metrics: PrepareMetrics) -> None:
        self._metrics = metrics
        self._started = 0.0

    def __enter__(self) -> Timed:
        if self._metrics.enabled:
            self._started = time.perf_counter()
        return self

    def done(self, context: PreparedContext) -> None:
        """The prepare returns ``context`` now."""
        if self._metrics.enabled:
            self._metrics.prepared(time.perf_counter() - self._started, context)

    def __exit__(self, kind: object, error: BaseException | None, traceback: object) -> None:
        if isinstance(error, Exception) and self._metrics.enabled:
            self._metrics.failed(time.perf_counter() - self._started, error)


class Failures:
    """See :meth:`PrepareMetrics.failures` (a plain class: it wraps every search)."""

    __slots__ = ("_metrics", "_span")

    def __init__(self, metrics: PrepareMetrics, span: Span | None) -> None:
        self._metrics = metrics
        self._span = span

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: object, error: BaseException | None, traceback: object) -> None:
        if not isinstance(error, Exception):  # none, or a cancellation: no failure
            return
        if self._span is not None:
            self._span.set_attribute("error.type", error_type(error))
        if isinstance(error, StoreError):
            self._metrics.store_failed(error)


def _histogram(
    meter: Meter, name: str, unit: str, description: str, bounds: Sequence[float]
) -> Histogram:
    try:
        return meter.create_histogram(
            name, unit=unit, description=description, explicit_bucket_boundaries_advisory=bounds
        )
    except TypeError:  # opentelemetry-api < 1.30 takes no bucket advice
        return meter.create_histogram(name, unit=unit, description=description)
