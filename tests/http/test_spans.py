"""Each request is an OpenTelemetry SERVER span (HTTP semantic conventions), the parent
of satchel's own spans, carrying no query text, content or scope."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from opentelemetry.trace import SpanKind, StatusCode

from ._service import add, memory_path, prepare, serving
from .test_errors import UnavailableStore

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import ReadableSpan

pytestmark = pytest.mark.anyio

QUERY = "when do the kestrel backups run"
TEXT = "Kestrel backups run nightly at 02:00 UTC"
SCOPE = "tenant-7:secret-project"


def server_spans(exporter: Any) -> list[ReadableSpan]:
    finished: list[ReadableSpan] = list(exporter.get_finished_spans())
    return [span for span in finished if span.kind is SpanKind.SERVER]


def values(span: ReadableSpan) -> str:
    return " ".join(str(value) for value in (span.attributes or {}).values()) + span.name


async def test_the_request_span_is_the_parent_of_satchel_s_spans(spans: tuple[Any, Any]) -> None:
    provider, exporter = spans
    async with serving(tracer_provider=provider) as (client, _):
        await add(client, SCOPE, {"text": TEXT})
        exporter.clear()
        response = await prepare(client, SCOPE, QUERY)
    assert response.status_code == 200
    assert response.json()["status"] == "ready"
    finished = list(exporter.get_finished_spans())
    (server,) = server_spans(exporter)
    (root,) = [span for span in finished if span.name == "satchel.prepare_context"]
    assert server.name == "POST /v1/context/prepare"
    assert server.parent is None
    assert root.parent is not None
    assert root.parent.span_id == server.context.span_id
    assert root.context.trace_id == server.context.trace_id
    assert dict(server.attributes or {}) == {
        "http.request.method": "POST",
        "http.route": "/v1/context/prepare",
        "http.response.status_code": 200,
        "url.scheme": "http",
    }
    assert server.status.status_code is StatusCode.UNSET
    # every span of the request is in the request's trace, and none carries text
    assert {span.context.trace_id for span in finished} == {server.context.trace_id}
    for span in finished:
        assert "kestrel" not in values(span).lower()
    assert SCOPE not in values(server)


async def test_a_memory_route_is_named_by_its_template_never_its_scope(
    spans: tuple[Any, Any],
) -> None:
    provider, exporter = spans
    async with serving(tracer_provider=provider) as (client, _):
        (ref,) = await add(client, SCOPE, {"text": TEXT})
        exporter.clear()
        await client.get(memory_path(SCOPE, ref["entry_id"]), params={"version": 1})
        await client.delete(memory_path(SCOPE, ref["entry_id"]), params={"version": 1})
    got, deleted = server_spans(exporter)
    assert got.name == "GET /v1/memories/{scope}/{entry_id}"
    assert deleted.name == "DELETE /v1/memories/{scope}/{entry_id}"
    assert (deleted.attributes or {})["http.response.status_code"] == 204
    for span in (got, deleted):
        assert (span.attributes or {})["http.route"] == "/v1/memories/{scope}/{entry_id}"
        assert SCOPE not in values(span)
        assert ref["entry_id"] not in values(span)


async def test_a_client_error_is_not_a_span_error_and_a_server_error_is(
    spans: tuple[Any, Any],
) -> None:
    provider, exporter = spans
    async with serving(tracer_provider=provider) as (client, _):
        await prepare(client, "s", QUERY, max_bytes=1)
    async with serving(store=UnavailableStore(), tracer_provider=provider) as (client, _):
        await prepare(client, "s", QUERY)
    invalid, unavailable = server_spans(exporter)
    assert (invalid.attributes or {})["http.response.status_code"] == 422
    assert invalid.status.status_code is StatusCode.UNSET
    assert "error.type" not in (invalid.attributes or {})
    assert (unavailable.attributes or {})["http.response.status_code"] == 503
    assert (unavailable.attributes or {})["error.type"] == "503"
    assert unavailable.status.status_code is StatusCode.ERROR


async def test_an_unknown_route_has_no_route_attribute(spans: tuple[Any, Any]) -> None:
    provider, exporter = spans
    async with serving(tracer_provider=provider) as (client, _):
        await client.get("/nowhere")
    (span,) = server_spans(exporter)
    assert span.name == "GET"
    assert "http.route" not in (span.attributes or {})
    assert (span.attributes or {})["http.response.status_code"] == 404


async def test_a_request_carrying_trace_context_continues_its_trace(
    spans: tuple[Any, Any],
) -> None:
    """W3C traceparent: the server span is the caller's span's child, in its trace."""
    provider, exporter = spans
    trace_id, parent_id = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
    async with serving(tracer_provider=provider) as (client, _):
        await client.get("/healthz", headers={"traceparent": f"00-{trace_id}-{parent_id}-01"})
    (span,) = server_spans(exporter)
    assert span.context.trace_id == int(trace_id, 16)
    assert span.parent is not None
    assert span.parent.span_id == int(parent_id, 16)
    assert span.parent.is_remote
