"""The searches of one round, each a (family, scope, query), in two phases.

Ranking: one task per search takes the scope's read guard, reuses the pool an earlier
round retrieved while the scope's write version is unchanged (else retrieves again),
admits the pool at the round's floor, fuses it and finds its hits' thread neighbours. A
search that reads its family's whole room (``_shares.whole_room``) reads its evidence
in the same task. Reading: once every search has ranked, the shares of the
others are computed (pure, between the phases) and one task per search reads the
evidence of its share of new candidates, under the guard again. Both phases read the
bodies the request pins, so every read a round needs happens inside its all-or-nothing
stage.

Every task hands back its result by writing its own key of the phase's results, and
never touches other shared state or waits on another: it reads the prepare's
:class:`~._state.PrepareState` and the round's :class:`RoundSettings`, and hands back a
ranking or a :class:`SearchOutcome`. The results are read only once the phase's task
group ended without an error, so a failed phase hands back nothing (a memory stream per
phase did the same at ~2 checkpoints and a stream clone per task more).
Each search's ``search_memory`` span is opened when the round starts and closed with
its outcome.
"""

from __future__ import annotations

import itertools
import math
from typing import TYPE_CHECKING, Final, TypeAlias

import anyio
import attrs

from .._loop import loop_turn
from ..builder import needs_body
from ..recall import (
    CONTEXT_REACH,
    NEIGHBOURS,
    FamilySearch,
    FusionWeights,
    admit,
    by_named_speaker,
    context_hits,
    fuse,
    in_context,
    trace_search,
    with_neighbours,
)
from ..stores import EmptyFamilies
from ..vocabulary import (
    Pool,
    PoolRequest,
    answered,
    asks_question,
    asks_when,
    called_by_name,
    names_apart,
    nicknamed,
    rules,
    said_by,
    says_nothing,
    says_when,
    speaker_terms,
    unlabelled,
)
from ..vocabulary._memo import remembered, text_memo
from ._shares import fair_shares, whole_room
from ._telemetry import PrepareMetrics, current

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping

    from opentelemetry.trace import Span, Tracer
    from opentelemetry.util.types import AttributeValue

    from ..recall import AdmissionFloor, SearchTrace
    from ..stores import Store
    from ..vocabulary import Evidence, Family, ThreadNeighbours, Tier
    from ._locks import ScopeGuards
    from ._state import PrepareState, SearchSpec

#: The best fused hits of a search whose thread neighbours join its candidates.
NEIGHBOUR_HITS: Final = 3
#: Of the candidates past a search's room that the named-speaker lift could raise into
#: it, a search reads at most a quarter of its room more (and at least this many; see
#: ``_reach``).
#: Reading all of them (~60 at 64 candidates) cost twice the time for the same recall
#: on the hard conversations (docs/benchmarks.md, "Per-person evidence").
MIN_REACH: Final = 4
#: The least reach of a search with its family's whole room (``_reach``): with the
#: classic limits' 16 candidates, 4 more let a lift raise few turns past the 16th
#: (LoCoMo with classic limits 0.761 -> 0.763 at 16, beyond one turn 0.617 -> 0.623).
ALONE_REACH: Final = 16
#: Settled outcomes of searches of a family holding nothing a searcher keeps (see
#: ``Searcher._settled``): a few per scope in use.
NOTHING_KEPT: Final = 4096
#: The rarity (``Evidence.rarity``, 0 to 1) at which a read turn keeps its score: a
#: rarer one scores more, a commoner one less (``FusionWeights.rarity``).
PLAIN_RARITY: Final = 0.5

#: What the tasks of a round's ranking phase hand back, each under its own search: a
#: ranking, or the outcome of a search that read its family's whole room.
_Results: TypeAlias = "dict[SearchSpec, _Ranked | SearchOutcome]"


@attrs.frozen
class RoundSettings:
    """What every search of one round shares, beside the prepare's own state.

    ``index`` is the round's place among the rounds that ran (0: round 0); ``action``
    the expander's action (``"search"`` for round 0). ``pools`` are the pools of earlier
    rounds, to re-admit; ``known`` the keys already committed per search, which a round
    never reads again; ``room`` how many new candidates each family can still take.
    With ``offer_neighbours`` a search's best hits bring their thread neighbours: fused
    in round 0, or, for the ``"neighbours"`` expansion action, offered after the
    committed candidates. With ``in_context`` (round 0) a conversation's full-text
    channel ranks its turns by passage (``satchel.recall.in_context``).
    """

    index: int
    action: str
    floor: AdmissionFloor
    room: Mapping[Family, int]
    pools: Mapping[SearchSpec, Pool] = attrs.Factory(dict)
    known: Mapping[SearchSpec, frozenset[int]] = attrs.Factory(dict)
    weights: FusionWeights = attrs.Factory(FusionWeights)
    offer_neighbours: bool = False
    in_context: bool = False


