"""One prepare, from a validated request to a fitted pack: the runtime's hot path.

Runs the host's planner (at most two more queries, behind its fuse), analyses and embeds
the queries once, reads the unsearched families (the profile) once and asks the session
ledger what this turn holds back; from these it makes the prepare's one
:class:`~._state.PrepareState`, deadline included, and hands it to the coordinator. Runs
the host's digest over the fitted pack (behind its fuse), reports the effort to the sink
(whose errors are logged and swallowed), then records the turn. ``prepare_timeout``
bounds all of it. It must never search, fit or judge: the coordinator does.

An explained prepare (:meth:`Preparer.explain`) is the same prepare, turn included,
whose searches also trace where each candidate stood; its receipts and omissions are
read from what recall committed (``_receipts``) before the turn is recorded.
"""

from __future__ import annotations

import itertools
import logging
import math
from typing import TYPE_CHECKING, TypeAlias, cast

import anyio
import attrs

from .._loop import loop_turn, turn_known
from ..embedders import embed_checked
from ..vocabulary import (
    MAX_OMISSIONS,
    PrepareTimeoutError,
    analyse_query,
    lightly_named,
    rules,
    tracer,
)
from ._deadlines import until
from ._options import RuntimeOptions
from ._receipts import Explainer
from ._stages import ask_planner, digest_pack
from ._state import Exclusions, PrepareState
from ._telemetry import BuildSpan, PrepareMetrics

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

    import numpy as np
    import numpy.typing as npt
    from opentelemetry.trace import Span, Tracer

    from ..builder import BuildResult
    from ..embedders import Embedder
    from ..recall import RecallEffort, RecallEffortSink
    from ..stores import Store
    from ..vocabulary import (
        AnalysedQuery,
        Evidence,
        Family,
        Omission,
        Receipt,
        ResolvedRequest,
    )
    from ._committed import Recalled
    from ._coordinator import Coordinator
    from ._ledger import DedupLedger, SessionOwner
    from ._locks import ScopeGuards
    from ._shared_ledger import SharedLedger
    from ._stages import Digest, Planner

logger = logging.getLogger("satchel")

_Vectors: TypeAlias = "tuple[npt.NDArray[np.float32] | None, ...]"
#: Analysed queries a runtime keeps (:meth:`Preparer._analysed`).
ANALYSES_KEPT = 512


@attrs.frozen
class _Prelude:
    """What the prelude found: the queries, their vectors, the profile and the planner's
    outcome."""

    queries: tuple[AnalysedQuery, ...]
    vectors: _Vectors
    unnamed: _Vectors
    unsearched: dict[Family, tuple[Evidence, ...]]
    planned: str


@attrs.frozen
class Explained:
    """What an explained prepare adds to its pack: one receipt per delivered item, in
    pack order, and the best candidates left out (at most ``MAX_OMISSIONS``)."""

    receipts: tuple[Receipt, ...]
    omitted: tuple[Omission, ...]


