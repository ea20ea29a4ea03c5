"""Search traces (an explained prepare's only extra work): each key's rank in every
channel that admitted it, its fused score, and what the floor kept out."""

from __future__ import annotations

import math

import pytest

from satchel.recall import AdmissionFloor, admit, below_floor, fuse, trace_search, with_neighbours

from ._factory import pool

#: Keys 1..3 hold two of two query terms; 4 holds one (admitted: the query has two
#: terms). Vector: 3 and 5 clear 0.3, 6 does not.
POOL = pool(lexical=[(1, 2), (2, 2), (3, 2), (4, 1)], vector=[(3, 0.9), (5, 0.5), (6, 0.1)])


def test_a_trace_ranks_each_key_in_every_admitting_channel_from_one() -> None:
    """Ranks are positions in each admitted channel, 1-based; scores are fusion's."""
    admitted = admit(POOL, 2, AdmissionFloor())
    search = fuse(admitted, 2)
    trace = trace_search(admitted, search, search.ranked, {}, 0.8)
    assert trace.ranked == search.ranked
    assert trace.channels == {
        1: {"lexical": 1},
        2: {"lexical": 2},
        3: {"lexical": 3, "vector": 1},
        4: {"lexical": 4},
        5: {"vector": 2},
    }
    assert trace.scores == dict(zip(search.ranked, search.scores, strict=True))
    # 3 holds both query terms: its fused score times exp(term_share * 1).
    assert trace.scores[3] == pytest.approx((1 / 63 + 0.5 / 61) * math.exp(0.5))
    assert trace.passed_over == ()


def test_a_neighbour_is_ranked_in_its_own_channel_at_its_lifted_score() -> None:
    """A thread neighbour ranks in the neighbour channel by where its hit brought it, and
    scores the share of its hit's score that put it in the order."""
    admitted = admit(POOL, 2, AdmissionFloor())
    search = fuse(admitted, 2)
    around = {1: (9,), 2: (8, 9)}
    ranked, _ = with_neighbours(search, around, 0.8)
    trace = trace_search(admitted, search, ranked, around, 0.8)
    assert (trace.channels[9], trace.channels[8]) == ({"neighbour": 1}, {"neighbour": 2})
    fused = dict(zip(search.ranked, search.scores, strict=True))
    assert trace.scores[9] == 0.8 * fused[1]
    assert sorted(trace.scores, key=trace.scores.__getitem__, reverse=True) == list(ranked)


def test_below_the_floor_are_the_retrieved_keys_no_channel_admits() -> None:
    """Key 6 (cosine 0.1) is below the floor in every channel that retrieved it; with a
    query of three terms (two needed) key 4 joins it, at its rank in what was retrieved."""
    assert below_floor(POOL, 2, AdmissionFloor()) == [(6, {"vector": 3})]
    assert below_floor(POOL, 3, AdmissionFloor()) == [(6, {"vector": 3}), (4, {"lexical": 4})]
    assert below_floor(POOL, 3, AdmissionFloor(required_matches=1, min_similarity=0.0)) == []