@attrs.frozen
class Round:
    """One round to run: the effect a prepare's recall (``_committed.Recall``) waits for.

    Attributes:
        settings: what every search of the round shares.
        specs: the searches to run.
        every: every search of the prepare, in allocation order (fair shares).
        delays: per search, the rank positions its list gives way in allocation.
        idle: the searches that need not run, with their known outcomes.
        whole: the searches of ``specs`` that read their family's whole room as soon as
            they ranked (the others read their fair share once every search ranked).
    """

    settings: RoundSettings
    specs: tuple[SearchSpec, ...]
    every: tuple[SearchSpec, ...]
    delays: Mapping[SearchSpec, int]
    idle: Mapping[SearchSpec, SearchOutcome] = attrs.Factory(dict)
    whole: frozenset[SearchSpec] = attrs.field(
        default=attrs.Factory(lambda self: whole_room(self.every, self.specs), takes_self=True)
    )


@attrs.frozen
class _Ranked:
    """A search's ranking before any evidence is read: its pool and fused search, its
    ``fresh`` keys (ranked, not committed by an earlier round), the keys that joined
    as a hit's thread neighbour, the neighbours of each hit that brought its own,
    how the order was made (see :class:`_Neighboured`) and (an explained prepare only)
    its trace."""

    pool: Pool
    search: FamilySearch
    fresh: tuple[int, ...]
    joined: frozenset[int]
    again: bool
    around: Mapping[int, tuple[int, ...]]
    by_score: bool
    neighboured_scores: Mapping[int, float] | None
    trace: SearchTrace | None = None
    #: The turn just after each hit of ``around`` that has one (its reply).
    replies: Mapping[int, int] = attrs.field(factory=dict)

    @classmethod
    def of_nothing(cls, pool: Pool, again: bool) -> _Ranked:
        """The ranking of a pool that retrieved no candidate (a family holding nothing in
        the scope): what admitting, fusing and joining neighbours would make of it,
        without their steps or a turn of the loop for them."""
        search = FamilySearch.of_nothing(pool.family, pool.scope_id)
        return cls(pool, search, (), frozenset(), again, {}, by_score=True,
                   neighboured_scores=None)  # fmt: skip

    def unread(self, spec: SearchSpec) -> SearchOutcome:
        """The outcome of this ranking when it holds no fresh key: nothing read, what a
        read of no keys gives (``Searcher._read``)."""
        return SearchOutcome(
            spec, self.pool, self.search, retrieved_again=self.again, trace=self.trace
        )

    def scores(self) -> Mapping[int, float]:
        """Each ranked key's score: the fused one, or with the neighbours fused in."""
        if self.neighboured_scores is not None:
            return self.neighboured_scores
        return dict(zip(self.search.ranked, self.search.scores, strict=True))


@attrs.frozen
class _Neighboured:
    """A search's order once its hits' thread neighbours joined (see
    :meth:`Searcher._with_neighbours`): ``by_score`` is False for the neighbours an
    expansion offers, which follow their hits rather than a score, and
    ``neighboured_scores`` are the scores of an order with neighbours fused in (None
    for the fused order itself, whose scores the search holds)."""

    ranked: tuple[int, ...]
    joined: frozenset[int]
    around: Mapping[int, tuple[int, ...]]
    by_score: bool = True
    neighboured_scores: Mapping[int, float] | None = None
    replies: Mapping[int, int] = attrs.field(factory=dict)


@attrs.frozen
class SearchOutcome:
    """What one search sends the coordinator.

    ``keys`` and ``evidence`` are the search's new candidates in fused order, at most
    the family's room; ``retrieved_again`` is True when an earlier pool could not be
    reused because the scope was written in between; ``joined_neighbours`` counts the
    keys that joined as a hit's thread neighbour. ``trace`` says where each ranked key
    stood, for an explained prepare only (``PrepareState.explain``); never on a span.
    """

    spec: SearchSpec
    pool: Pool
    search: FamilySearch
    keys: tuple[int, ...] = ()
    evidence: tuple[Evidence, ...] = ()
    retrieved_again: bool = False
    joined_neighbours: int = 0
    trace: SearchTrace | None = None


