"""Weighted reciprocal-rank fusion of the admitted channels of one family search. Pure."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final, cast

import attrs
import numpy as np

from ..vocabulary._errors import InvalidRequestError
from ._admission import AdmissionCounts

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from collections.abc import Set as AbstractSet

    import numpy.typing as npt

    from ..vocabulary._families import Family
    from ._admission import Admitted

RRF_K: Final = 60


def _weight(instance: object, attribute: attrs.Attribute[float], value: float) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 10:
        raise InvalidRequestError(f"FusionWeights.{attribute.name} must be in 0..10")


def _share(instance: object, attribute: attrs.Attribute[float], value: float) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value < 1:
        raise InvalidRequestError(f"FusionWeights.{attribute.name} must be in 0..1 (not 1)")


@attrs.frozen(kw_only=True)
class FusionWeights:
    """How much each ranked channel counts in fusion: ``weight / (k + rank)`` per channel.

    A cosine list carries less precision than a lexical one, so it counts half (equal
    weight lost 0.03 recall on the synthetic conversations of ``python -m bench
    channels``); when a query names a date, the entries recorded then are the only
    evidence of it, so the time list counts double (1.0 and 1.5 lost 0.04 and 0.02).

    A thread neighbour scores 0.8 of its hit: the answer to a question is often the
    reply, which shares no word with it, and at half its hit's score it ranked past what
    a pack delivers. On the hard conversations (``python -m bench recall``) 0.8 against
    0.5 gave +0.017 recall at 8000 bytes and +0.007 at 4000 (replies 0.75 -> 0.90),
    -0.003 at 2000 and -0.007 with classic limits; on a real conversation corpus +0.026.
    1.0 places every neighbour beside its hit, which costs the small budgets more (-0.03
    at 2000, -0.06 classic).

    A conversation turn ranks in the full-text channel by its passage: its BM25 plus 0.8
    of each adjacent candidate's and 0.4 of those two turns away (``thread_context``).
    On LoCoMo, real long conversations, 0.5 / 0.25 gave the same recall at 8,000 bytes
    and 0.003-0.012 less at 2,000 bytes and with classic limits; one turn each way at
    0.8 gave 0.020 less at 8,000 bytes (docs/benchmarks.md).

    A conversation turn said by a person the query names scores ``1 + named_speaker``
    times its fused score: in a chat of two a name is held by half the turns, so full
    text cannot rank by it, yet a question about a person is most often answered by
    what they said. On the hard conversations 0.5 against 0 gave +0.011 to +0.013
    recall at every budget and no category lower; 1.0 gave the same or +0.007 (see
    docs/benchmarks.md, "Per-person evidence"). With the read turns' other lifts and
    damps since, 0.8 against 0.5 gave LoCoMo's multi-hop questions 0.699 -> 0.713 at
    8,000 bytes and its open-domain ones 0.573 -> 0.585, for 0.001 at 2,000 bytes
    ("A question's person lifted further"). Only their turns and the replies to
    them: on LoCoMo 96% of the evidence of a question naming one of a chat's two people
    is what that person said, and lifting both turns around theirs, as before, gave
    0.716 / 0.711 recall at 2,000 bytes and classic limits against 0.725 / 0.720.

    A full-text candidate scores ``exp(term_share * s)`` times its fused score, ``s``
    being the share of the query's counted terms it holds: rank fusion keeps a channel's
    order but not how much better its best is, and a turn holding three of a question's
    four words is stronger evidence than one holding one of them that BM25 ranks close
    by its length. On LoCoMo 0.5 gave +0.011 recall at 2,000 bytes and with classic
    limits, -0.002 at 8,000 (docs/benchmarks.md, "What a small pack holds").

    A conversation turn that asks a question (its text ends with "?") scores 0.8 of its
    score once read (``question``): a chat's questions repeat a topic's words, its
    answers hold the facts. On LoCoMo 0.2 gave +0.004 / +0.010 / +0.010 recall at 8,000
    and 2,000 bytes and classic limits; 0.35 and 0.5 gave no more.

    Asked when ("When did Melanie run a charity race?", "How long has Nate had his
    turtles?": ``vocabulary.asks_when``), a conversation turn that says when (a date, a
    weekday, "last Saturday", "next Saturday", a season) or for how long ("for 3 years
    now": ``vocabulary.says_when``) scores 1.5 times its score once read (``when``): a
    chat tells when a thing happened in the turn that tells of it. On LoCoMo 0.35 gave
    +0.004 recall at 2,000 bytes and with classic limits (temporal questions +0.02)
    when only dates counted; with spans of time 0.5 gave +0.002 at 2,000 bytes over
    0.35, 0.7 the same as 0.5.

    A conversation turn that says something rare in its chat scores more once read:
    ``exp(1.5 * (r - 0.5))`` times, ``r`` its rarity (``vocabulary.rarity``: the mean
    ``ln(N / df) / ln(N + 200)`` of its words in the scope, 0 to 1). A chat's courtesies
    ("Thanks, John! Talk to you soon!") are made of the words it says most, its facts of
    words it says rarely. On LoCoMo 1.5 gave +0.012 / +0.013 recall at 2,000 bytes and
    with classic limits (+0.002 at 8,000), on the hard conversations +0.08 at 2,000
    bytes; 1.0 to 2.0 within 0.003 on LoCoMo.

    A conversation turn that says nothing (``vocabulary.says_nothing``: "lol", "Thanks!")
    scores 0.1 of its score once read (``filler``): it answers no question, yet beside a
    hit it ranks as a neighbour or in its passage. On LoCoMo with a filler after three
    turns in ten, such turns were 15% of what classic limits delivered (0.2% after),
    and recall with classic limits rose from 0.691 to 0.713 (0.731 without fillers);
    LoCoMo itself holds 12 such turns, none evidence, and its recall is unchanged.

    In a scope that keeps several chats, each in threads of its own, a conversation turn
    said by a stranger to the people the query names (who speaks in none of their
    threads among the turns read) scores 0.5 of its score once read (``stranger``), and
    as many more candidates are read: what is said about a person is said in their
    chats. On LoCoMo's ten conversations kept in one scope 0.5 gave +0.008 / +0.008 /
    +0.007 / +0.011 recall at 2,000 / 4,000 / 8,000 bytes and classic limits (0.8 the
    same), five a scope +0.011 / +0.014 / +0.012 / +0.016, two +0.003 / +0.003 / +0.007
    / +0.004; one chat of two a scope, as released, is unchanged.

    Attributes:
        lexical: the full-text channel.
        vector: the vector channel.
        time: the time channel (entries recorded in the window a query's date names).
        neighbour_share: a thread neighbour's share of the fused score of the hit it
            sits next to, for round 0's neighbour channel; 0 turns that channel off.
        named_speaker: how much more a turn said by a person the query names scores,
            as a share of its fused score (a person its speaker's label names, or, for
            a name no label says, the one the chat calls by it); 0 turns it off.
        thread_context: in round 0, the share of a full-text candidate's BM25 that the
            turns just before and after it in its thread add to theirs (half of it two
            turns away), so conversation turns rank by their passage; 0 ranks them
            turn by turn.
        question: how much less a conversation turn that asks a question scores once
            read, as a share of its score; 0 turns it off.
        filler: how much less a conversation turn that says nothing scores once read,
            as a share of its score (it replaces ``question`` for a turn that does
            both); 0 turns it off.
        when: how much more a conversation turn that says when something happened
            (``vocabulary.says_when``) scores once read, for a question that asks when
            (``vocabulary.asks_when``), as a share of its score; 0 turns it off.
        rarity: how much a conversation turn's rarity in its scope moves its score
            once read: it scores ``exp(rarity * (r - 0.5))`` times, ``r`` the mean
            ``ln(N / df) / ln(N + 200)`` of its words (``Evidence.rarity``); 0 turns it off.
        term_share: how much a full-text candidate's share of the query's counted
            terms multiplies its fused score (``exp(term_share * share)``); 0 turns it
            off.
        stranger: how much less a conversation turn scores once read when its speaker
            shares no thread with a person the query names, among the turns read, as a
            share of its score; 0 turns it off.
    """

    lexical: float = attrs.field(default=1.0, validator=_weight)
    vector: float = attrs.field(default=0.5, validator=_weight)
    time: float = attrs.field(default=2.0, validator=_weight)
    neighbour_share: float = attrs.field(default=0.8, validator=_weight)
    named_speaker: float = attrs.field(default=0.8, validator=_weight)
    thread_context: float = attrs.field(default=0.8, validator=_weight)
    term_share: float = attrs.field(default=0.5, validator=_weight)
    question: float = attrs.field(default=0.2, validator=_share)
    filler: float = attrs.field(default=0.9, validator=_share)
    when: float = attrs.field(default=0.5, validator=_weight)
    rarity: float = attrs.field(default=1.5, validator=_weight)
    stranger: float = attrs.field(default=0.5, validator=_share)


@attrs.frozen
class FamilySearch:
    """One (family, scope, query) search after admission and fusion.

    ``ranked`` is the fused order of record keys, best first, and ``scores`` their fused
    scores. The remaining fields are the signals the sufficiency gate reads: the best and
    second-best admitted cosine similarities and the share of query terms the best
    lexical candidate contains.
    """

    family: Family
    scope_id: str
    ranked: tuple[int, ...]
    counts: AdmissionCounts
    best_similarity: float | None = None
    next_similarity: float | None = None
    best_overlap: float = 0.0
    scores: tuple[float, ...] = ()

    @classmethod
    def of_nothing(cls, family: Family, scope_id: str) -> FamilySearch:
        """What admission and fusion make of a pool that retrieved no candidate (a
        family holding nothing in the scope), without their array steps."""
        return cls(family, scope_id, (), AdmissionCounts(family, scope_id, 0, 0))


def fuse(
    admitted: Admitted, term_count: int, weights: FusionWeights | None = None, *, k: int = RRF_K
) -> FamilySearch:
    """Order the admitted candidates by weighted reciprocal-rank fusion (``weight /
    (k + rank)`` per channel, rank from 1); ties keep lexical-first, then retrieval order.
    """
    weights = weights or FusionWeights()
    lexical = admitted.lexical_keys if admitted.context_keys is None else admitted.context_keys
    channels = (
        (lexical, weights.lexical),
        (admitted.vector_keys, weights.vector),
        (admitted.time_keys, weights.time),
    )
    shares = None
    if weights.term_share and term_count and len(admitted.lexical_keys):
        holding = admitted.lexical_matches > 0  # each one is fused (by passage too)
        held = np.minimum(admitted.lexical_matches[holding] / term_count, 1.0)
        shares = (admitted.lexical_keys[holding], np.exp(weights.term_share * held))
    if sum(len(keys) for keys, _ in channels) < VECTORISED_FROM:
        ranked, scores = _fused_by_key(channels, k, shares)
    else:
        ranked, scores = _fused_by_array(channels, k, shares)
    # The two highest cosines: the channel ranks apart from the scope's common
    # direction, so its order is not theirs.
    similarities = np.sort(admitted.vector_similarities)[::-1][:2].tolist()
    matches = admitted.lexical_matches
    counts = admitted.counts
    return FamilySearch(
        family=counts.family,
        scope_id=counts.scope_id,
        ranked=ranked,
        counts=counts,
        best_similarity=similarities[0] if similarities else None,
        next_similarity=similarities[1] if len(similarities) > 1 else None,
        best_overlap=int(matches.max()) / term_count if term_count and len(matches) else 0.0,
        scores=scores,
    )


#: Channels holding at least this many keys in all are fused with array operations;
#: shorter ones cost less as a loop than numpy's per-call overhead (measured: equal at
#: about 300 keys, 88 against 119 us at 512).
VECTORISED_FROM: Final = 320

Channels = tuple[tuple["npt.NDArray[np.int64]", float], ...]
#: The full-text keys and the factor each one's fused score is multiplied by.
Shares = tuple["npt.NDArray[np.int64]", "npt.NDArray[np.float64]"]
Fused = tuple[tuple[int, ...], tuple[float, ...]]


def _fused_by_key(channels: Channels, k: int, shares: Shares | None = None) -> Fused:
    scores: dict[int, float] = {}
    get = scores.get
    for keys, weight in channels:
        for key, share in zip(keys.tolist(), _shares(weight, k, len(keys)), strict=False):
            scores[key] = get(key, 0.0) + share
    if shares is not None:
        for key, factor in zip(shares[0].tolist(), shares[1].tolist(), strict=True):
            scores[key] *= factor
    order = sorted(scores, key=scores.__getitem__, reverse=True)  # stable: ties keep insertion
    return tuple(order), tuple(scores[key] for key in order)


_SHARES: dict[tuple[float, int], list[float]] = {}


def _shares(weight: float, k: int, count: int) -> list[float]:
    """``weight / (k + rank)`` for ranks 1..``count`` at least, computed once per weight."""
    shares = _SHARES.get((weight, k))
    if shares is None or len(shares) < count:
        size = max(count, 1024)
        shares = _SHARES[(weight, k)] = [weight / (k + rank) for rank in range(1, size + 1)]
    return shares


def _fused_by_array(channels: Channels, k: int, shares: Shares | None = None) -> Fused:
    """The same sums as :func:`_fused_by_key`, bit for bit: ``bincount`` adds each key's
    contributions one by one in input order, which is channel order."""
    keys = np.concatenate([keys for keys, _ in channels])
    parts = [weight / (k + np.arange(1, len(keys) + 1.0)) for keys, weight in channels]
    by_key = np.argsort(keys, kind="stable")
    sorted_keys = keys[by_key]
    starts = np.concatenate(([True], sorted_keys[1:] != sorted_keys[:-1]))
    slot = np.empty(len(keys), dtype=np.intp)
    slot[by_key] = np.cumsum(starts) - 1
    totals = cast("npt.NDArray[np.float64]", np.bincount(slot, weights=np.concatenate(parts)))
    unique = sorted_keys[starts]
    if shares is not None:  # every full-text key is among the fused ones
        at = np.searchsorted(unique, shares[0])
        totals[at] = totals[at] * shares[1]
    # Best score first; equal scores in order of first appearance across the channels
    # (the stable sort puts each key's first appearance at the start of its group).
    order = np.lexsort((by_key[starts], -totals))
    return tuple(unique[order].tolist()), tuple(totals[order].tolist())


def with_neighbours(
    search: FamilySearch, around: Mapping[int, tuple[int, ...]], share: float
) -> tuple[tuple[int, ...], dict[int, float]]:
    """The fused order with the hits' thread neighbours fused in, and each key's score.

    A neighbour scores ``share`` times the fused score of the best hit it sits next
    to, or its own fused score if it is a hit that ranks higher by itself: a reply that
    shares no word with the query ranks just below the question it answers.
    """
    scored = neighbour_scores(search, around, share)
    return tuple(sorted(scored, key=scored.__getitem__, reverse=True)), scored


def neighbour_scores(
    search: FamilySearch, around: Mapping[int, tuple[int, ...]], share: float
) -> dict[int, float]:
    """Each key's score once the hits' thread neighbours join: the fused score, or
    ``share`` times the fused score of the best hit a neighbour sits next to, whichever
    is higher; in the fused order, then the neighbours in ``around``'s order."""
    fused = dict(zip(search.ranked, search.scores, strict=True))
    scored = dict(fused)
    for hit, near in around.items():
        lifted = share * fused.get(hit, 0.0)
        for key in near:
            scored[key] = max(scored.get(key, 0.0), lifted)
    return scored


def by_named_speaker(
    keys: Sequence[int],
    scores: Mapping[int, float],
    said: AbstractSet[int],
    neighbours: tuple[Mapping[int, tuple[int, ...]], AbstractSet[int]],
    lift: float,
    keep: int,
    *,
    replies: Mapping[int, int] | None = None,
) -> tuple[list[int], list[float]]:
    """The positions in ``keys`` of the best ``keep`` once the turns said by a person the
    query names (``said``) score ``1 + lift`` times their ``scores``, and every key's
    score so lifted (the score it ranks by, which an explanation reports); ties keep
    the order of ``keys``.

    ``neighbours`` are the thread neighbours of each hit that brought its own, and the
    keys that joined only as a neighbour; ``replies`` the turn just after each hit
    whose neighbours were read. Of a named turn's neighbours only the reply to it shares
    its lift (what the person was told: "What advice did Ana get?"); the turn before
    it, said by someone else, is rarely evidence about them. A key that joined only as
    a neighbour never scores above the hit that brought it, so a reply still ranks
    just below its question.
    """
    around, joined = neighbours
    factor = 1.0 + lift
    named = set(said)
    if replies:
        named.update(replies[hit] for hit in said & replies.keys())
    value = [scores[key] * factor if key in named else scores[key] for key in keys]
    ceiling: dict[int, float] = {}
    for hit, near in around.items():
        cap = scores[hit] * factor if hit in named else scores[hit]
        for key in near:
            if key in joined:
                ceiling[key] = max(ceiling.get(key, 0.0), cap)
    for at, key in enumerate(keys):
        if key in ceiling:
            value[at] = min(value[at], ceiling[key])
    return sorted(range(len(keys)), key=value.__getitem__, reverse=True)[:keep], value
