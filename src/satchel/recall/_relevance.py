"""Abstention: whether round 0's candidates carry any evidence of relevance. Pure.

A prepare whose round found candidates but no evidence that any of them is about the
query abstains: it delivers none of them (``status="empty"``, unless the request selects
the profile, which is read whole with every request) and reports the assessment
``"no-relevant"``, and the gate never expands it (a lower floor on such pools only
admits more of the same noise). The verdict is model-free and reads only what round 0
retrieved, per search (family, scope, query): its :class:`~satchel.vocabulary.Pool`
and the query's counted terms. Each of these is evidence on its own:

- **scope term**: the query names a term common in the scope (``Pool.common_terms``:
  held by more than half of its records, such as a participant's name in a chat or the
  project's name in its notes): the question is about what this scope is about. A
  scope too small to call a term common (under ``COMMON_MIN_ROWS`` records) shows it
  when the records holding a query term are most of it, three at least (every note of
  a project naming its codename);
- **time**: the time channel holds records of a day or month the query names;
- **lexical**: a candidate holds two of the query's counted terms, or its only one
  (one shared word of several is what unrelated text shares with any question), and
  the vector channel agrees: the candidate is among its ``NOISE_RANK`` most similar
  records (or the search has no vector channel). In a chat of long turns any question
  finds a turn holding two of its everyday words; a turn about the question is also
  near it in meaning;
- **vector**: the best cosine clears the embedder's noise floor
  (``Calibration.baseline``) and stands out from the scope's tenth most similar
  record: by ``SEPARATION`` when it reaches the calibrated top-hit level
  (``Calibration.min_top_similarity``), by as much as that level stands above the
  floor when it does not. A weak absolute cosine in a scope of terse notes can still be
  the one record on the topic, while in a chat of long, similar turns a question's best
  cosine is noise like the rest (``bench offtopic``'s unrelated questions, asked of a
  LoCoMo chat, best the tenth by a median 0.06 with the bundled model);
- **vocabulary**: the scope holds more than half of the query's counted terms
  (``Pool.held_terms``), so its single-word matches speak the query's language (a
  question sharing only a project's codename with its evidence; the gate's lower
  floors then recover it). This is the weakest signal: a chat of hundreds of long
  turns holds most everyday words of a general question, but neither the terms' rarity
  nor their BM25 tells those from a codename held by two records of thousands. So a
  prepare that has only this evidence delivers only the candidates a channel vouches
  for on its own (:func:`vouched`): those holding a query term and the
  ``NOISE_RANK`` nearest in meaning, at most ``VOUCHED_ITEMS`` a search and round,
  not the long tail of vector hits and thread neighbours that fill a whole pack with
  noise for an unrelated question.

- **distinctive**: the scope holds a query word that is rare in the language
  (``Pool.distinctive_terms``: "kestrel", a codename, a product), not one that is merely
  rare in the scope ("capital" in a chat about sports): one record naming the codename
  of a question is evidence the question is about it. Delivered as vocabulary is, only
  what a channel vouches for, and the gate's second looks recover the record holding
  the word when round 0's floor left it out.

A question that says a proper name no record of the scope holds ("According to
Caroline, what is the capital of Mongolia?" asked of Caroline's chat: ``Pool.unheld_names``)
asks about something the scope never mentions, so neither of the signals that the scope
is about the question counts for it, **scope term** (the participant's name) and
**vocabulary** (everyday words a long chat holds); the others still do. Of the named
general-knowledge questions of ``bench offtopic``, 14.3% abstained before the rule,
66.2% with it; LoCoMo's evidence recall lost 0.003 (19 of its 1,536 questions say a
name their conversation never holds). Once a search has read its turns, a name a read
person answers to is taken off (``vocabulary.answered``) and counted as a participant's
name held by the scope is (``Pool.common_terms``): a short form or a nickname of their
label, or the one given name the question says (as many as people were read, said
apart), whatever the labels: a chat labels people by phone numbers, "User 2", or names
the asker never uses ("What did Caroline research?" of a chat of phone numbers).

Thread neighbours are no signal of their own: they join beside a hit, so they carry
evidence only through their hit. A round that retrieved nothing is no abstention: it
is the normal empty result (``no-content``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

import attrs
import numpy as np

from ..vocabulary._keys import among
from ..vocabulary._retrieval import COMMON_MIN_ROWS
from ._admission import required_matches

if TYPE_CHECKING:
    from collections.abc import Iterable

    import numpy.typing as npt

    from ..vocabulary._calibration import Calibration
    from ..vocabulary._evidence import Pool

#: The assessment of a prepare that abstained.
NO_RELEVANT: Final = "no-relevant"
#: The kinds of evidence, as :func:`evidence_of_relevance` names them.
SCOPE_TERM: Final = "scope-term"
TIME: Final = "time"
LEXICAL: Final = "lexical"
VECTOR: Final = "vector"
VOCABULARY: Final = "vocabulary"
DISTINCTIVE: Final = "distinctive"
#: The kinds of evidence whose prepare delivers only what a channel vouches for.
VOUCHED_ONLY: Final = frozenset({VOCABULARY, DISTINCTIVE})
#: The rank of the record a best vector hit must stand out from: the scope's noise.
NOISE_RANK: Final = 10
#: Fewest records holding a query term that can be most of a small scope: one or two
#: notes sharing a word with a question are a coincidence, not what the scope is about.
PERVADING_HOLDERS: Final = 3
#: The most candidates a search delivers per round when the scope's vocabulary is the
#: only evidence (the classic limits' memory ceiling): weak evidence, a small pack.
VOUCHED_ITEMS: Final = 16
#: How far a best cosine at the top-hit level must stand above the scope's
#: ``NOISE_RANK``-th: closer than this, the whole neighbourhood is alike (noise).
SEPARATION: Final = 0.1


@attrs.frozen
class RelevanceFloor:
    """What the verdict needs of the embedder's calibration (:class:`satchel.Calibration`):
    its noise floor (``baseline``) and the cosine at which a best hit stops being weak
    (``min_top_similarity``)."""

    noise: float
    top_similarity: float

    @classmethod
    def of(cls, calibration: Calibration) -> RelevanceFloor:
        """The floor an embedder's calibration sets."""
        return cls(noise=calibration.baseline, top_similarity=calibration.min_top_similarity)

    def stands_out(self, similarities: npt.NDArray[np.float32]) -> bool:
        """Whether the best of ``similarities`` (the vector channel's cosines, in its
        order, which ranks apart from the scope's common direction: sorted here) clears
        the noise floor and stands out from the ``NOISE_RANK``-th (the last, in a smaller
        scope):
        by ``SEPARATION`` at the top-hit level, by the margin between that level and
        the floor below it. A lone record is its own neighbourhood: its cosine must
        reach the top-hit level."""
        if not len(similarities):
            return False
        similarities = np.sort(similarities)[::-1]
        best = float(similarities[0])
        if best < self.noise:
            return False
        if len(similarities) < 2:
            return best >= self.top_similarity
        reference = float(similarities[min(NOISE_RANK, len(similarities)) - 1])
        margin = SEPARATION if best >= self.top_similarity else self.top_similarity - self.noise
        return best - reference >= margin


