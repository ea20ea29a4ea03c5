"""A store rates the turns it reads a stretch per turn of the host's loop: at most
``RATE_STRETCH`` texts to analyse, at most ``KNOWN_STRETCH`` items whose terms are
known (after a write to its scope a prepare rates anew some 80 turns it read before)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from satchel.stores import _term_counts
from satchel.stores._term_counts import KNOWN_STRETCH, RATE_STRETCH, Kept, rate
from satchel.vocabulary import Evidence, forget_texts
from satchel.vocabulary._rarity import content_terms

pytestmark = pytest.mark.anyio

WHEN = datetime(2024, 3, 1, tzinfo=UTC)


def turn(key: int) -> tuple[int, Evidence]:
    text = f"Ana: the kestrel number {key} nested by mill {key * 7}"
    item = Evidence.from_record(
        "memory", "chat", f"{key:032x}", 1, text=text, abstract=None, overview=None,
        created_at=WHEN, thread="t",
    )  # fmt: skip
    return key, item


def test_texts_to_analyse_take_a_stretch_each_eight_known_ones_each_sixty_four() -> None:
    forget_texts()
    unknown = [turn(key) for key in range(20)]
    assert [len(s) for s in _term_counts._stretches(unknown)] == [8, 8, 4]
    for _, item in unknown:
        content_terms(item.text)  # an earlier read remembered them
    known = [turn(key) for key in range(150)]
    for _, item in known:
        content_terms(item.text)
    assert [len(s) for s in _term_counts._stretches(known)] == [64, 64, 22]
    mixed = [turn(key) for key in range(60, 70)] + [turn(key) for key in range(200, 220)]
    assert [len(s) for s in _term_counts._stretches(mixed)] == [18, 8, 4]
    assert RATE_STRETCH == 8
    assert KNOWN_STRETCH == 64


def test_long_known_turns_make_shorter_stretches() -> None:
    """A turn of 300 words is rated in a turn of the loop with few others."""
    forget_texts()
    words = " ".join(f"word{n}" for n in range(300))
    long = [
        (key, Evidence.from_record("memory", "chat", f"{key:032x}", 1, text=f"Ana: {key} {words}"))
        for key in range(10)
    ]
    for _, item in long:
        content_terms(item.text)
    sizes = [len(s) for s in _term_counts._stretches(long)]
    assert sum(sizes) == 10
    assert max(sizes) <= 4  # about KNOWN_TERMS terms a stretch, not 64 turns


async def test_known_turns_are_rated_as_before_in_fewer_turns_of_the_loop(
    anyio_backend: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same ratings whatever the stretches (one item a stretch against the rule),
    and 100 turns rated anew take two stretches of the loop, not thirteen."""
    forget_texts()
    found = dict(turn(key) for key in range(100))
    for item in found.values():
        content_terms(item.text)
    counts = {"kestrel": 60, "nest": 30, "mill": 90}

    async def read_counts(terms: list[str]) -> dict[str, int]:
        return {term: counts.get(term, 1) for term in terms}

    turns = 0
    real_turn = _term_counts._turn

    def counted(on_host_loop: bool) -> object:
        nonlocal turns
        turns += 1
        return real_turn(on_host_loop)

    monkeypatch.setattr(_term_counts, "_turn", counted)
    rated = await rate(found, Kept(1), 200, read_counts, on_host_loop=True)
    assert turns == 2 * 2  # two stretches, each analysed and then rated in a turn
    monkeypatch.setattr(_term_counts, "KNOWN_STRETCH", 1)
    one_each = await rate(found, Kept(1), 200, read_counts, on_host_loop=True)
    assert turns == 4 + 2 * 100
    assert rated == one_each
    assert len({item.rarity for item in rated.values()}) > 1
