"""Fair shares: in a prepare over many scopes each search reads evidence only for what
the round-robin allocation can place from it, and the pack is exactly the one a search
reading the family's whole room would give."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import anyio
import anyio.lowlevel
import attrs
import pytest

import satchel
from satchel.orchestration import _search
from satchel.stores import SqliteStore
from tests._orchestration import StoreWrapper

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    from satchel.vocabulary import Family

pytestmark = pytest.mark.anyio

SCOPES = [f"team-{n}" for n in range(8)]
#: Entries per scope: uneven, so the short scopes leave room the long ones fill.
SIZES = [40, 3, 40, 0, 12, 40, 1, 40]


class CountingReads(StoreWrapper):
    """Counts the evidence rows each prepare asks the store for."""

    def __init__(self, inner: Any) -> None:
        super().__init__(inner)
        self.rows = 0

    async def evidence(self, family: Any, scope_id: str, keys: Any) -> Any:
        self.rows += len(keys)
        return await super().evidence(family, scope_id, keys)


async def seeded(path: Path) -> None:
    async with satchel.open_runtime(str(path), embedder=satchel.HashingEmbedder()) as rt:
        for scope, size in zip(SCOPES, SIZES, strict=True):
            entries = [
                satchel.MemoryEntry(text=f"kestrel rotation note {n} of {scope}")
                for n in range(size)
            ]
            if entries:
                await rt.add_memories(scope, entries)
            else:
                await rt.add_memories(scope, [satchel.MemoryEntry(text="lunch is at noon")])


async def prepared(
    path: Path, *, whole_room: bool, exclude: Sequence[satchel.Citation] = ()
) -> tuple[str | None, int]:
    """The pack of one prepare over every scope, and the evidence rows it read."""
    store = CountingReads(await SqliteStore.open(str(path)))
    request = satchel.PrepareContextRequest(
        scope_id=SCOPES[0],
        references=tuple(SCOPES[1:]),
        query="kestrel rotation note",
        max_bytes=8000,  # 64 candidates (the ceiling 8,000 bytes keeps) of 176 held
        exclude=tuple(exclude),
    )
    # A turn's rarity (FusionWeights.rarity) is counted once it is read, and lifts a
    # candidate past a search's share that reading the whole room would have read: the
    # shares are compared with every candidate's score known before any read.
    unread = satchel.FusionWeights(rarity=0.0)
    async with satchel.open_runtime(
        store=store, embedder=satchel.HashingEmbedder(), fusion=unread
    ) as rt:
        if whole_room:  # every search reads for the family's whole room, as before
            with pytest.MonkeyPatch.context() as patch:
                patch.setattr(_search, "whole_room", lambda every, running: frozenset(running))
                context = await rt.prepare_context(request)
        else:
            context = await rt.prepare_context(request)
    return context.content, store.rows


async def test_each_search_reads_its_share_and_the_pack_is_unchanged(tmp_path: Path) -> None:
    path = tmp_path / "g.db"
    await seeded(path)
    shared, shared_rows = await prepared(path, whole_room=True)
    fair, fair_rows = await prepared(path, whole_room=False)
    assert fair == shared
    ceiling = satchel.Limits().ceiling("memory")
    assert shared_rows > 2 * ceiling  # every scope read up to the whole room
    assert fair_rows <= ceiling + len(SCOPES)  # each read what it places (and a little)


async def test_only_searches_that_ranked_something_new_read(tmp_path: Path) -> None:
    """A round's reading phase starts a task only for the searches that ranked a fresh
    candidate: a family holding nothing in a scope (every scope's experiences and topic
    notes here) has nothing to read, and its outcome is the empty one a read of no keys
    gives (a scope whose only note is off the question's topic may have none either); the
    pack is the one of every search reading."""
    path = tmp_path / "g.db"
    await seeded(path)
    readers: list[tuple[Family, str]] = []
    read_share = _search.Searcher._read_share

    async def counted(self: Any, state: Any, spec: Any, *args: Any) -> None:
        readers.append((spec.family, spec.scope_id))
        await read_share(self, state, spec, *args)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_search.Searcher, "_read_share", counted)
        fair, _ = await prepared(path, whole_room=False)
    assert {family for family, _ in readers} == {"memory"}
    noted = {scope for scope, size in zip(SCOPES, SIZES, strict=True) if size}
    assert noted <= {scope for _, scope in readers}
    shared, _ = await prepared(path, whole_room=True)
    assert fair == shared


async def test_excluded_citations_leave_their_places_to_other_scopes(tmp_path: Path) -> None:
    """A scope whose best candidates the caller holds reads past them, and the others
    read enough to fill what it cannot: the pack is still exactly the whole-room one."""
    path = tmp_path / "g.db"
    await seeded(path)
    first, _ = await prepared(path, whole_room=True)
    held = [
        citation
        for citation in (item.citation for item in satchel.parse_context(first))
        if citation.scope in (SCOPES[0], SCOPES[4])
    ][:10]
    assert held
    shared, _ = await prepared(path, whole_room=True, exclude=held)
    fair, _ = await prepared(path, whole_room=False, exclude=held)
    assert fair == shared


async def test_a_search_waiting_for_the_others_does_not_hold_its_scope(tmp_path: Path) -> None:
    """While one scope's search waits for another's count it holds no guard: a write to
    its scope goes through (a queued writer would otherwise block every later search of
    that scope, and two prepares could wait on each other for ever)."""
    path = tmp_path / "g.db"
    await seeded(path)
    release = anyio.Event()
    ranked_first = anyio.Event()

    class SlowSecondScope(StoreWrapper):
        async def retrieve(self, family: Any, scope_id: str, *args: Any) -> Any:
            if scope_id == SCOPES[2]:
                await release.wait()
            pool = await super().retrieve(family, scope_id, *args)
            if scope_id == SCOPES[0]:
                ranked_first.set()
            return pool

    store = SlowSecondScope(await SqliteStore.open(str(path)))
    request = satchel.PrepareContextRequest(
        scope_id=SCOPES[0], references=(SCOPES[2],), query="kestrel rotation note"
    )
    runtime = satchel.open_runtime(store=store, embedder=satchel.HashingEmbedder())
    async with runtime as rt, anyio.create_task_group() as group:
        group.start_soon(rt.prepare_context, request)
        await ranked_first.wait()
        for _ in range(10):  # let the first scope's search reach the wait
            await anyio.lowlevel.checkpoint()
        with anyio.fail_after(10):
            await rt.add_memories(SCOPES[0], [satchel.MemoryEntry(text="written meanwhile")])
        release.set()


def test_shares_without_exclusions_are_each_searchs_own_computation() -> None:
    """Without excluded citations every search of a family sees the same lengths, so
    one allocation per family gives every search its share: the same shares as one
    computed search by search (which excluded citations need), on random rounds."""
    import random

    from satchel.orchestration._shares import fair_shares

    rng = random.Random(7)
    for _ in range(300):
        families: tuple[Family, ...] = ("memory", "experience")
        every = [_Spec(family, f"s{n}") for family in families for n in range(rng.randint(1, 8))]
        ranked = {spec: rng.randint(0, 30) for spec in every if rng.random() < 0.8}
        room: dict[Family, int] = {"memory": rng.randint(0, 40), "experience": rng.randint(0, 6)}
        delays = {spec: rng.choice((0, 0, 1, 2)) for spec in every}
        one_pass = fair_shares(every, ranked, room, delays, {})
        # An exclusion of a place no search has takes the search-by-search way.
        by_search = fair_shares(every, ranked, room, delays, {("memory", "elsewhere"): 0})
        assert one_pass == by_search
        assert set(one_pass) == set(ranked)


@attrs.frozen(eq=False)
class _Spec:
    """A search as fair_shares sees it: its family and scope (hashable by identity)."""

    family: Family
    scope_id: str