def corroborated(terms: int) -> int:
    """Distinct counted terms one candidate must hold to be lexical evidence: round 0's
    minimum-match rule, but two at least (all of them when the query counts fewer)."""
    return min(terms, max(2, required_matches(terms)))


def evidence_of_relevance(
    searches: Iterable[tuple[Pool, int]], floor: RelevanceFloor
) -> str | None:
    """The first kind of evidence of relevance round 0 shows, or None: abstain.

    Args:
        searches: each search's pool with the number of query terms it counted
            (``Pool.counted_terms`` of its query).
        floor: the embedder's calibrated noise floor and top-hit level.
    """
    for pool, terms in searches:
        kind = _evidence(pool, terms, floor)
        if kind is not None:
            return kind
    return None


def _evidence(pool: Pool, terms: int, floor: RelevanceFloor) -> str | None:
    about_the_scope = not pool.unheld_names  # it names nothing the scope never mentions
    if about_the_scope and (pool.common_terms or _pervades(pool)):
        return SCOPE_TERM
    if len(pool.time_candidates):
        return TIME
    if terms and _lexical(pool, terms):
        return LEXICAL
    if floor.stands_out(pool.vector_similarities):
        return VECTOR
    if pool.distinctive_terms:
        return DISTINCTIVE
    if about_the_scope and terms and 2 * pool.held_terms > terms:
        return VOCABULARY
    return None


def _lexical(pool: Pool, terms: int) -> bool:
    """Whether a candidate holding enough of the ``terms`` counted query terms is also
    among the vector channel's ``NOISE_RANK`` most similar records (when it has one)."""
    strong = pool.lexical_keys[pool.lexical_matches >= corroborated(terms)]
    if not len(strong):
        return False
    if not len(pool.vector_keys):
        return True
    # ``np.isin(...).any()`` as a set's: a tenth of the cost for a handful of keys.
    return not set(pool.vector_keys[:NOISE_RANK].tolist()).isdisjoint(strong.tolist())


def _pervades(pool: Pool) -> bool:
    """Whether, in a scope too small to have common terms, the records holding a query
    term (the full-text candidates: a small scope's every holder) are most of it."""
    holders = len(pool.lexical_keys)
    return (
        pool.scope_rows < COMMON_MIN_ROWS
        and holders >= PERVADING_HOLDERS
        and 2 * holders > pool.scope_rows
    )


def vouched(keys: npt.NDArray[np.int64], pool: Pool) -> npt.NDArray[np.bool_]:
    """Which of ``keys`` (candidates of ``pool``'s search, best first) a channel vouches
    for on its own: a record holding a query term (a full-text candidate), or one of the
    vector channel's ``NOISE_RANK`` most similar records; the best ``VOUCHED_ITEMS`` of
    those at most."""
    held = among(keys, pool.lexical_keys) | among(keys, pool.vector_keys[:NOISE_RANK])
    return held & (np.cumsum(held) <= VOUCHED_ITEMS)
