"""The embedded store serves a scope's rated evidence again, unchanged, while the
scope's write version stands (``TermCounts.keep``), and never past it; likewise the
terms it read for a name the scope never holds (``Kept.spellings``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

import satchel
from satchel.stores import PoolRequest, SqliteStore, _term_counts
from satchel.stores._term_counts import TermCounts
from satchel.stores.sqlite import _search as sqlite_search
from satchel.vocabulary import Evidence, Pool, analyse_query, forget_texts

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

pytestmark = pytest.mark.anyio

TURNS = [
    "Ana: the kestrel nested in the chimney",
    "Ben: thanks!",
    "Ana: we saw it again at the mill on Friday",
    "Ben: which mill, the old one?",
    "Ana: yes, the old mill by the river",
]


@pytest.fixture
async def chat() -> AsyncIterator[tuple[SqliteStore, satchel.Runtime, list[int]]]:
    store = await SqliteStore.open()
    async with satchel.open_runtime(store=store, embedder=satchel.StaticEmbedder()) as rt:
        await rt.add_memories(
            "chat", [satchel.MemoryEntry(text=text, thread="t") for text in TURNS]
        )
        keys = list(await store.evidence("memory", "chat", list(range(1, 20))))
        yield store, rt, keys


async def rated_afresh(rt: satchel.Runtime, keys: list[int]) -> dict[int, Evidence]:
    """What a store keeping nothing serves: every key read and rated again."""
    store = rt.store
    assert isinstance(store, SqliteStore)
    store._term_counts.forget()
    store._evidence.retire_all()
    return dict(await store.evidence("memory", "chat", keys))


async def test_the_same_rated_evidence_is_served_while_the_scope_is_unchanged(
    chat: tuple[SqliteStore, satchel.Runtime, list[int]],
) -> None:
    store, rt, keys = chat
    first = await store.evidence("memory", "chat", keys)
    again = await store.evidence("memory", "chat", [*reversed(keys), 999])
    assert all(again[key] is first[key] for key in keys)
    assert 999 not in again
    assert all(item.rarity is not None for item in first.values())
    assert dict(first) == await rated_afresh(rt, keys)


async def test_evidence_read_from_the_file_is_rated_without_analysing_its_text(
    chat: tuple[SqliteStore, satchel.Runtime, list[int]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A turn read from the file is rated from its full-text row's terms: no text is
    analysed again, nor when a write to the scope has it rated anew, and each rating is
    the one its analysed text gives."""
    from satchel.vocabulary import _rarity

    store, rt, keys = chat
    analysed = await rated_afresh(rt, keys)
    forget_texts()  # the analysed texts kept by text: a rating would find them
    asked: list[str] = []
    real = _rarity._said_terms

    def analysed_again(text: str) -> tuple[str, ...]:
        asked.append(text)
        return real(text)

    monkeypatch.setattr(_rarity, "_said_terms", analysed_again)
    assert await rated_afresh(rt, keys) == analysed
    await rt.add_memories("chat", [satchel.MemoryEntry(text="Ben: see you there", thread="t")])
    again = await store.evidence("memory", "chat", keys)  # kept rows, the counts anew
    assert all(again[key] is not analysed[key] for key in keys)
    assert asked == []
    assert {item.rarity for item in analysed.values()} != {None}


async def test_a_write_to_the_scope_serves_evidence_rated_anew(
    chat: tuple[SqliteStore, satchel.Runtime, list[int]],
) -> None:
    store, rt, keys = chat
    before = await store.evidence("memory", "chat", keys)
    await rt.add_memories("chat", [satchel.MemoryEntry(text="Ben: thanks!", thread="t")])
    after = await store.evidence("memory", "chat", keys)
    assert not any(after[key] is before[key] for key in keys)
    assert dict(after) != dict(before)  # "thanks" is commoner now: ratings moved
    assert dict(after) == await rated_afresh(rt, keys)


