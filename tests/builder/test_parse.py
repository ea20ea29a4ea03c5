"""parse_context: the exact inverse of the rendered pack; the short spellings of ids and
times; packs of the first format still read."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta, timezone

import pytest

import satchel
from satchel.vocabulary import Limits
from satchel.vocabulary._refs import compact_id, compact_time, full_id, full_time

from .factories import build, memory, resource
from .test_budget import MARKERS, random_candidates, random_detail, random_sections


def served_text(evidence: satchel.vocabulary.Evidence, tier: str) -> str | None:
    """What an item of ``evidence`` holds at ``tier`` before any cut."""
    if evidence.family != "resource":
        return evidence.text
    return {
        "abstract": evidence.abstract,
        "overview": evidence.overview,
        "full": evidence.text,
    }.get(tier)


def test_random_packs_parse_back_to_what_was_delivered() -> None:
    """Over seeded random packs (hostile text included), every delivered item parses back
    with its exact citation, tier, truncation flag and text (a cut text is a prefix)."""
    rng = random.Random(7)
    for _ in range(300):
        candidates = random_candidates(rng)
        result = build(
            candidates,
            max_bytes=rng.choice([512, 900, rng.randint(512, 32768)]),
            sections=random_sections(rng),
            detail=random_detail(rng),
            limits=rng.choice([Limits(), Limits.classic()]),
        )
        parsed = satchel.parse_context(result.render().content)
        assert len(parsed) == len(result.delivered)
        for item, delivered in zip(parsed, result.delivered, strict=True):
            evidence = delivered.evidence
            assert item.citation == satchel.Citation.from_json(evidence.citation)
            assert item.at == evidence.created_at
            if item.at is not None:
                assert item.at.utcoffset() == evidence.created_at.utcoffset()  # type: ignore[union-attr]
            assert (item.tier, item.truncated) == (delivered.tier, delivered.truncated)
            whole = served_text(evidence, item.tier)
            if item.tier == "uri":
                assert item.text is None
            elif item.truncated:
                assert whole is not None
                assert item.text
                assert whole.startswith(item.text)
            else:
                assert item.text == whole


def test_hostile_text_comes_back_exactly() -> None:
    """Marker text, line breaks and JSON syntax inside stored text parse back unchanged."""
    text = "".join(MARKERS) + "\u2028 a line\nbreak \u0085 and \x7f"
    at = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    result = build({"memory": [memory("m1", text, created_at=at)]}, max_bytes=4000)
    (item,) = satchel.parse_context(result.render().content)
    assert item.text == text
    assert item.at == at
    assert item.citation == satchel.Citation("memory", "project:demo", "m1", 1)


def test_sections_parse_in_the_callers_order() -> None:
    """An assembly parses group by group, in delivery order."""
    sections = [satchel.Section("resource", 1), satchel.Section("memory", 1)]
    result = build(
        {"memory": [memory("m1")], "resource": [resource("guide")]},
        max_bytes=4000,
        sections=sections,
    )
    families = [item.citation.family for item in satchel.parse_context(result.render().content)]
    assert families == ["resource", "memory"]


def test_a_resource_citation_has_no_version() -> None:
    """A resource is cited by URI alone, so its citation's version is None."""
    result = build({"resource": [resource("guide")]}, max_bytes=4000)
    (item,) = satchel.parse_context(result.render().content)
    assert item.citation.version is None
    assert item.citation.id == "file:///docs/guide.md"


def test_an_empty_pack_has_no_items() -> None:
    """None (an empty pack) parses to no items."""
    assert satchel.parse_context(None) == ()


GROUP = '{"family":"memory","scope":"s"}'


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (["{not json"], "not JSON"),
        (['[null,"x","m"]'], "before any group line"),
        (['{"family":"note","scope":"s"}'], "known family"),
        (['{"family":"memory"}'], "known family"),
        ([GROUP, "5"], "neither a group nor an item"),
        ([GROUP, '[null,"x"]'], "lacks its entry_id"),
        ([GROUP, "[null]"], "lacks its time or its text"),
        ([GROUP, '[null,"x","m",2,{},{}]'], "unknown fields"),
        ([GROUP, '[null,"x","m","extra"]'], "unknown fields"),
        ([GROUP, '[null,"x","m",{"tier":"deep"}]'], "tier or truncated"),
        ([GROUP, '[null,"x","m",{"truncated":"yes"}]'], "tier or truncated"),
        ([GROUP, '[null,null,"m"]'], "does not match its tier"),
        ([GROUP, '[null,"x","m",{"tier":"uri"}]'], "does not match its tier"),
        ([GROUP, '["yesterday","x","m"]'], "time is malformed"),
        ([GROUP, '[5,"x","m"]'], "time is malformed"),
    ],
)
def test_a_malformed_pack_is_refused_naming_what_is_wrong(lines: list[str], message: str) -> None:
    content = "\n".join(["BEGIN_SATCHEL_CONTEXT_V2", *lines, "END_SATCHEL_CONTEXT_V2"])
    with pytest.raises(satchel.InvalidRequestError, match=message):
        satchel.parse_context(content)


@pytest.mark.parametrize(
    "content",
    [
        "no markers at all",
        "END_SATCHEL_CONTEXT_V2\nBEGIN_SATCHEL_CONTEXT_V2",
        "BEGIN_SATCHEL_CONTEXT_V2\n{not json\nEND_SATCHEL_CONTEXT_V2",
        'BEGIN_SATCHEL_CONTEXT_V1\n[null, "x"]\nEND_SATCHEL_CONTEXT_V1',
    ],
)
def test_what_is_no_pack_is_refused(content: str) -> None:
    """Text that is not a satchel pack raises InvalidRequestError, never a raw error."""
    with pytest.raises(satchel.InvalidRequestError):
        satchel.parse_context(content)


@pytest.mark.parametrize(
    ("record_id", "spelled"),
    [
        ("70593d4af06a4107a25000848f1d08b4", "cFk9SvBqQQeiUACEjx0ItA"),
        ("00000000000000000000000000000000", "AAAAAAAAAAAAAAAAAAAAAA"),
        ("70593D4AF06A4107A25000848F1D08B4", "70593D4AF06A4107A25000848F1D08B4"),
        ("cFk9SvBqQQeiUACEjx0ItA", "=cFk9SvBqQQeiUACEjx0ItA"),
        ("=x", "==x"),
        ("file:///docs/a.md", "file:///docs/a.md"),
        ("", ""),
    ],
)
def test_ids_are_spelled_short_and_read_back_exactly(record_id: str, spelled: str) -> None:
    """A minted id takes 22 characters; an id that could be taken for one is marked."""
    assert compact_id(record_id) == spelled
    assert full_id(spelled) == record_id


def test_random_ids_and_times_round_trip() -> None:
    rng = random.Random(3)
    for _ in range(2000):
        record_id = "".join(
            rng.choice("0123456789abcdef=-_Az") for _ in range(rng.choice([22, 32, 5]))
        )
        assert full_id(compact_id(record_id)) == record_id
        minted = f"{rng.getrandbits(128):032x}"
        assert full_id(compact_id(minted)) == minted
        assert len(compact_id(minted)) == 22
        offset = timezone(timedelta(minutes=rng.randint(-900, 900)))
        when = datetime(1, 1, 2, tzinfo=UTC) + timedelta(seconds=rng.randint(0, 6 * 10**10))
        when = when.replace(microsecond=rng.choice([0, rng.randint(0, 999_999)])).astimezone(offset)
        back = full_time(compact_time(when))
        assert back == when
        assert back.utcoffset() == when.utcoffset()
