"""A query's words as a chat may have typed them (``_respelling``), and a store's
request searching the respellings its scope holds (``PoolRequest.respelled``)."""

from __future__ import annotations

import random
import string

import pytest

from satchel.vocabulary._analysis import analyse_query, dictionary_terms
from satchel.vocabulary._respelling import (
    MOST_RESPELLINGS,
    RESPELL_MIN_LETTERS,
    spelled_otherwise,
    typed_otherwise,
)
from satchel.vocabulary._retrieval import PoolRequest

DICTIONARY = frozenset({"planet", "plant", "adopt", "tournament", "festival"})


def test_each_slip_past_the_first_letter_is_a_respelling() -> None:
    slips = set(typed_otherwise(["adopt"], DICTIONARY))
    assert {"adpt", "addopt", "adpot", "adoptt", "adapt", "adupt"} <= slips  # drop ... vowel
    assert not {slip for slip in slips if not slip.startswith("a")}  # the first letter kept
    assert "adopt" not in slips
    assert "adqpt" not in slips  # a consonant for a vowel is no slip taken


def test_every_respelling_is_one_slip_away() -> None:
    """Each respelling is the word with one letter dropped, doubled, swapped with the
    next, or one vowel for another, past its first letter: checked against a plain
    edit distance on random words."""
    draw = random.Random(7)
    for _ in range(200):
        word = "".join(draw.choices(string.ascii_lowercase, k=draw.randint(5, 10)))
        for slip in typed_otherwise([word], frozenset()):
            assert slip[0] == word[0]
            assert _one_slip(word, slip), (word, slip)


def _one_slip(word: str, slip: str) -> bool:
    if len(slip) == len(word) - 1:
        return any(word[:at] + word[at + 1 :] == slip for at in range(1, len(word)))
    if len(slip) == len(word) + 1:
        return any(word[:at] + word[at] + word[at:] == slip for at in range(1, len(word)))
    apart = [at for at in range(len(word)) if word[at] != slip[at]]
    if len(apart) == 2:
        first, second = apart
        return second == first + 1 and (word[first], word[second]) == (slip[second], slip[first])
    return len(apart) == 1 and word[apart[0]] in "aeiouy" and slip[apart[0]] in "aeiouy"


def test_a_dictionary_word_is_never_respelled_as_another() -> None:
    """ "planet" with a letter dropped is "plant": a word of the dictionary, so no
    respelling of "planet"; a word the dictionary lacks (a misspelt question's) may be
    respelled as one."""
    assert "plant" not in typed_otherwise(["planet"], DICTIONARY)
    assert "plant" in typed_otherwise(["planet"], frozenset())
    assert "tournament" in typed_otherwise(["torunament"], DICTIONARY)
    assert "festival" in typed_otherwise(["fesetival"], DICTIONARY)


@pytest.mark.parametrize("form", ["walk", "b4ck", "café", "x" * (RESPELL_MIN_LETTERS - 1)])
def test_a_short_or_not_plain_word_has_no_respelling(form: str) -> None:
    assert typed_otherwise([form], frozenset()) == ()


def test_a_query_carries_the_respellings_of_its_words_not_of_its_names() -> None:
    """Both the terms' and the words' they come from ("adopt", "adopting"), never a
    name's, a term of the query, or a dictionary word's slip that is a dictionary word."""
    query = analyse_query("When did Caroline start adopting in her educaton?")
    slips = set(query.respellings)
    assert {"adpot", "adoptign", "educatno"} <= slips
    assert not {slip for slip in slips if slip.startswith("car")}
    assert not slips & set(query.terms)
    assert "adapt" in dictionary_terms()
    assert "adapt" not in slips  # "adopt" with a vowel slip: a dictionary word


def test_a_request_searches_the_respellings_its_scope_holds() -> None:
    request = PoolRequest(analyse_query("When will Bo adopt a puppy?"), None, 16)
    assert request.frequency_terms == request.query.terms + request.query.respellings
    counts = {"adopt": 0, "puppi": 3, "adpot": 1, "adoppt": 0}
    asked, frequencies = request.respelled(counts)
    assert asked.query.terms == (*request.query.terms, "adpot")
    assert (asked.query.respellings, asked.frequency_terms) == ((), asked.query.terms)
    assert frequencies == {"puppi": 3, "adpot": 1}
    same, held = request.respelled({"puppi": 3})
    assert (same, held) == (request, {"puppi": 3})


@pytest.mark.parametrize(
    ("british", "american"),
    [
        ("colour", "color"), ("favourite", "favorite"), ("neighbours", "neighbors"),
        ("organised", "organized"), ("analyse", "analyze"), ("centre", "center"),
        ("travelling", "traveling"), ("catalogue", "catalog"), ("defence", "defense"),
        ("fulfilment", "fulfillment"),
    ],
)  # fmt: skip
def test_british_and_american_english_spell_each_other(british: str, american: str) -> None:
    assert american in spelled_otherwise(british)
    assert british in spelled_otherwise(american)


def test_some_words_are_spelled_the_other_way_one_way_only() -> None:
    """ "programme" is "program" in American English, but not every "program" is a
    British "programme" (a computer's is not)."""
    assert spelled_otherwise("programme") == ("program",)
    assert spelled_otherwise("program") == ()


@pytest.mark.parametrize("word", ["hour", "four", "your", "journey", "morning", "story"])
def test_a_word_no_english_spells_otherwise_has_no_other_spelling(word: str) -> None:
    assert spelled_otherwise(word) == ()


def test_a_query_carries_the_terms_of_its_words_spelled_the_other_english_way() -> None:
    british = analyse_query("What is Kate's favourite colour?")
    assert {"favorit", "color"} <= set(british.respellings)
    american = analyse_query("What is Kate's favorite color?")
    assert {"favourit", "colour"} <= set(american.respellings)
    assert not {"favorit", "color"} & set(american.respellings)  # its own terms


@pytest.mark.parametrize(
    ("question", "typed"),
    [
        ("How was the road trip?", "roadtrip"),
        ("Who is Kate's best friend?", "bestfriend"),
        ("Which ice-cream did Nate make?", "icecream"),
    ],
)
def test_a_query_carries_two_side_by_side_words_run_together(question: str, typed: str) -> None:
    assert typed in analyse_query(question).respellings


def test_words_apart_or_beside_a_name_or_a_function_word_are_not_run_together() -> None:
    found = analyse_query("Did Dana trip over the road at his shop?").respellings
    assert not {"danatrip", "tripov", "roadshop", "shopov", "theroad"} & set(found)


def test_a_long_query_carries_a_bounded_number_of_respellings() -> None:
    """A pasted paragraph's 24 terms would make a thousand respellings, each counted by
    every search: the first words' are kept, at most MOST_RESPELLINGS."""
    words = "infrastructure deployments orchestration pipelines observability dashboards"
    query = analyse_query(" ".join([words, "incident retrospectives quarterly roadmap"] * 3))
    assert len(query.respellings) == MOST_RESPELLINGS
    assert set(typed_otherwise(["infrastructure"], dictionary_terms())) <= set(query.respellings)
