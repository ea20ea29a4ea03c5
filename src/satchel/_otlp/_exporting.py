"""The SDK side of satchel's OTLP export: the providers, their exporters watched for
failures, and an exit that waits at most ``EXIT_WAIT``.

Imported only when export is asked for: it imports the SDK and the OTLP exporters. An
OTLP exporter retries an unreachable collector for up to its timeout (10 s), logging a
warning per retry, and a provider's shutdown waits for it: a one-shot command would take
seconds longer and print a warning per retry. Here the exporters' loggers are silenced,
a failed export is said once in one line, and the exit waits for the providers' shutdown
at most ``EXIT_WAIT``, then aborts the exporters' retries. Before an export the
collector's address is probed with one TCP connection (at most every ``PROBE_EVERY``
seconds): a collector that is down fails the export at once, without the exporter's
retries, so a long-running service says so at its first export and a one-shot command
pays no retry wait at its exit.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import threading
import time
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any, Final, TextIO
from urllib.parse import urlsplit

from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import (
    MetricExporter,
    MetricExportResult,
    PeriodicExportingMetricReader,
)
from opentelemetry.sdk.resources import (
    SERVICE_NAME,
    SERVICE_VERSION,
    OTELResourceDetector,
    Resource,
)
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping, Sequence

    from opentelemetry.sdk.metrics.export import MetricsData
    from opentelemetry.sdk.trace import ReadableSpan

#: Seconds the exit waits for what is left to be exported.
EXIT_WAIT: Final = 1.0
#: Seconds it waits more once the exporters' retries are aborted (they return at once).
_AFTER_ABORT: Final = 0.25
#: The loggers of every OTLP exporter and transport (their children inherit the level).
_EXPORTER_LOGGERS: Final = "opentelemetry.exporter"
#: Where an OTLP/HTTP exporter sends when no endpoint variable names another place.
_DEFAULT_COLLECTOR: Final = "localhost:4318"
#: Seconds a probe of the collector's address may take, and how long its answer holds.
PROBE_TIMEOUT: Final = 0.5
PROBE_EVERY: Final = 5.0


class Delivery:
    """Says once, in one line on ``stderr``, that the collector at ``collector`` could
    not be reached (whichever exporter or thread finds out first)."""

    def __init__(
        self, stderr: TextIO, collector: str, address: tuple[str, int] | None = None
    ) -> None:
        self._stderr = stderr
        self._collector = collector
        self._address = address
        self._lock = threading.Lock()
        self._probed: tuple[float, bool] | None = None
        self.said = False

    def reachable(self) -> bool:
        """Whether the collector's address accepts a TCP connection (probed at most every
        ``PROBE_EVERY`` seconds; True when there is no address to probe)."""
        if self._address is None:
            return True
        now = time.monotonic()
        with self._lock:
            if self._probed is not None and now - self._probed[0] < PROBE_EVERY:
                return self._probed[1]
        try:
            socket.create_connection(self._address, timeout=PROBE_TIMEOUT).close()
            answer = True
        except OSError:
            answer = False
        with self._lock:
            self._probed = (now, answer)
        return answer

    def failed(self) -> None:
        with self._lock:
            if self.said:
                return
            self.said = True
            self._stderr.write(
                f"satchel: warning: the OTLP collector at {self._collector} could not be"
                " reached: this run's telemetry was not exported\n"
            )
            self._stderr.flush()


class _Watch:
    """One exporter's watch: reports a failed export, and aborts its retries once."""

    def __init__(self, shutdown: Callable[[], object], delivery: Delivery) -> None:
        self._shutdown = shutdown
        self._delivery = delivery
        self._lock = threading.Lock()
        self._aborted = False

    def attempt(self, export: Callable[[], bool]) -> bool:
        """``export()``'s success; a failure (or a raise) is reported."""
        try:
            done = not self._aborted and self._delivery.reachable() and export()
        except Exception:  # an exporter's bug must not reach the SDK's worker thread
            done = False
        if not done:
            self._delivery.failed()
        return done

    def abort(self) -> None:
        """Shut the exporter down (which ends a retry's wait at once), the first time."""
        with self._lock:
            if self._aborted:
                return
            self._aborted = True
        self._shutdown()


class WatchedSpans(SpanExporter):
    """An OTLP span exporter whose failures are reported once and whose retries the exit
    can abort."""

    def __init__(self, inner: SpanExporter, delivery: Delivery) -> None:
        self._inner = inner
        self._watch = _Watch(inner.shutdown, delivery)

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        done = self._watch.attempt(lambda: self._inner.export(spans) is SpanExportResult.SUCCESS)
        return SpanExportResult.SUCCESS if done else SpanExportResult.FAILURE

    def abort(self) -> None:
        self._watch.abort()

    def shutdown(self) -> None:
        self._watch.abort()

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return True  # nothing is buffered here or in the OTLP exporter


