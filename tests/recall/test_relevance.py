"""The abstention verdict: which of round 0's signals are evidence of relevance (pure)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs
import numpy as np
import pytest

from satchel.recall import (
    NO_RELEVANT,
    RelevanceFloor,
    evidence_of_relevance,
)
from satchel.recall._relevance import (
    LEXICAL,
    SCOPE_TERM,
    TIME,
    VECTOR,
    VOCABULARY,
    VOUCHED_ITEMS,
    corroborated,
    vouched,
)
from tests.recall._factory import pool

if TYPE_CHECKING:
    from satchel.vocabulary._evidence import Pool

FLOOR = RelevanceFloor(noise=0.25, top_similarity=0.5)
#: What an unrelated question finds in a chat: one word shared here and there, cosines
#: within the noise, a query term or two the scope knows.
NOISE = attrs.evolve(
    pool(lexical=[(1, 1), (2, 1), (3, 1)], vector=[(4, 0.42), (1, 0.40), (5, 0.31)]),
    held_terms=1,
    scope_rows=150,
)


def judge(*pools: tuple[Pool, int]) -> str | None:
    return evidence_of_relevance(pools, FLOOR)


def test_noise_alone_is_no_evidence() -> None:
    """Single shared words, weak cosines and a scope that knows one query word in four:
    no evidence, so the prepare abstains."""
    assert judge((NOISE, 4)) is None
    assert NO_RELEVANT == "no-relevant"


@pytest.mark.parametrize(
    ("change", "kind"),
    [
        ({"common_terms": 1}, SCOPE_TERM),
        ({"time_keys": [9], "time_matched": 1, "scope_rows": 100}, TIME),
        ({"lexical_matches": [2, 1, 1]}, LEXICAL),
        ({"vector_similarities": [0.5, 0.40, 0.31]}, VECTOR),
        ({"held_terms": 3}, VOCABULARY),
    ],
    ids=["scope-term", "time", "two-terms", "top-hit", "vocabulary"],
)
def test_each_signal_alone_is_evidence(change: dict[str, Any], kind: str) -> None:
    """A query term common in the scope, a time-channel hit, a candidate holding two
    query terms, a top cosine at the calibrated level, or a scope holding most of the
    query's terms: each alone is evidence, named by its kind."""
    assert judge((attrs.evolve(NOISE, **change), 4)) == kind


@pytest.mark.parametrize(
    ("change", "kind"),
    [
        ({"common_terms": 1}, None),
        ({"held_terms": 3}, None),
        ({"common_terms": 1, "held_terms": 3}, None),
        ({"common_terms": 1, "lexical_matches": [2, 1, 1]}, LEXICAL),
        ({"common_terms": 1, "vector_similarities": [0.5, 0.40, 0.31]}, VECTOR),
        ({"common_terms": 1, "time_keys": [9], "time_matched": 1, "scope_rows": 100}, TIME),
    ],
    ids=["scope-term", "vocabulary", "both", "two-terms", "top-hit", "time"],
)
def test_a_name_the_scope_never_holds_leaves_only_the_candidates_evidence(
    change: dict[str, Any], kind: str | None
) -> None:
    """A question saying a proper name no record of the scope holds ("According to
    Caroline, what is the capital of Mongolia?") is about what the scope never
    mentions: the participant's name common in the scope and a vocabulary the scope
    knows are no evidence then; a candidate that is evidence itself still is."""
    assert judge((attrs.evolve(NOISE, unheld_names=("mongolia",), **change), 4)) == kind


TENTH_AT = [0.47, 0.40, 0.35, 0.30, 0.29, 0.28, 0.27, 0.26, 0.25]


@pytest.mark.parametrize(
    ("similarities", "kind"),
    [
        ([0.62, 0.58, 0.57, 0.55, 0.55, 0.54, 0.53, 0.52, 0.52, 0.51, 0.10], VECTOR),
        ([*TENTH_AT, 0.20, 0.01], VECTOR),
        ([*TENTH_AT, 0.25, 0.01], None),
        ([0.47, 0.30, 0.20], VECTOR),
        ([0.47, 0.30, 0.25], None),
        ([0.24, 0.0, -0.1], None),
        ([0.47], None),
        ([0.55], VECTOR),
        ([], None),
    ],
    ids=[
        "top-hit",
        "stands-out",
        "tenth-too-near",
        "small-scope",
        "small-scope-near",
        "below-noise",
        "alone",
        "alone-top",
        "none",
    ],
)
def test_a_vector_hit_is_evidence_at_the_top_level_or_standing_out(
    similarities: list[float], kind: str | None
) -> None:
    """A best cosine at the top-hit level (0.5 here) is evidence when it stands a
    tenth above the tenth best (the last, in a smaller scope); below it, one
    clearing the noise floor (0.25) is evidence when it stands out by at least the top
    level's margin over the floor. A lone record needs the top level."""
    keys = range(len(similarities))
    quiet = attrs.evolve(NOISE, vector_similarities=similarities, vector_keys=keys)
    assert judge((quiet, 4)) == kind


@pytest.mark.parametrize(
    ("rows", "holders", "kind"),
    [
        (3, 3, SCOPE_TERM),
        (5, 3, SCOPE_TERM),
        (6, 3, None),
        (15, 8, SCOPE_TERM),
        (2, 2, None),
        (16, 9, None),
        (1, 1, None),
    ],
)
def test_in_a_small_scope_words_held_by_most_records_are_a_scope_term(
    rows: int, holders: int, kind: str | None
) -> None:
    """A scope too small to call a term common (under 16 records) shows what it is
    about when the records holding a query term are most of it, three at least; from
    16 records only a common term counts (``Pool.common_terms``, the store's rule)."""
    lexical = [(key, 1) for key in range(holders)]
    small = attrs.evolve(NOISE, lexical_keys=[k for k, _ in lexical], scope_rows=rows)
    small = attrs.evolve(small, lexical_matches=[m for _, m in lexical])
    assert judge((small, 4)) == kind


