"""The receipts and omissions of one explained prepare (``Runtime.explain_context``).

Read from what recall committed, once the pack is final: each delivered item's receipt
says which round committed it and how the search that offered it ranked it (the
:class:`~satchel.recall.SearchTrace` of that round's search, made only because the
prepare was explained); the omissions are the best candidates left out, with why. The
only reads are the evidence of a few candidates no round read (ranked past their
family's room, or below the floor), each under its scope's read guard.

It never changes the pack, the session ledger or ``RecallEffort``, and never puts
anything on a span: receipts name records, which only the caller who asked may see.
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING

import attrs

from ..recall import below_floor
from ..vocabulary import Citation, Omission, Receipt
from ..vocabulary._receipts import BUDGET, DUPLICATE, EXCLUDED, FLOOR, HELD_BACK

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping, Sequence

    from ..builder import BuildResult, DeliveredItem
    from ..recall import SearchTrace
    from ..stores import Store
    from ..vocabulary import Evidence, Family, OmissionCause
    from ._committed import Candidates, Committed
    from ._locks import ScopeGuards
    from ._search import SearchOutcome
    from ._state import PrepareState, SearchSpec


@attrs.frozen
class _Ranking:
    """Where one candidate stood in the search that offered it, and in which round."""

    channels: Mapping[str, int]
    score: float | None
    round: int = 0


#: A profile is read whole, never ranked.
_UNRANKED = _Ranking({}, None)


@attrs.frozen
class _Unread:
    """A candidate no round read: its search, key, cause and ranking."""

    spec: SearchSpec
    key: int
    cause: OmissionCause
    ranking: _Ranking


def cite(evidence: Evidence) -> Citation:
    """The citation ``parse_context`` reads for ``evidence``'s item."""
    return Citation.from_json(evidence.citation)


class Explainer:
    """Receipts and omissions from one prepare's committed state."""

    def __init__(self, state: PrepareState, committed: Committed | None) -> None:
        self._state = state
        self._committed = committed
        self._rankings = {} if committed is None else _committed_rankings(committed)
        #: The prepare abstained: round 0 showed no evidence that anything is relevant.
        self._abstained = committed is not None and committed.abstained

    def receipts(self, returned: BuildResult) -> tuple[Receipt, ...]:
        """One receipt per item of the returned pack, in pack order."""
        return tuple(self._receipt(item) for item in returned.delivered)

    def _receipt(self, item: DeliveredItem) -> Receipt:
        ranking = self._rankings.get(item.evidence.identity, _UNRANKED)
        citation = cite(item.evidence)
        return Receipt(
            citation, ranking.channels, ranking.score, ranking.round, item.tier, item.truncated
        )

    def left_out(self, fitted: BuildResult, returned: BuildResult) -> list[Omission]:
        """The candidates the fit was offered (or a search passed over as excluded) and
        the pack does not deliver, best fused score first: left out as the duplicate of
        an offered item's text, or for want of room (every one of them, when the prepare
        abstained: below the round's floor of relevance). What the host's digest
        discarded from the fit is its own choice, not an omission of satchel's."""
        fit = {item.evidence.identity for item in fitted.delivered}
        duplicates = {evidence.identity for evidence in fitted.duplicates}
        unfitted: OmissionCause = FLOOR if self._abstained else BUDGET
        found: dict[str, Omission] = {}
        for evidence in self._offered():
            identity = evidence.identity
            if identity in fit or identity in found:
                continue
            ranking = self._rankings.get(identity, _UNRANKED)
            cause: OmissionCause = DUPLICATE if identity in duplicates else unfitted
            found[identity] = self._omission(evidence, cause, ranking)
        for evidence, ranking in self._passed_over():
            found.setdefault(evidence.identity, self._omission(evidence, EXCLUDED, ranking))
        delivered = {item.evidence.identity for item in returned.delivered}
        kept = [omission for identity, omission in found.items() if identity not in delivered]
        return sorted(kept, key=_best_score)

    def unread(self) -> Iterator[_Unread]:
        """The candidates no round read, in the order they are worth reading: those
        ranked past their family's room (best fused score first), then those below the
        last committed round's floor (best channel rank first)."""
        committed = self._committed
        if committed is None:
            return
        ranked: list[_Unread] = []
        below: list[_Unread] = []
        for spec in committed.specs:
            traces = list(_traces(committed, spec))
            seen = set(committed.known[spec])
            seen.update(key for trace in traces for key, _ in trace.passed_over)
            for key, ranking in _ranked_rankings(traces).items():
                if key not in seen:
                    ranked.append(_Unread(spec, key, BUDGET, ranking))
            seen.update(key for trace in traces for key in trace.ranked)
            outcome = committed.outcomes[spec]
            terms = outcome.pool.counted_terms(len(self._state.queries[spec.query].terms))
            below += [
                _Unread(spec, key, FLOOR, _Ranking(channels, None))
                for key, channels in below_floor(outcome.pool, terms, committed.floor)
                if key not in seen
            ]
        if self._abstained:  # what was ranked showed no evidence of relevance either
            ranked = [attrs.evolve(unread, cause=FLOOR) for unread in ranked]
        ranked.sort(key=lambda unread: -(unread.ranking.score or 0.0))
        below.sort(key=lambda unread: min(unread.ranking.channels.values()))
        yield from ranked
        yield from below

    async def read_unread(
        self,
        store: Store,
        guards: ScopeGuards,
        unread: Sequence[_Unread],
        skip: set[str],
    ) -> list[Omission]:
        """The omissions of ``unread`` candidates whose evidence is still there, less the
        identities in ``skip`` (delivered or omitted already; the new ones are added)."""
        found: list[Omission] = []
        places = itertools.groupby(
            sorted(unread, key=lambda item: (item.spec.family, item.spec.scope_id)),
            key=lambda item: (item.spec.family, item.spec.scope_id),
        )
        read: dict[tuple[Family, str, int], Evidence] = {}
        for (family, scope), group in places:
            keys = list(dict.fromkeys(item.key for item in group))
            async with guards.reading(scope):
                evidence = await store.evidence(family, scope, keys)
            read.update(((family, scope, key), item) for key, item in evidence.items())
        for item in unread:  # in the order they were worth reading
            record = read.get((item.spec.family, item.spec.scope_id, item.key))
            if record is None or record.identity in skip:
                continue
            skip.add(record.identity)
            found.append(self._omission(record, item.cause, item.ranking))
        return found

    def _omission(self, evidence: Evidence, cause: OmissionCause, ranking: _Ranking) -> Omission:
        """The omission of ``evidence``: excluded or held back whatever else it was."""
        exclusions = self._state.exclusions
        if evidence.identity in exclusions.excluded:
            cause = EXCLUDED
        elif evidence.identity in exclusions.held_back:
            cause = HELD_BACK
        return Omission(cite(evidence), cause, ranking.channels, ranking.score)

    def _offered(self) -> Iterator[Evidence]:
        """What the fit was offered before the exclusions: each family's committed
        candidates and the families read whole (the profile)."""
        committed = self._committed
        candidates: Candidates = {} if committed is None else committed.candidates
        for items in (*candidates.values(), *self._state.unsearched.values()):
            yield from items

    def _passed_over(self) -> Iterator[tuple[Evidence, _Ranking]]:
        """The excluded evidence the searches read past, with its ranking."""
        committed = self._committed
        if committed is None:
            return
        for index, outcomes, _ in committed.rounds:
            for outcome in outcomes.values():
                trace = outcome.trace
                if trace is not None:
                    for key, evidence in trace.passed_over:
                        yield evidence, _ranking(trace, key, index)


