"""The public runtime: ``open_runtime`` wires a store, an embedder and the pipeline.

Only this layer wires things together: writes are validated and embedded here and go to
the store under the scope's write guard; a prepare is validated here and handed to the
orchestration's :class:`~satchel.orchestration.Preparer`.
"""

from __future__ import annotations

import math
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, cast

import anyio
import threadpoolctl

from ..embedders import (
    Embedder,
    calibration_of,
    check_embedder,
    default_embedder,
    embed_checked,
    fingerprint_of,
)
from ..orchestration import (
    Coordinator,
    DedupLedger,
    PrepareMetrics,
    Preparer,
    RecallRules,
    RuntimeOptions,
    ScopeGuards,
    SharedLedger,
    check_meter_provider,
)
from ..recall import RecallSufficiencyPolicy
from ..stores import SessionStore, SqliteStore, Store
from ..vocabulary import (
    Explanation,
    InvalidRequestError,
    Limits,
    PreparedContext,
    check_provider,
    tracer,
    validate_request,
    validate_scope,
    validate_session_owner,
)
from ..vocabulary._families import rules
from ..vocabulary._listing import (
    DEFAULT_PAGE,
    RecordPage,
    ScopeSummary,
    listed_families,
    page_of,
    place_of,
    validate_flag,
    validate_limit,
)
from ..vocabulary._speakers import warm_up
from . import _writes

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Sequence

    import numpy as np
    import numpy.typing as npt
    from opentelemetry.metrics import MeterProvider
    from opentelemetry.trace import TracerProvider

    from ..orchestration import Digest, Explained, Planner
    from ..recall import RecallEffortSink
    from ..vocabulary._citations import Citation
    from ..vocabulary._families import Family
    from ..vocabulary._records import (
        Experience,
        MemoryEntry,
        MemoryRecord,
        MemoryRef,
        Profile,
        RecordRef,
        Ref,
        Resource,
        TopicMemory,
    )