def test_half_the_vocabulary_is_not_enough() -> None:
    """A scope holding exactly half of the query's counted terms is no evidence."""
    assert judge((attrs.evolve(NOISE, held_terms=2), 4)) is None
    assert judge((attrs.evolve(NOISE, held_terms=3), 5)) == VOCABULARY


def test_a_time_window_holding_half_the_scope_is_no_evidence() -> None:
    """The time channel counts only as admission sees it: a window holding more than
    half the scope selects nothing ("in 2023" of a year-long chat)."""
    crowded = attrs.evolve(NOISE, time_keys=[9], time_matched=80, scope_rows=100)
    assert judge((crowded, 4)) is None


@pytest.mark.parametrize(("terms", "needed"), [(1, 1), (2, 2), (3, 2), (8, 2), (9, 3), (13, 4)])
def test_a_lexical_hit_must_be_corroborated(terms: int, needed: int) -> None:
    """One word of several is what unrelated text shares with any question: a candidate
    must hold two of the query's terms (round 0's rule when it asks more), or the
    query's only term."""
    assert corroborated(terms) == needed
    below = attrs.evolve(NOISE, lexical_matches=[needed - 1, 1, 1], held_terms=0)
    at = attrs.evolve(NOISE, lexical_matches=[needed, 1, 1], held_terms=0)
    assert judge((below, terms)) is None
    assert judge((at, terms)) == LEXICAL


def test_a_lexical_hit_the_vector_channel_does_not_rank_is_no_evidence() -> None:
    """Two query words in a record far from the query in meaning are what a long chat
    turn shares with any question: the record must also be among the vector channel's
    ten most similar, unless the search has no vector channel."""
    far = attrs.evolve(NOISE, lexical_matches=[1, 2, 1], held_terms=0)  # key 2: no vector
    assert judge((far, 4)) is None
    near = attrs.evolve(NOISE, lexical_matches=[2, 1, 1], held_terms=0)  # key 1: rank 2
    assert judge((near, 4)) == LEXICAL
    tenth = [(key, 0.3 - key / 100) for key in range(10, 20)]
    pushed = pool(lexical=[(1, 2)], vector=[*tenth, (1, 0.1)])
    assert judge((attrs.evolve(pushed, scope_rows=150), 4)) is None
    unvectored = pool(lexical=[(2, 2)], vector=[])
    assert judge((attrs.evolve(unvectored, scope_rows=150), 4)) == LEXICAL


def test_a_top_level_cosine_among_equals_is_no_evidence() -> None:
    """In a chat of long, similar turns an unrelated question's best cosine reaches the
    top-hit level with the tenth best a few hundredths below: not evidence; a tenth of
    separation is."""
    crowded = [0.60, 0.58, 0.57, 0.56, 0.55, 0.54, 0.53, 0.52, 0.52, 0.51, 0.30]
    keys = range(len(crowded))
    assert judge((attrs.evolve(NOISE, vector_similarities=crowded, vector_keys=keys), 4)) is None
    apart = [0.61, *crowded[1:]]
    assert judge((attrs.evolve(NOISE, vector_similarities=apart, vector_keys=keys), 4)) == VECTOR


def test_any_search_showing_evidence_is_enough() -> None:
    """The verdict reads every search of the round (families, scopes, queries): one
    with evidence keeps the prepare; the first kind found is named."""
    experience = attrs.evolve(pool(lexical=[(1, 2)], family="experience"), held_terms=2)
    assert judge((NOISE, 4), (experience, 3)) == LEXICAL
    assert judge((NOISE, 4), (NOISE, 4)) is None


def test_a_query_without_terms_relies_on_its_other_signals() -> None:
    """A query of function words alone counts no term: no lexical or vocabulary
    evidence, whatever the pool's counts say; its vector may still be evidence."""
    assert judge((attrs.evolve(NOISE, lexical_matches=[0], held_terms=0), 0)) is None
    strong = attrs.evolve(NOISE, vector_similarities=[0.8])
    assert judge((strong, 0)) == VECTOR


def test_the_verdict_is_pure() -> None:
    """The same pools give the same verdict; nothing is changed."""
    before = (NOISE.lexical_matches.copy(), NOISE.vector_similarities.copy())
    assert [judge((NOISE, 4)) for _ in range(3)] == [None] * 3
    assert (NOISE.lexical_matches == before[0]).all()
    assert (NOISE.vector_similarities == before[1]).all()


def test_a_channel_vouches_for_term_holders_and_the_ten_nearest() -> None:
    """Under vocabulary-only evidence a candidate is delivered when it holds a query
    term or is among the vector channel's ten most similar records; a farther vector
    hit or a thread neighbour (a key neither channel ranked) is not."""
    vector = [(100 + rank, 0.40 - 0.001 * rank) for rank in range(15)]
    searched = pool(lexical=[(1, 1), (2, 1)], vector=vector)
    keys = np.array([1, 100, 109, 110, 114, 2, 7], dtype=np.int64)
    assert vouched(keys, searched).tolist() == [True, True, True, False, False, True, False]


def test_vouched_candidates_are_the_best_sixteen_at_most() -> None:
    """However many records hold a query term, a search and round under vocabulary-only
    evidence delivers the best ``VOUCHED_ITEMS`` of them (the classic memory ceiling)."""
    holders = pool(lexical=[(key, 1) for key in range(40)])
    keys = np.array([99, *range(40)], dtype=np.int64)
    kept = vouched(keys, holders)
    assert VOUCHED_ITEMS == 16
    assert keys[kept].tolist() == list(range(16))