@attrs.frozen
class Preparer:
    """Runs prepares for one runtime."""

    store: Store
    embedder: Embedder
    guards: ScopeGuards
    coordinator: Coordinator
    sink: RecallEffortSink | None
    ledger: DedupLedger | SharedLedger | None = None
    #: The runtime's options: ``prepare_timeout`` (seconds the whole call may take,
    #: embedding, every read and the sink included), the host stages' fuses, and the
    #: wall clock (UTC epoch seconds, read once per prepare: relative dates).
    options: RuntimeOptions = attrs.field(factory=RuntimeOptions)
    #: The host's stages.
    planner: Planner | None = None
    digest: Digest | None = None
    tracer: Tracer = attrs.field(factory=lambda: tracer(None))
    #: The runtime's instruments (the profile read's store errors count here).
    metrics: PrepareMetrics = attrs.field(factory=lambda: PrepareMetrics(None))
    #: Queries analysed, by text (:meth:`_analysed`).
    _analyses: dict[str, AnalysedQuery] = attrs.field(factory=dict, init=False, repr=False)

    async def prepare(
        self, request: ResolvedRequest, *, session_owner: SessionOwner = None
    ) -> BuildResult:
        """Recall and fit one request; the final fit.

        ``prepare_timeout`` bounds the whole call from here: the planner, the queries'
        embedding, the profile read, every round (an expansion round that would overrun
        is discarded), the digest (which then keeps the fitted pack) and the sink (cut
        off, the pack still returned). The session's turn counts only once the pack is
        about to be returned. The request's session is ``session_owner``'s: the same
        session id under another owner is another session (None: the runtime's host).

        Raises:
            PrepareFailedError: a search of round 0 failed.
            PrepareTimeoutError: the call overran ``prepare_timeout`` (or round 0 its
                ``round_timeout``) before a pack was fitted.
        """
        with turn_known():
            build, _ = await self._prepare(request, session_owner, explain=False)
        return build

    async def explain(
        self, request: ResolvedRequest, *, session_owner: SessionOwner = None
    ) -> tuple[BuildResult, Explained]:
        """:meth:`prepare`, the same pack and the same turn, with its receipts and
        omissions. Reading the few omitted candidates no round read is cut off at the
        prepare's deadline (the omissions found by then stand).

        Raises:
            PrepareFailedError: as :meth:`prepare`.
            PrepareTimeoutError: as :meth:`prepare`.
        """
        with turn_known():
            build, explained = await self._prepare(request, session_owner, explain=True)
        assert explained is not None
        return build, explained

    async def _prepare(
        self, request: ResolvedRequest, session_owner: SessionOwner, *, explain: bool
    ) -> tuple[BuildResult, Explained | None]:
        started = anyio.current_time()
        timeout = self.options.prepare_timeout
        deadline = math.inf if timeout is None else started + timeout
        prelude = None
        with until(deadline):
            prelude = await self._prelude(request)
        if prelude is None:
            raise PrepareTimeoutError("the query was not embedded before prepare_timeout")
        session = request.session_id if self.ledger is not None else None
        turn, held_back = 0, frozenset[str]()
        if session is not None and self.ledger is not None:
            with until(deadline) as scope:
                turn, held_back = await self.ledger.next_turn(session, owner=session_owner)
            if scope.cancelled_caught:
                raise PrepareTimeoutError("the session was not read before prepare_timeout")
        state = PrepareState(
            request, deadline, self.options.clock(), prelude.queries, prelude.vectors,
            Exclusions.of(request.exclude, held_back), prelude.unsearched, explain=explain,
            unnamed=prelude.unnamed, limits=self.coordinator.limits_for(request.max_bytes),
        )  # fmt: skip
        span = BuildSpan(self.tracer)
        try:
            recalled = await self.coordinator.recall(state, self.coordinator.packer(state, span))
            build, digested = await self._digest(request, recalled.build, deadline)
        except BaseException as error:
            span.failed(error)
            raise
        # The pack is final: the build span and the metrics say what the caller gets.
        span.ended(build, recalled.rounds, recalled.reason, recalled.committed.joined_neighbours)
        self.metrics.built(build, recalled.rounds, recalled.reason)
        if self.sink is not None:
            effort = recalled.effort(self.coordinator.policy_id)
            stages = {"planner": prelude.planned, "digest": digested}
            await self._report(attrs.evolve(effort, stages=stages), deadline)
        explained = await self._explain(state, recalled, build, deadline) if explain else None
        if session is not None and self.ledger is not None:
            # Shielded: a turn being recorded is recorded whole and its pack returned,
            # never cooled for a caller whose cancellation arrived meanwhile.
            with anyio.CancelScope(shield=True):
                await self.ledger.record(session, turn, build.delivered, owner=session_owner)
        return build, explained

    async def _explain(
        self, state: PrepareState, recalled: Recalled, returned: BuildResult, deadline: float
    ) -> Explained:
        """The receipts of the ``returned`` pack and the best candidates left out: those
        recall committed or passed over, then (reads cut off at ``deadline``) those it
        never read."""
        explainer = Explainer(state, recalled.committed)
        omitted = explainer.left_out(recalled.build, returned)[:MAX_OMISSIONS]
        needed = MAX_OMISSIONS - len(omitted)
        if needed:
            skip = {item.evidence.identity for item in returned.delivered}
            skip.update(omission.citation.identity() for omission in omitted)
            # Twice as many as needed: some may have left search, or repeat a record.
            unread = list(itertools.islice(explainer.unread(), 2 * needed))
            with until(deadline):
                found = await explainer.read_unread(self.store, self.guards, unread, skip)
                omitted += found[:needed]
        return Explained(explainer.receipts(returned), tuple(omitted))

    async def _prelude(self, request: ResolvedRequest) -> _Prelude:
        """The planned queries, analysed and embedded once; the profile; the planner's
        outcome."""
        with self._stage_span("planner") as span:
            texts, planned = await ask_planner(
                self.planner,
                request.query,
                scope_id=request.scope_id,
                session_id=request.session_id,
                fuse=self.options.planner_timeout,
            )
            span.set_attribute("satchel.stage.outcome", planned)
            span.set_attribute("satchel.stage.queries", len(texts))
        async with loop_turn():
            queries = tuple(self._analysed(text) for text in texts)
        vectors, unnamed = await self._embed(request, queries)
        unsearched = await self._read_unsearched(request)
        return _Prelude(queries, vectors, unnamed, unsearched, planned)

    def _analysed(self, text: str) -> AnalysedQuery:
        """``analyse_query(text)``, kept by text: an agent asks the same question again
        (each step of a task, an explanation after the pack), and analysing one took
        about a twentieth of a prepare. A query is analysed by its text alone, so a
        kept analysis is the one it would get; at most ``ANALYSES_KEPT``, the oldest
        eighth dropped at once."""
        analyses = self._analyses
        found = analyses.get(text)
        if found is None:
            found = analyses[text] = analyse_query(text)
            if len(analyses) > ANALYSES_KEPT:
                for old in list(itertools.islice(analyses, 1 + ANALYSES_KEPT // 8)):
                    analyses.pop(old, None)
        return found

    async def _digest(
        self, request: ResolvedRequest, build: BuildResult, deadline: float
    ) -> tuple[BuildResult, str]:
        """The pack the digest keeps, within its fuse and the prepare's deadline."""
        fuse = min(self.options.digest_timeout, max(0.0, deadline - anyio.current_time()))
        with self._stage_span("digest") as span:
            kept, outcome = await digest_pack(self.digest, request.query, build, fuse=fuse)
            span.set_attribute("satchel.stage.outcome", outcome)
        return kept, outcome

    def _stage_span(self, name: str) -> AbstractContextManager[Span]:
        return self.tracer.start_as_current_span(
            f"satchel.stage.{name}", attributes={"satchel.stage.name": name}
        )

    async def _embed(
        self, request: ResolvedRequest, queries: tuple[AnalysedQuery, ...]
    ) -> tuple[_Vectors, _Vectors]:
        """Each query's vector and, for a query that says a proper name, its vector with
        the names weighing less (``lightly_named``, from the embedding of
        ``AnalysedQuery.unnamed``; None otherwise): all in one call, once for every
        family, scope and round; None each when no selected family has a vector
        channel."""
        if not any(rules(family).vector_channel for family in request.families):
            return (None,) * len(queries), (None,) * len(queries)
        texts = [query.text for query in queries]
        texts += [query.unnamed for query in queries if query.unnamed is not None]
        embedded = await embed_checked(self.embedder, texts)
        vectors = iter(cast("list[npt.NDArray[np.float32]]", list(embedded)))
        whole = tuple(next(vectors) for _ in queries)
        unnamed = tuple(
            None if query.unnamed is None else lightly_named(vector, next(vectors))
            for query, vector in zip(queries, whole, strict=True)
        )
        return whole, unnamed

    async def _read_unsearched(
        self, request: ResolvedRequest
    ) -> dict[Family, tuple[Evidence, ...]]:
        """The selected families that are read whole, not searched: the scope's profile."""
        if not any(not rules(family).searchable for family in request.families):
            return {}
        async with self.guards.reading(request.scope_id):
            with self.metrics.failures():
                found = await self.store.get_profile(request.scope_id)
        return {"profile": () if found is None else (found,)}

    async def _report(self, effort: RecallEffort, deadline: float) -> None:
        """Await the sink until the prepare's deadline; its failures are only logged."""
        assert self.sink is not None
        with until(deadline) as scope:
            try:
                await self.sink(effort)
            except Exception:  # a failing sink never fails the prepare
                logger.exception("recall effort sink failed")
        if scope.cancelled_caught:
            logger.warning("recall effort sink cut off at prepare_timeout")
