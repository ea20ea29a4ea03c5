"""The record rules every store calls (``satchel.stores._rules``), on plain values."""

from __future__ import annotations

from datetime import UTC, datetime

import attrs
import numpy as np
import pytest

from satchel.stores import (
    Experience,
    MemoryEntry,
    MemoryRef,
    NotFoundError,
    Resource,
    StoreError,
    TopicMemory,
)
from satchel.stores import _rules as r
from satchel.vocabulary._records import topic_text

SAID = datetime(2024, 5, 1, 12, tzinfo=UTC)


def test_no_key_found_makes_a_new_record_at_version_1() -> None:
    """Without a version holding the key, the write is a new record at version 1."""
    decision: r.WriteDecision[str] = r.decide(None, "abc")
    assert (decision.kind, decision.version, decision.retire) == ("new", 1, None)
    assert decision.writes
    assert decision.record_id != r.decide(None, "abc").record_id


def test_the_same_content_under_a_key_writes_nothing() -> None:
    """A key whose version holds the same content keeps that version: nothing written."""
    decision = r.decide(r.Live("row-7", "rid", 3, "same"), "same")
    assert decision == r.WriteDecision("unchanged", "rid", 3)
    assert not decision.writes


def test_new_content_under_a_key_is_the_next_version_and_retires_the_old() -> None:
    """A key whose version holds other content gets the next version; the old leaves search."""
    decision = r.decide(r.Live("row-7", "rid", 3, "old"), "new")
    assert decision == r.WriteDecision("new-version", "rid", 4, "row-7")


def test_the_same_content_under_a_forgotten_key_stays_forgotten() -> None:
    """Forget is forever: a forgotten version with the same content is returned, unwritten."""
    decision = r.decide(r.Live("row-7", "rid", 3, "same", live=False), "same")
    assert decision == r.WriteDecision("unchanged", "rid", 3)
    assert not decision.writes


def test_new_content_under_a_forgotten_key_is_the_next_version_retiring_nothing() -> None:
    """New content under a forgotten key is its record's next version; nothing to retire."""
    decision = r.decide(r.Live("row-7", "rid", 3, "old", live=False), "new")
    assert decision == r.WriteDecision("new-version", "rid", 4)


def test_a_title_held_by_a_live_note_replaces_it() -> None:
    """A topic memory's title held by a live note makes that note's next revision."""
    assert r.by_title(r.Live(5, "note", 2)) == r.WriteDecision("new-version", "note", 3, 5)
    assert r.by_title(None).kind == "new"


def test_a_uri_is_the_record_id_and_counts_its_revisions() -> None:
    """A resource's URI names it: a live one is replaced, a returning one continues."""
    assert r.by_uri("u", r.Live(9, "u", 2), 2) == r.WriteDecision("new-version", "u", 3, 9)
    assert r.by_uri("u", None, 4) == r.WriteDecision("new-version", "u", 5)
    assert r.by_uri("u", None, 0) == r.WriteDecision("new", "u", 1)


def test_the_name_decides_only_where_the_key_did_not() -> None:
    """Titles decide for unkeyed topics; URIs unless the key's record already lives there."""
    new: r.WriteDecision[int] = r.decide(None, "x")
    revised = r.WriteDecision("new-version", "u", 2, 1)
    assert r.needs_name("topic-memory", new)
    assert not r.needs_name("topic-memory", revised)
    assert not r.needs_name("resource", revised, "u")
    assert r.needs_name("resource", revised, "other")
    assert r.needs_name("resource", new, "u")
    assert not r.needs_name("memory", new)


def test_a_uri_decides_where_the_keys_record_is_not_live() -> None:
    """A resource whose key's record left search is placed by its URI, not its key."""
    forgotten: r.WriteDecision[int] = r.WriteDecision("new-version", "u", 2)
    assert r.needs_name("resource", forgotten, "u")


def test_content_identity_is_the_stored_hash_of_the_content() -> None:
    """The identity is the SHA-256 of compact JSON, so stored OceanBase hashes still match."""
    import hashlib

    expected = hashlib.sha256(b'["a",null,["t"]]').hexdigest()
    assert r.content_hash(("a", None, ("t",))) == expected


