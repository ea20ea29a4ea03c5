"""Repeated text is delivered once: the best-ranked place, the newest of the repeats."""

from __future__ import annotations

import random
import re
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from hypothesis import given
from hypothesis import strategies as st

from satchel.builder import _selection
from satchel.builder._fitting import FitMemo
from satchel.builder._selection import KEY_CHARS, distinct, normalised
from satchel.vocabulary._limits import Limits
from satchel.vocabulary._requests import Section

from .factories import Candidates, build, entry_ids, experience, memory, resource, topic

if TYPE_CHECKING:
    import pytest

START = datetime(2024, 3, 1, 9, 0, tzinfo=UTC)
#: Few distinct sayings, so random packs repeat them often.
SAYINGS = (
    "I pushed a fix for the flaky login test",
    "Deploy is green again",
    "Can someone review my PR?",
    "lunch?",
    "👍",
)


def said(text: str, rng: random.Random) -> str:
    """``text`` as someone might type it again: other case, spacing and punctuation."""
    words = text.split()
    if rng.random() < 0.5:
        words = [word.upper() if rng.random() < 0.3 else word.lower() for word in words]
    spaced = rng.choice([" ", "  ", "\t", " \n "]).join(words)
    return rng.choice(["", "  ", "> "]) + spaced + rng.choice(["", ".", "!!", " :)", "..."])


def test_normalised_sets_aside_case_whitespace_and_punctuation() -> None:
    """Case, runs of whitespace and punctuation do not make a text another; a text with
    no letter or digit is compared by its characters."""
    assert normalised("I pushed a FIX for the flaky-login test!") == normalised(
        "  i pushed a fix,   for the flaky login test"
    )
    assert normalised("Deploy is green") != normalised("Deploy is green again")
    assert normalised("👍") != normalised("😭")
    assert normalised("?!") == normalised(" ? ! ")


def by_pattern(text: str) -> str:
    """``normalised`` as the pattern alone spells it (an ASCII text takes a byte table)."""
    folded = re.sub(r"[\W_]+", " ", text.casefold()).strip()
    return folded or "".join(text.split())


@given(text=st.text(st.characters(max_codepoint=127)) | st.text())
def test_ascii_text_is_normalised_as_the_pattern_does(text: str) -> None:
    """The byte table an ASCII text takes gives what the pattern gives, control
    characters, underscores and digits included; other text takes the pattern."""
    assert normalised(text) == by_pattern(text)
    assert normalised(f"{text}_x") == by_pattern(f"{text}_x")


def test_a_repeated_saying_is_delivered_once_as_the_newest_in_the_best_place() -> None:
    """Nine repeats of one saying among other candidates: one item, in the place of the
    best-ranked repeat, citing the newest repeat; the other eight are duplicates."""
    fix = "I pushed a fix for the flaky login test"
    repeats = [
        memory(f"fix{n}", fix if n % 2 else fix.upper() + "!", created_at=START + timedelta(days=n))
        for n in (3, 8, 1, 5, 0, 7, 2, 6, 4)
    ]
    others = [memory(f"other{n}", f"another note {n}") for n in range(3)]
    ranked = [others[0], repeats[0], others[1], *repeats[1:], others[2]]
    result = build({"memory": ranked})
    assert entry_ids(result) == ["other0:1", "fix8:1", "other1:1", "other2:1"]
    assert {item.identity for item in result.duplicates} == {
        f"fix{n}:1" for n in range(9) if n != 8
    }
    assert len(result.duplicates) == 8


def test_duplicates_give_their_room_to_the_next_candidates() -> None:
    """With room for three items, three repeats ranked first leave room for two more
    distinct ones; under the classic limits the repeats take no item slot either."""
    repeats = [memory(f"r{n}", "Deploy is green again") for n in range(3)]
    fresh = [memory(f"f{n}", f"fresh fact number {n}") for n in range(3)]
    room = build({"memory": [repeats[0], *fresh[:2]]}).content_bytes
    result = build({"memory": [*repeats, *fresh]}, max_bytes=room)
    assert entry_ids(result) == ["r0:1", "f0:1", "f1:1"]
    many = [memory(f"r{n}", "Deploy is green again") for n in range(12)]
    classic = build({"memory": [*many, *fresh]}, limits=Limits.classic())
    assert entry_ids(classic) == ["r0:1", "f0:1", "f1:1", "f2:1"]


