"""A conversation's full-text channel ranked by passage (``in_context``), pure."""

from __future__ import annotations

from satchel.recall._admission import AdmissionFloor, admit
from satchel.recall._context import CONTEXT_HITS, context_hits, in_context
from satchel.recall._fusion import FusionWeights, fuse
from satchel.vocabulary._evidence import Pool, ThreadNeighbours

#: One thread of turns keyed 10..19, in order.
THREAD = list(range(10, 20))


def around(*keys: int, reach: int = 2) -> dict[int, ThreadNeighbours]:
    """Each key's neighbours in ``THREAD``, as a store answers ``neighbours(reach=2)``."""
    out = {}
    for key in keys:
        at = THREAD.index(key)
        before = tuple(reversed(THREAD[max(at - reach, 0) : at]))
        out[key] = ThreadNeighbours(before, tuple(THREAD[at + 1 : at + 1 + reach]))
    return out


def full_text(*scored: tuple[int, float, int]) -> Pool:
    """A pool of full-text candidates: (key, BM25 strength, matched terms), best first."""
    return Pool(
        family="memory",
        scope_id="s",
        version=0,
        lexical_keys=[key for key, _, _ in scored],
        lexical_scores=[-strength for _, strength, _ in scored],
        lexical_matches=[matches for _, _, matches in scored],
    )


def ranked(pool: Pool, terms: int, share: float = 0.8) -> list[int]:
    admitted = admit(pool, terms, AdmissionFloor())
    keys = around(*[key for key in context_hits(pool) if key in THREAD])
    passage = in_context(admitted, pool, keys, share)
    assert passage.context_keys is not None
    return passage.context_keys.tolist()  # type: ignore[no-any-return]


def test_a_turn_between_two_hits_outranks_a_lone_stronger_hit() -> None:
    """Turns 13 and 15 hold the query's words weakly; 99 (a note in no thread) holds
    more, alone. The turn between the two (14, no word of its own) scores 0.8 of each,
    1.6 against 99's 1.5, and each of 13 and 15 gains 0.4 of the other (two places
    away): 1.4. The turns beside the stretch follow at 0.8, then 0.4."""
    order = ranked(full_text((99, 1.5, 1), (13, 1.0, 1), (15, 1.0, 1)), terms=3)
    assert order == [14, 99, 13, 15, 12, 16, 11, 17]


def test_the_reply_after_a_question_joins_just_below_it() -> None:
    """One hit (the question, 12) brings the turns around it: the reply (13) and the
    turn before (11) at 0.8 of its strength, those two places away at 0.4."""
    order = ranked(full_text((12, 2.0, 2)), terms=2)
    assert order == [12, 11, 13, 10, 14]


def test_candidates_below_the_floor_lend_their_strength_too() -> None:
    """Full-text candidates holding one word of a four-word query are below the
    admission floor (two words), yet rank by passage: a stretch of them is evidence."""
    pool = full_text((16, 1.0, 1), (17, 1.0, 1))
    assert admit(pool, 4, AdmissionFloor()).lexical_keys.tolist() == []
    order = ranked(pool, terms=4)
    assert order[:2] == [16, 17]
    assert set(order) == {14, 15, 16, 17, 18, 19}


def test_a_zero_share_ranks_turn_by_turn() -> None:
    """At share 0 the neighbours join with nothing, after every candidate."""
    order = ranked(full_text((18, 1.5, 1), (13, 1.0, 1), (15, 1.0, 1)), terms=3, share=0.0)
    assert order[:3] == [18, 13, 15]


def test_only_the_best_candidates_lend() -> None:
    """Past the first ``CONTEXT_HITS`` full-text candidates, a candidate keeps its own
    strength and lends none, though its neighbours be known."""
    filler = [(1000 + n, 5.0, 2) for n in range(CONTEXT_HITS)]
    pool = full_text(*filler, (12, 1.0, 1))
    assert 12 not in context_hits(pool)
    admitted = admit(pool, 2, AdmissionFloor())
    passage = in_context(admitted, pool, around(12), 0.8)
    assert passage.context_keys is not None
    assert 13 not in passage.context_keys.tolist()


def test_fusion_ranks_the_full_text_channel_by_passage() -> None:
    """``fuse`` takes the passage order in the full-text channel's place; without one it
    ranks the admitted candidates turn by turn."""
    pool = full_text((12, 2.0, 2))
    admitted = admit(pool, 2, AdmissionFloor())
    assert fuse(admitted, 2, FusionWeights()).ranked == (12,)
    passage = in_context(admitted, pool, around(12), 0.8)
    assert fuse(passage, 2, FusionWeights()).ranked == (12, 11, 13, 10, 14)


def test_a_candidate_holding_only_common_terms_neither_lends_nor_ranks() -> None:
    """A full-text candidate whose only query terms are common in the scope (0 counted
    matches: a chat participant's name) is no evidence of a passage: it lends nothing
    and does not rank in the passage order."""
    pool = full_text((12, 3.0, 0), (16, 1.0, 1))
    assert context_hits(pool) == [16]
    passage = in_context(admit(pool, 1, AdmissionFloor()), pool, around(12, 16), 0.8)
    assert passage.context_keys is not None
    assert passage.context_keys.tolist() == [16, 15, 17, 14, 18]
