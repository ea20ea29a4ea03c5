"""OpenTelemetry export for satchel's own processes (the ``otel`` extra).

satchel the library uses only the OpenTelemetry API: a host brings its SDK and passes a
``TracerProvider`` and a ``MeterProvider`` (or installs global ones). satchel's own
processes (``satchel prepare``, ``satchel ingest``, ``satchel serve``, ``satchel mcp``)
are their own host: they call :func:`telemetry_from_env` (or, for spans only,
:func:`tracer_provider_from_env`), which follows the standard SDK environment variables,
so spans and metrics leave over OTLP/HTTP (protobuf) exactly when an operator asks for it.

It sits above the public facade, beside the workload files, and imports nothing of
satchel: the SDK and the exporters are imported (with ``_exporting``, which holds the
providers and their bounded exit) only when export is asked for.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
from typing import TYPE_CHECKING, Final, TextIO

import attrs

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping

    from opentelemetry.metrics import MeterProvider
    from opentelemetry.trace import TracerProvider

#: Any of these set (non-empty) asks for OTLP export of spans; of metrics.
ENDPOINT_VARIABLES: Final = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")
METRICS_ENDPOINT_VARIABLES: Final = (
    "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
    "OTEL_EXPORTER_OTLP_ENDPOINT",
)
#: ``true`` (or ``1``) lets spans carry scope names (``open_runtime(trace_identifiers=True)``).
IDENTIFIERS_VARIABLE: Final = "SATCHEL_TRACE_IDENTIFIERS"
#: The service name when neither ``OTEL_SERVICE_NAME`` nor ``OTEL_RESOURCE_ATTRIBUTES``
#: names one.
DEFAULT_SERVICE_NAME: Final = "satchel"
#: The one exporter protocol satchel ships (the ``otel`` extra's exporter).
PROTOCOL: Final = "http/protobuf"
_INSTALL_HINT: Final = "pip install 'satchel[otel]'"
#: What each signal's export needs beyond the API (checked at each call, so a missing
#: module is reported even after another process part imported the rest).
_NEEDED: Final = {
    "traces": (
        "opentelemetry.sdk.resources",
        "opentelemetry.sdk.trace",
        "opentelemetry.sdk.trace.export",
        "opentelemetry.exporter.otlp.proto.http.trace_exporter",
    ),
    "metrics": (
        "opentelemetry.sdk.resources",
        "opentelemetry.sdk.metrics",
        "opentelemetry.sdk.metrics.export",
        "opentelemetry.exporter.otlp.proto.http.metric_exporter",
    ),
}


@attrs.frozen
class Telemetry:
    """What a command of satchel's passes to the store and the runtime it opens.

    The providers are None when the environment asks for no export of that signal; they
    are never installed globally.
    """

    tracer_provider: TracerProvider | None = None
    meter_provider: MeterProvider | None = None
    #: ``SATCHEL_TRACE_IDENTIFIERS``: whether spans may carry scope names.
    trace_identifiers: bool = False


#: No export and no identifiers on spans: what a command gets without the variables.
NO_TELEMETRY: Final = Telemetry()


@contextlib.contextmanager
def telemetry_from_env(
    *, stderr: TextIO | None = None, metrics: bool = True
) -> Iterator[Telemetry]:
    """SDK providers exporting spans and metrics over OTLP/HTTP as the environment asks,
    flushed and shut down when the block exits, waiting at most ``EXIT_WAIT`` (1 s).

    Span export is asked for by ``OTEL_EXPORTER_OTLP_ENDPOINT`` or
    ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` (non-empty), or by ``otlp`` in
    ``OTEL_TRACES_EXPORTER``; metric export by ``OTEL_EXPORTER_OTLP_ENDPOINT`` or
    ``OTEL_EXPORTER_OTLP_METRICS_ENDPOINT``, or by ``otlp`` in ``OTEL_METRICS_EXPORTER``.
    Either is off when its ``OTEL_*_EXPORTER`` lists exporters without ``otlp``
    (``none``, for instance), and both when ``OTEL_SDK_DISABLED=true``. The tracer
    provider holds one ``BatchSpanProcessor(OTLPSpanExporter())``, the meter provider one
    ``PeriodicExportingMetricReader(OTLPMetricExporter())``; the exporters read the
    endpoint, ``OTEL_EXPORTER_OTLP_HEADERS``, the timeout, the compression, TLS and (for
    metrics) the temporality (the ``*_TRACES_*`` and ``*_METRICS_*`` variants first), the
    processor and the reader their ``OTEL_BSP_*`` and ``OTEL_METRIC_EXPORT_*`` settings.
    The resource comes from ``OTEL_RESOURCE_ATTRIBUTES`` and ``OTEL_SERVICE_NAME``
    (service name ``satchel`` when neither names one), with ``service.version`` the
    installed satchel's. ``SATCHEL_TRACE_IDENTIFIERS=true`` sets ``trace_identifiers``.

    Without those variables nothing is imported or configured, and the providers are
    None. With them but without the SDK or an exporter installed, or with a protocol
    other than ``http/protobuf``, one line on ``stderr`` says why: no export, or for
    another protocol an export over ``http/protobuf`` anyway. When the collector cannot
    be reached, one line says so, once; the exporters' own retry warnings are silenced.

    A command of satchel's own runs like this::

        with telemetry_from_env() as telemetry:
            async with satchel.open_runtime(
                store=await satchel.stores.open_store(
                    url, tracer_provider=telemetry.tracer_provider
                ),
                tracer_provider=telemetry.tracer_provider,
                meter_provider=telemetry.meter_provider,
                trace_identifiers=telemetry.trace_identifiers,
            ) as runtime:
                ...

    Keep the ``with`` block around the whole run (``anyio.run(...)`` included), so that
    what its last calls recorded is exported before the process exits; the exit waits at
    most ``EXIT_WAIT`` for it, collector down or not.

    Args:
        stderr: where the one-line warnings go (``sys.stderr`` when None).
        metrics: False for a command that measures nothing (spans only).
    """
    environ = os.environ
    identifiers = environ.get(IDENTIFIERS_VARIABLE, "").strip().lower() in ("true", "1")
    signals = [
        signal
        for signal in ("traces", "metrics")
        if (signal == "traces" or metrics) and _export_requested(environ, signal, stderr)
    ]
    if not signals:
        yield attrs.evolve(NO_TELEMETRY, trace_identifiers=identifiers)
        return
    try:
        for module in {name for signal in signals for name in _NEEDED[signal]}:
            importlib.import_module(module)
        from . import _exporting
    except ImportError as exc:
        _warn(
            stderr,
            f"OTLP export is configured but {exc.name or 'the OpenTelemetry SDK'} is not"
            f" installed: nothing is exported ({_INSTALL_HINT})",
        )
        yield attrs.evolve(NO_TELEMETRY, trace_identifiers=identifiers)
        return
    for protocol in sorted({_protocol(environ, signal) for signal in signals} - {PROTOCOL}):
        _warn(stderr, f"OTLP protocol {protocol!r} is not supported; exporting over {PROTOCOL}")
    with _exporting.exporting(signals, DEFAULT_SERVICE_NAME, stderr or sys.stderr, environ) as (
        tracer_provider,
        meter_provider,
    ):
        yield Telemetry(tracer_provider, meter_provider, identifiers)


@contextlib.contextmanager
def tracer_provider_from_env(*, stderr: TextIO | None = None) -> Iterator[TracerProvider | None]:
    """:func:`telemetry_from_env` for a command that exports spans only: the tracer
    provider, or None."""
    with telemetry_from_env(stderr=stderr, metrics=False) as telemetry:
        yield telemetry.tracer_provider


def _export_requested(environ: Mapping[str, str], signal: str, stderr: TextIO | None) -> bool:
    """Whether the environment asks for OTLP export of ``signal`` (``traces`` or
    ``metrics``; see :func:`telemetry_from_env`)."""
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    variable = f"OTEL_{signal.upper()}_EXPORTER"
    listed = environ.get(variable, "")
    exporters = {name.strip().lower() for name in listed.split(",") if name.strip()}
    if exporters:
        unsupported = sorted(exporters - {"otlp", "none"})
        if unsupported:
            _warn(
                stderr,
                f"{variable}={listed.strip()}: only otlp (over {PROTOCOL}) is"
                f" supported; {', '.join(unsupported)} ignored",
            )
        return "otlp" in exporters
    endpoints = ENDPOINT_VARIABLES if signal == "traces" else METRICS_ENDPOINT_VARIABLES
    return any(environ.get(name, "").strip() for name in endpoints)


def _protocol(environ: Mapping[str, str], signal: str) -> str:
    for name in (f"OTEL_EXPORTER_OTLP_{signal.upper()}_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"):
        value = environ.get(name, "").strip().lower()
        if value:
            return value
    return PROTOCOL


def _warn(stderr: TextIO | None, message: str) -> None:
    (stderr or sys.stderr).write(f"satchel: warning: {message}\n")