def test_repeats_across_families_keep_the_first_offered() -> None:
    """The same text in two families is offered once, where it is offered first (rank
    by rank across families, or section by section); the later one is a duplicate."""
    candidates: Candidates = {
        "memory": [memory("m0", "shared words"), memory("m1", "own words")],
        "topic-memory": [topic("t0", "Shared  words.")],
    }
    assert entry_ids(build(candidates)) == ["m0:1", "m1:1"]
    sections = [Section("topic-memory", 1), Section("memory", 2)]
    assert entry_ids(build(candidates, sections=sections)) == ["t0:3", "m1:1"]


def test_long_texts_are_compared_whole() -> None:
    """Texts past the key length that share a beginning are different texts; whole
    repeats are still found."""
    head = "word " * (KEY_CHARS // 5 + 10)
    a, b, c = (
        memory(name, head + tail) for name, tail in (("a", "one"), ("b", "two"), ("c", "ONE"))
    )
    kept, duplicates = distinct({"memory": [a, b, c]}, None)
    assert [item.identity for item in kept["memory"]] == ["a:1", "b:1"]
    assert [item.identity for item in duplicates] == ["c:1"]


def test_items_without_text_are_never_duplicates() -> None:
    """A resource with no abstract has no text to repeat: each is cited."""
    bare = [resource(f"r{n}", abstract=None, overview=None) for n in range(3)]
    result = build({"resource": bare})
    assert len(result.delivered) == 3
    assert result.duplicates == ()


def test_random_packs_never_hold_a_text_twice() -> None:
    """Over seeded random packs full of repeats (any family, case, spacing, punctuation,
    budget, limits, assembly): no two delivered items share a normalised text; every
    candidate is delivered, a duplicate of an offered text, or lost to the budget or
    the limits; and the same input gives the same pack."""
    rng = random.Random(29)
    for _ in range(300):
        candidates = random_candidates(rng)
        max_bytes = rng.choice([512, 800, 2000, 8000, rng.randint(512, 32768)])
        limits = rng.choice([Limits(), Limits.classic()])
        sections = rng.choice([None, [Section("memory", 4), Section("experience", 2)]])
        result = build(candidates, max_bytes=max_bytes, limits=limits, sections=sections)
        texts = [normalised(item.evidence.text or "") for item in result.delivered]
        assert len(texts) == len(set(texts))
        delivered = {item.evidence.identity for item in result.delivered}
        duplicated = {item.identity for item in result.duplicates}
        assert delivered.isdisjoint(duplicated)
        every = {item.identity for items in candidates.values() for item in items}
        assert delivered | duplicated <= every
        for duplicate in result.duplicates:
            assert normalised(duplicate.text or "") in {
                normalised(item.text or "")
                for items in candidates.values()
                for item in items
                if item.identity not in duplicated
            }
        again = build(candidates, max_bytes=max_bytes, limits=limits, sections=sections)
        assert again.render() == result.render()


def random_candidates(rng: random.Random) -> Candidates:
    """Memories and experiences repeating a few sayings, dated or not."""
    memories = [
        memory(
            f"m{n}",
            said(rng.choice(SAYINGS), rng) + ("" if rng.random() < 0.7 else f" {n}"),
            created_at=None if rng.random() < 0.2 else START + timedelta(hours=rng.randint(0, 99)),
        )
        for n in range(rng.randint(0, 40))
    ]
    experiences = [experience(f"x{n}", said(rng.choice(SAYINGS), rng)) for n in range(4)]
    return {"memory": memories, "experience": experiences}


def test_a_text_is_normalised_once_and_the_kept_keys_stay_bounded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Fitting the same evidence again normalises none of it; past ``KEYS_KEPT`` texts
    the oldest keys go, and a text normalised again gives the same key."""
    calls: list[str] = []
    monkeypatch.setattr(_selection, "_keys", {})

    def lowered(text: str) -> str:
        calls.append(text)
        return text.lower()

    monkeypatch.setattr(_selection, "normalised", lowered)
    assert _selection._key_of("Deploy is green") == "deploy is green"
    assert _selection._key_of("Deploy is green") == "deploy is green"
    assert calls == ["Deploy is green"]
    for n in range(_selection.KEYS_KEPT + 1):
        _selection._key_of(f"text {n}")
    assert len(_selection._keys) <= _selection.KEYS_KEPT
    assert "Deploy is green" not in _selection._keys
    assert _selection._key_of("Deploy is green") == "deploy is green"


def test_discarding_a_scope_s_encodings_drops_every_kept_key() -> None:
    """After an erase no kept dedup key holds the erased text (keys are kept by text)."""
    _selection._key_of("my secret plan")
    assert "my secret plan" in _selection._keys
    FitMemo(Limits()).discard("s")
    assert "my secret plan" not in _selection._keys