async def test_a_write_that_adds_turns_carries_the_counts_to_the_next_version(
    chat: tuple[SqliteStore, satchel.Runtime, list[int]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """An agent writes a turn before each question: the counts kept at the scope's
    version, read from its held postings, carry to the next grown by the turns added,
    so the next read rates anew without reading a count; its ratings are those of a
    store keeping nothing."""
    from satchel.stores._postings import ScopePostings

    store, rt, keys = chat
    asked = satchel.PrepareContextRequest(scope_id="chat", query="which mill?", max_bytes=2000)
    for _ in range(3):  # the scope's postings are held once searched enough
        await rt.prepare_context(asked)
    store._term_counts.forget()
    before = await store.evidence("memory", "chat", keys)
    assert store._term_counts.at("memory", "chat", store.scope_version("chat")).exact
    await rt.add_memories("chat", [satchel.MemoryEntry(text="Ben: thanks! the mill", thread="t")])
    read: list[str] = []
    held, statement = ScopePostings.frequencies, sqlite_search.term_counts

    def from_postings(self: ScopePostings, prefix: str, terms: list[str]) -> dict[str, int]:
        read.extend(terms)
        return held(self, prefix, terms)

    def by_statement(*args: Any) -> dict[str, int]:
        read.extend(args[-1])
        return statement(*args)

    monkeypatch.setattr(ScopePostings, "frequencies", from_postings)
    monkeypatch.setattr(sqlite_search, "term_counts", by_statement)
    after = await store.evidence("memory", "chat", keys)
    assert read == []
    kept = store._term_counts.at("memory", "chat", store.scope_version("chat"))
    assert (kept.counts["mill"], kept.counts["thank"]) == (4, 2)
    assert dict(after) != dict(before)  # "thanks" and "mill" are commoner now
    monkeypatch.undo()
    assert dict(after) == await rated_afresh(rt, keys)


def test_counts_are_carried_only_from_a_read_at_their_version_past_added_records() -> None:
    counts = TermCounts()
    counts.at("memory", "s", 1).counts.update({"mill": 2, "ana": 3, "owl": 0})
    counts.follow("memory", "s", (1, 2), ["ana mill mill", "ben owl"])
    carried = counts.at("memory", "s", 2)
    assert carried.counts == {"mill": 3, "ana": 4, "owl": 1}  # a record counts once
    counts.follow("memory", "s", (1, 3), ["ana"])  # not the version kept: none followed
    assert counts.at("memory", "s", 2) is carried
    carried.exact = False  # a count read by statement, off the live file
    counts.follow("memory", "s", (2, 3), ["ana"])
    assert counts.at("memory", "s", 3).counts == {}
    counts.at("memory", "s", 3).counts["ana"] = 4
    counts.follow("memory", "s", (3, 4), None)  # a write that took records out
    assert counts.at("memory", "s", 4).counts == {}
    first = counts.at("memory", "s", 4)
    first.counts["ana"] = 4
    counts.follow("memory", "s", (4, 5), ["ana"])
    first.counts["late"] = 7  # a rating still in flight at the first version
    assert counts.at("memory", "s", 5).counts == {"ana": 5}


async def test_at_most_most_evidence_are_kept_over_every_scope(
    chat: tuple[SqliteStore, satchel.Runtime, list[int]], monkeypatch: pytest.MonkeyPatch
) -> None:
    store, _, keys = chat
    store._term_counts.forget()
    monkeypatch.setattr(_term_counts, "MOST_EVIDENCE", 3)
    first = await store.evidence("memory", "chat", keys)
    kept = store._term_counts.at("memory", "chat", store.scope_version("chat"))
    assert len(kept.evidence) == 3
    again = await store.evidence("memory", "chat", keys)
    assert sum(again[key] is first[key] for key in keys) == 3
    assert dict(again) == dict(first)


def test_evidence_read_while_a_write_landed_is_not_kept() -> None:
    counts = TermCounts()
    item = Evidence.from_record("memory", "s", "e1", 1, text="Ana: hello")
    stale = counts.at("memory", "s", 1)
    current = counts.at("memory", "s", 2)  # a write moved the version meanwhile
    counts.keep("memory", "s", stale, {1: item})
    assert not stale.evidence
    assert not current.evidence
    counts.keep("memory", "s", current, {1: item})
    assert current.evidence == {1: item}
    counts.drop("s")
    assert counts._evidence == 0


async def test_a_name_the_scope_never_holds_is_read_as_it_spells_it_once_per_version(
    chat: tuple[SqliteStore, satchel.Runtime, list[int]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A question calling Ana "Anna" has the terms the scope holds starting with "a"
    read once while the scope stands (``Kept.spellings``): a later question naming
    someone the scope does not hold reads none, and finds what the first found; a write
    reads them again."""
    store, rt, _ = chat
    more = ["Ana: the kestrel came back", "Ana: it sat on the mill roof"]  # Ana's, 5 of 7
    await rt.add_memories("chat", [satchel.MemoryEntry(text=text, thread="t") for text in more])
    reads: list[tuple[str, ...]] = []
    read = sqlite_search.terms_starting

    def counted(*args: Any) -> dict[str, int]:
        reads.append(args[3])
        return read(*args)

    monkeypatch.setattr(sqlite_search, "terms_starting", counted)

    async def asked(question: str) -> Pool:
        vector = satchel.StaticEmbedder().embed_sync([question])[0]
        return await store.retrieve(
            "memory", "chat", PoolRequest(analyse_query(question), vector, 8)
        )

    first = await asked("Where did Anna see the kestrel?")
    assert first.spelled_names == ("ana",)
    starts = reads[0]  # "a", and the first letters of her nicknames ("h" for Hannah...)
    assert starts[0] == "a"
    again = await asked("Which mill did Anna mean?")
    assert reads == [starts]
    assert again.spelled_names == first.spelled_names
    assert (await asked("Where did Anna see the kestrel?")).lexical_keys.tolist() == (
        first.lexical_keys.tolist()
    )
    assert reads == [starts]
    await rt.add_memories("chat", [satchel.MemoryEntry(text="Ana: bye!", thread="t")])
    assert (await asked("Which mill did Anna mean?")).spelled_names == ("ana",)
    assert reads == [starts, starts]
