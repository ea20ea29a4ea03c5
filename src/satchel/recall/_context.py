"""The full-text channel of a conversation ranked by passage, not turn by turn. Pure.

In a chat the evidence of a question is rarely one turn that holds its words: a person
is asked about a trip and answers in the next turn, or names the dog in one turn and
the vet two turns later. A turn's own BM25 misses both. So in a family whose records
are conversation turns, each full-text candidate's strength (its BM25, higher better)
also counts for the turns around it in its thread: ``share`` of it for the turns just
before and after, half that for the turns two places away. A turn then ranks by its
passage, the sum of what it holds and what its neighbours hold, and a turn that holds
no query word joins when the turns around it do.

Measured on LoCoMo (real long conversations, gate on; 8,000 / 2,000 bytes / classic
limits) against ranking turn by turn: 0.821 / 0.675 / 0.675 became 0.872 / 0.706 /
0.701 evidence recall, and on the hard synthetic conversations 0.708 became 0.738 at
8,000 bytes (docs/benchmarks.md, "Turns ranked by their passage").
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

import attrs
import numpy as np

if TYPE_CHECKING:
    from collections.abc import Mapping

    from ..vocabulary._evidence import Pool, ThreadNeighbours
    from ._admission import Admitted

#: How many of a pool's best full-text candidates lend their strength to their thread
#: neighbours: the neighbour read is one store call for these. On LoCoMo all of them
#: (up to 256), the best 64 and the best 32 gave the same recall at 8,000 bytes
#: (0.873 / 0.872 / 0.873), the best 32 the best at 2,000 (0.709 against 0.700).
CONTEXT_HITS: Final = 32
#: How far a candidate's strength reaches along its thread, in turns on each side.
#: Two places (at half the share) against one: +0.020 on LoCoMo at 8,000 bytes.
CONTEXT_REACH: Final = 2


def context_hits(pool: Pool) -> list[int]:
    """The full-text candidates whose thread neighbours a context ranking reads."""
    holding = pool.lexical_keys[pool.lexical_matches > 0]
    return holding[:CONTEXT_HITS].tolist()  # type: ignore[no-any-return]


def in_context(
    admitted: Admitted, pool: Pool, around: Mapping[int, ThreadNeighbours], share: float
) -> Admitted:
    """``admitted`` with its full-text channel ranked by passage (``context_keys``).

    Every full-text candidate of ``pool`` holding a counted query term counts, admitted
    or not: a turn that holds one query word is weak evidence alone and strong beside
    two more (one holding only terms common in the scope, a participant's name, is no
    evidence of a passage). The best
    :data:`CONTEXT_HITS` (:func:`context_hits`) lend their strength to the turns
    around them, whose keys ``around`` holds (:data:`CONTEXT_REACH` places each way):
    a turn scores its own strength plus ``share`` of each adjacent candidate's and
    ``share / 2`` of each one two places away. Equal scores keep the pool's order,
    then the order neighbours joined in.
    """
    holding = pool.lexical_matches > 0  # a counted term, not only the scope's common ones
    keys = pool.lexical_keys[holding].tolist()
    strengths = np.maximum(-pool.lexical_scores[holding], 0.0).tolist()
    passage: dict[int, float] = dict(zip(keys, strengths, strict=True))
    lending = min(len(keys), CONTEXT_HITS)  # the neighbours read are those of the best
    for key, strength in zip(keys[:lending], strengths[:lending], strict=True):
        near = around.get(key)
        if near is None:
            continue
        # ``near.at(distance)`` spelled out: the one before, then the one after (a call
        # per distance and hit was a fifth of ranking a scope's passages).
        before, after = near.before, near.after
        for distance in range(1, CONTEXT_REACH + 1):
            lent = strength * share / distance
            if distance <= len(before):
                neighbour = before[distance - 1]
                passage[neighbour] = passage.get(neighbour, 0.0) + lent
            if distance <= len(after):
                neighbour = after[distance - 1]
                passage[neighbour] = passage.get(neighbour, 0.0) + lent
    order = sorted(passage, key=passage.__getitem__, reverse=True)  # stable: ties keep order
    return attrs.evolve(admitted, context_keys=np.asarray(order, dtype=np.int64))
