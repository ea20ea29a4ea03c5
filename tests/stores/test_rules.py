"""The record rules every store calls (``satchel.stores._rules``), on plain values."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import attrs
import numpy as np
import pytest

from satchel.stores import (
    Experience,
    Family,
    MemoryEntry,
    MemoryRef,
    NotFoundError,
    Profile,
    RecordRef,
    Resource,
    StoreError,
    TopicMemory,
)
from satchel.stores import _rules as r
from satchel.stores._placing import place, place_async
from satchel.vocabulary import rules
from satchel.vocabulary._records import experience_text, topic_text

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


@attrs.define
class Answers:
    """A store's answers to placement's questions, from dictionaries, noting each one
    asked (``_placing.Placer``)."""

    keys: dict[str, r.Live[int]] = attrs.Factory(dict)
    names: dict[tuple[str, str], r.Live[int]] = attrs.Factory(dict)
    latest: dict[str, int] = attrs.Factory(dict)
    asked: list[str] = attrs.Factory(list)

    def key_holder(self, key: str) -> r.Live[int] | None:
        self.asked.append(f"key {key}")
        return self.keys.get(key)

    def name_holder(self, field: str, name: str) -> r.Live[int] | None:
        self.asked.append(f"{field} {name}")
        return self.names.get((field, name))

    def latest_version(self, record_id: str) -> int:
        self.asked.append(f"latest {record_id}")
        return self.latest.get(record_id, 0)

    def retire(self, handle: int) -> None:
        self.asked.append(f"retire {handle}")


class AsyncAnswers(Answers):
    """The same answers, awaited (``_placing.AsyncPlacer``)."""

    async def key_holder(self, key: str) -> r.Live[int] | None:  # type: ignore[override]
        return super().key_holder(key)

    async def name_holder(self, field: str, name: str) -> r.Live[int] | None:  # type: ignore[override]
        return super().name_holder(field, name)

    async def latest_version(self, record_id: str) -> int:  # type: ignore[override]
        return super().latest_version(record_id)

    async def retire(self, handle: int) -> None:  # type: ignore[override]
        super().retire(handle)


def placed(family: Family, record: object, answers: Answers) -> r.WriteDecision[int]:
    return place(family, rules(family).columns_of(record), answers)


def test_a_record_placed_by_key_alone_asks_nothing_without_one() -> None:
    """A memory entry or experience without a key is new: the store is asked nothing."""
    answers = Answers()
    assert placed("memory", MemoryEntry(text="t"), answers).kind == "new"
    assert placed("experience", Experience("s", "a", "o", "l"), answers).kind == "new"
    assert answers.asked == []


def test_a_key_holding_the_same_content_places_the_record_unchanged() -> None:
    """The key's version holds this very content: nothing written, nothing retired."""
    entry = MemoryEntry(text="t", key="k")
    same = r.content_hash_of("memory", rules("memory").columns_of(entry))
    answers = Answers(keys={"k": r.Live(7, "e1", 3, same)})
    assert placed("memory", entry, answers) == r.WriteDecision("unchanged", "e1", 3)
    assert answers.asked == ["key k"]


def test_a_title_places_an_unkeyed_topic_on_the_live_note_it_names() -> None:
    """A topic memory its key did not place revises the live note with its title,
    retiring it; one whose key found its note never asks the title."""
    answers = Answers(names={("title", "T"): r.Live(5, "note", 2)})
    decision = placed("topic-memory", TopicMemory("T", "x"), answers)
    assert decision == r.WriteDecision("new-version", "note", 3, 5)
    assert answers.asked == ["title T", "retire 5"]
    keyed = Answers(keys={"k": r.Live(8, "other", 1, "old")})
    decision = placed("topic-memory", TopicMemory("T", "x", key="k"), keyed)
    assert decision == r.WriteDecision("new-version", "other", 2, 8)
    assert keyed.asked == ["key k", "retire 8"]


