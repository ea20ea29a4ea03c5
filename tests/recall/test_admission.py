"""Admission floors, RRF fusion and the round-robin allocators (pure)."""

from __future__ import annotations

import math

import attrs
import numpy as np
import pytest

from satchel.recall._admission import AdmissionFloor, admit, required_matches
from satchel.recall._allocation import allocate, check_ceiling
from satchel.recall._fusion import FamilySearch, FusionWeights, fuse, with_neighbours
from satchel.vocabulary._errors import InvalidRequestError, InvariantError
from tests.recall._factory import evidence, pool


@pytest.mark.parametrize(
    ("terms", "needed"), [(0, 1), (1, 1), (2, 1), (3, 2), (8, 2), (9, 3), (12, 3), (13, 4), (24, 6)]
)
def test_required_matches_rule(terms: int, needed: int) -> None:
    """1 for at most two terms, else max(2, ceil(0.25 * terms))."""
    assert required_matches(terms) == needed


@pytest.mark.parametrize("term_count", ["x", -1, 2.0, True, None])
def test_lexical_floor_refuses_a_bad_term_count(term_count: object) -> None:
    """lexical_floor takes a non-negative integer; anything else raises naming term_count."""
    with pytest.raises(InvalidRequestError, match=r"^term_count must be a non-negative integer"):
        AdmissionFloor().lexical_floor(term_count)  # type: ignore[arg-type]


def test_admit_applies_both_floors_and_counts() -> None:
    """Lexical hits need the required matches, vector hits cosine >= 0.3; counts per channel."""
    admitted = admit(
        pool(lexical=[(1, 3), (2, 1), (3, 2)], vector=[(4, 0.8), (1, 0.31), (5, 0.29)]),
        term_count=8,
        floor=AdmissionFloor(),
    )
    assert admitted.lexical_keys.tolist() == [1, 3]
    assert admitted.vector_keys.tolist() == [4, 1]
    assert (admitted.counts.retrieved, admitted.counts.admitted) == (6, 4)


def test_lowered_floor_admits_more_of_the_same_pool() -> None:
    """A lower floor re-admits candidates round 0 discarded, never more than the pool."""
    retrieved = pool(lexical=[(1, 3), (2, 1)], vector=[(3, 0.2)])
    low = admit(retrieved, 8, AdmissionFloor(required_matches=1, min_similarity=0.1))
    assert low.counts.admitted == 3 == low.counts.retrieved


def test_floor_override_never_raises_the_requirement() -> None:
    """An override can only lower the lexical requirement, never above the derived one."""
    assert AdmissionFloor(required_matches=5).lexical_floor(2) == 1


def test_fuse_orders_by_reciprocal_rank() -> None:
    """A candidate in both channels outranks one in a single channel; signals are reported."""
    admitted = admit(
        pool(lexical=[(1, 2), (2, 2)], vector=[(2, 0.9), (3, 0.7)]), 2, AdmissionFloor()
    )
    search = fuse(admitted, 2)
    assert search.ranked == (2, 1, 3)
    assert search.best_similarity == pytest.approx(0.9)
    assert search.next_similarity == pytest.approx(0.7)
    assert search.best_overlap == 1.0


def test_allocate_round_robins_across_scopes() -> None:
    """The ceiling is shared rank by rank across scopes, in scope order."""
    a = [evidence(f"a{i}", scope="a") for i in range(5)]
    b = [evidence(f"b{i}", scope="b") for i in range(2)]
    chosen = allocate([a, b], ceiling=5)
    assert [e.citation["entry_id"] for e in chosen] == ["a0", "b0", "a1", "b1", "a2"]


def test_allocate_keeps_prefix_and_dedups() -> None:
    """A list clamped again keeps its prefix; a repeated identity is kept once."""
    ranked = [evidence(n) for n in ("x", "y", "x", "z")]
    assert [e.citation["entry_id"] for e in allocate([ranked], 16)] == ["x", "y", "z"]
    assert allocate([ranked], 2) == tuple(ranked[:2])


def test_check_ceiling_raises_invariant_error() -> None:
    """More candidates than the ceiling is an internal invariant error."""
    with pytest.raises(InvariantError, match="memory-candidate-limit"):
        check_ceiling("memory", [evidence(str(n)) for n in range(17)], 16)


def test_fusion_weights_decide_between_channels() -> None:
    """At equal ranks the heavier channel wins: the half-weight vector list yields to the
    lexical one, and the double-weight time list to both."""
    retrieved = attrs.evolve(
        pool(lexical=[(1, 2)], vector=[(2, 0.9)]), time_keys=np.array([3], dtype=np.int64)
    )
    admitted = admit(retrieved, 2, AdmissionFloor())
    assert admitted.time_keys.tolist() == [3]
    assert admitted.counts.admitted == 3
    assert fuse(admitted, 2).ranked == (3, 1, 2)
    assert fuse(admitted, 2, FusionWeights(vector=2.0, time=0.5)).ranked == (2, 1, 3)
    assert fuse(admitted, 2, FusionWeights(time=0.0)).ranked[:2] == (1, 2)


