"""The host's planner and digest: each behind its fuse, each falling back to satchel's own
result on failure or timeout, each reporting its outcome; on asyncio and trio."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import anyio
import pytest

import satchel
from satchel.orchestration._stages import ask_planner
from tests._clock import MOCK_CLOCK

if TYPE_CHECKING:
    from collections.abc import Sequence

pytestmark = pytest.mark.anyio

SCOPE = "team"
FACTS = [
    "The deploy cadence is every Thursday after the stand-up",
    "Lunch on Fridays is pasta at the corner place",
    "Kestrel listens on port 7400 behind the proxy",
]
QUERY = "release schedule"  # shares no word with any fact


class Recorder:
    """A sink that keeps every effort."""

    def __init__(self) -> None:
        self.efforts: list[satchel.RecallEffort] = []

    async def __call__(self, effort: satchel.RecallEffort) -> None:
        self.efforts.append(effort)


async def prepare(**options: Any) -> tuple[satchel.PreparedContext, satchel.RecallEffort]:
    sink = Recorder()
    request = options.pop("request", None) or satchel.PrepareContextRequest(
        scope_id=SCOPE, query=QUERY
    )
    async with satchel.open_runtime(
        embedder=satchel.HashingEmbedder(), recall_effort_sink=sink, **options
    ) as rt:
        await rt.add_memories(SCOPE, [satchel.MemoryEntry(text=fact) for fact in FACTS])
        context = await rt.prepare_context(request)
    (effort,) = sink.efforts
    return context, effort


def texts(context: satchel.PreparedContext) -> list[str | None]:
    return [item.text for item in satchel.parse_context(context.content)]


# --- planner --------------------------------------------------------------------------


async def planner(query: str, *, scope_id: str, session_id: str | None) -> Sequence[str]:
    return [query, "deploy cadence"]


async def test_a_planned_query_finds_what_the_callers_misses() -> None:
    """The planner's query is searched beside the caller's in round 0 and finds the
    evidence the caller's words do not."""
    alone, effort_alone = await prepare()
    planned, effort = await prepare(planner=planner)
    assert FACTS[0] not in texts(alone)
    assert FACTS[0] in texts(planned)
    assert effort_alone.stages == {"planner": "off", "digest": "off"}
    assert effort.stages["planner"] == "ok"
    assert effort.added_embeddings == 0
    assert effort.rounds == 1


async def failing_planner(query: str, **context: Any) -> Sequence[str]:
    raise RuntimeError("the model is down")


async def test_a_failing_planner_searches_the_callers_query_alone() -> None:
    """A planner that raises changes nothing but its reported outcome."""
    alone, _ = await prepare()
    planned, effort = await prepare(planner=failing_planner)
    assert texts(planned) == texts(alone)
    assert effort.stages["planner"] == "failed"


@pytest.mark.parametrize("anyio_backend", MOCK_CLOCK)
async def test_a_slow_planner_is_cut_off_at_its_fuse() -> None:
    """A planner that overruns planner_timeout is abandoned at exactly the fuse, and the
    caller's query is searched alone."""

    async def slow(query: str, **context: Any) -> Sequence[str]:
        await anyio.sleep(100)
        return [query, "deploy cadence"]

    alone, _ = await prepare()
    started = anyio.current_time()
    planned, effort = await prepare(planner=slow, planner_timeout=2.0)
    assert anyio.current_time() - started == 2.0
    assert texts(planned) == texts(alone)
    assert effort.stages["planner"] == "timeout"


async def test_satchel_keeps_the_callers_query_first_and_at_most_three() -> None:
    """Whatever the planner returns, the caller's query comes first, blanks and repeats
    are dropped, and at most three queries are searched."""

    async def chatty(query: str, **context: Any) -> Sequence[str]:
        return ["a", " ", "b", query, "a", "c", "d"]

    queries, outcome = await ask_planner(chatty, "q", scope_id=SCOPE, session_id=None, fuse=1)
    assert (queries, outcome) == (("q", "a", "b"), "ok")


