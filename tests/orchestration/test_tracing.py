"""satchel's tracer: real spans for a given provider, a null tracer when nobody listens,
and scope names on spans only when the host opts in."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

import anyio
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from satchel.vocabulary import _telemetry as _tracing
from tests._orchestration import request, run, seed

if TYPE_CHECKING:
    from pathlib import Path

    from opentelemetry.sdk.trace import ReadableSpan


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


#: A scope name that is somebody's identifier.
PERSON = "user:alice@example.com"


def spans_of_a_prepare(tmp_path: Path, **options: Any) -> list[ReadableSpan]:
    """The spans of one prepare of ``PERSON``'s scope, referencing scope "b"."""
    path = tmp_path / "t.db"
    anyio.run(seed, path, (PERSON, "b"))
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    anyio.run(
        functools.partial(
            run, path, request(PERSON, references=("b",)), tracer_provider=provider, **options
        )
    )
    return list(exporter.get_finished_spans())


def test_scope_names_are_on_no_span_by_default(tmp_path: Path) -> None:
    """Without ``trace_identifiers`` no span names a scope: each search_memory carries the
    memory conventions' operation and record count, but no gen_ai.memory.store.id."""
    spans = spans_of_a_prepare(tmp_path)
    searches = [span for span in spans if span.name == "search_memory"]
    assert searches
    for search in searches:
        attributes = dict(search.attributes or {})
        assert attributes["gen_ai.operation.name"] == "search_memory"
        assert isinstance(attributes["gen_ai.memory.record.count"], int)
        assert "gen_ai.memory.store.id" not in attributes
    for span in spans:
        assert not [v for v in (span.attributes or {}).values() if "alice" in str(v)], span.name


def test_trace_identifiers_puts_each_searched_scope_on_its_span(tmp_path: Path) -> None:
    """With ``trace_identifiers=True`` each search_memory names its scope as
    gen_ai.memory.store.id: the request's and the reference's."""
    spans = spans_of_a_prepare(tmp_path, trace_identifiers=True)
    stores = {
        dict(span.attributes or {})["gen_ai.memory.store.id"]
        for span in spans
        if span.name == "search_memory"
    }
    assert stores == {PERSON, "b"}