class Runtime:
    """One open satchel runtime. Create it with :func:`open_runtime`."""

    def __init__(
        self,
        store: Store,
        embedder: Embedder,
        limits: Limits,
        *,
        policy: RecallSufficiencyPolicy | None = None,
        sink: RecallEffortSink | None = None,
        tracer_provider: TracerProvider | None = None,
        meter_provider: MeterProvider | None = None,
        options: RuntimeOptions | None = None,
        planner: Planner | None = None,
        digest: Digest | None = None,
    ) -> None:
        options = options or RuntimeOptions()
        self._options = options
        self._policy = policy
        self._stages = (planner is not None, digest is not None)
        self._store = store
        self._embedder = embedder
        self._limits = limits
        self._guards = ScopeGuards()
        self._tracer = tracer(tracer_provider)
        self._metrics = PrepareMetrics(meter_provider)
        rules = RecallRules.of(limits, policy, options, calibration_of(embedder))
        self._policy = rules.policy
        coordinator = Coordinator(store, rules, self._guards, self._tracer, self._metrics, options)
        self._coordinator = coordinator
        self._preparer = Preparer(
            store, embedder, self._guards, coordinator, sink, _ledger(store, options), options,
            planner=planner, digest=digest, tracer=self._tracer, metrics=self._metrics,
        )  # fmt: skip

    @property
    def store(self) -> Store:
        return self._store

    @property
    def limits(self) -> Limits:
        return self._limits

    # -- writes ---------------------------------------------------------------------

    async def add_memories(self, scope_id: str, entries: Sequence[MemoryEntry]) -> list[MemoryRef]:
        """Write a batch of memory entries atomically; one reference each, in input order."""
        return cast("list[MemoryRef]", await self._write("memory", scope_id, entries))

    async def update_memory(self, ref: MemoryRef, entry: MemoryEntry) -> MemoryRef:
        """Write a new version of an entry; the old version stays readable by its ref."""
        ref = _writes.memory_ref(ref)
        entry = _writes.memory_entry(entry, "entry")
        vector = await self._embed([entry.text])
        async with self._guards.writing(ref.scope_id):
            return await self._store.update_memory(ref, entry, vector)

    async def forget_memory(self, ref: MemoryRef) -> None:
        """Take an entry out of search; every version stays readable by its ref."""
        ref = _writes.memory_ref(ref)
        async with self._guards.writing(ref.scope_id):
            await self._store.forget_memory(ref)

    async def erase(self, target: Citation | MemoryRef) -> int:
        """Erase one record: every version of it, from every place the store keeps it.

        Unlike :meth:`forget_memory`, nothing stays readable: text, analysed terms,
        vectors, the caller's key and the dates it names are removed (docs/stores.md says
        what each store guarantees). Afterwards :meth:`get_memory` of any of its versions
        raises ``NotFoundError`` saying it was erased, no prepare serves it, and its key
        is free: the same key and content written again is a new record.

        Args:
            target: a :class:`satchel.Citation` (as :func:`satchel.parse_context` reads it
                from a pack: a memory entry, experience, topic memory or resource by its
                id, the scope's profile with id None) or a :class:`satchel.MemoryRef`.
                The version it names does not narrow the erase.

        Returns:
            How many versions were erased (a profile is one); 0 when the store holds
            none of the record (never written, or erased already).

        Raises:
            InvalidRequestError: ``target`` is malformed (the message names the field).
        """
        family, scope_id, record_id = _writes.erase_target(target)
        async with self._guards.writing(scope_id):
            erased = await self._store.erase(family, scope_id, record_id)
        self._coordinator.forget_encodings(scope_id)
        return erased

    async def erase_scope(self, scope_id: str) -> int:
        """Erase every record of every family in the scope, its profile included, as
        :meth:`erase` erases one; the scope may be written to again afterwards.

        Returns:
            How many records were erased (a record counts once whatever its versions,
            a profile one); 0 for a scope that holds nothing.

        Raises:
            InvalidRequestError: ``scope_id`` is malformed.
        """
        scope_id = validate_scope(scope_id, "scope_id")
        async with self._guards.writing(scope_id):
            erased = await self._store.erase_scope(scope_id)
        self._coordinator.forget_encodings(scope_id)
        return erased

    async def get_memory(self, ref: MemoryRef) -> MemoryRecord:
        """Read exactly the version ``ref`` names.

        Raises:
            NotFoundError: the entry or the version does not exist, or was erased.
        """
        return await self._store.get_memory(_writes.memory_ref(ref))

    # -- listing --------------------------------------------------------------------

    async def list_scopes(self) -> tuple[ScopeSummary, ...]:
        """Every scope that holds anything, sorted by id, with its searchable records
        per family and when it was last written. Writes nothing.

        A scope whose every entry was forgotten is listed with no records counted (its
        entries are still readable, and listed with ``include_forgotten``); an erased
        scope is not listed.
        """
        counts = await self._store.scope_counts()
        writes = await self._store.scope_writes()
        return tuple(
            ScopeSummary(scope_id, counts.get(scope_id, {}), writes.get(scope_id))
            for scope_id in sorted({*counts, *writes})
        )

    async def list_records(
        self,
        scope_id: str,
        family: str | None = None,
        *,
        include_forgotten: bool = False,
        cursor: str | None = None,
        limit: int = DEFAULT_PAGE,
    ) -> RecordPage:
        """One page of the scope's records, newest first, each as its newest version.
        Writes nothing.

        Records are paged by a keyset: ``cursor`` (the one the previous page returned)
        resumes right after that page's last record, so a walk through every page lists
        each record that stays in the scope exactly once, whatever is written, forgotten
        or erased meanwhile; records written after the walk began are not in it (they
        are newer than its first page). An erased record never appears.

        Args:
            scope_id: the scope listed.
            family: one family (``memory``, ``experience``, ``topic-memory``,
                ``profile``, ``resource``), or None for all of them (the profile last).
            include_forgotten: list forgotten memory entries too (``forgotten`` set).
            cursor: the previous page's cursor; None for the first page.
            limit: the most records on the page, 1..1000.

        Returns:
            The page; its ``cursor`` is None when no record follows.

        Raises:
            InvalidRequestError: an argument is malformed (the message names it).
        """
        scope_id = validate_scope(scope_id, "scope_id")
        families = listed_families(family)
        include_forgotten = validate_flag(include_forgotten, "include_forgotten")
        limit = validate_limit(limit)
        before = place_of(cursor)
        listed = await self._store.list_records(
            scope_id, families, include_forgotten=include_forgotten, before=before,
            limit=limit + 1,  # one more says whether another page follows
        )  # fmt: skip
        return page_of(scope_id, listed, limit)

    async def add_experiences(
        self, scope_id: str, experiences: Sequence[Experience]
    ) -> list[RecordRef]:
        """Write a batch of experiences atomically; one reference each, in input order."""
        return cast("list[RecordRef]", await self._write("experience", scope_id, experiences))

    async def add_topic_memories(
        self, scope_id: str, topics: Sequence[TopicMemory]
    ) -> list[RecordRef]:
        """Write topic memories atomically; a title written again makes a new revision."""
        return cast("list[RecordRef]", await self._write("topic-memory", scope_id, topics))

    async def set_profile(self, scope_id: str, profile: Profile) -> None:
        """Replace the scope's profile (read whole with every request that selects it)."""
        await self._write("profile", scope_id, profile)

    async def add_resources(self, scope_id: str, resources: Sequence[Resource]) -> list[RecordRef]:
        """Write resources atomically; a URI written again makes a new revision."""
        return cast("list[RecordRef]", await self._write("resource", scope_id, resources))

    async def _write(self, family: Family, scope_id: str, given: object) -> list[Ref]:
        """The one write path of every family (its sugar above): the scope and records
        validated (``_writes.RECORDS``, errors naming the method's argument), embedded
        when the family has a vector channel, written by ``Store.write`` under the
        scope's write guard. An empty batch writes nothing."""
        scope_id = validate_scope(scope_id, "scope_id")
        checked = await _writes.RECORDS[family](given)
        if not checked:
            return []
        vectors = None
        if rules(family).vector_channel:
            vectors = await self._embed(await _writes.embedding_texts(family, checked))
        async with self._guards.writing(scope_id):
            return await self._store.write(family, scope_id, checked, vectors)

    # -- prepare --------------------------------------------------------------------

    async def prepare_context(
        self, request: object, *, session_owner: str | None = None
    ) -> PreparedContext:
        """Search, judge, fit and render a context pack for one turn. Writes nothing.

        Args:
            request: a :class:`satchel.PrepareContextRequest`.
            session_owner: the caller the request's session belongs to, for a host
                serving several callers (the service passes its token's name): session
                ids are namespaced by it, so two callers naming one ``session_id``
                never share a session, and each caller's sessions are bounded on their
                own. None is the host itself.

        Raises:
            InvalidRequestError: a request field is malformed (the message names it).
            PrepareFailedError: a search of round 0 failed (raised from the group).
            PrepareTimeoutError: round 0 overran ``round_timeout`` or ``prepare_timeout``.
        """
        context, _ = await self._prepare(request, session_owner, explain=False)
        return context

    async def explain_context(
        self, request: object, *, session_owner: str | None = None
    ) -> Explanation:
        """:meth:`prepare_context`, with why each item is in the pack and why the best
        candidates left out are not.

        The context is byte for byte the pack :meth:`prepare_context` returns for the
        same request, session owner and store state; everything else is the same too:
        validation, errors, spans, the effort sink (which sees no receipt), and the
        session: with a ``session_id`` (and ``dedup_turns``), an explained prepare is a
        turn, holding back what it delivered, since it returns that pack to the caller.

        Returns:
            ``Explanation(context, receipts, omitted)``: one :class:`satchel.Receipt`
            per delivered item, in pack order, and at most eight
            :class:`satchel.Omission` values, best first.

        Raises:
            InvalidRequestError: a request field is malformed (the message names it).
            PrepareFailedError: a search of round 0 failed (raised from the group).
            PrepareTimeoutError: round 0 overran ``round_timeout`` or ``prepare_timeout``.
        """
        context, explained = await self._prepare(request, session_owner, explain=True)
        assert explained is not None
        return Explanation(context, explained.receipts, explained.omitted)

    async def _prepare(
        self, request: object, session_owner: str | None, *, explain: bool
    ) -> tuple[PreparedContext, Explained | None]:
        resolved = validate_request(request)
        session_owner = validate_session_owner(session_owner)
        attributes = {
            "satchel.scope_count": len(resolved.scopes),
            "satchel.family_count": len(resolved.families),
            "satchel.max_bytes": resolved.max_bytes,
        }
        with (
            self._metrics.timed() as timed,
            self._tracer.start_as_current_span(
                "satchel.prepare_context", attributes=attributes
            ) as span,
        ):
            explained = None
            if explain:
                built, explained = await self._preparer.explain(
                    resolved, session_owner=session_owner
                )
            else:
                built = await self._preparer.prepare(resolved, session_owner=session_owner)
            context = built.render()
            timed.done(context)
            span.set_attribute("satchel.context.status", context.status)
            span.set_attribute("satchel.context.bytes", context.content_bytes)
        return context, explained

    def deadline_for(self, request: object) -> float:
        """How long ``prepare_context(request)`` may take, in seconds: the retrieval
        budget plus the fuse of each host stage this runtime runs (a stage that is off
        adds nothing), capped by ``prepare_timeout``. A host sets its own timeout for the
        call from it.

        The retrieval budget is ``round_timeout`` for round 0 and for each expansion
        round the policy allows; without ``round_timeout`` it is unbounded, and so is
        the deadline unless ``prepare_timeout`` caps it (``math.inf``).

        Raises:
            InvalidRequestError: a request field is malformed (the message names it).
        """
        validate_request(request)
        options = self._options
        rounds = 1 + (0 if self._policy is None else self._policy.max_expansions)
        budget = math.inf if options.round_timeout is None else rounds * options.round_timeout
        planner, digest = self._stages
        budget += (options.planner_timeout if planner else 0.0) + (
            options.digest_timeout if digest else 0.0
        )
        return budget if options.prepare_timeout is None else min(budget, options.prepare_timeout)

    async def _embed(self, texts: list[str]) -> npt.NDArray[np.float32]:
        return await embed_checked(self._embedder, texts)


