"""Listing through the public API: ``list_scopes`` and ``list_records`` show what a
scope holds, page it by an opaque cursor that never skips nor repeats a record, refuse
bad arguments by name, and write nothing."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING

import pytest

import satchel

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

pytestmark = pytest.mark.anyio

SAID = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)


@pytest.fixture(params=["memory", "sqlite"])
async def rt(request: pytest.FixtureRequest) -> AsyncIterator[satchel.Runtime]:
    store = satchel.MemoryStore() if request.param == "memory" else None
    async with satchel.open_runtime(store=store, embedder=satchel.HashingEmbedder()) as runtime:
        yield runtime


async def walk(rt: satchel.Runtime, scope: str, **options: object) -> list[satchel.StoredRecord]:
    """Every record of every page, following each page's cursor."""
    records: list[satchel.StoredRecord] = []
    cursor = None
    while True:
        page = await rt.list_records(scope, cursor=cursor, **options)  # type: ignore[arg-type]
        records.extend(page.records)
        if page.cursor is None:
            return records
        cursor = page.cursor


async def test_list_records_shows_every_family_newest_first_with_readable_text(
    rt: satchel.Runtime,
) -> None:
    """Each record once as its newest version, newest first, the profile last; text is
    the entry's, the experience and topic memory as a pack renders them, the resource's
    summaries (never its body)."""
    (ref,) = await rt.add_memories(
        "s", [satchel.MemoryEntry("kestrel", created_at=SAID, key="bird")]
    )
    (lesson,) = await rt.add_experiences("s", [satchel.Experience("a", "b", "c", "d")])
    (note,) = await rt.add_topic_memories("s", [satchel.TopicMemory("Birds", "they fly")])
    await rt.add_resources("s", [satchel.Resource("doc://1", "secret body", "summary", "more")])
    await rt.set_profile("s", satchel.Profile("likes birds"))
    newer = await rt.update_memory(ref, satchel.MemoryEntry("kestrel, hovering", key="bird"))
    page = await rt.list_records("s")
    assert page.cursor is None
    assert [(r.citation, r.text) for r in page.records] == [
        (satchel.Citation("resource", "s", "doc://1"), "summary\n\nmore"),
        (satchel.Citation("topic-memory", "s", note.id, 1), "Birds\n\nthey fly"),
        (
            satchel.Citation("experience", "s", lesson.id, 1),
            "Situation: a\nAction: b\nOutcome: c\nLesson: d",
        ),
        (satchel.Citation("memory", "s", ref.entry_id, newer.version), "kestrel, hovering"),
        (satchel.Citation("profile", "s"), "likes birds"),
    ]
    entry = page.records[3]
    assert (entry.key, entry.created_at, entry.forgotten) == ("bird", None, False)
    assert (await rt.list_records("s", "memory")).records == (entry,)


async def test_forgotten_entries_only_when_asked_and_erased_ones_never(
    rt: satchel.Runtime,
) -> None:
    """A forgotten entry is listed, marked, only with include_forgotten; an erased one is
    never listed; list_scopes counts searchable records and keeps a forgotten-only scope."""
    kept, gone, erased = await rt.add_memories("s", [satchel.MemoryEntry(t) for t in "abc"])
    (lonely,) = await rt.add_memories("quiet", [satchel.MemoryEntry("hush")])
    await rt.forget_memory(gone)
    await rt.forget_memory(lonely)
    await rt.erase(erased)
    assert [r.citation.id for r in (await rt.list_records("s")).records] == [kept.entry_id]
    shown = (await rt.list_records("s", include_forgotten=True)).records
    assert [(r.citation.id, r.forgotten) for r in shown] == [
        (gone.entry_id, True), (kept.entry_id, False),
    ]  # fmt: skip
    scopes = await rt.list_scopes()
    assert [(s.scope_id, dict(s.records)) for s in scopes] == [("quiet", {}), ("s", {"memory": 1})]
    assert all(s.updated_at is not None and s.updated_at.tzinfo is not None for s in scopes)
    await rt.erase_scope("quiet")
    assert [s.scope_id for s in await rt.list_scopes()] == ["s"]


async def test_pages_follow_the_cursor_to_the_end_without_gaps_or_repeats(
    rt: satchel.Runtime,
) -> None:
    """Pages of 7 over 30 entries, written to between pages, list the 30 once each,
    newest first; the last page's cursor is None."""
    refs = await rt.add_memories("s", [satchel.MemoryEntry(f"entry {n}") for n in range(30)])
    seen: list[str | None] = []
    page = await rt.list_records("s", limit=7)
    pages = 1
    while page.cursor is not None:
        assert len(page.records) == 7
        seen.extend(r.citation.id for r in page.records)
        await rt.add_memories("s", [satchel.MemoryEntry(f"later {pages}")])
        page = await rt.list_records("s", limit=7, cursor=page.cursor)
        pages += 1
    seen.extend(r.citation.id for r in page.records)
    assert seen == [ref.entry_id for ref in reversed(refs)]
    assert pages == 5


async def test_listing_writes_nothing(rt: satchel.Runtime) -> None:
    """Listing scopes and records moves no scope's write version."""
    await rt.add_memories("s", [satchel.MemoryEntry("kestrel")])
    version = rt.store.scope_version("s")
    await rt.list_scopes()
    await walk(rt, "s", include_forgotten=True, limit=1)
    assert rt.store.scope_version("s") == version


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({"limit": 0}, "limit"),
        ({"limit": satchel.vocabulary.MAX_PAGE + 1}, "limit"),
        ({"limit": True}, "limit"),
        ({"limit": "10"}, "limit"),
        ({"family": "memories"}, "family"),
        ({"include_forgotten": "yes"}, "include_forgotten"),
        ({"cursor": "not a cursor"}, "cursor"),
        ({"cursor": ""}, "cursor"),
        ({"cursor": "cDEuMA"}, "cursor"),  # place 0: never a cursor a page returned
        ({"cursor": 12}, "cursor"),
        ({"scope_id": ""}, "scope_id"),
    ],
)
async def test_bad_arguments_are_refused_by_name(
    rt: satchel.Runtime, arguments: dict[str, object], field: str
) -> None:
    """Every malformed argument raises InvalidRequestError naming it."""
    call: dict[str, object] = {"scope_id": "s", **arguments}
    with pytest.raises(satchel.InvalidRequestError, match=f"^{field} "):
        await rt.list_records(**call)  # type: ignore[arg-type]


async def test_limits_at_their_bounds_are_accepted(rt: satchel.Runtime) -> None:
    """limit 1 and the largest page are both valid."""
    await rt.add_memories("s", [satchel.MemoryEntry("a"), satchel.MemoryEntry("b")])
    assert len((await rt.list_records("s", limit=1)).records) == 1
    assert len((await rt.list_records("s", limit=satchel.vocabulary.MAX_PAGE)).records) == 2
