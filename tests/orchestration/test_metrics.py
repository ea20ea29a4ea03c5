"""satchel's metrics: what one prepare records through the host's MeterProvider, and that
nothing is measured (or identifies a scope) when nobody asked."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import anyio
import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import HistogramDataPoint, InMemoryMetricReader

import satchel
from satchel.orchestration import _telemetry
from tests._orchestration import ScriptedEmbedder, StoreWrapper, policy, request, run, seed

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.anyio

#: A scope name that is somebody's identifier: it must appear on no measurement.
PERSON = "user:alice@example.com"


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """Seeded scopes "a", "b" and a person's; seeded on a loop of its own (see
    test_rounds)."""
    path = tmp_path / "m.db"
    anyio.run(seed, path, ("a", "b", PERSON))
    return path


@pytest.fixture
def reader() -> InMemoryMetricReader:
    return InMemoryMetricReader()


def points(reader: InMemoryMetricReader) -> dict[str, list[Any]]:
    """Every data point satchel's meter recorded, by metric name."""
    data = reader.get_metrics_data()
    found: dict[str, list[Any]] = {}
    for resource in data.resource_metrics if data is not None else ():
        for scope in resource.scope_metrics:
            assert scope.scope.name == "satchel"
            for metric in scope.metrics:
                found.setdefault(metric.name, []).extend(metric.data.data_points)
    return found


def by_attributes(found: list[Any]) -> dict[tuple[tuple[str, Any], ...], Any]:
    return {tuple(sorted(dict(point.attributes).items())): point for point in found}


async def test_a_prepare_records_duration_rounds_expansion_and_size(
    db: Path, reader: InMemoryMetricReader
) -> None:
    """A prepare that expands once: one duration (status ready), two rounds, one
    committed ``admission`` expansion, its content bytes; no abstention, no store error;
    no measurement names the scope."""
    provider = MeterProvider(metric_readers=[reader])
    context, effort, _ = await run(
        db, request(PERSON), recall_policy=policy(), meter_provider=provider
    )
    assert (effort.rounds, effort.expansion_actions) == (2, ("admission",))
    found = points(reader)
    (duration,) = found["satchel.prepare.duration"]
    assert isinstance(duration, HistogramDataPoint)
    assert dict(duration.attributes or {}) == {"satchel.context.status": "ready"}
    assert (duration.count, duration.sum > 0) == (1, True)
    (rounds,) = found["satchel.recall.rounds"]
    assert (rounds.count, rounds.sum) == (1, 2)
    (expansion,) = found["satchel.recall.expansions"]
    assert dict(expansion.attributes or {}) == {
        "satchel.recall.round.action": "admission",
        "satchel.recall.round.committed": True,
    }
    assert expansion.value == 1
    (size,) = found["satchel.context.size"]
    assert (size.count, size.sum) == (1, context.content_bytes)
    assert "satchel.prepare.abstentions" not in found
    assert "satchel.store.errors" not in found
    recorded = [str(v) for kind in found.values() for p in kind for v in p.attributes.values()]
    assert not [value for value in recorded if "alice" in value]


async def test_an_empty_pack_counts_an_abstention_by_assessment(
    db: Path, reader: InMemoryMetricReader
) -> None:
    """A prepare over a scope that holds nothing returns status empty: one abstention
    under its assessment, and the duration under status empty."""
    provider = MeterProvider(metric_readers=[reader])
    context, effort, _ = await run(
        db, request("nobody"), recall_policy=policy(), meter_provider=provider
    )
    assert (context.status, effort.assessment) == ("empty", "no-content")
    found = points(reader)
    (abstention,) = found["satchel.prepare.abstentions"]
    assert dict(abstention.attributes or {}) == {"satchel.recall.assessment": "no-content"}
    assert abstention.value == 1
    (duration,) = found["satchel.prepare.duration"]
    assert dict(duration.attributes or {}) == {"satchel.context.status": "empty"}
    (size,) = found["satchel.context.size"]
    assert size.sum == 0