class WatchedMetrics(MetricExporter):
    """:class:`WatchedSpans` for an OTLP metric exporter (its temporality and
    aggregation preferences are the inner exporter's)."""

    def __init__(self, inner: MetricExporter, delivery: Delivery) -> None:
        super().__init__(
            preferred_temporality=inner._preferred_temporality,
            preferred_aggregation=inner._preferred_aggregation,
        )
        self._inner = inner
        self._watch = _Watch(inner.shutdown, delivery)

    def export(
        self, metrics_data: MetricsData, timeout_millis: float = 10_000, **kwargs: Any
    ) -> MetricExportResult:
        def send() -> bool:
            result = self._inner.export(metrics_data, timeout_millis=timeout_millis, **kwargs)
            return result is MetricExportResult.SUCCESS

        done = self._watch.attempt(send)
        return MetricExportResult.SUCCESS if done else MetricExportResult.FAILURE

    def abort(self) -> None:
        self._watch.abort()

    def shutdown(self, timeout_millis: float = 30_000, **kwargs: Any) -> None:
        self._watch.abort()

    def force_flush(self, timeout_millis: float = 10_000) -> bool:
        return True  # nothing is buffered here or in the OTLP exporter


@contextlib.contextmanager
def exporting(
    signals: Sequence[str], service_name: str, stderr: TextIO, environ: Mapping[str, str]
) -> Iterator[tuple[TracerProvider | None, MeterProvider | None]]:
    """A tracer provider (``traces`` in ``signals``) and a meter provider (``metrics``)
    exporting over OTLP/HTTP, shut down when the block exits, waiting at most
    ``EXIT_WAIT``; the exporters' loggers are silent meanwhile."""
    configured = OTELResourceDetector().detect().attributes  # the environment's resource
    defaults = {SERVICE_NAME: service_name, SERVICE_VERSION: _satchel_version()}
    resource = Resource.create({**defaults, **configured})
    delivery = Delivery(stderr, _collector(environ, signals[0]), _address(environ, signals[0]))
    tracer_provider, meter_provider = None, None
    watched: list[WatchedSpans | WatchedMetrics] = []
    if "traces" in signals:
        spans = WatchedSpans(OTLPSpanExporter(), delivery)
        # shut down below, once, when the block exits
        tracer_provider = TracerProvider(resource=resource, shutdown_on_exit=False)
        tracer_provider.add_span_processor(BatchSpanProcessor(spans))
        watched.append(spans)
    if "metrics" in signals:
        measures = WatchedMetrics(OTLPMetricExporter(), delivery)
        reader = PeriodicExportingMetricReader(measures)
        meter_provider = MeterProvider(
            resource=resource, metric_readers=[reader], shutdown_on_exit=False
        )
        watched.append(measures)
    quiet = logging.getLogger(_EXPORTER_LOGGERS)
    level = quiet.level
    quiet.setLevel(logging.CRITICAL + 1)
    try:
        yield tracer_provider, meter_provider
    finally:
        providers = [p for p in (tracer_provider, meter_provider) if p is not None]
        if _close_within(EXIT_WAIT, providers, watched, delivery):
            quiet.setLevel(level)
        # else an aborted export may still log as it unwinds: the exporters stay quiet


def _close_within(
    seconds: float,
    providers: Sequence[TracerProvider | MeterProvider],
    watched: Sequence[WatchedSpans | WatchedMetrics],
    delivery: Delivery,
) -> bool:
    """Shut ``providers`` down (exporting what they hold) on a daemon thread, waiting at
    most ``seconds``; past that, abort the exporters' retries and say the collector could
    not be reached. Whether the shutdown ended."""

    def shut_down() -> None:
        for provider in providers:
            provider.shutdown()

    closer = threading.Thread(target=shut_down, name="satchel-otlp-exit", daemon=True)
    closer.start()
    closer.join(seconds)
    if not closer.is_alive():
        return True
    for exporter in watched:
        exporter.abort()
    delivery.failed()
    closer.join(_AFTER_ABORT)
    return not closer.is_alive()


def _collector(environ: Mapping[str, str], signal: str) -> str:
    """Where ``signal`` is exported, as ``host:port`` (never a URL's credentials)."""
    for name in (f"OTEL_EXPORTER_OTLP_{signal.upper()}_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT"):
        value = environ.get(name, "").strip()
        if value:
            return urlsplit(value).netloc.rpartition("@")[2] or value
    return _DEFAULT_COLLECTOR


def _address(environ: Mapping[str, str], signal: str) -> tuple[str, int] | None:
    """The host and port ``signal`` is exported to, for the reachability probe (None
    when the endpoint names none that can be probed)."""
    for name in (f"OTEL_EXPORTER_OTLP_{signal.upper()}_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT"):
        value = environ.get(name, "").strip()
        if value:
            try:
                parts = urlsplit(value)
                port = parts.port or (443 if parts.scheme == "https" else 80)
            except ValueError:
                return None
            return None if parts.hostname is None else (parts.hostname, port)
    return ("localhost", 4318)


def _satchel_version() -> str:
    try:
        return version("satchel")
    except PackageNotFoundError:  # running from a source tree
        return "0"
