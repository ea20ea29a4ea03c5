"""``satchel.Store``: the extension point every backend implements.

A store is two things. A :class:`RecordStore` keeps records: it writes them (atomic per
call, durable when the call returns), reads exact versions, forgets and erases. A
:class:`SearchStore` retrieves, for one family in one scope, a pool of candidates per
channel, the thread neighbours of pool keys, the evidence of pool keys, and the scope's
write version. Ranking rules are not a store's: which query terms to rank by, when a
rare term's holders all join, when the time channel says nothing, admission, fusion and
the gate all live above it (:class:`~satchel.stores.PoolRequest`, ``satchel.recall``). A
store implements retrieval and never sees the gate, the orchestration or the Builder.
A store may also keep sessions (:class:`SessionStore`), so that runtimes sharing it share
the session dedup ledger.

Keys: a store names each searchable record version by an integer key, unique within its
family and scope and never reused for another version. Pools carry keys; evidence is
read by key.

A store writes every family through one method, :meth:`RecordStore.write`, driven by the
family table (``satchel.stores.FAMILY_RULES``): a store that follows the table's write
fields keeps a family added to it with no change of its own.

``satchel.stores.MemoryStore`` is the simplest correct implementation: read it first.
Every store passes the same contract suite, shipped as :mod:`satchel.stores.testing` for
anyone writing one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from datetime import datetime

    import numpy as np
    import numpy.typing as npt

    from ..vocabulary._evidence import Evidence, Pool, ThreadNeighbours
    from ..vocabulary._families import Family
    from ..vocabulary._listing import ListedRecord
    from ..vocabulary._records import MemoryEntry, MemoryRecord, MemoryRef, Record, Ref
    from ..vocabulary._retrieval import PoolRequest

    Vectors = npt.NDArray[np.float32]


@runtime_checkable
class RecordStore(Protocol):
    """Records: writes, exact reads, forgetting and erasing.

    Every write is atomic per call (all of it or none of it is visible) and durable
    when it returns; every write moves the scope's write version. ``vectors`` hold one
    float32 row per record in input order, embedded by the runtime (a store never
    embeds). A record with a ``key`` (the caller's idempotency key) that the scope
    already holds in its family is not written again when its content is the same (its
    existing reference is returned); with new content it becomes a new version of that
    record (memory) or replaces it (the other families). Forget is forever: a key whose
    entry was forgotten, given the same content again, returns the forgotten reference
    and writes nothing; with new content it is the entry's next version, searchable.
    """

    async def write(
        self,
        family: Family,
        scope_id: str,
        records: Sequence[Record],
        vectors: Vectors | None = None,
    ) -> list[Ref]:
        """Write a batch of one family's records (of its ``FamilyRules.record_type``);
        one reference each, in input order (the family's ``FamilyRules.ref``: a
        :class:`MemoryRef` for a memory entry, a :class:`RecordRef` for the others).

        What the store keeps of each record is its columns (``FamilyRules.columns_of``,
        a :class:`~satchel.vocabulary.Columns`): searched on ``FamilyRules.indexed_text``
        (and, with a vector channel, its vector), read back as evidence. Where a record
        goes follows its family's naming rule (``FamilyRules.named_by``; decide it with
        ``satchel.stores._placing``, as the stores here do):

        - ``key``: by its ``key`` alone (see the class); without one it is new, at
          version 1 (memory entries, experiences).
        - ``title``: a record its key did not place takes the next revision of the
          searchable record with its title, else it is new (topic memories).
        - ``uri``: its URI is its id: a URI written again replaces the earlier record
          (its next revision), and a URI that comes back takes the revision after its
          last one. A resource is searched on its abstract and overview only; its body is
          read on demand (:meth:`read_resource_bodies`).
        - ``scope``: one per scope, and the write replaces it (the profile: ``records``
          holds exactly one, and the write returns no reference).

        Args:
            family: the records' family.
            scope_id: the scope written to.
            records: the records, all of the family's record type.
            vectors: one row per record when the family has a vector channel
                (``FamilyRules.vector_channel``), embedded on
                ``FamilyRules.embedded_text``; None when it has none (experiences, the
                profile).

        Raises:
            StoreError: records of another type, vectors missing or where the family
                takes none, vectors that do not fit (see ``_rules.check_write`` and
                ``_rules.check_vectors``), or a profile write of other than one profile.
        """
        ...

    async def update_memory(self, ref: MemoryRef, entry: MemoryEntry, vector: Vectors) -> MemoryRef:
        """Write ``entry`` as the next version of ``ref``'s entry; the earlier version
        leaves search and stays readable. ``vector`` is one row.

        Raises:
            NotFoundError: The entry does not exist, or is forgotten.
        """
        ...

    async def forget_memory(self, ref: MemoryRef) -> bool:
        """Take ``ref``'s entry out of search (every version); its versions stay
        readable through :meth:`get_memory`.

        Returns:
            True when it took the entry out of search; False when the entry was
            forgotten already (nothing changed).

        Raises:
            NotFoundError: The entry does not exist.
        """
        ...

    async def get_memory(self, ref: MemoryRef) -> MemoryRecord:
        """Exactly the version ``ref`` names, forgotten or not; never a newer one.

        Raises:
            NotFoundError: The scope, entry or version does not exist.
        """
        ...

    async def get_profile(self, scope_id: str) -> Evidence | None:
        """The scope's profile as evidence, or None when it has none."""
        ...

    async def read_resource_bodies(self, scope_id: str, uris: Sequence[str]) -> Mapping[str, str]:
        """The bodies of the scope's current resources at ``uris``; unknown URIs are
        absent from the result."""
        ...

    async def scope_counts(self) -> Mapping[str, Mapping[Family, int]]:
        """Every scope that holds anything, with its searchable records per family.

        A family with no searchable record in the scope is absent; a profile counts 1.
        A scope holding neither a searchable record nor a profile (everything in it
        forgotten or replaced) is absent. Like every read, it sees what other
        processes sharing the store committed before the call.
        """
        ...

    async def scope_writes(self) -> Mapping[str, datetime | None]:
        """Every scope that holds anything (a record version, searchable or forgotten,
        or a profile), with when it was last written: the time (UTC) of the last write,
        update or forget that changed it, or None when the store recorded none (a
        scope written by an older version of the store). An erased scope is absent.
        Writes nothing."""
        ...

    async def list_records(
        self,
        scope_id: str,
        families: Sequence[Family],
        *,
        include_forgotten: bool,
        before: int | None,
        limit: int,
    ) -> Sequence[ListedRecord]:
        """At most ``limit`` records of ``families`` in the scope, newest first, each
        as its newest version (a :class:`~satchel.stores.ListedRecord`); writes nothing.

        A record's ``place`` is the key of its first version (version or revision 1,
        which every record keeps until it is erased), so it never moves: a
        new version, a forget or another record's erase leaves it where it was, and a
        record written later takes a higher place. Records are ordered by place,
        highest first; with ``before``, only records placed below it are listed (a
        keyset, never an offset: a page deep in a large scope costs what the first
        does). The scope's profile, when ``families`` holds ``profile``, is listed
        last, at place 0. An erased record never appears; a forgotten memory entry
        (no version searchable) only with ``include_forgotten``, as its latest
        version with ``forgotten`` set. A scope holding nothing lists nothing.

        Args:
            scope_id: the scope.
            families: the families listed (at least one).
            include_forgotten: list forgotten entries too.
            before: list only records placed below this (None: from the newest).
            limit: the most records returned.
        """
        ...

    async def erase(self, family: Family, scope_id: str, record_id: str | None) -> int:
        """Remove every version of one record from everything the store keeps: its
        rows, its text and analysed terms (the full-text index included), its vectors
        (and any index or cache holding them), its caller's key, the days it names, a
        resource's body. Unlike :meth:`forget_memory`, nothing of it stays readable:
        ``get_memory`` of any of its versions raises ``NotFoundError`` saying it was
        erased (:func:`satchel.stores._rules.erased`; keep
        :func:`~satchel.stores._rules.tombstone`, which holds no content), no search
        returns it, and its key is free again: the same key and content written
        afterwards is a new record, as if never written. Moves the scope's write
        version when it erases anything. Atomic, and durable when it returns; say in
        the store's documentation what, if anything, its engine may hold until later.

        Args:
            family: the record's family.
            scope_id: its scope.
            record_id: the entry id (memory), record id (experience, topic memory), URI
                (resource), or None for the scope's profile.

        Returns:
            How many versions it erased (a profile is one): 0 when the scope or the
            record holds none, for instance erased already.
        """
        ...

    async def erase_scope(self, scope_id: str) -> int:
        """:meth:`erase` every record of every family in the scope, its profile
        included, in one step; afterwards the scope holds nothing (absent from
        :meth:`scope_counts`) and may be written to again.

        Returns:
            How many records it erased (a record with several versions counts once, a
            profile one): 0 for a scope that holds nothing.
        """
        ...

    async def bind_embedder(self, fingerprint: str, dimension: int) -> None:
        """Accept the runtime's embedder, or raise ``StoreError`` if the stored
        vectors came from another (a different fingerprint or dimension). A store that
        holds no vector yet records the embedder."""
        ...

    async def aclose(self) -> None:
        """Release every connection and cache; idempotent. Later calls raise
        ``StoreError``."""
        ...