async def test_items_the_budget_drops_are_counted_by_cause(
    tmp_path: Path, reader: InMemoryMetricReader
) -> None:
    """Twelve long entries and 512 bytes: the fit truncates one and drops eleven, counted
    under their cause."""
    path = tmp_path / "long.db"
    filler = " ".join(["filler words here"] * 60)
    async with satchel.open_runtime(str(path), embedder=ScriptedEmbedder()) as rt:
        entries = [
            satchel.MemoryEntry(text=f"alpha beta strong match {n} {filler}") for n in range(12)
        ]
        await rt.add_memories("long", entries)
    provider = MeterProvider(metric_readers=[reader])
    await run(path, request("long", max_bytes=512), meter_provider=provider)
    dropped = by_attributes(points(reader)["satchel.context.dropped_items"])
    assert set(dropped) <= {
        (("satchel.drop.cause", "below-min-bytes"),),
        (("satchel.drop.cause", "no-fitting-truncation"),),
    }
    assert sum(point.value for point in dropped.values()) == 11


class FailsSecondLook(StoreWrapper):
    """The expansion round's read of (memory, b) fails as an unreachable database."""

    async def on_evidence(self, family: str, scope_id: str, call: int) -> None:
        if (family, scope_id, call) == ("memory", "b", 2):
            raise satchel.StoreUnavailableError("the engine stopped")


async def test_a_store_error_in_an_expansion_is_counted(
    db: Path, reader: InMemoryMetricReader
) -> None:
    """A store error discarding an expansion round: one store error by its type, the
    expansion counted as not committed, the prepare itself ready."""
    provider = MeterProvider(metric_readers=[reader])
    context, effort, _ = await run(
        db,
        request(references=("b",)),
        wrapper=FailsSecondLook,
        recall_policy=policy(),
        meter_provider=provider,
    )
    assert (context.status, effort.assessment) == ("ready", "expansion-failed")
    found = points(reader)
    (error,) = found["satchel.store.errors"]
    assert dict(error.attributes or {}) == {"error.type": "satchel.StoreUnavailableError"}
    assert error.value == 1
    (expansion,) = found["satchel.recall.expansions"]
    assert dict(expansion.attributes or {})["satchel.recall.round.committed"] is False


class FailsRoundZero(StoreWrapper):
    """Round 0's read of (memory, a) fails as an unreachable database."""

    async def on_evidence(self, family: str, scope_id: str, call: int) -> None:
        if (family, scope_id, call) == ("memory", "a", 1):
            raise satchel.StoreUnavailableError("the engine stopped")


async def test_a_failed_prepare_records_its_error_type(
    db: Path, reader: InMemoryMetricReader
) -> None:
    """A prepare whose round 0 fails records its duration under ``error.type`` (the
    class, never the message) and the store error."""
    provider = MeterProvider(metric_readers=[reader])
    with pytest.raises(satchel.StoreUnavailableError):
        await run(db, request(), wrapper=FailsRoundZero, meter_provider=provider)
    found = points(reader)
    (duration,) = found["satchel.prepare.duration"]
    assert dict(duration.attributes or {}) == {"error.type": "satchel.StoreUnavailableError"}
    (error,) = found["satchel.store.errors"]
    assert error.value == 1


def test_without_a_provider_nothing_is_measured() -> None:
    """With no provider given and none installed, the instruments are off; a given
    provider turns them on."""
    assert not _telemetry.PrepareMetrics(None).enabled
    assert _telemetry.PrepareMetrics(MeterProvider()).enabled


@pytest.mark.parametrize(
    ("option", "value"),
    [("meter_provider", object()), ("trace_identifiers", "yes")],
)
async def test_telemetry_options_are_checked_by_name(option: str, value: object) -> None:
    """A meter_provider that is none, or a trace_identifiers that is no bool, is refused
    by name before anything opens."""
    options: dict[str, Any] = {option: value}
    with pytest.raises(satchel.InvalidRequestError, match=option):
        async with satchel.open_runtime(embedder=ScriptedEmbedder(), **options):
            pass
