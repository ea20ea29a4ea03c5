"""Validation at the door: text UTF-8 cannot store, dates UTC cannot express and versions
SQLite cannot hold are refused by name before anything is written."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest

import satchel

pytestmark = pytest.mark.anyio

LONE = "half a pair \ud800 here"


async def test_a_lone_surrogate_in_a_record_names_its_field() -> None:
    """A memory, a tag, an experience field, a resource body: each is named, and the
    batch writes nothing."""
    async with satchel.open_runtime(embedder=satchel.HashingEmbedder()) as rt:
        good = satchel.MemoryEntry(text="a fine entry")
        with pytest.raises(satchel.InvalidRequestError, match=r"^entries\[1\]\.text must be valid"):
            await rt.add_memories("s", [good, satchel.MemoryEntry(text=LONE)])
        with pytest.raises(satchel.InvalidRequestError, match=r"^entries\[0\]\.tags\[0\]"):
            await rt.add_memories("s", [satchel.MemoryEntry(text="x", tags=(LONE,))])
        bad = satchel.Experience(situation=LONE, action="a", outcome="o", lesson="l")
        with pytest.raises(satchel.InvalidRequestError, match=r"^experiences\[0\]\.situation"):
            await rt.add_experiences("s", [bad])
        doc = satchel.Resource(uri="u", body=LONE, abstract="a")
        with pytest.raises(satchel.InvalidRequestError, match=r"^resources\[0\]\.body"):
            await rt.add_resources("s", [doc])
        empty = await rt.prepare_context(satchel.PrepareContextRequest(scope_id="s", query="fine"))
    assert empty.status == "empty"  # nothing of a refused batch was written


@pytest.mark.parametrize(
    ("fields", "field"),
    [({"query": LONE}, "query"), ({"session_id": LONE}, "session_id")],
)
async def test_a_lone_surrogate_in_a_request_names_its_field(
    fields: dict[str, Any], field: str
) -> None:
    """A query or a session id that UTF-8 cannot store is refused by name."""
    request = satchel.PrepareContextRequest(**{"scope_id": "s", "query": "q", **fields})
    async with satchel.open_runtime(embedder=satchel.HashingEmbedder()) as rt:
        with pytest.raises(satchel.InvalidRequestError, match=rf"^{field} must be valid Unicode"):
            await rt.prepare_context(request)


@pytest.mark.parametrize(
    "moment",
    [
        datetime(1, 1, 1, 0, 30, tzinfo=timezone(timedelta(hours=5))),
        datetime(9999, 12, 31, 23, 30, tzinfo=timezone(timedelta(hours=-5))),
    ],
    ids=["before-year-1", "after-year-9999"],
)
async def test_a_date_utc_cannot_express_is_refused(moment: datetime) -> None:
    """A created_at that leaves the calendar once in UTC is refused by name."""
    async with satchel.open_runtime(embedder=satchel.HashingEmbedder()) as rt:
        with pytest.raises(satchel.InvalidRequestError, match=r"^entries\[0\]\.created_at"):
            await rt.add_memories("s", [satchel.MemoryEntry(text="x", created_at=moment)])


async def test_the_calendars_edges_are_accepted_and_read_back() -> None:
    """Dates at the edges UTC can express are written, prepared and read back exactly."""
    edges = [datetime(1, 1, 2, tzinfo=UTC), datetime(9999, 12, 30, tzinfo=UTC)]
    async with satchel.open_runtime(embedder=satchel.HashingEmbedder()) as rt:
        refs = await rt.add_memories(
            "s",
            [satchel.MemoryEntry(text=f"edge {n}", created_at=at) for n, at in enumerate(edges)],
        )
        context = await rt.prepare_context(
            satchel.PrepareContextRequest(scope_id="s", query="edge")
        )
        assert [(await rt.get_memory(ref)).created_at for ref in refs] == edges
    assert len(satchel.parse_context(context.content)) == 2


@pytest.mark.parametrize("version", [2**63, 2**70])
async def test_a_version_past_sqlites_integers_is_refused(version: int) -> None:
    """A reference whose version SQLite could never hold is refused, not an overflow."""
    ref = satchel.MemoryRef("s", "e", version)
    async with satchel.open_runtime(embedder=satchel.HashingEmbedder()) as rt:
        with pytest.raises(satchel.InvalidRequestError, match=r"^ref\.version"):
            await rt.get_memory(ref)


@pytest.mark.parametrize(
    "at",
    [datetime(9999, 12, 31, 23, tzinfo=UTC), datetime(1, 1, 1, tzinfo=UTC)],
    ids=["last-day", "first-day"],
)
async def test_a_date_at_the_calendars_edge_breaks_no_later_prepare(at: datetime) -> None:
    """An accepted date on the calendar's first or last day, whose text names relative
    days, is written, and every relative-date prepare of its scope (or referencing it)
    still answers."""
    text = "said yesterday, tomorrow and this month"
    async with satchel.open_runtime(embedder=satchel.HashingEmbedder()) as rt:
        await rt.add_memories("edge", [satchel.MemoryEntry(text=text, created_at=at)])
        for query in ("what happened yesterday", "tomorrow", "this month", "three days ago"):
            for request in (
                satchel.PrepareContextRequest(scope_id="edge", query=query),
                satchel.PrepareContextRequest(scope_id="other", query=query, references=["edge"]),
            ):
                assert (await rt.prepare_context(request)).status in ("ready", "empty")


async def test_a_datetime_subclass_is_stored_as_a_plain_datetime() -> None:
    """A datetime subclass with its own isoformat is stored as the moment it names, so
    it cannot poison later reads or prepares."""

    class Odd(datetime):
        def isoformat(self, *args: Any, **kwargs: Any) -> str:
            return "not a date"

    at = Odd(2023, 5, 8, 13, 56, tzinfo=UTC)
    async with satchel.open_runtime(embedder=satchel.HashingEmbedder()) as rt:
        (ref,) = await rt.add_memories("s", [satchel.MemoryEntry(text="odd", created_at=at)])
        context = await rt.prepare_context(satchel.PrepareContextRequest(scope_id="s", query="odd"))
        record = await rt.get_memory(ref)
    assert type(record.created_at) is datetime
    assert record.created_at == datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    assert context.status == "ready"


@pytest.mark.parametrize("value", [0, 10**6 + 1, 10**30])
def test_limits_past_their_range_are_refused(value: int) -> None:
    """Limits beyond what a pack, SQLite or numpy can use are refused by name."""
    with pytest.raises(satchel.InvalidRequestError, match=r"^Limits\.memory_candidates"):
        satchel.Limits(memory_candidates=value)