class Searcher:
    """Runs single searches against one store; the coordinator starts one task each."""

    def __init__(
        self,
        store: Store,
        guards: ScopeGuards,
        tracer: Tracer,
        metrics: PrepareMetrics | None = None,
        *,
        identifiers: bool = False,
    ) -> None:
        self._store = store
        #: The store's answer to which families a scope holds nothing of, if it gives
        #: one (``stores.EmptyFamilies``; see :func:`_told_empty`).
        self._holds_nothing = _told_empty(store)
        #: The settled outcome of each search of a family holding nothing, by the
        #: scope's version: the same immutable outcome serves every prepare until the
        #: scope is written (at most ``NOTHING_KEPT``; emptied when full).
        self._nothing: dict[tuple[SearchSpec, int], SearchOutcome] = {}
        self._guards = guards
        self._tracer = tracer
        self._metrics = metrics or PrepareMetrics(None)
        #: Whether the host opted in to scope names on spans (``trace_identifiers``).
        self._identifiers = identifiers

    async def run(self, state: PrepareState, round: Round) -> dict[SearchSpec, SearchOutcome]:
        """The outcome of every search the ``round`` runs: ranked in one task group, then
        (those sharing their family's room) read in another, their shares computed in
        between.

        Raises:
            ExceptionGroup: a search failed; its group's cancel scope stopped the others
                and nothing of the round is returned.
        """
        settings = round.settings
        spans = {spec: self._span(spec, settings) for spec in round.specs}
        try:
            ranked: dict[SearchSpec, _Ranked] = {}
            outcomes: dict[SearchSpec, SearchOutcome] = {}
            received: _Results = self._settled(state, round)
            if len(received) < len(round.specs):  # else every search was settled
                async with anyio.create_task_group() as group:
                    for spec in round.specs:
                        if spec not in received:
                            group.start_soon(self._rank, state, spec, round, spans[spec], received)
            for spec, got in received.items():
                if isinstance(got, _Ranked):
                    ranked[spec] = got
                else:
                    outcomes[spec] = got
            if ranked:
                wanted = fair_shares(
                    round.every,
                    {spec: len(got.fresh) for spec, got in ranked.items()},
                    settings.room,
                    round.delays,
                    state.exclusions.excluded_per_place,
                )
                read: dict[SearchSpec, SearchOutcome] = {}
                # A search that ranked nothing new has nothing to read: no task.
                reading = {spec: got for spec, got in ranked.items() if got.fresh}
                for spec, got in ranked.items():
                    if spec not in reading:
                        read[spec] = got.unread(spec)
                if reading:
                    async with anyio.create_task_group() as group:
                        for spec, got in reading.items():
                            share = (got, wanted[spec])
                            group.start_soon(self._read_share, state, spec, share, settings,
                                             spans[spec], read)  # fmt: skip
                outcomes.update(read)
            for spec, outcome in outcomes.items():
                _report(spans[spec], outcome)
            return outcomes
        finally:
            for span in spans.values():
                span.end()

    def _settled(self, state: PrepareState, round: Round) -> _Results:
        """The outcomes of the round's searches of a family the store knows its scope
        holds nothing of (``stores.EmptyFamilies``), settled with no task: the empty
        pool a retrieve would give, ranked as nothing. Only a search that would retrieve
        (no pool of an earlier round), of a scope no writer holds or waits for (the
        search would wait for the write), and not for an explanation (whose receipts
        trace every search)."""
        holds_nothing = self._holds_nothing
        if holds_nothing is None or state.explain:
            return {}
        pools, written, kept = round.settings.pools, self._guards.written, self._nothing
        settled: _Results = {}
        for spec in round.specs:
            family, scope_id = spec.family, spec.scope_id
            if spec in pools or written(scope_id) or not holds_nothing(family, scope_id):
                continue
            version = self._store.scope_version(scope_id)
            outcome = kept.get((spec, version))
            if outcome is None:
                if len(kept) >= NOTHING_KEPT:
                    kept.clear()
                pool = Pool(family, scope_id, version)
                outcome = kept[spec, version] = _Ranked.of_nothing(pool, again=False).unread(spec)
            settled[spec] = outcome
        return settled

    def _span(self, spec: SearchSpec, settings: RoundSettings) -> Span:
        """The search's span: the GenAI memory conventions' search_memory, whose
        ``gen_ai.memory.store.id`` is the scope (often a user's identifier) only when
        the host opts in."""
        attributes: dict[str, AttributeValue] = {
            "gen_ai.operation.name": "search_memory",
            "satchel.memory.family": spec.family,
            "satchel.recall.round.index": settings.index,
        }
        if self._identifiers:
            attributes["gen_ai.memory.store.id"] = spec.scope_id
        return self._tracer.start_span("search_memory", attributes=attributes)

    async def _rank(
        self,
        state: PrepareState,
        spec: SearchSpec,
        round: Round,
        span: Span,
        results: _Results,
    ) -> None:
        """Rank ``spec`` under the scope's read guard and hand back the ranking; read its
        evidence too, and hand back the outcome instead, when it reads the family's
        whole room."""
        settings = round.settings
        got: _Ranked | SearchOutcome
        with current(span), self._metrics.failures(span):
            async with self._guards.reading(spec.scope_id):
                got = await self._ranked(state, spec, settings)
                if spec in round.whole and got.fresh:
                    room = settings.room.get(spec.family, 0)
                    got = await self._read(state, spec, got, room, settings)
                elif spec in round.whole:  # nothing new to read
                    got = got.unread(spec)
        results[spec] = got

    async def _read_share(
        self,
        state: PrepareState,
        spec: SearchSpec,
        share: tuple[_Ranked, int],
        settings: RoundSettings,
        span: Span,
        results: dict[SearchSpec, SearchOutcome],
    ) -> None:
        """Read the evidence of ``spec``'s share (its ranking, how many to read), under
        the scope's read guard again, and hand back the outcome."""
        ranked, wanted = share
        with current(span), self._metrics.failures(span):
            async with self._guards.reading(spec.scope_id):
                outcome = await self._read(state, spec, ranked, wanted, settings)
        results[spec] = outcome

    async def _ranked(
        self, state: PrepareState, spec: SearchSpec, settings: RoundSettings
    ) -> _Ranked:
        """The search's pool (reused while the scope is unchanged), admitted at the
        round's floor, fused, with its hits' thread neighbours."""
        pool = settings.pools.get(spec)
        again = pool is not None and self._store.scope_version(spec.scope_id) != pool.version
        if pool is None or again:
            request = PoolRequest(
                state.queries[spec.query],
                state.vectors[spec.query],
                state.limits.pool_size(spec.family),
                state.now,
                state.unnamed[spec.query] if state.unnamed else None,
            )
            pool = await self._store.retrieve(spec.family, spec.scope_id, request)
        if not pool.retrieved and not state.explain:
            return _Ranked.of_nothing(pool, again)
        terms = pool.counted_terms(len(state.queries[spec.query].terms))
        around = await self._thread_context(spec, settings, pool)
        async with loop_turn():
            admitted = admit(pool, terms, settings.floor)
            if around:
                admitted = in_context(admitted, pool, around, settings.weights.thread_context)
            search = fuse(admitted, terms, settings.weights)
        known = settings.known.get(spec, frozenset())
        order = await self._with_neighbours(spec, settings, search, known, around)
        # Round 0 knows nothing yet: its whole order is fresh, with no pass per key.
        fresh = tuple(key for key in order.ranked if key not in known) if known else order.ranked
        trace = None
        if state.explain:  # receipts cost a plain prepare nothing
            share = settings.weights.neighbour_share
            trace = trace_search(admitted, search, order.ranked, order.around, share)
        return _Ranked(
            pool,
            search,
            fresh,
            order.joined,
            again,
            order.around,
            order.by_score,
            order.neighboured_scores,
            trace,
            order.replies,
        )

    async def _read(
        self,
        state: PrepareState,
        spec: SearchSpec,
        ranked: _Ranked,
        wanted: int,
        settings: RoundSettings,
    ) -> SearchOutcome:
        """The outcome: the evidence of the best ``wanted`` fresh candidates, with the
        bodies the request pins."""
        excluded = state.exclusions.excluded
        passed: list[tuple[int, Evidence]] | None = None if ranked.trace is None else []
        weights = settings.weights
        query = state.queries[spec.query]
        timed = weights.when if weights.when and asks_when(query.text) else 0.0
        lift, damped = weights.named_speaker, (weights.question, weights.filler, weights.stranger)
        rare = weights.rarity
        lifted: dict[int, float] = {}
        pool = ranked.pool
        if not (
            (lift or timed or rare or any(damped))
            and ranked.by_score
            and rules(spec.family).speakers
        ):
            keys, evidence = await self._fresh_evidence(
                spec, excluded, ranked.fresh, wanted, passed
            )
        else:
            scores = ranked.scores()
            # Past the room only in a scope with common query terms (as a chat of two
            # has its speakers' names): elsewhere a named turn is a rare term's hit,
            # which full text ranks already.
            raised = (1 + lift) * (1 + timed) * math.exp(rare * (1 - PLAIN_RARITY)) - 1
            alone = wanted >= settings.room.get(spec.family, 0)
            more = (
                _reach(ranked.fresh, scores, wanted, raised, alone=alone)
                if ranked.pool.common_terms
                else 0
            )
            fresh = iter(ranked.fresh)  # a read after strangers goes on where this one ends
            read = await self._fresh_evidence(spec, excluded, fresh, wanted + more, passed)
            names = frozenset((*query.names, *ranked.pool.spelled_names))
            named = (frozenset(query.terms), names)
            stranger = damped[2]
            people = _people(read, named, stranger) if lift or stranger else None
            strangers = people.by_strangers() if people is not None else 0
            if strangers:  # another chat's turns give way: as many more are read after them
                extra = await self._fresh_evidence(spec, excluded, fresh, strangers, passed)
                if extra[0]:
                    read = (read[0] + extra[0], read[1] + extra[1])
                    people = _people(read, named, stranger)
            keys, evidence, lifted = _ranked_as_read(
                ranked, scores, read, (people, lift, damped, (timed, rare)), wanted
            )
            if people is not None and pool.unheld_names:  # a name the turns read answer to
                apart = len(pool.unheld_names) > 1 and names_apart(query.text)
                heard = answered(people.speakers, pool.unheld_names, apart=apart)
                if heard:
                    # A participant's name, as it would be had their label said it: common
                    # in the scope (a question about them), and matched by no candidate.
                    left = tuple(name for name in pool.unheld_names if name not in heard)
                    common = pool.common_terms + len(heard)
                    pool = attrs.evolve(pool, unheld_names=left, common_terms=common)
        evidence = await self._with_bodies(spec, state.request.detail, evidence)
        # The keys are distinct (a ranking's), so the overlap counts them.
        joined = len(ranked.joined.intersection(keys)) if ranked.joined else 0
        trace = ranked.trace
        if trace is not None and lifted:  # receipts report the score the order is by
            trace = attrs.evolve(trace, scores={**trace.scores, **lifted})
        if trace is not None and passed:
            trace = attrs.evolve(trace, passed_over=tuple(passed))
        return SearchOutcome(spec, pool, ranked.search, keys, evidence, ranked.again, joined, trace)

    async def _fresh_evidence(
        self,
        spec: SearchSpec,
        excluded: frozenset[str],
        fresh: Iterable[int],
        wanted: int,
        passed: list[tuple[int, Evidence]] | None = None,
    ) -> tuple[tuple[int, ...], tuple[Evidence, ...]]:
        """The evidence of the best ``wanted`` of the ``fresh`` keys (not committed yet).

        Only that prefix is read: an iterator given is consumed that far, so a second
        read of it goes on past every key the first examined. A key whose record left
        search meanwhile, or whose evidence the caller excluded, is passed over and the
        next key read in its place; the excluded ones are added to ``passed`` when it is
        given (an explanation).
        """
        remaining = iter(fresh)
        kept: list[tuple[int, Evidence]] = []
        while len(kept) < wanted:
            batch = list(itertools.islice(remaining, wanted - len(kept)))
            if not batch:
                break
            found = await self._store.evidence(spec.family, spec.scope_id, batch)
            kept += [
                (key, item)
                for key in batch
                if (item := found.get(key)) is not None and item.identity not in excluded
            ]
            if passed is not None and excluded:
                passed += [
                    (key, item)
                    for key in batch
                    if (item := found.get(key)) is not None and item.identity in excluded
                ]
        keys = tuple(key for key, _ in kept)
        evidence = tuple(item for _, item in kept)
        return keys, evidence

    async def _with_bodies(
        self, spec: SearchSpec, detail: Mapping[Family, Tier], evidence: tuple[Evidence, ...]
    ) -> tuple[Evidence, ...]:
        """``evidence`` with the bodies the request pins (a resource at ``full``) read in."""
        if not rules(spec.family).body_on_demand or detail.get(spec.family) != "full":
            return evidence  # the common case: nothing of this search needs its body
        pinned = [item for item in evidence if needs_body(item, detail)]
        if not pinned:
            return evidence
        uris = [str(item.citation["uri"]) for item in pinned]
        bodies = await self._store.read_resource_bodies(spec.scope_id, uris)
        return tuple(
            attrs.evolve(item, text=bodies.get(str(item.citation["uri"])))
            if needs_body(item, detail)
            else item
            for item in evidence
        )

    async def _thread_context(
        self, spec: SearchSpec, settings: RoundSettings, pool: Pool
    ) -> Mapping[int, ThreadNeighbours]:
        """The thread neighbours of the pool's best full-text candidates, for a ranking
        by passage: read in round 0 of a conversation family, else none.

        Not when the query names a date the scope has records of: what was said then is
        the evidence (the time channel), and passages of the query's other words pushed
        it out of small packs (classic limits: 0.75 -> 0.46 of the dated questions of
        ``bench channels``; 0.75 again without them, LoCoMo within 0.003)."""
        if not (settings.in_context and rules(spec.family).neighbour_channel):
            return {}
        if len(pool.time_candidates):
            return {}
        hits = context_hits(pool)
        if not hits:
            return {}
        return await self._store.neighbours(spec.family, spec.scope_id, hits, reach=CONTEXT_REACH)

    async def _with_neighbours(
        self,
        spec: SearchSpec,
        settings: RoundSettings,
        search: FamilySearch,
        known: frozenset[int],
        read: Mapping[int, ThreadNeighbours],
    ) -> _Neighboured:
        """The search's order with its best hits' thread neighbours, those neighbours,
        the neighbours of each hit that brought its own, and each key's score.

        In round 0 they are fused in, a channel like any other; the ``"neighbours"``
        action offers only them, after the committed candidates, so it never displaces
        one (and that order is not by score). Neighbours already ``read`` (for the
        thread context) are not read again.
        """
        if not (settings.offer_neighbours and rules(spec.family).neighbour_channel):
            return _Neighboured(search.ranked, frozenset(), {})
        if not search.ranked:
            return _Neighboured(search.ranked, frozenset(), {})
        hits = search.ranked[:NEIGHBOUR_HITS]
        offered_after = settings.action == NEIGHBOURS  # else fused in, as in round 0
        if offered_after:
            hits = tuple(key for key in search.ranked if key in known)[:NEIGHBOUR_HITS]
        unread = [key for key in hits if key not in read]
        found = await self._store.neighbours(spec.family, spec.scope_id, unread) if unread else {}
        nearby = {
            key: near for key in hits if (near := read.get(key) or found.get(key)) is not None
        }
        around = {key: near.within(1) for key, near in nearby.items()}
        joined = frozenset(key for near in around.values() for key in near) - set(search.ranked)
        if offered_after:
            offered = tuple(key for hit in hits for key in around.get(hit, ()))
            return _Neighboured(offered, joined, around, by_score=False)
        ranked, scores = with_neighbours(search, around, settings.weights.neighbour_share)
        replies = {key: near.after[0] for key, near in nearby.items() if near.after}
        return _Neighboured(ranked, joined, around, neighboured_scores=scores, replies=replies)