async def test_a_planner_answer_that_is_no_list_is_a_failure() -> None:
    """A planner returning one string (not a sequence of queries) counts as failed."""

    async def stringly(query: str, **context: Any) -> Any:
        return "deploy cadence"

    queries, outcome = await ask_planner(stringly, "q", scope_id=SCOPE, session_id=None, fuse=1)
    assert (queries, outcome) == (("q",), "failed")


async def test_the_planner_is_told_the_scope_and_session() -> None:
    """The planner receives the query, the request's scope and its session."""
    seen: list[tuple[str, str, str | None]] = []

    async def noting(query: str, *, scope_id: str, session_id: str | None) -> Sequence[str]:
        seen.append((query, scope_id, session_id))
        return [query]

    request = satchel.PrepareContextRequest(scope_id=SCOPE, query=QUERY, session_id="s1")
    await prepare(planner=noting, request=request)
    assert seen == [(QUERY, SCOPE, "s1")]


# --- digest ---------------------------------------------------------------------------

KEPT_QUERY = "Kestrel deploy Thursday lunch pasta"


def kept_request(**fields: Any) -> satchel.PrepareContextRequest:
    return satchel.PrepareContextRequest(scope_id=SCOPE, query=KEPT_QUERY, **fields)


async def test_the_digest_keeps_and_orders_the_fitted_items() -> None:
    """The digest sees the fitted items and delivers those it keeps, in its order."""
    shown: list[list[str | None]] = []

    async def reverse_two(query: str, items: Sequence[satchel.ContextItem]) -> Sequence[int]:
        shown.append([item.text for item in items])
        return [1, 0]

    fitted, _ = await prepare(request=kept_request())
    digested, effort = await prepare(request=kept_request(), digest=reverse_two)
    assert shown == [texts(fitted)]
    assert texts(digested) == [texts(fitted)[1], texts(fitted)[0]]
    assert digested.content_bytes == len((digested.content or "").encode())
    assert effort.stages["digest"] == "ok"


async def nothing_relevant(query: str, items: Sequence[satchel.ContextItem]) -> Sequence[int]:
    return []


async def test_nothing_relevant_is_an_empty_pack_that_cools_nothing() -> None:
    """An empty digest answer is an empty pack, and the session holds nothing back: the
    next turn serves the same items."""
    calls = 0

    async def first_turn_only(query: str, items: Sequence[satchel.ContextItem]) -> Sequence[int]:
        nonlocal calls
        calls += 1
        return [] if calls == 1 else list(range(len(items)))

    sink = Recorder()
    async with satchel.open_runtime(
        embedder=satchel.HashingEmbedder(),
        digest=first_turn_only,
        dedup_turns=3,
        recall_effort_sink=sink,
    ) as rt:
        await rt.add_memories(SCOPE, [satchel.MemoryEntry(text=fact) for fact in FACTS])
        empty = await rt.prepare_context(kept_request(session_id="s"))
        served = await rt.prepare_context(kept_request(session_id="s"))
    fitted, _ = await prepare(request=kept_request())
    assert (empty.status, empty.content, empty.content_bytes) == ("empty", None, 0)
    assert sink.efforts[0].stages["digest"] == "no_relevant"
    assert texts(served) == texts(fitted)
    assert len(texts(served)) >= 2


@pytest.mark.parametrize(
    "answer", [[7], [0, 0], "0", [True]], ids=["range", "repeat", "str", "bool"]
)
async def test_a_malformed_digest_answer_keeps_the_fitted_pack(answer: Any) -> None:
    """Indices out of range, repeated or of the wrong type count as a failed digest."""

    async def wrong(query: str, items: Sequence[satchel.ContextItem]) -> Any:
        return answer

    fitted, _ = await prepare(request=kept_request())
    digested, effort = await prepare(request=kept_request(), digest=wrong)
    assert texts(digested) == texts(fitted)
    assert digested.content_bytes == fitted.content_bytes
    assert effort.stages["digest"] == "failed"