@runtime_checkable
class SearchStore(Protocol):
    """Search: pools per channel, neighbours, evidence and the scope's write version.

    Only searchable versions are ever returned: a forgotten entry, a replaced version
    or another scope's record never appears in a pool, among neighbours or in
    evidence.
    """

    async def retrieve(self, family: Family, scope_id: str, request: PoolRequest) -> Pool:
        """The family's candidates in the scope, per channel, before any admission.

        - Full text: ask ``request.select_terms`` with how many of the scope's
          searchable records hold each query term; rank the records holding any of the
          selection's terms (a BM25-like score, lower is better, as SQLite's ``bm25()``
          reports it), keep the best ``selection.limit``, then append every other record
          holding ``selection.rescue``. Give each candidate how many distinct terms of
          ``request.query.terms`` its analysed text (``satchel.vocabulary.index_text``)
          holds, counted on that text, never by the engine's own tokenizer; and set
          the pool's ``common_terms`` and ``held_terms`` to ``len(selection.common)`` and
          ``selection.held`` (an abstaining prepare reads which query words the scope knows).
        - Vector (families whose rules have a vector channel, when ``request.vector``
          is set): the ``request.size`` records most cosine-similar to
          ``request.vector_for(frequencies, rows)`` (given how many of the scope's
          records hold each query term: the query without its names when the scope is
          about them), with their similarities, most similar first.
        - Time (families with a time channel, when the query names dates): the records
          of the windows the query's dates name (``DateMention.window``; relative
          dates seen from the day of the scope's newest record): those whose own text
          names a day inside a window (``satchel.vocabulary.mentioned_days``) first,
          then those said in one; each group most similar to that vector first (nearest
          the window's middle without a vector); at most ``request.time_size``, with
          ``time_matched`` counting them all.

        The pool carries the scope's write version read with it and ``scope_rows``,
        the family's searchable records in the scope. A scope with nothing in it gives
        an empty pool.
        """
        ...

    async def neighbours(
        self, family: Family, scope_id: str, keys: Sequence[int], *, reach: int = 1
    ) -> Mapping[int, ThreadNeighbours]:
        """Per key, the searchable keys up to ``reach`` places before and after it in
        its thread (ordered by ``created_at``, then insertion), nearest first on each
        side, passing over the records whose text says nothing
        (``vocabulary.passed_over``: "Ben: lol", "Ana: <Media omitted>"; a key's own
        text aside). Keys without a thread, or no longer searchable, are absent. Never
        crosses a thread, a scope or a family."""
        ...

    async def evidence(
        self, family: Family, scope_id: str, keys: Sequence[int]
    ) -> Mapping[int, Evidence]:
        """The evidence of pool keys that are still searchable; a key whose version
        left search since is absent."""
        ...

    def scope_version(self, scope_id: str) -> int:
        """The scope's write version as this store last saw it: it changes whenever
        anything in the scope is written, by this process or, for a store shared
        between processes, another one (seen at the latest on the next retrieve). A
        pool is reused only while it is unchanged."""
        ...


