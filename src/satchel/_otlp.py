"""OpenTelemetry export for satchel's own processes (the ``otel`` extra).

satchel the library uses only the OpenTelemetry API: a host brings its SDK and passes a
``TracerProvider`` (or installs a global one). satchel's own processes (``satchel prepare``,
``satchel ingest``, ``satchel serve``, ``satchel mcp``) are their own host: they call
:func:`tracer_provider_from_env`, which follows the standard SDK environment variables,
so spans leave over OTLP/HTTP (protobuf) exactly when an operator asks for it.

It sits above the public facade, beside the workload files, and imports nothing of
satchel: the SDK and the exporter are imported only when export is asked for.
"""

from __future__ import annotations

import contextlib
import os
import sys
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Final, TextIO

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping

    from opentelemetry.trace import TracerProvider

#: Any of these set (non-empty) asks for OTLP export.
ENDPOINT_VARIABLES: Final = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")
#: The service name when neither ``OTEL_SERVICE_NAME`` nor ``OTEL_RESOURCE_ATTRIBUTES``
#: names one.
DEFAULT_SERVICE_NAME: Final = "satchel"
#: The one exporter protocol satchel ships (the ``otel`` extra's exporter).
PROTOCOL: Final = "http/protobuf"
_INSTALL_HINT: Final = "pip install 'satchel[otel]'"


@contextlib.contextmanager
def tracer_provider_from_env(*, stderr: TextIO | None = None) -> Iterator[TracerProvider | None]:
    """An SDK ``TracerProvider`` exporting over OTLP/HTTP when the environment asks for
    it, else None; flushed and shut down when the block exits.

    Export is asked for by ``OTEL_EXPORTER_OTLP_ENDPOINT`` or
    ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` (non-empty), or by ``otlp`` in
    ``OTEL_TRACES_EXPORTER``. It is off when ``OTEL_TRACES_EXPORTER`` lists exporters
    without ``otlp`` (``none``, for instance) and when ``OTEL_SDK_DISABLED=true``. When it
    is asked for, the provider holds one ``BatchSpanProcessor(OTLPSpanExporter())``; the
    exporter itself reads the endpoint, ``OTEL_EXPORTER_OTLP_HEADERS``, the timeout, the
    compression and TLS settings (the ``*_TRACES_*`` variants first), the provider the
    sampler (``OTEL_TRACES_SAMPLER``) and the processor its ``OTEL_BSP_*`` settings. The
    resource comes from ``OTEL_RESOURCE_ATTRIBUTES`` and ``OTEL_SERVICE_NAME`` (service
    name ``satchel`` when neither names one), with ``service.version`` the installed satchel's.

    Without those variables nothing is imported or configured, and the block gets None.
    With them but without the SDK or the exporter installed, or with a protocol other
    than ``http/protobuf``, one line on ``stderr`` says why: the block gets None (no
    export), or for another protocol a provider exporting over ``http/protobuf`` anyway.

    The provider is never installed globally: pass it to whatever opens the store and the
    runtime. A command of satchel's own runs like this::

        with tracer_provider_from_env() as provider:
            async with satchel.open_runtime(
                store=await satchel.stores.open_store(url, tracer_provider=provider),
                tracer_provider=provider,
            ) as runtime:
                ...

    (``satchel.SqliteStore.open(path, tracer_provider=provider)`` for a file; a runtime
    opened on a path passes it to the store itself). Keep the ``with`` block around the
    whole run (``anyio.run(...)`` included), so that the spans of its last calls are
    exported before the process exits; the exit waits at most the exporter's timeout
    (``OTEL_EXPORTER_OTLP_TIMEOUT``, 10 s) per batch left.

    Args:
        stderr: where the one-line warnings go (``sys.stderr`` when None).
    """
    environ = os.environ
    if not _export_requested(environ, stderr):
        yield None
        return
    try:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import (
            SERVICE_NAME,
            SERVICE_VERSION,
            OTELResourceDetector,
            Resource,
        )
        from opentelemetry.sdk.trace import TracerProvider as SdkTracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError as exc:
        _warn(
            stderr,
            f"OTLP export is configured but {exc.name or 'the OpenTelemetry SDK'} is not"
            f" installed: no spans are exported ({_INSTALL_HINT})",
        )
        yield None
        return
    protocol = _protocol(environ)
    if protocol != PROTOCOL:
        _warn(stderr, f"OTLP protocol {protocol!r} is not supported; exporting over {PROTOCOL}")
    configured = OTELResourceDetector().detect().attributes  # the environment's resource
    defaults = {SERVICE_NAME: DEFAULT_SERVICE_NAME, SERVICE_VERSION: _satchel_version()}
    provider = SdkTracerProvider(
        resource=Resource.create({**defaults, **configured}),
        shutdown_on_exit=False,  # shut down below, once, when the block exits
    )
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    try:
        yield provider
    finally:
        provider.shutdown()  # exports every span still queued, then closes the exporter


def _export_requested(environ: Mapping[str, str], stderr: TextIO | None) -> bool:
    """Whether the environment asks for OTLP trace export (see the context manager)."""
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    listed = environ.get("OTEL_TRACES_EXPORTER", "")
    exporters = {name.strip().lower() for name in listed.split(",") if name.strip()}
    if exporters:
        unsupported = sorted(exporters - {"otlp", "none"})
        if unsupported:
            _warn(
                stderr,
                f"OTEL_TRACES_EXPORTER={listed.strip()}: only otlp (over {PROTOCOL}) is"
                f" supported; {', '.join(unsupported)} ignored",
            )
        return "otlp" in exporters
    return any(environ.get(name, "").strip() for name in ENDPOINT_VARIABLES)


def _protocol(environ: Mapping[str, str]) -> str:
    for name in ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"):
        value = environ.get(name, "").strip().lower()
        if value:
            return value
    return PROTOCOL


def _warn(stderr: TextIO | None, message: str) -> None:
    (stderr or sys.stderr).write(f"satchel: warning: {message}\n")


def _satchel_version() -> str:
    try:
        return version("satchel")
    except PackageNotFoundError:  # running from a source tree
        return "0"