async def test_a_failing_digest_keeps_the_fitted_pack() -> None:
    """A digest that raises leaves the fitted pack as it was."""

    async def broken(query: str, items: Sequence[satchel.ContextItem]) -> Sequence[int]:
        raise RuntimeError("the model is down")

    fitted, _ = await prepare(request=kept_request())
    digested, effort = await prepare(request=kept_request(), digest=broken)
    assert texts(digested) == texts(fitted)
    assert digested.content_bytes == fitted.content_bytes
    assert effort.stages["digest"] == "failed"


@pytest.mark.parametrize("anyio_backend", MOCK_CLOCK)
async def test_a_slow_digest_is_cut_off_at_its_fuse() -> None:
    """A digest that overruns digest_timeout is abandoned at the fuse; the pack stands."""

    async def slow(query: str, items: Sequence[satchel.ContextItem]) -> Sequence[int]:
        await anyio.sleep(100)
        return []

    fitted, _ = await prepare(request=kept_request())
    started = anyio.current_time()
    digested, effort = await prepare(request=kept_request(), digest=slow, digest_timeout=3.0)
    assert anyio.current_time() - started == 3.0
    assert texts(digested) == texts(fitted)
    assert digested.content_bytes == fitted.content_bytes
    assert effort.stages["digest"] == "timeout"


async def test_stages_are_recorded_on_spans(spans: tuple[Any, Any]) -> None:
    """Each stage's outcome is a span attribute."""
    provider, exporter = spans
    await prepare(
        request=kept_request(), planner=planner, digest=nothing_relevant, tracer_provider=provider
    )
    outcomes = {
        span.name: (span.attributes or {})["satchel.stage.outcome"]
        for span in exporter.get_finished_spans()
        if span.name.startswith("satchel.stage.")
    }
    assert outcomes == {"satchel.stage.planner": "ok", "satchel.stage.digest": "no_relevant"}


async def test_a_digest_that_keeps_nothing_is_empty_on_every_span_and_metric(
    spans: tuple[Any, Any],
) -> None:
    """The build span and the metrics are taken once the pack is final: when the digest
    keeps nothing, the root span, the build span, the duration, the size and the
    abstention count all say the prepare was empty. The build span starts with the first
    fit (after round 0) and ends after the digest's span."""
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader

    provider, exporter = spans
    reader = InMemoryMetricReader()
    context, effort = await prepare(
        request=kept_request(),
        digest=nothing_relevant,
        tracer_provider=provider,
        meter_provider=MeterProvider(metric_readers=[reader]),
    )
    assert (context.status, effort.stages["digest"]) == ("empty", "no_relevant")
    finished = {span.name: span for span in exporter.get_finished_spans()}
    root, build = finished["satchel.prepare_context"], finished["satchel.context.build"]
    digest = finished["satchel.stage.digest"]
    for span in (root, build):
        assert (span.attributes or {})["satchel.context.status"] == "empty"
        assert (span.attributes or {})["satchel.context.bytes"] == 0
    # Opened when the first fit starts (after round 0), closed after the digest decided.
    assert build.start_time >= finished["satchel.recall.round"].end_time
    assert build.end_time >= digest.end_time
    assert build.parent.span_id == root.context.span_id
    data = reader.get_metrics_data()
    assert data is not None
    found: dict[str, list[Any]] = {
        metric.name: list(metric.data.data_points)
        for resource in data.resource_metrics
        for scope in resource.scope_metrics
        for metric in scope.metrics
    }
    (duration,) = found["satchel.prepare.duration"]
    assert dict(duration.attributes) == {"satchel.context.status": "empty"}
    (size,) = found["satchel.context.size"]
    assert (size.count, size.sum) == (1, 0)
    (abstention,) = found["satchel.prepare.abstentions"]
    assert abstention.value == 1
    assert dict(abstention.attributes) == {"satchel.recall.assessment": effort.assessment}