def test_each_family_compares_what_its_key_promises() -> None:
    """Identity follows content: text, kind, tags, time and thread for memory, and so on."""
    entry = MemoryEntry(text="t", tags=("a",), created_at=SAID, thread="x", key="k")
    assert r.content_of(entry) == ("t", "fact", ("a",), SAID.isoformat(), "x")
    assert r.content_hash_of(entry) != r.content_hash_of(
        MemoryEntry(text="t", tags=("b",), key="k")
    )
    assert r.content_hash_of(entry) == r.content_hash_of(
        attrs.evolve(entry, key="j")
    )  # not the key
    topic = TopicMemory(title="T", text="x")
    assert r.content_of(topic) == ("T", topic_text(topic))
    resource = Resource(uri="u", body="b", abstract="a")
    assert r.content_of(resource) == ("u", "a", None, "b")
    assert len(r.content_of(Experience(situation="s", action="a", outcome="o", lesson="l"))) == 1


def test_a_resource_is_searched_on_its_summaries_and_others_on_their_text() -> None:
    """searchable() is the text when there is one, else abstract and overview joined."""
    assert r.searchable("text", "a", "o") == "text"
    assert r.searchable(None, "a", "o") == "a o"
    assert r.searchable(None, None, "o") == "o"
    assert r.searchable(None, None, None) == ""


def test_stored_tags_round_trip_and_missing_ones_are_none() -> None:
    """Tags stored as a JSON array decode back; an empty or missing column is no tags."""
    assert r.decode_tags(r.encode_tags(("é", "b"))) == ("é", "b")
    assert r.decode_tags(b'["x"]') == ("x",)
    assert r.decode_tags(None) == r.decode_tags("") == ()


def test_a_stored_memory_version_decodes_to_its_record() -> None:
    """memory_record() decodes tags and time exactly as they were written."""
    ref = MemoryRef("s", "e", 2)
    record = r.memory_record(ref, "t", "fact", '["a"]', SAID.isoformat(), None, "k")
    assert (record.tags, record.created_at, record.key, record.ref) == (("a",), SAID, "k", ref)
    assert r.memory_record(ref, "t", "fact", None, None, None, None).created_at is None


def test_vectors_must_be_one_row_per_record() -> None:
    """check_vectors() refuses a count or shape that does not fit the write."""
    with pytest.raises(StoreError, match="expected 2 vectors"):
        r.check_vectors(np.zeros((3, 4), np.float32), 2, None)
    with pytest.raises(StoreError, match="expected 1 vectors"):
        r.check_vectors(np.zeros(4, np.float32), 1, None)


def test_the_first_vectors_fix_the_dimension_and_an_empty_write_fixes_none() -> None:
    """check_vectors() returns the dimension held after the write; others are refused."""
    assert r.check_vectors(np.zeros((2, 4), np.float32), 2, None) == 4
    assert r.check_vectors(np.zeros((0, 8), np.float32), 0, None) is None
    assert r.check_vectors(np.zeros((0, 8), np.float32), 0, 4) == 4
    with pytest.raises(StoreError, match="holds 4-dimensional vectors"):
        r.check_vectors(np.zeros((1, 8), np.float32), 1, 4)


def test_a_query_vector_of_another_dimension_is_refused() -> None:
    """check_query_vector() names both dimensions; with no vectors stored any is fine."""
    r.check_query_vector(np.zeros(8, np.float32), None)
    with pytest.raises(StoreError, match="query vector has 8 dimensions"):
        r.check_query_vector(np.zeros(8, np.float32), 4)


def test_only_the_embedder_that_built_the_vectors_is_accepted() -> None:
    """check_embedder() refuses another fingerprint, or another dimension than held."""
    r.check_embedder(None, None, "any/4", 4)
    r.check_embedder("mine/4", 4, "mine/4", 4)
    with pytest.raises(StoreError, match=r"built by mine/4.*opened with other/4\. Rebuild"):
        r.check_embedder("mine/4", 4, "other/4", 4, "Rebuild.")
    with pytest.raises(StoreError, match="built by a 4-dimensional embedder"):
        r.check_embedder(None, 4, "other/8", 8)


def test_messages_name_what_is_missing() -> None:
    """The not-found errors name the version, entry and scope."""
    ref = MemoryRef("s", "e", 3)
    assert isinstance(r.no_version(ref), NotFoundError)
    assert "no version 3 of memory entry 'e' in scope 's'" in str(r.no_version(ref))
    assert "'e' was forgotten" in str(r.forgotten(ref))
    assert "scope 's' holds no memory" in str(r.no_scope("s"))