@runtime_checkable
class Store(RecordStore, SearchStore, Protocol):
    """A memory backend: records and search (see the module)."""


@runtime_checkable
class SessionStore(Protocol):
    """The session dedup ledger kept in the store, shared by every runtime over it.

    Optional: ``open_runtime(shared_sessions=True)`` needs it, nothing else does. A
    session is ``(owner, session_id)``: the same id under two owners (None is the
    runtime's own host) is two sessions. A turn is one pack returned to a caller; a
    session remembers which evidence identities (``Evidence.identity``) each turn
    served, and the ledger above decides what that holds back. Session state is not
    record state: keeping it never moves a scope's write version, never invalidates a
    cache of records, and no other method reads it (``erase`` and ``erase_scope`` drop
    the identities of what they erase). Several processes sharing the store share the
    sessions, so :meth:`record_turn` is atomic per session.
    """

    async def next_turn(
        self, owner: str | None, session_id: str, *, turns: int, active_since: float
    ) -> tuple[int, frozenset[str]]:
        """The session's next turn and the identities served in its last ``turns``
        turns, read in one snapshot; writes nothing.

        A session never recorded, or whose last turn was recorded before
        ``active_since`` (UTC epoch seconds), has expired: ``(1, frozenset())``.
        """
        ...

    async def record_turn(
        self,
        owner: str | None,
        session_id: str,
        served: Sequence[str],
        *,
        now: float,
        active_since: float,
        keep: int,
    ) -> int:
        """Count one more turn of the session and remember that it served ``served``
        (identities), in one transaction; returns that turn's number.

        The turn is the session's last plus one, so two processes recording turns of
        one session at once get two numbers. A session expired (last recorded before
        ``active_since``) starts again at turn 1 with nothing served; every other
        expired session may be dropped then too. The session is dated ``now`` (UTC
        epoch seconds) and keeps only its ``keep`` most recently served identities.
        """
        ...


@runtime_checkable
class EmptyFamilies(Protocol):
    """A store that tells, without I/O, which families a scope holds nothing of.

    Optional: a prepare searches every selected family of every scope it reads, and in
    most scopes most families are empty (a chat's scope holds memories only). A search
    is a task of its round, with its span, guard and turns; a store that answers
    :meth:`holds_nothing` lets a round settle the search of an empty family at once,
    with the empty pool a retrieve would give, and start no task for it. A store
    without it has every search run, and so does a subclass that defines its own
    ``retrieve`` but not its own ``holds_nothing`` (one whose reads fail, a test
    double): the answer is trusted only from the class that defines both.
    """

    def holds_nothing(self, family: Family, scope_id: str) -> bool:
        """True only when a :meth:`SearchStore.retrieve` of ``family`` in ``scope_id``
        now would give an empty pool, as far as the store knows without I/O (a store
        that other processes may write looks for their commits first, as a retrieve
        would); False when it cannot tell, and when the store is closed (the search
        runs and fails as any read would)."""
        ...