def test_a_candidate_holding_more_of_the_query_rises_by_its_term_share() -> None:
    """Key 1 holds one of the query's two terms and BM25 ranks it first; key 2 holds
    both: 1/62 * e^0.5 beats 1/61 * e^0.25. Without the term share, rank decides."""
    admitted = admit(pool(lexical=[(1, 1), (2, 2)]), 2, AdmissionFloor())
    search = fuse(admitted, 2)
    assert search.ranked == (2, 1)
    assert search.scores == pytest.approx((math.exp(0.5) / 62, math.exp(0.25) / 61))
    assert fuse(admitted, 2, FusionWeights(term_share=0.0)).ranked == (1, 2)


def test_a_neighbour_ranks_below_its_hit_and_keeps_its_own_higher_score() -> None:
    """A neighbour scores its weight times its hit's fused score, unless it ranks higher
    by itself; every fused hit stays."""
    admitted = admit(pool(lexical=[(1, 2), (2, 2), (3, 2)]), 2, AdmissionFloor())
    search = fuse(admitted, 2)
    order, _ = with_neighbours(search, {1: (9, 3)}, 0.99)
    assert order == (1, 3, 9, 2)  # 3 lifted above 2 by its neighbour 1, and 9 joins beside it
    assert with_neighbours(search, {3: (1,)}, 0.5)[0] == search.ranked  # 1 keeps its own score


def reference_fusion(
    channels: list[tuple[list[int], float]],
    k: int = 60,
    factors: dict[int, float] | None = None,
) -> tuple[tuple[int, ...], tuple[float, ...]]:
    """RRF as a per-key loop, each key's sum then times its ``factors`` entry (the term
    share): the definition the vectorised fusion must match exactly."""
    scores: dict[int, float] = {}
    for keys, weight in channels:
        for rank, key in enumerate(keys, start=1):
            scores[key] = scores.get(key, 0.0) + weight / (k + rank)
    for key, factor in (factors or {}).items():
        scores[key] *= factor
    order = sorted(scores, key=scores.__getitem__, reverse=True)
    return tuple(order), tuple(scores[key] for key in order)


@pytest.mark.parametrize("term_share", [0.0, 0.5])
@pytest.mark.parametrize("size", [40, 800])
@pytest.mark.parametrize("seed", range(12))
def test_fusion_equals_the_per_key_definition(seed: int, size: int, term_share: float) -> None:
    """Random channels with shared keys and tied ranks fuse to the same order and the same
    scores, bit for bit, as the per-key loop (ties in order of first appearance), the
    full-text keys' sums times ``exp(term_share * share of the 3 query terms held)``:
    short lists take the loop, long ones the array path."""
    rng = np.random.default_rng(seed)
    lexical = rng.permutation(size)[: rng.integers(0, size * 3 // 4)].tolist()
    vector = rng.permutation(size)[: rng.integers(0, size * 3 // 4)].tolist()
    timed = rng.permutation(size)[: rng.integers(0, size // 4)].tolist()
    held = rng.integers(1, 4, len(lexical)).tolist()
    retrieved = pool(
        lexical=list(zip(lexical, held, strict=True)), vector=[(key, 0.9) for key in vector]
    )
    retrieved = attrs.evolve(retrieved, time_keys=timed)
    weights = FusionWeights(
        lexical=1.0, vector=float(rng.choice([0.5, 1.0])), time=2.0, term_share=term_share
    )
    search = fuse(admit(retrieved, 1, AdmissionFloor()), 3, weights)
    factors = {
        key: float(np.exp(term_share * min(count / 3, 1.0)))
        for key, count in zip(lexical, held, strict=True)
    }
    expected = reference_fusion(
        [(lexical, weights.lexical), (vector, weights.vector), (timed, weights.time)],
        factors=factors if term_share else None,
    )
    assert (search.ranked, search.scores) == expected


@pytest.mark.parametrize("family", ["memory", "experience", "topic-memory"])
@pytest.mark.parametrize("term_count", [0, 1, 5])
@pytest.mark.parametrize("floor", [AdmissionFloor(), AdmissionFloor(1, 0.1)])
def test_a_pool_of_nothing_is_searched_as_admission_and_fusion_would(
    family: str, term_count: int, floor: AdmissionFloor
) -> None:
    """A search whose pool retrieved nothing skips admission and fusion: what it hands
    on is exactly what they make of the empty pool, gate signals included."""
    empty = pool(family=family, scope="team")  # type: ignore[arg-type]
    fused = fuse(admit(empty, term_count, floor), term_count, FusionWeights())
    assert FamilySearch.of_nothing(family, "team") == fused  # type: ignore[arg-type]
