"""satchel's tracer: real spans for a given provider, a null tracer when nobody listens."""

from __future__ import annotations

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from satchel.vocabulary import _telemetry as _tracing


def test_given_provider_records_spans() -> None:
    """With a provider, spans reach its processors with their attributes."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    with _tracing.tracer(provider).start_as_current_span("x", attributes={"k": 1}) as span:
        span.set_attribute("j", 2)
    (finished,) = exporter.get_finished_spans()
    assert (finished.name, dict(finished.attributes or {})) == ("x", {"k": 1, "j": 2})


def test_no_provider_anywhere_gives_the_null_tracer() -> None:
    """Without a provider and with no global SDK installed, spans are free no-ops."""
    tracer = _tracing.tracer(None)
    assert isinstance(tracer, _tracing._NullTracer)
    with tracer.start_as_current_span("x", attributes={"k": 1}) as span:
        span.set_attribute("j", 2)