@asynccontextmanager
async def open_runtime(
    database: str = ":memory:",
    *,
    store: Store | None = None,
    embedder: Embedder | None = None,
    recall_policy: RecallSufficiencyPolicy | None = None,
    recall_effort_sink: RecallEffortSink | None = None,
    tracer_provider: TracerProvider | None = None,
    meter_provider: MeterProvider | None = None,
    limits: Limits | None = None,
    planner: Planner | None = None,
    digest: Digest | None = None,
    **options: object,
) -> AsyncIterator[Runtime]:
    """Open a runtime over an embedded SQLite file (or ``":memory:"``) or a given store.

    Args:
        database: path of the embedded store; ignored when ``store`` is given.
        store: any :class:`satchel.Store`; the runtime closes it on exit.
        embedder: defaults to the bundled :class:`StaticEmbedder` (the
            :class:`HashingEmbedder` when the model cannot load).
        recall_policy: enables the sufficiency gate (``None`` disables it).
        recall_effort_sink: ``async (RecallEffort) -> None``, awaited after each prepare;
            its errors are logged and swallowed. Without it no effort is computed.
        tracer_provider: OpenTelemetry provider; the global one when None.
        meter_provider: OpenTelemetry ``MeterProvider`` for satchel's metrics
            (docs/telemetry.md); the global one when None. With neither, measuring
            costs a prepare nothing.
        limits: candidate ceilings and item limits; defaults to :class:`Limits()`.
        planner: ``async (query, *, scope_id, session_id) -> Sequence[str]``: at most
            two more queries, searched beside the caller's in round 0; a failure or a
            timeout (``planner_timeout``) searches the caller's query alone.
        digest: ``async (query, items: Sequence[satchel.ContextItem]) -> Sequence[int]``:
            the indices of the fitted items to keep, in delivery order (empty: nothing
            relevant); a failure or a timeout (``digest_timeout``) keeps the fitted pack.
        round_timeout: seconds each round may take (None: unbounded).
        prepare_timeout: seconds the whole call may take, stages and sink included.
        planner_timeout: the planner's fuse, in seconds.
        digest_timeout: the digest's fuse, in seconds.
        reference_penalty: rank positions a reference scope's candidates give way to
            the request's own scope's (0: all scopes interleave alike).
        dedup_turns: turns a session's served item is held back (0: no ledger).
        shared_sessions: keep the session ledger in the store, so that every runtime
            and service replica over it shares one session state; the store must keep
            sessions (:class:`satchel.stores.SessionStore`). A session lives a day after
            its last turn and keeps its 1,024 most recently served items.
        readers: reader connections of the embedded store.
        fusion: round 0's :class:`satchel.FusionWeights`.
        blas_threads: threads BLAS may use while the runtime is open (None leaves BLAS
            alone).
        clock: the wall clock, in UTC epoch seconds, read once per prepare: a query's
            relative dates are seen from it, and shared sessions' turns dated by it.
        trace_identifiers: put scope names on spans (as ``gen_ai.memory.store.id`` on
            each ``search_memory``). Off by default: a scope name is often a user's
            identifier. Query text, content, session ids and record ids are never put
            on a span.
        **options: the keyword options above, checked by
            :class:`satchel.runtime.RuntimeOptions`, where they are defined once; no
            other keyword is accepted: one is refused by name.

    Raises:
        InvalidRequestError: an unknown option or a malformed argument (the message names
            it); raised before anything is opened.
    """
    settings = RuntimeOptions.of(options)
    if limits is not None and not isinstance(limits, Limits):
        raise InvalidRequestError("limits must be a satchel.Limits")
    if recall_policy is not None and not isinstance(recall_policy, RecallSufficiencyPolicy):
        raise InvalidRequestError("recall_policy must be a satchel.RecallSufficiencyPolicy or None")
    for name, stage in (("planner", planner), ("digest", digest)):
        if stage is not None and not callable(stage):
            raise InvalidRequestError(f"{name} must be an async callable or None")
    if store is not None and not isinstance(store, Store):
        raise InvalidRequestError("store must be a satchel.Store or None")
    if settings.shared_sessions and store is not None and not isinstance(store, SessionStore):
        raise InvalidRequestError(
            "shared_sessions needs a store that keeps sessions (satchel.stores.SessionStore)"
        )
    if embedder is not None:
        embedder = check_embedder(embedder, "embedder")
    check_provider(tracer_provider, "tracer_provider")
    check_meter_provider(meter_provider, "meter_provider")
    if store is None:
        if not isinstance(database, str) or not database:
            raise InvalidRequestError("database must be a file path or ':memory:'")
        store = await SqliteStore.open(
            database, readers=settings.readers, tracer_provider=tracer_provider
        )
    try:
        if embedder is None:
            # Loading and verifying the bundled model reads 8 MB (about 0.1 s, once a
            # process): in a worker thread, not on the host's loop.
            embedder = await anyio.to_thread.run_sync(default_embedder)
        # Every query is analysed on the host's loop: load the lemmatiser's table
        # (about 0.3 s, once a process) and the nicknames' in a worker thread now,
        # whatever the store.
        await anyio.to_thread.run_sync(warm_up)
        await store.bind_embedder(fingerprint_of(embedder), embedder.dimension)
    except BaseException:
        with anyio.CancelScope(shield=True):
            await store.aclose()
        raise
    blas = None
    if settings.blas_threads is not None:
        blas = threadpoolctl.threadpool_limits(limits=settings.blas_threads, user_api="blas")
    try:
        yield Runtime(
            store,
            embedder,
            limits or Limits(),
            policy=recall_policy,
            sink=recall_effort_sink,
            tracer_provider=tracer_provider,
            meter_provider=meter_provider,
            options=settings,
            planner=planner,
            digest=digest,
        )
    finally:
        if blas is not None:
            blas.restore_original_limits()
        with anyio.CancelScope(shield=True):
            await store.aclose()


def _ledger(store: Store, options: RuntimeOptions) -> DedupLedger | SharedLedger | None:
    """The session ledger ``options`` ask for: none without ``dedup_turns``; in the store
    with ``shared_sessions`` (``open_runtime`` checked that it keeps sessions)."""
    if options.dedup_turns == 0:
        return None
    if options.shared_sessions:
        assert isinstance(store, SessionStore)
        return SharedLedger(store, options.dedup_turns, clock=options.clock)
    return DedupLedger(options.dedup_turns)
