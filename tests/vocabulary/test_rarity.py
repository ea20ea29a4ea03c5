"""How rare in its scope a record's words are (``vocabulary.rarity``)."""

from __future__ import annotations

import math

import pytest

from satchel.vocabulary import Evidence
from satchel.vocabulary._rarity import content_terms, rarity, rarity_terms, rated


@pytest.mark.parametrize(
    ("text", "terms"),
    [
        ("Maya: we got a kitten", ("get", "kitten")),  # analysed: lemmas
        ("Maya: thanks, Ben!", ("thank", "ben")),  # a name said later counts
        ("kitten kitten litter", ("kitten", "litter")),  # no speaker: all of it, once
        ("At 10:30 we met", ("10", "30", "meet")),  # a time is no speaker
        ("", ()),
        (None, ()),
    ],
)
def test_a_turns_terms_are_its_words_past_its_speaker(
    text: str | None, terms: tuple[str, ...]
) -> None:
    assert content_terms(text) == terms


def test_rarity_is_the_mean_share_of_the_scopes_information_its_words_carry() -> None:
    counts = {"thank": 10, "kitten": 1, "litter": 2}
    assert rarity(["thank"], counts, 10) == 0.0  # every record says it
    assert rarity(["kitten"], counts, 10) == 1.0  # no other record does
    assert rarity(["kitten", "litter"], counts, 10) == pytest.approx(
        (1 + math.log(5) / math.log(10)) / 2
    )
    assert rarity(["unheld"], counts, 10) == 1.0  # counted as held once


@pytest.mark.parametrize(("terms", "rows"), [([], 10), (["kitten"], 1), (["kitten"], 0)])
def test_no_words_or_a_scope_of_one_rates_nothing(terms: list[str], rows: int) -> None:
    assert rarity(terms, {"kitten": 1}, rows) is None


def test_evidence_is_rated_with_the_counts_of_its_terms() -> None:
    said = Evidence.from_record("memory", "s", "e1", 1, text="Ana: thanks, the kitten")
    plain = Evidence.from_record("memory", "s", "e2", 1, text="Ben: thanks")
    assert rarity_terms([said, plain]) == {"thank", "kitten"}
    found = rated({1: said, 2: plain}, {"thank": 4, "kitten": 1}, 4)
    assert found[1].rarity == pytest.approx(0.5)
    assert found[2].rarity == 0.0
    assert found[1].text == said.text
    assert said.rarity is None  # a rated copy
