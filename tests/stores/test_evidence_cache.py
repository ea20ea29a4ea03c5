"""The evidence cache: exact evidence back, nothing for the collector, batched eviction."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from satchel.stores.sqlite._evidence_cache import EvidenceCache
from satchel.vocabulary import Evidence
from tests._collector import tracked_within

SAID = datetime(2023, 5, 7, 14, 3, tzinfo=UTC)


def rows() -> list[Evidence]:
    """Evidence of every family, as stores make it."""
    return [
        Evidence.from_record(
            "memory", "s", "e1", 2, text="Caroline: the support group", created_at=SAID,
            thread="t1",
        ),
        Evidence.from_record("experience", "s", "x1", 1, text="searched; found it"),
        Evidence.from_record("topic-memory", "s", "k1", 3, text="on birds"),
        Evidence.from_record("profile", "s", text="prefers short answers"),
        Evidence.from_record(
            "resource", "s", "file:///a.md", abstract="an abstract", overview="an overview"
        ),
    ]  # fmt: skip


def test_a_cached_row_comes_back_as_the_evidence_that_was_read() -> None:
    cache = EvidenceCache()
    read = dict(enumerate(rows()))
    cache.remember(read, cache.generation)
    for key, evidence in read.items():
        found, missing = cache.split([key], evidence.family, evidence.scope_id)
        assert (found, missing) == ({key: evidence}, [])
        # Spelled in the family's order too: a citation's fields are rendered as listed.
        assert list(found[key].citation.items()) == list(evidence.citation.items())


def test_a_read_of_a_family_no_row_has_finds_nothing() -> None:
    cache = EvidenceCache()
    cache.remember(dict(enumerate(rows())), cache.generation)
    assert cache.split([0, 1], "experience", "s") == ({1: rows()[1]}, [0])
    assert cache.split([0, 1], "no-such-family", "s") == ({}, [0, 1])


def test_kept_rows_are_nothing_the_garbage_collector_walks() -> None:
    """However many rows it keeps, the cache is a constant handful of tracked objects:
    kept Evidence objects made every young collection walk thousands of them, on
    whichever thread allocated (often the host's event loop)."""
    cache = EvidenceCache()
    empty = tracked_within(cache)
    read = {
        n: Evidence.from_record("memory", "s", f"e{n}", 1, text=f"note {n}") for n in range(200)
    }
    cache.remember(read, cache.generation)
    assert len(cache) == 200
    assert tracked_within(cache) <= empty + 1  # its dict, once it holds entries


def test_evidence_with_a_citation_its_family_does_not_spell_is_not_kept() -> None:
    """The cache rebuilds citations from the family table; evidence whose citation is
    another shape is read again rather than served with a citation it did not have."""
    odd = Evidence(
        "memory", "s", "odd", {"family": "memory", "scope": "s", "entry_id": "e", "note": 1}, "x"
    )
    cache = EvidenceCache()
    cache.remember({1: odd}, cache.generation)
    assert cache.split([1], "memory", "s") == ({}, [1])


@pytest.mark.parametrize(("capacity", "written", "kept"), [(16, 17, 14), (16, 16, 16), (2, 3, 2)])
def test_a_full_cache_evicts_its_oldest_eighth_at_once(
    capacity: int, written: int, kept: int
) -> None:
    """Evicting one entry per new one made each freed entry cancel the allocation count
    that starts a young collection, so new entries piled up between collections."""
    cache = EvidenceCache(capacity=capacity)
    for n in range(written):
        cache.remember(
            {n: Evidence.from_record("memory", "s", f"e{n}", 1, text=str(n))}, cache.generation
        )
    assert len(cache) == kept
    found, missing = cache.split(list(range(written)), "memory", "s")
    assert sorted(found) == list(range(written - kept, written))
    assert missing == list(range(written - kept))