def _best_score(omission: Omission) -> tuple[bool, float]:
    return omission.score is None, -(omission.score or 0.0)


def _ranking(trace: SearchTrace, key: int, index: int) -> _Ranking:
    return _Ranking(trace.channels.get(key, {}), trace.scores.get(key), index)


def _traces(committed: Committed, spec: SearchSpec) -> Iterator[SearchTrace]:
    for _, outcomes, _ in committed.rounds:
        outcome = outcomes.get(spec)
        if outcome is not None and outcome.trace is not None:
            yield outcome.trace


def _ranked_rankings(traces: Sequence[SearchTrace]) -> dict[int, _Ranking]:
    """Each key the traces ranked, as the latest trace that ranked it did."""
    rankings: dict[int, _Ranking] = {}
    for trace in traces:
        for key in trace.ranked:
            rankings[key] = _Ranking(trace.channels.get(key, {}), trace.scores.get(key))
    return rankings


def _committed_rankings(committed: Committed) -> dict[str, _Ranking]:
    """Each committed identity's ranking in the round that committed it, as ranked by
    the search allocation took it from."""
    rankings: dict[str, _Ranking] = {}
    for index, outcomes, candidates in committed.rounds:
        before = set(rankings)
        new = {item.identity for items in candidates.values() for item in items} - before
        for trace, key, evidence in _allocation_order(committed.specs, outcomes, before):
            if evidence.identity in new and evidence.identity not in rankings:
                rankings[evidence.identity] = _ranking(trace, key, index)
    return rankings


def _allocation_order(
    specs: Sequence[SearchSpec],
    outcomes: Mapping[SearchSpec, SearchOutcome],
    committed: set[str],
) -> Iterator[tuple[SearchTrace, int, Evidence]]:
    """Each search's new candidates (less the ``committed`` identities) in the order
    allocation takes them: rank 1 of every search, then rank 2, ... So the first sighting
    of an identity is the search it was taken from. (Allocation's delays only matter
    between scopes, and an identity belongs to one scope.)"""
    lists = []
    for spec in specs:
        outcome = outcomes.get(spec)
        if outcome is None or outcome.trace is None:
            continue
        fresh = [
            (key, evidence)
            for key, evidence in zip(outcome.keys, outcome.evidence, strict=True)
            if evidence.identity not in committed
        ]
        lists.append((outcome.trace, fresh))
    for position in range(max((len(fresh) for _, fresh in lists), default=0)):
        for trace, fresh in lists:
            if position < len(fresh):
                key, evidence = fresh[position]
                yield trace, key, evidence