def test_a_uri_places_a_resource_unless_its_key_found_it_there() -> None:
    """A resource whose key found it live at its URI stays there; one whose key found
    it at another URI leaves that one and takes its URI's next revision."""
    here = Answers(keys={"k": r.Live(4, "u", 2, "old")})
    assert placed("resource", Resource("u", "b", key="k"), here) == r.WriteDecision(
        "new-version", "u", 3, 4
    )
    assert here.asked == ["key k", "retire 4"]
    moved = Answers(keys={"k": r.Live(4, "a", 2, "old")}, latest={"b": 3})
    assert placed("resource", Resource("b", "B", key="k"), moved) == r.WriteDecision(
        "new-version", "b", 4
    )
    assert moved.asked == ["key k", "retire 4", "uri b", "latest b"]


def test_a_uri_places_a_resource_whose_keys_record_left_search() -> None:
    """The key's record was forgotten: the resource goes by its URI, replacing the live
    one there; a URI never written starts at revision 1."""
    answers = Answers(
        keys={"k": r.Live(4, "u", 2, "old", live=False)},
        names={("uri", "u"): r.Live(9, "u", 5)},
    )
    assert placed("resource", Resource("u", "b", key="k"), answers) == r.WriteDecision(
        "new-version", "u", 6, 9
    )
    assert answers.asked == ["key k", "uri u", "retire 9"]
    assert placed("resource", Resource("new", "b"), Answers()) == r.WriteDecision("new", "new", 1)


@pytest.mark.anyio
async def test_a_store_answering_on_the_loop_places_records_the_same() -> None:
    """place_async asks the same questions in the same order and decides the same."""
    cases: list[tuple[Family, object]] = [
        ("resource", Resource("b", "B", key="k")),
        ("topic-memory", TopicMemory("T", "x")),
    ]
    for family, record in cases:
        sync = Answers(
            keys={"k": r.Live(4, "a", 2, "old")}, names={("title", "T"): r.Live(5, "n", 1)}
        )
        waited = AsyncAnswers(keys=dict(sync.keys), names=dict(sync.names))
        columns = rules(family).columns_of(record)
        assert await place_async(family, columns, waited) == place(family, columns, sync)
        assert waited.asked == sync.asked


def test_content_hash_is_the_stored_hash_of_the_content() -> None:
    """The hash is the SHA-256 of compact JSON, so stored OceanBase hashes still match."""
    import hashlib

    expected = hashlib.sha256(b'["a",null,["t"]]').hexdigest()
    assert r.content_hash(("a", None, ("t",))) == expected


def content(family: Family, record: object) -> r.Content:
    return r.content_of(family, rules(family).columns_of(record))


def test_each_family_compares_what_its_key_promises() -> None:
    """Content follows the family's row: text, kind, tags, time and thread for memory,
    and so on; never the key. These tuples are what stored hashes were made of."""
    entry = MemoryEntry(text="t", tags=("a",), created_at=SAID, thread="x", key="k")
    assert content("memory", entry) == ("t", "fact", ("a",), SAID.isoformat(), "x")
    hashed = r.content_hash_of("memory", rules("memory").columns_of(entry))
    other = MemoryEntry(text="t", tags=("b",), key="k")
    assert hashed != r.content_hash_of("memory", rules("memory").columns_of(other))
    rekeyed = rules("memory").columns_of(attrs.evolve(entry, key="j"))
    assert hashed == r.content_hash_of("memory", rekeyed)
    topic = TopicMemory(title="T", text="x")
    assert content("topic-memory", topic) == ("T", topic_text(topic))
    resource = Resource(uri="u", body="b", abstract="a")
    assert content("resource", resource) == ("u", "a", None, "b")
    lesson = Experience(situation="s", action="a", outcome="o", lesson="l")
    assert content("experience", lesson) == (experience_text(lesson),)


def test_a_time_is_compared_as_its_instant() -> None:
    """One moment written with two UTC offsets is one content."""
    later = SAID.astimezone(timezone(timedelta(hours=2)))
    assert content("memory", MemoryEntry(text="t", created_at=later)) == content(
        "memory", MemoryEntry(text="t", created_at=SAID)
    )


