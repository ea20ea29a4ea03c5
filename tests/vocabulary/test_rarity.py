"""How rare in its scope a record's words are (``vocabulary.rarity``)."""

from __future__ import annotations

import math

import hypothesis.strategies as st
import pytest
from hypothesis import given

from satchel.vocabulary import Evidence, analyse
from satchel.vocabulary._rarity import (
    content_terms,
    content_terms_indexed,
    rarity,
    rarity_terms,
    rated,
)


@pytest.mark.parametrize(
    ("text", "terms"),
    [
        ("Maya: we got a kitten", ("get", "kitten")),  # analysed: lemmas
        ("Maya: thanks, Ben!", ("thank", "ben")),  # a name said later counts
        ("Maya: kitten kitten litter", ("kitten", "litter")),  # each once
        ("kitten litter", ()),  # no speaker: a note, not rated
        ("At 10:30 we met", ()),  # a time is no speaker
        ("", ()),
        (None, ()),
    ],
)
def test_a_turns_terms_are_its_words_past_its_speaker(
    text: str | None, terms: tuple[str, ...]
) -> None:
    assert content_terms(text) == terms


@pytest.mark.parametrize(
    "text",
    [
        "Maya: we got a kitten",
        "Dr Ana Lima: thanks, Ana! Lima beans again",
        "O'Neil: the bday was sooo fun",
        "José:\tola, café",
        "Kim: 今日は晴れ",
        "kitten litter",
        "At 10:30 we met",
    ],
)
def test_a_turns_terms_read_off_its_index_row_are_its_analysed_ones(text: str) -> None:
    """From the analysed terms of the whole text (what a full-text row holds), the terms
    past the speaker's name are those ``content_terms`` analyses: no word spans the colon."""
    assert content_terms_indexed(text, " ".join(analyse(text))) == content_terms(text)


@given(
    st.from_regex(r"[A-Z][a-z]{1,8}( [A-Z][a-z]{1,8}){0,2}", fullmatch=True),
    st.text(max_size=200),
)
def test_any_turns_terms_read_off_its_index_row_are_its_analysed_ones(name: str, said: str) -> None:
    text = f"{name}: {said}"
    assert content_terms_indexed(text, " ".join(analyse(text))) == content_terms(text)


def test_rarity_is_the_mean_share_of_the_scopes_information_its_words_carry() -> None:
    counts = {"thank": 1000, "kitten": 1, "litter": 2}
    scale = math.log(1200)  # a scope of 1,000 records, and FEW_ROWS
    assert rarity(["thank"], counts, 1000) == 0.0  # every record says it
    assert rarity(["kitten"], counts, 1000) == pytest.approx(math.log(1000) / scale)
    assert rarity(["kitten", "litter"], counts, 1000) == pytest.approx(
        (math.log(1000) + math.log(500)) / (2 * scale)
    )
    assert rarity(["unheld"], counts, 1000) == rarity(["kitten"], counts, 1000)


def test_a_small_scopes_turns_rate_lower_than_a_chats() -> None:
    """Said once in 30 records tells less than said once in 3,000."""
    small = rarity(["kitten"], {"kitten": 1}, 30)
    large = rarity(["kitten"], {"kitten": 1}, 3000)
    assert small is not None
    assert large is not None
    assert small < 0.65 < 0.95 < large


@pytest.mark.parametrize(("terms", "rows"), [([], 10), (["kitten"], 1), (["kitten"], 0)])
def test_no_words_or_a_scope_of_one_rates_nothing(terms: list[str], rows: int) -> None:
    assert rarity(terms, {"kitten": 1}, rows) is None


def test_evidence_is_rated_with_the_counts_of_its_terms() -> None:
    said = Evidence.from_record("memory", "s", "e1", 1, text="Ana: thanks, the kitten")
    plain = Evidence.from_record("memory", "s", "e2", 1, text="Ben: thanks")
    assert rarity_terms([said, plain]) == {"thank", "kitten"}
    found = rated({1: said, 2: plain}, {"thank": 4, "kitten": 1}, 4)
    assert found[1].rarity == pytest.approx(math.log(4) / (2 * math.log(204)))
    assert found[2].rarity == 0.0
    assert found[1].text == said.text
    assert said.rarity is None  # a rated copy