def _told_empty(store: Store) -> Callable[[Family, str], bool] | None:
    """The store's ``holds_nothing`` (``stores.EmptyFamilies``) when the class that
    defines it defines its ``retrieve`` too: a subclass that retrieves otherwise (a
    store whose reads fail, a test double) has not said that its answer still holds,
    and has every search run. None for a store without one."""
    if not isinstance(store, EmptyFamilies):
        return None
    owners = {
        name: next((kind for kind in type(store).__mro__ if name in vars(kind)), None)
        for name in ("holds_nothing", "retrieve")
    }
    if owners["holds_nothing"] is None or owners["holds_nothing"] is not owners["retrieve"]:
        return None
    return store.holds_nothing


def _reach(
    fresh: tuple[int, ...],
    scores: Mapping[int, float],
    wanted: int,
    lift: float,
    *,
    alone: bool = False,
) -> int:
    """How many candidates past the best ``wanted`` of ``fresh`` (in score order) a
    search also reads for the named-speaker lift: those it could raise past the last of
    the ``wanted`` (a score above that one's divided by ``1 + lift``), at most a quarter
    of ``wanted`` (``MIN_REACH`` at least), or half of it (``ALONE_REACH`` at least)
    when the search has its family's whole room (``alone``: one scope). Who said a turn
    is in its text, which only a read gives. A candidate further down could enter only
    where turns above it are damped once read (a question, a filler, a stranger's), which
    reading the whole reach regardless did not change on LoCoMo (docs/benchmarks.md)."""
    if len(fresh) <= wanted or wanted < 1:
        return 0
    floor = scores[fresh[wanted - 1]] / (1 + lift)
    reach = max(ALONE_REACH, wanted // 2) if alone else max(MIN_REACH, wanted // 4)
    after = fresh[wanted : wanted + reach]
    return sum(1 for _ in itertools.takewhile(lambda key: scores[key] > floor, after))


def _ranked_as_read(
    ranked: _Ranked,
    scores: Mapping[int, float],
    read: tuple[tuple[int, ...], tuple[Evidence, ...]],
    reading: tuple[_People | None, float, tuple[float, float, float], tuple[float, float]],
    wanted: int,
) -> tuple[tuple[int, ...], tuple[Evidence, ...], dict[int, float]]:
    """The best ``wanted`` of the ``read`` candidates (in score order, with the
    :func:`_reach` past them) once what a read tells has counted: a turn that says
    nothing scores ``1 - filler`` times its score (``FusionWeights.filler``), another
    that asks a question ``1 - asking`` times (``FusionWeights.question``), one that
    says when something happened ``1 + timed`` times when the query asks when
    (``FusionWeights.when``; ``timed`` is 0 otherwise); every turn the store rated
    scores ``exp(rare * (r - PLAIN_RARITY))`` times, ``r`` its rarity
    (``Evidence.rarity``, ``FusionWeights.rarity``: its own and its scope's, never
    what else was read); a turn said by a stranger to the people the query names
    (``_People.strange``) ``1 - stranger`` times (``FusionWeights.stranger``); and the
    turns said by a person the query names (``_People.said``), with the replies to
    them, are lifted (``FusionWeights.named_speaker``). The first ``wanted``, as
    ranked, when no read turn does any of these. Last, the read keys' scores as
    counted (empty when none moved)."""
    keys, evidence = read
    people, lift, (asking, filler, stranger), (timed, rare) = reading
    speakers = people.speakers if people is not None else ()
    said = people.said if people is not None and lift else frozenset()
    strange = people.strange if people is not None and stranger else frozenset()
    damped = {}
    for at, (key, item) in enumerate(zip(keys, evidence, strict=True)):
        text = item.text
        score = scores[key]
        if strange and speakers[at] in strange:
            score *= 1.0 - stranger
        kind = _kind(text) if filler or asking else 0
        if filler and kind & _SAYS_NOTHING:
            score *= 1.0 - filler
        elif asking and kind & _ASKS:
            score *= 1.0 - asking
        if timed and says_when(text):
            score *= 1.0 + timed
        if rare and item.rarity is not None:
            score *= math.exp(rare * (item.rarity - PLAIN_RARITY))
        if score != scores[key]:
            damped[key] = score
    if not (said or damped):
        return keys[:wanted], evidence[:wanted], {}
    if damped:
        scores = {**scores, **damped}
    neighbours = (ranked.around, ranked.joined)
    best, lifted = by_named_speaker(
        keys, scores, said, neighbours, lift, wanted, replies=ranked.replies
    )
    chosen = tuple(keys[at] for at in best)
    return chosen, tuple(evidence[at] for at in best), dict(zip(keys, lifted, strict=True))


@attrs.frozen
class _People:
    """Who said the turns a search read: each turn's speaker (``speaker_terms``, in read
    order), the keys of those said by a person the query names, and the speakers who
    are strangers to them (:func:`_strangers`; empty unless ``FusionWeights.stranger``)."""

    speakers: tuple[frozenset[str], ...]
    said: frozenset[int]
    strange: frozenset[frozenset[str]]

    def by_strangers(self) -> int:
        """How many of the turns read a stranger said."""
        strange = self.strange
        if not strange:
            return 0
        return sum(1 for speaker in self.speakers if speaker in strange)


def _people(
    read: tuple[tuple[int, ...], tuple[Evidence, ...]],
    named: tuple[frozenset[str], frozenset[str]],
    stranger: float,
) -> _People:
    """:class:`_People` of the ``read`` turns, ``named`` the query's terms and proper
    names; strangers only when ``stranger`` damps them."""
    keys, evidence = read
    terms, names = named
    speakers = tuple(speaker_terms(item.text) for item in evidence)
    # Whether each speaker is one the query names, asked once per speaker (a chat has a
    # handful), not once per turn read.
    named_by: dict[frozenset[str], bool] = {}
    said = set()
    for key, speaker in zip(keys, speakers, strict=True):
        found = named_by.get(speaker)
        if found is None:
            found = named_by[speaker] = said_by(speaker, terms, names)
        if found:
            said.add(key)
    # A name no label says: a label's nickname, or whom the chat calls by it. Most
    # questions name only people whose labels say it: nothing more is gathered then.
    unnamed = frozenset(unlabelled(named_by, names)) if names else frozenset()
    if unnamed:
        texts = [item.text for item in evidence]
        places = [(item.thread, item.created_at) for item in evidence]
        called = set(called_by_name(speakers, texts, places, unnamed))
        called.update(nicknamed(speakers, unnamed).values())
        if called:
            said.update(key for key, who in zip(keys, speakers, strict=True) if who in called)
    strange = _strangers(keys, evidence, speakers, said) if stranger and said else frozenset()
    return _People(speakers, frozenset(said), strange)


def _strangers(
    keys: tuple[int, ...],
    evidence: tuple[Evidence, ...],
    speakers: tuple[frozenset[str], ...],
    said: set[int],
) -> frozenset[frozenset[str]]:
    """The speakers of the read turns (``speakers``, by :func:`speaker_terms`) who
    never speak in a thread where a person the query names speaks (their turns
    ``said``), among the turns read: in a scope that keeps one person's chats with
    several others, or several chats, each in threads of its own, what is said about
    someone is said in their conversations, and another chat's turn that shares the
    question's words is about somebody else. None unless someone the named person
    talks with was read beside them in one of those threads (in a chat of two whose
    turns read share no thread, the other person is unseen, not a stranger), nor when
    no named turn read has a thread (a chat kept without threads), and never a turn
    without a speaker. In a chat of two, or a group chat kept in one thread, nobody is a
    stranger; in a group chat kept in a thread a day, someone read only on days the named
    person was not can be."""
    if len(set(speakers)) < 3:  # the named, someone they talk with and a stranger
        return frozenset()
    threads = set()
    named = set()
    for at, (key, item) in enumerate(zip(keys, evidence, strict=True)):
        if key in said and item.thread is not None:
            threads.add(item.thread)
            named.add(speakers[at])
    partners = {
        speaker for speaker, item in zip(speakers, evidence, strict=True) if item.thread in threads
    }
    if not threads or partners <= named:
        return frozenset()
    return frozenset(
        speaker
        for speaker, item in zip(speakers, evidence, strict=True)
        if speaker and item.thread is not None and speaker not in partners
    )


#: What a read turn's text is: it says nothing (:func:`says_nothing`), it asks a
#: question (:func:`asks_question`), both bits or neither.
_SAYS_NOTHING: Final = 1
_ASKS: Final = 2
#: Texts whose kind is kept (:func:`_kind`): the evidence of many conversations'
#: prepares, as the fit's dedup keys are kept.
KINDS_KEPT: Final = 8192
_kinds: dict[str, int] = text_memo()


def _kind(text: str | None) -> int:
    """The kind of a read turn's ``text``, kept by text (``vocabulary._memo``): the
    same turns are read again prepare after prepare, and telling them was a third of
    reading a search's turns."""
    if text is None:
        return _tell(text)
    kind = _kinds.get(text)  # the common case, without a call
    return remembered(_kinds, text, _tell, KINDS_KEPT) if kind is None else kind


def _tell(text: str | None) -> int:
    return (_SAYS_NOTHING if says_nothing(text) else 0) | (_ASKS if asks_question(text) else 0)


def _report(span: Span, outcome: SearchOutcome) -> None:
    span.set_attribute("satchel.recall.retrieved", outcome.search.counts.retrieved)
    span.set_attribute("satchel.recall.admitted", outcome.search.counts.admitted)
    span.set_attribute("satchel.recall.retrieved_again", outcome.retrieved_again)
    span.set_attribute("satchel.recall.neighbours", outcome.joined_neighbours)
    span.set_attribute("gen_ai.memory.record.count", len(outcome.keys))