def test_stored_columns_read_back_are_the_written_ones() -> None:
    """columns_from() decodes what a SQL store keeps (tags as JSON, a time in ISO form)
    into the columns the record was written as, so their hashes match."""
    entry = MemoryEntry(text="t", tags=("a",), created_at=SAID, thread="x", key="k")
    stored = {"text": "t", "kind": "fact", "tags": '["a"]', "created_at": SAID.isoformat(),
              "thread": "x", "title": "ignored"}  # fmt: skip
    assert r.columns_from("memory", stored, "k") == rules("memory").columns_of(entry)
    resource = Resource(uri="u", body="b", abstract="a")
    kept = {"uri": "u", "abstract": "a", "overview": None, "body": "b", "text": "ignored"}
    assert r.columns_from("resource", kept, None) == rules("resource").columns_of(resource)


def test_a_resource_is_searched_on_its_summaries_and_others_on_their_text() -> None:
    """The table's indexed and embedded text: a resource's abstract and overview (its URI
    embedded when it has neither), any other record's text; an experience is indexed
    only."""
    resource = rules("resource")
    assert resource.indexed_text(resource.columns_of(Resource("u", "b", "a", "o"))) == "a o"
    assert resource.indexed_text(resource.columns_of(Resource("u", "b", None, "o"))) == "o"
    bare = resource.columns_of(Resource("u", "body"))
    assert (resource.indexed_text(bare), resource.embedded_text(bare)) == ("", "u")
    topic = rules("topic-memory").columns_of(TopicMemory("T", "x"))
    assert rules("topic-memory").indexed_text(topic) == "T\n\nx"
    assert rules("topic-memory").embedded_text(topic) == "T\n\nx"
    lesson = rules("experience").columns_of(Experience("s", "a", "o", "l"))
    assert rules("experience").indexed_text(lesson).startswith("Situation: s")
    assert rules("experience").embedded_text(lesson) == ""


def test_a_turn_said_by_a_phone_number_embeds_what_was_said() -> None:
    """A memory whose speaker is a phone number embeds the words past it, and is indexed
    whole; a named speaker's turn, a dated note and a topic memory embed all they hold."""
    memory = rules("memory")
    said = memory.columns_of(MemoryEntry(text="+44 7700 900123: we got a kitten"))
    assert memory.embedded_text(said) == "we got a kitten"
    assert memory.indexed_text(said) == "+44 7700 900123: we got a kitten"
    for text in ("Maya: we got a kitten", "2023-05-07: the scan", "+1 555: too short"):
        assert memory.embedded_text(memory.columns_of(MemoryEntry(text=text))) == text
    topic = rules("topic-memory").columns_of(TopicMemory("+44 7700 900123: T", "x"))
    assert rules("topic-memory").embedded_text(topic) == "+44 7700 900123: T\n\nx"


def test_a_write_refuses_what_its_family_does_not_take() -> None:
    """check_write() names another family's record, missing or unwanted vectors, and a
    profile write of other than one profile."""
    one = np.ones((1, 4), dtype=np.float32)
    with pytest.raises(StoreError, match="memory write holds a Experience"):
        r.check_write("memory", [Experience("s", "a", "o", "l")], one)
    with pytest.raises(StoreError, match="needs one vector per record"):
        r.check_write("memory", [MemoryEntry(text="t")], None)
    with pytest.raises(StoreError, match="experience records have no vectors"):
        r.check_write("experience", [Experience("s", "a", "o", "l")], one)
    with pytest.raises(StoreError, match="exactly one profile, not 2"):
        r.check_write("profile", [Profile("a"), Profile("b")], None)
    with pytest.raises(StoreError, match="no family 'note'"):
        r.check_write("note", [], None)  # type: ignore[arg-type]
    assert r.check_write("profile", [Profile("a")], None) == rules("profile")


def test_a_write_returns_its_familys_reference() -> None:
    """ref_of() is the row's reference: a memory entry's version, another revision."""
    decision: r.WriteDecision[int] = r.WriteDecision("new", "id", 1)
    assert r.ref_of("memory", "s", decision) == MemoryRef("s", "id", 1)
    assert r.ref_of("resource", "s", decision) == RecordRef("resource", "s", "id", 1)


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
