"""The spans and instruments of a prepare, beside the orchestration that owns them.

Every span of a prepare is opened when its work starts and closed with the outcome the
caller gets: the root by the runtime, the rounds by the coordinator, each search by its
round, and ``satchel.context.build`` when the first fit starts, closed once the digest
(if any) has decided the pack. The metrics are recorded once the pack is final too, so a
digest that keeps nothing is an empty prepare on every span and every measurement.

The instruments are satchel's own (the GenAI memory conventions define none); with no
``MeterProvider`` given and none installed they are off and each method returns at its
first line. docs/telemetry.md lists every span, attribute and metric.
"""

from __future__ import annotations

import contextlib
import time
from typing import TYPE_CHECKING, Final

from opentelemetry import metrics, trace

from ..vocabulary import InvalidRequestError, StoreError, error_type, satchel_version

if TYPE_CHECKING:
    from collections.abc import Sequence
    from contextlib import AbstractContextManager

    from opentelemetry.metrics import Histogram, Meter, MeterProvider
    from opentelemetry.trace import Span, Tracer
    from opentelemetry.util.types import AttributeValue

    from ..builder import BuildResult
    from ..vocabulary import PreparedContext

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


def check_meter_provider(provider: object, field: str = "meter_provider") -> None:
    """Refuse anything but an OpenTelemetry ``MeterProvider`` or None, naming ``field``.

    Raises:
        InvalidRequestError: ``provider`` is neither.
    """
    if provider is not None and not isinstance(provider, metrics.MeterProvider):
        raise InvalidRequestError(f"{field} must be an opentelemetry MeterProvider or None")


class PrepareMetrics:
    """The instruments of one runtime's prepares, from ``provider`` (else the global one).

    Every measurement carries only low-cardinality attributes: a status, an assessment,
    an expansion action, a drop cause, an error type. Off (``enabled`` False) when no
    provider is given and none is installed: then each method returns at its first line.
    """

    def __init__(self, provider: MeterProvider | None) -> None:
        none_installed = _none_installed(metrics.get_meter_provider())
        self.enabled = not (provider is None and none_installed)
        meter: Meter = (
            metrics.get_meter("satchel", satchel_version(), meter_provider=provider)
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

    def built(self, build: BuildResult, rounds: int, assessment: str) -> None:
        """The pack is final (``build``, the digest's if any) after ``rounds`` rounds with
        the gate's ``assessment``: an empty one counts as an abstention, and what the
        fit left out is counted by cause."""
        if not self.enabled:
            return
        self._rounds.record(rounds)
        if not build.delivered_count:
            self._abstentions.add(1, {"satchel.recall.assessment": assessment})
        omissions = build.omissions
        dropped = (
            ("below-min-bytes", omissions.dropped_below_min_bytes),
            ("no-fitting-truncation", omissions.dropped_no_fitting_truncation),
        )
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


def _none_installed(provider: MeterProvider) -> bool:
    """Whether the global ``provider`` is one the API itself made: its stand-in before a
    host installs one, or its no-op provider. Either measures nothing; any SDK's
    provider lives outside the API's package."""
    module = type(provider).__module__
    return module == metrics.__name__ or module.startswith(f"{metrics.__name__}.")


def current(span: Span) -> AbstractContextManager[object]:
    """A ``with`` block in which ``span`` (started, not ended) is the current span, so
    the store's spans are its children; an exception leaving it is recorded on it. A
    span of the null tracer needs no context."""
    if not isinstance(span, trace.Span):
        return contextlib.nullcontext()
    return trace.use_span(span, record_exception=True, set_status_on_exception=True)


class BuildSpan:
    """The ``satchel.context.build`` span of one prepare: started when its first fit
    starts (:meth:`started`), ended with the pack the caller gets (:meth:`ended`) or the
    error the prepare raises (:meth:`failed`)."""

    __slots__ = ("_span", "_tracer")

    def __init__(self, tracer: Tracer) -> None:
        self._tracer = tracer
        self._span: Span | None = None

    def started(self) -> None:
        """A fit starts: the first one opens the span (a child of the current span)."""
        if self._span is None:
            self._span = self._tracer.start_span("satchel.context.build")

    def ended(self, build: BuildResult, rounds: int, reason: str, joined: int) -> None:
        """The pack is final: ``build`` is what the caller gets."""
        span = self._span or self._tracer.start_span("satchel.context.build")
        omissions = build.omissions
        attributes: dict[str, AttributeValue] = {
            "satchel.recall.rounds": rounds,
            "satchel.recall.assessment": reason,
            "satchel.recall.truncated_items": omissions.truncated_items,
            "satchel.recall.neighbours": joined,
            "satchel.recall.dropped_items": omissions.dropped_items,
            "satchel.context.status": "ready" if build.delivered_count else "empty",
            "satchel.context.bytes": build.content_bytes,
        }
        for key, value in attributes.items():
            span.set_attribute(key, value)
        span.end()
        self._span = None

    def failed(self, error: BaseException) -> None:
        """The prepare raises ``error`` after a fit started: the span ends with it."""
        if self._span is None:
            return
        if isinstance(error, Exception):
            self._span.set_attribute("error.type", error_type(error))
        if isinstance(self._span, trace.Span):
            self._span.set_status(trace.Status(trace.StatusCode.ERROR, type(error).__name__))
        self._span.end()
        self._span = None
