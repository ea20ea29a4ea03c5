"""``OceanBaseStore``: the store for deployments that outgrow one machine.

It speaks the MySQL protocol (asyncmy) to OceanBase or seekdb. One table holds every
record version, keyed ``(scope, family, key)`` and partitioned by scope (schema 7, as
are the other tables a retrieve reads per scope); a FULLTEXT index on satchel's
analysed text serves the full-text channel and a VECTOR column (an HNSW index only when
asked for) the vector channel. The per-scope write version lives in a table, and
every retrieve reads it first: nothing is served from the process that this write
version has not confirmed (a scope's vectors held here, ``_vector_cache``), so
processes sharing one database see each other's writes and forgets on their next call.
Sessions (``SessionStore``) live in tables of their own (``_sessions``) and never move
a write version.

asyncmy runs on asyncio only, so every call runs on the store's own loop thread
(:class:`~._bridge.LoopThread`): one code path on asyncio and trio. A connection the
engine drops is discarded with every idle one, and the call fails with
``StoreUnavailableError``; the next call connects afresh.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import time
from typing import TYPE_CHECKING, Any, Final, TypeVar

import attrs
import numpy as np
from opentelemetry.trace import SpanKind

from ...vocabulary import _telemetry as tracing
from ...vocabulary._errors import NotFoundError, StoreError, StoreUnavailableError
from ...vocabulary._evidence import Evidence, Pool, ThreadNeighbours
from ...vocabulary._families import rules
from ...vocabulary._records import MemoryRecord, MemoryRef
from ...vocabulary._speakers import variant_floor
from .. import _rules
from .._copy_protocol import searchable_vectors
from .._neighbour_cache import NeighbourCache
from .._placing import place_async
from .._sessions import erased_identities, session_key
from .._term_counts import Spellings, TermCounts, rate
from . import _copy as copying
from . import _erase as erasing
from . import _held_texts as held_texts
from . import _listing as listing
from . import _locks as locks
from . import _rows as rows
from . import _schema as sql
from . import _search as search
from . import _sessions as sessions
from ._bridge import LoopThread
from ._connections import MIGRATION_TRX, QUERY_TIMEOUT, Connections, unavailable_errors
from ._vector_cache import CACHE_BYTES, H, HeldSets, ScopeVectors
from ._vector_cache import parse as parse_vectors

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
    from contextlib import AbstractContextManager
    from datetime import datetime

    import numpy.typing as npt
    from opentelemetry.trace import Span, TracerProvider

    from ...vocabulary._families import Family, FamilyRules
    from ...vocabulary._listing import ListedRecord
    from ...vocabulary._records import MemoryEntry, Record, Ref
    from ...vocabulary._retrieval import PoolRequest
    from .._copy_protocol import StoredVersion, VectorOrigin
    from ._held_texts import ScopeTexts

    Vectors = npt.NDArray[np.float32]

T = TypeVar("T")
logger = logging.getLogger("satchel")
#: The clock a retrieve's asking and a state read's sending are told apart by.
now = time.monotonic

#: The engine's errors for a database or a table it does not know (MySQL's
#: ER_BAD_DB_ERROR, ER_NO_SUCH_TABLE): also what it says of one that another process has
#: just created, for a moment (:func:`_once_known`).
NOT_KNOWN: Final = frozenset({1049, 1146})
#: Longest wait, in seconds, for a database or table another process just created to be
#: known here, and the pause between two tries.
NEW_SCHEMA_WAIT: Final = 30.0
NEW_SCHEMA_PAUSE: Final = 0.05

#: Above this many searchable records of a family in a scope, a search that holds none of
#: its vectors lets the engine search and reads them in the background (about 1 s per
#: 10,000 vectors: a first prepare must not wait for it).
LOAD_NOW_ROWS: Final = 2_000
#: Families and scopes whose threading ``neighbours`` keeps, and those ``retrieve``
#: remembers holding records; past it, each starts afresh.
THREADED_SCOPES: Final = 4_096
HOLDING_SCOPES: Final = 4_096
#: The most scopes one state read reads (``_scope_states``): a prepare's scopes.
STATE_BATCH: Final = 64

#: Above this many searchable records of a family in a scope, vector search goes through
#: the HNSW index; at or below, an exact scan (measured on seekdb: ~1.3 ms per 1,000
#: rows exact, a flat 15-40 ms approximate).
EXACT_ROWS: Final = 10_000
#: Most partitions by scope a table may be made with (the engine allows 8,192 per
#: table; each is a tablet of the table and of each of its indexes).
MAX_PARTITIONS: Final = 1_024
#: Longest wait, in seconds, for the DDL tasks of a repartitioning to end once its
#: statements returned (the engine must not stop inside one: ``_engine``).
DDL_WAIT: Final = 120.0


class OceanBaseStore:
    """A ``satchel.Store`` on OceanBase or seekdb over the MySQL protocol.

    Args:
        host, port, user, password, database: where the engine listens; the database
            is created when missing.
        unix_socket: a local socket path instead of ``host``/``port`` (embedded seekdb).
        pool_size: most connections open at once.
        exact_rows: largest scope (searchable records of one family) the engine
            searches exactly by vector when the vectors table has an HNSW index;
            larger ones go through the index (a scope whose vectors the process holds
            is searched there, exactly). Without the index every search is exact.
        vector_index: make the vectors table, when this store makes it, with an HNSW
            index (off by default: its upkeep cut vector inserts tenfold on seekdb and
            costs the engine 1.5 KB of memory per vector; it serves only scopes above
            ``exact_rows`` whose vectors the process does not hold). A database made
            before schema 6 loses its index when it migrates.
        vector_cache_bytes: most bytes of vectors held in the process across scopes
            (``_vector_cache``; 256 MiB by default, 0 holds none).
        partitions: how many partitions by scope the tables a retrieve reads per scope
            get when this store makes them, or repartitions those of a database made
            before schema 7 (``_schema.SCOPED``; 16 by default, 0 leaves them whole).
            A database's tables keep the layout they were made with.
        tracer_provider: where the store's DB spans go (the global provider if None).
        on_close: called once when the store closes (an embedded engine's shutdown).
    """

    def __init__(
        self,
        *,
        host: str | None = None,
        port: int = 2881,
        user: str = "root",
        password: str = "",
        database: str = "satchel",
        unix_socket: str | None = None,
        pool_size: int = 8,
        exact_rows: int = EXACT_ROWS,
        vector_index: bool = False,
        vector_cache_bytes: int = CACHE_BYTES,
        partitions: int = sql.PARTITIONS,
        tracer_provider: TracerProvider | None = None,
        on_close: Callable[[], object] | None = None,
    ) -> None:
        if unix_socket is None and host is None:
            raise StoreError("OceanBaseStore needs a host or a unix_socket")
        if not database.replace("_", "").isalnum():
            raise StoreError(f"database must be letters, digits and '_', not {database!r}")
        self._database = database
        options: dict[str, Any] = {"user": user, "password": password, "autocommit": True}
        options.update(
            {"unix_socket": unix_socket} if unix_socket else {"host": host, "port": port}
        )
        self._server = {k: v for k, v in options.items() if k in ("host", "port", "unix_socket")}
        self._conns = Connections(options, pool_size)
        self._exact_rows = exact_rows
        self._vector_index = search.VectorIndex()
        self._make_index = vector_index
        #: Whether the vectors table has the HNSW index (read once it is known).
        self._indexed = False
        if vector_cache_bytes < 0:
            raise StoreError(f"vector_cache_bytes must be 0 or more, not {vector_cache_bytes}")
        self._vector_cache: HeldSets[ScopeVectors] = HeldSets(vector_cache_bytes)
        self._held_texts: HeldSets[ScopeTexts] = HeldSets(held_texts.CACHE_BYTES)
        #: Families and scopes whose texts outgrew the bound: the engine searches them.
        self._texts_too_large: set[tuple[Family, str]] = set()
        #: The sums of scopes' vectors the engine added up, for the searches it runs.
        self._vector_sums = search.VectorSums()
        if not 0 <= partitions <= MAX_PARTITIONS:
            raise StoreError(f"partitions must be 0 to {MAX_PARTITIONS}, not {partitions}")
        self._partitions = partitions
        #: A scope of more searchable records has its vectors and texts read in the
        #: background.
        self._load_now_rows = LOAD_NOW_ROWS
        self._loading: dict[tuple[Family, str], asyncio.Task[None]] = {}
        self._bridge = LoopThread("satchel-oceanbase")
        self._tracer = tracing.tracer(tracer_provider)
        self._on_close = on_close
        self._versions: dict[str, int] = {}
        #: Per family and scope, a write version and whether any live record of the
        #: family then had a thread or was a conversation turn (``neighbours``).
        self._threaded: dict[tuple[Family, str], tuple[int, bool]] = {}
        #: Per scope, the last read of every family's state: when it was sent
        #: (``time.monotonic``) and its answer (``_scope_states``).
        self._state_reads: dict[str, tuple[float, asyncio.Future[search.ScopeStates | None]]] = {}
        #: The scopes of retrieves asked and not yet given a state read, each with when it
        #: was first asked: a state read sent for one scope reads theirs too. Written by
        #: the host's thread, read and emptied by the bridge's (single dict operations).
        self._asked: dict[str, float] = {}
        #: The families and scopes the last search found holding searchable records.
        self._holding: set[tuple[Family, str]] = set()
        #: Thread neighbours read, by the scope's write version they were read at.
        self._neighbours = NeighbourCache()
        self._term_counts = TermCounts()
        self._session_tables = sessions.SessionTables()
        self._dimension: int | None = None
        self._embedder: str | None = None
        self._ready = False
        self._closed = False

    def __repr__(self) -> str:  # never shows the password
        return f"OceanBaseStore({self._server!r}, database={self._database!r})"

    # -- lifecycle ------------------------------------------------------------------

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True

        async def close() -> None:
            for task in self._loading.values():
                task.cancel()
            await self._loads_done()
            self._conns.discard_idle()

        try:
            await self._bridge.run(close)
        finally:
            self._bridge.close()
            if self._on_close is not None:
                self._on_close()

    def scope_version(self, scope_id: str) -> int:
        self._check_open()
        return self._versions.get(scope_id, 0)

    async def bind_embedder(self, fingerprint: str, dimension: int) -> None:
        """Accept the runtime's embedder (see ``satchel.Store``): until a vector is
        written any is accepted; the first vector written records it and its
        dimension."""

        async def work(cur: Any) -> None:
            await cur.execute("SELECT value FROM satchel_meta WHERE name = 'embedder'")
            found = await cur.fetchone()
            recorded = None if found is None else str(found[0])
            _rules.check_embedder(recorded, self._dimension, fingerprint, dimension)
            self._embedder = fingerprint

        await self._call("bind_embedder", work)

    # -- writes ---------------------------------------------------------------------

    async def write(
        self,
        family: Family,
        scope_id: str,
        records: Sequence[Record],
        vectors: Vectors | None = None,
    ) -> list[Ref]:
        """``RecordStore.write``, in one transaction."""
        family_rules = _rules.check_write(family, records, vectors)
        if family_rules.named_by == "scope":
            return await self._replace(
                family_rules, scope_id, family_rules.columns_of(records[0]).text
            )
        # A uri-named family's columns are made here, its names checked before the
        # write; every other family's in the write's work (below).
        made = None
        if family_rules.named_by == "uri":  # the name is the record id: bounded
            made = [family_rules.columns_of(record) for record in records]
            for columns in made:
                if len(family_rules.name_of(columns) or "") > sql.MAX_RID_CHARS:
                    raise StoreError(f"{family} uri is longer than {sql.MAX_RID_CHARS} characters")
        if vectors is not None:
            _rules.check_vectors(vectors, len(records), self._dimension)

        async def work(cur: Any, write: rows.Write) -> list[Ref]:
            # The records' columns are made here, on the store's own loop: 36,187 notes
            # took 83 ms, which on the host's loop would have held it as long.
            kept = made if made is not None else [family_rules.columns_of(r) for r in records]
            refs: list[Ref] = []
            paired = itertools.repeat(None, len(records)) if vectors is None else iter(vectors)
            keys = [columns.key for columns in kept if columns.key is not None]
            known = await rows.known_keys(cur, write, keys) if len(keys) > 1 else None
            placer = rows.Placer(cur, write, known)
            for columns, vector in zip(kept, paired, strict=True):
                decision = await place_async(family, columns, placer)
                if decision.writes:
                    cited = (decision.record_id, decision.version)
                    await rows.insert_version(cur, write, cited, columns, vector)
                refs.append(_rules.ref_of(family, scope_id, decision))
            return refs

        operation = family_rules.write_name
        return await self._write(operation, scope_id, family, len(records), work, vectors)

    async def _replace(
        self, family_rules: FamilyRules, scope_id: str, text: str | None
    ) -> list[Ref]:
        """Replace the scope's one record of a family kept one per scope (the profile)."""

        async def work(cur: Any, write: rows.Write) -> None:
            await cur.execute(
                "REPLACE INTO satchel_profiles (scope, text) VALUES (%s, %s)", (scope_id, text)
            )

        await self._write(family_rules.write_name, scope_id, None, 0, work, None)
        return []

    async def update_memory(self, ref: MemoryRef, entry: MemoryEntry, vector: Vectors) -> MemoryRef:
        _rules.check_vectors(vector, 1, self._dimension)

        async def work(cur: Any, write: rows.Write) -> MemoryRef:
            key, latest, caller_key = await rows.live_memory(cur, ref, forgotten_ok=False)
            kept = rules("memory").columns_of(entry)
            if entry.key is None:  # a new version keeps the entry's idempotency key
                kept = attrs.evolve(kept, key=caller_key)
            await rows.retire(cur, write, key)
            await rows.insert_version(cur, write, (ref.entry_id, latest + 1), kept, vector[0])
            return MemoryRef(ref.scope_id, ref.entry_id, latest + 1)

        return await self._write("update_memory", ref.scope_id, "memory", 1, work, vector, True)

    async def forget_memory(self, ref: MemoryRef) -> bool:
        async def work(cur: Any, write: rows.Write) -> bool:
            key, _, _ = await rows.live_memory(cur, ref, forgotten_ok=True)
            if key is not None:
                await rows.retire(cur, write, key)
            return key is not None

        return await self._write("forget_memory", ref.scope_id, "memory", 0, work, None, True)

    async def erase(self, family: Family, scope_id: str, record_id: str | None) -> int:
        """Erase every version of one record from every table (``_erase``; see
        ``satchel.Store``); a scope this database never held erases nothing."""

        async def held(cur: Any) -> bool:
            return await erasing.holds(cur, scope_id, family, record_id)

        async def work(cur: Any, write: rows.Write) -> int:
            await sessions.forget(cur, erased_identities(family, scope_id, record_id))
            return await erasing.erase_record(cur, write, record_id)

        if not await self._call("erase", held):
            return 0  # nothing to erase: nothing written, the version stays
        written = None if record_id is None else family
        try:
            return await self._write("erase", scope_id, written, 0, work, None, True)
        except NotFoundError:  # no such scope: nothing to erase
            return 0
        finally:
            self._forget_held(scope_id)

    async def erase_scope(self, scope_id: str) -> int:
        """Erase every record of the scope and its profile from every table; the scope's
        write version and next key stay, so no key is ever given twice."""

        async def held(cur: Any) -> bool:
            return await erasing.holds(cur, scope_id, None, None)

        async def work(cur: Any, write: rows.Write) -> int:
            await sessions.forget(cur, erased_identities(None, scope_id, None))
            return await erasing.erase_scope(cur, write)

        if not await self._call("erase_scope", held):
            return 0
        try:
            return await self._write("erase_scope", scope_id, None, 0, work, None, True)
        except NotFoundError:
            return 0
        finally:
            self._forget_held(scope_id)

    def _forget_held(self, scope_id: str) -> None:
        """Drop what this process holds of the scope's texts and vectors after an
        erase: no word of an erased text is kept here (the next search reads again)."""
        self._term_counts.drop(scope_id)
        self._vector_sums.drop(scope_id)
        self._held_texts.drop_scope(scope_id)
        self._texts_too_large.difference_update(
            {job for job in self._texts_too_large if job[1] == scope_id}
        )
        self._vector_cache.drop_scope(scope_id)

    # -- sessions (``SessionStore``) --------------------------------------------------

    async def next_turn(
        self, owner: str | None, session_id: str, *, turns: int, active_since: float
    ) -> tuple[int, frozenset[str]]:
        key = session_key(owner, session_id)

        async def work(cur: Any) -> tuple[int, frozenset[str]]:
            return await sessions.next_turn(cur, key, turns, active_since)

        return await self._call("next_turn", work)

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
        key = session_key(owner, session_id)

        async def work(cur: Any) -> int:
            return await self._session_tables.record_turn(cur, key, served, now, active_since, keep)

        return await self._call("record_turn", work)

    # -- record reads ---------------------------------------------------------------

    async def get_memory(self, ref: MemoryRef) -> MemoryRecord:
        async def work(cur: Any) -> tuple[Any, ...] | bool:
            """The version's columns; else whether its entry was erased."""
            await cur.execute(
                "SELECT text, kind, tags, created_at, thread, caller_key FROM satchel_records"
                " WHERE scope = %s AND family = 'memory' AND rid = CAST(%s AS BINARY)"
                " AND revision = %s",
                (ref.scope_id, ref.entry_id, ref.version),
            )
            found: tuple[Any, ...] | None = await cur.fetchone()
            if found is not None:
                return found
            await cur.execute(
                "SELECT 1 FROM satchel_erased WHERE tombstone = %s",
                (_rules.tombstone(ref.scope_id, ref.entry_id),),
            )
            return await cur.fetchone() is not None

        row = await self._call("get_memory", work)
        if row is True:
            raise _rules.erased(ref)
        if not isinstance(row, tuple):
            raise _rules.no_version(ref)
        return _rules.memory_record(ref, *row)

    async def get_profile(self, scope_id: str) -> Evidence | None:
        async def work(cur: Any) -> str | None:
            await cur.execute("SELECT text FROM satchel_profiles WHERE scope = %s", (scope_id,))
            found = await cur.fetchone()
            return None if found is None else str(found[0])

        text = await self._call("get_profile", work)
        return None if text is None else Evidence.from_record("profile", scope_id, text=text)

    async def read_resource_bodies(self, scope_id: str, uris: Sequence[str]) -> Mapping[str, str]:
        self._check_open()
        if not uris:
            return {}

        async def work(cur: Any) -> dict[str, str]:
            marks = ",".join([sql.EXACT] * len(uris))
            await cur.execute(
                "SELECT rid, body FROM satchel_records WHERE scope = %s AND family = 'resource'"
                f" AND live = 1 AND rid IN ({marks})",
                (scope_id, *uris),
            )
            return dict(await cur.fetchall())

        return await self._call("read_resource_bodies", work)

    async def scope_counts(self) -> Mapping[str, Mapping[Family, int]]:
        """Every scope holding a searchable record or a profile: ``satchel_counts`` and
        ``satchel_profiles`` in one statement (one snapshot of every process's commits)."""

        async def work(cur: Any) -> dict[str, dict[Family, int]]:
            await cur.execute(sql.SCOPE_COUNTS)
            counts: dict[str, dict[Family, int]] = {}
            for scope, family, count in await cur.fetchall():
                counts.setdefault(sql.name(scope), {})[family] = int(count)
            return counts

        return await self._call("scope_counts", work)

    async def scope_writes(self) -> Mapping[str, datetime | None]:
        return await self._call("scope_writes", listing.scope_writes)

    async def list_records(
        self,
        scope_id: str,
        families: Sequence[Family],
        *,
        include_forgotten: bool,
        before: int | None,
        limit: int,
    ) -> Sequence[ListedRecord]:
        async def work(cur: Any) -> list[ListedRecord]:
            return await listing.list_records(
                cur, scope_id, families, include_forgotten=include_forgotten,
                before=before, limit=limit,
            )  # fmt: skip

        return await self._call("list_records", work)

    # -- search ---------------------------------------------------------------------

    async def retrieve(self, family: Family, scope_id: str, request: PoolRequest) -> Pool:
        """One snapshot of the scope (``sql.SNAPSHOT``): its state, then the full text
        (over the scope's postings held in the process, ``_held_texts``, or in the
        engine) beside the vector product over the scope's vectors held in the process
        (``_vector_cache``) in a worker thread, then the time channel. What the process
        holds is served only at the write version the state confirms. Every channel
        sees the same commits.

        The state is read first on its own (one statement is a snapshot of its own, and
        every family's state, shared by the retrieves asked before it was sent:
        ``_scope_states``): a family with no searchable record in the scope is answered
        by it alone, without the snapshot (two of a prepare's three families are often
        empty). A family
        this store last found holding records goes straight to the snapshot, which
        reads the state again and answers an emptied scope alike. The snapshot starts
        in one round trip with its state and the query terms' frequencies
        (``search.snapshot_state``).

        A family whose texts (and vectors) the process holds at the version the state
        says is searched from them with no other statement and no snapshot, unless the
        query needs one (its dates, a name spelled otherwise)."""
        self._check_open()
        job = (family, scope_id)
        asked_at = now()  # a state read sent since may answer (_scope_states)
        if len(self._asked) >= HOLDING_SCOPES:
            self._asked.clear()
        self._asked.setdefault(scope_id, asked_at)

        async def work(cur: Any) -> Pool:
            texts = self._held_texts.get(family, scope_id)
            if job not in self._holding or texts is not None:
                state = await scope_state(cur)
                if state is None or state.rows == 0:
                    return emptied(state)
                if texts is not None and texts.version == state.version:
                    pool = await search_held(cur, state, texts)
                    if pool is not None:
                        return pool
            else:  # its snapshot reads its state: no other scope's read need read it
                self._asked.pop(scope_id, None)
            try:
                pool = await search_snapshot(cur)
            finally:
                await cur.execute("COMMIT")
            if pool.scope_rows:
                if len(self._holding) >= HOLDING_SCOPES:
                    self._holding.clear()
                self._holding.add(job)
            else:
                self._holding.discard(job)
            return pool

        def emptied(state: search.ScopeState | None) -> Pool:
            # The family holds nothing searchable in the scope (erased, forgotten, never
            # written): nothing of it is kept here either.
            self._held_texts.drop(family, scope_id)
            self._vector_cache.drop(family, scope_id)
            return Pool(family, scope_id, 0 if state is None else state.version)

        async def scope_state(cur: Any) -> search.ScopeState | None:
            states = await self._scope_states(cur, scope_id, asked_at)
            if states is None:
                return None
            state = states.of(family)
            self._versions[scope_id] = max(state.version, self._versions.get(scope_id, 0))
            return state

        async def search_held(cur: Any, state: search.ScopeState, texts: ScopeTexts) -> Pool | None:
            # The query terms' frequencies are the held postings' at the version; None
            # when a channel would read the engine (the search then takes a snapshot).
            query = request.query
            if search.scans_time(family, request):
                return None
            if (
                self._dimension is not None
                and request.vector is not None
                and rules(family).vector_channel
            ):
                vectors = self._vector_cache.get(family, scope_id)
                if vectors is None or vectors.version != state.version:
                    return None
            frequencies = None
            if query.terms:
                counts = texts.counts(request.frequency_terms, sql.indexed_term)
                frequencies = {term: count for term, count in counts.items() if count}
            if (
                query.names
                and (starts := request.name_starts(frequencies or {}))
                and self._spellings(family, scope_id, state).get(
                    (starts, variant_floor(state.rows))
                )
                is None
            ):
                return None  # a name spelled otherwise, not read at this version yet
            return await search_at(cur, state, frequencies)

        async def search_snapshot(cur: Any) -> Pool:
            # Again, in the snapshot every channel reads, with the query terms'
            # frequencies: which vector to rank by depends on the names the scope is
            # about (PoolRequest.vector_for), and which names it never holds is
            # evidence (Pool.unheld_names).
            terms = request.frequency_terms
            state, frequencies = await search.snapshot_state(cur, family, scope_id, terms)
            if state is None or state.rows == 0:  # erased or emptied since
                return emptied(state)
            self._versions[scope_id] = state.version
            return await search_at(cur, state, frequencies)

        async def search_at(
            cur: Any, state: search.ScopeState, frequencies: dict[str, int] | None
        ) -> Pool:
            vector = request.vector
            asked = request
            if frequencies is not None:  # the query's respellings the scope holds
                asked, frequencies = request.respelled(frequencies)
            if request.query.names:
                frequencies = frequencies or {}
                if starts := asked.name_starts(frequencies):  # a name spelled otherwise?
                    least = variant_floor(state.rows)
                    spellings = self._spellings(family, scope_id, state)
                    spelled = spellings.get((starts, least))
                    if spelled is None:
                        found = await search.terms_starting(cur, family, scope_id, starts, least)
                        spelled = spellings[(starts, least)] = Spellings(found, {})
                    asked, frequencies = asked.naming_held(
                        frequencies, spelled.held, state.rows, spelled.variants
                    )
                vector = asked.vector_for(frequencies, state.rows)
            stored = self._dimension is not None
            held = None
            texts = await self._held_texts_at(cur, family, scope_id, state)
            postings = None if texts is None else texts.postings
            if stored and vector is not None and rules(family).vector_channel:
                _rules.check_query_vector(vector, self._dimension)
                held = await self._held_vectors(cur, family, scope_id, state)

            async def vector_channel() -> tuple[list[int], list[float]]:
                if not stored or vector is None:
                    return [], []
                if held is not None:  # off the store's loop, beside the full text
                    return await _in_thread(held.nearest, vector, asked.size)
                return await search.nearest(
                    cur, family, scope_id, asked, vector, state,
                    self._exact_rows, self._vector_index if self._indexed else None,
                    self._vector_sums,
                )  # fmt: skip

            if held is None:  # the engine searches: one statement at a time
                near, similarities = await vector_channel()
                lexical = await search.lexical(
                    cur, family, scope_id, asked, state, frequencies, postings
                )
            else:
                lexical, (near, similarities) = await asyncio.gather(
                    search.lexical(cur, family, scope_id, asked, state, frequencies, postings),
                    vector_channel(),
                )
            timed, matched = await search.time_channel(
                cur, family, scope_id, asked, vector, vectors=stored, held=held,
                sums=(self._vector_sums, state.version),
            )  # fmt: skip
            keys, scores, matches, common, held_terms, distinctive = lexical
            return Pool(
                family, scope_id, state.version, scope_rows=state.rows,
                lexical_keys=keys, lexical_scores=scores, lexical_matches=matches,
                vector_keys=near, vector_similarities=similarities,
                time_keys=timed, time_matched=matched, common_terms=common,
                held_terms=held_terms, distinctive_terms=distinctive,
                unheld_names=asked.unheld_names(frequencies),
                spelled_names=asked.spelled,
            )  # fmt: skip

        return await self._call("retrieve", work)

    def _spellings(
        self, family: Family, scope_id: str, state: search.ScopeState
    ) -> dict[tuple[tuple[str, ...], int], Spellings]:
        """The terms read at ``state``'s version for names the scope never holds, and
        the variants found among them (``Kept.spellings``), kept with the scope's
        counts."""
        return self._term_counts.at(family, scope_id, state.version).spellings

    async def _scope_states(
        self, cur: Any, scope_id: str, asked_at: float
    ) -> search.ScopeStates | None:
        """The scope's state for every family, from one statement that several retrieves
        of the scope share: a retrieve asked at ``asked_at`` (``time.monotonic``) takes
        the answer of a read sent at that moment or later, which sees every write
        acknowledged before it was asked (a prepare's families, retrieved at once,
        send one statement for all of them); else it sends one, which later retrieves
        may share, and which reads too the state of every other scope whose retrieves
        were asked and wait for one (``_asked``: a prepare's other scopes), whose
        retrieves then take theirs from it. A shared read that failed or was cancelled
        is sent again."""
        shared = self._state_reads.get(scope_id)
        if shared is not None and shared[0] >= asked_at:
            with contextlib.suppress(Exception, asyncio.CancelledError):
                return await asyncio.shield(shared[1])
            if not shared[1].done():  # this retrieve was cancelled, not the read
                raise asyncio.CancelledError
        # The other scopes whose retrieves were asked and wait for a state read (a
        # prepare's other scopes, searched at once) are read in the same statement.
        others = [scope for scope in list(self._asked) if scope != scope_id]
        batch = [scope_id, *others[: STATE_BATCH - 1]]
        loop = asyncio.get_running_loop()
        reads = {scope: loop.create_future() for scope in batch}
        if len(self._state_reads) >= HOLDING_SCOPES:
            self._state_reads.clear()
        sent = now()
        for scope, read in reads.items():
            self._state_reads[scope] = (sent, read)
            self._asked.pop(scope, None)
        try:
            states = await search.scopes_states(cur, batch)
        except BaseException:
            for read in reads.values():
                read.cancel()  # whoever waits for one reads again
            raise
        for scope, read in reads.items():
            read.set_result(states.get(scope))
        return states.get(scope_id)

    async def _held_vectors(
        self, cur: Any, family: Family, scope_id: str, state: search.ScopeState
    ) -> ScopeVectors | None:
        """The scope's vectors as of ``state`` (read in the retrieve's snapshot), from the
        process (``_vector_cache``) by :meth:`_held_at`: patched with the vectors of the
        keys handed out since, without the keys no longer searchable, or read whole."""
        dimension = self._dimension
        assert dimension is not None

        async def caught_up(cached: ScopeVectors) -> ScopeVectors:
            if state.removed_at > cached.version:  # keep the rows still searchable
                await cur.execute(sql.VECTOR_KEYS, (scope_id, family, cached.next_key))
                live = np.fromiter((int(k) for (k,) in await cur.fetchall()), np.int64)
                cached = await _in_thread(cached.kept, live)
            await cur.execute(
                sql.VECTORS_BETWEEN, (scope_id, family, cached.next_key, state.next_key)
            )
            keys, matrix = await _in_thread(parse_vectors, await cur.fetchall(), dimension)
            return cached.extended(state.version, state.next_key, keys, matrix)

        fits = self._vectors_fit(state)
        return await self._held_at(
            self._vector_cache, (family, scope_id, state), fits, caught_up,
            lambda: self._read_whole(cur, family, scope_id, state),
        )  # fmt: skip

    async def _held_texts_at(
        self, cur: Any, family: Family, scope_id: str, state: search.ScopeState
    ) -> ScopeTexts | None:
        """The scope's searchable texts as of ``state`` (read in the retrieve's
        snapshot), from the process (``_held_texts``) by :meth:`_held_at`: patched with
        the rows of the keys handed out since, without the keys no longer searchable,
        or read whole."""

        async def caught_up(cached: ScopeTexts) -> ScopeTexts | None:
            found, removed = await held_texts.read_since(cur, family, scope_id, cached, state)
            return await _in_thread(cached.patched, state, found, removed)

        fits = self._texts_fit(family, scope_id, state)
        return await self._held_at(
            self._held_texts, (family, scope_id, state), fits, caught_up,
            lambda: self._read_texts(cur, family, scope_id, state),
        )  # fmt: skip

    async def _held_at(
        self,
        sets: HeldSets[H],
        at: tuple[Family, str, search.ScopeState],
        fits: bool,
        caught_up: Callable[[H], Awaitable[H | None]],
        read: Callable[[], Awaitable[H]],
    ) -> H | None:
        """What the process holds of (family, scope) in ``sets``, as of the write version
        of ``state`` (``at``): a set held at that version; one held at an older version
        ``caught_up`` with what changed since, and held in its place; else, when the
        scope ``fits`` the sets' bounds, one ``read`` whole in this retrieve (up to
        ``LOAD_NOW_ROWS`` records) or in the background (above: the engine searches
        meanwhile). None also when this process holds a newer version."""
        family, scope_id, state = at
        cached = sets.get(family, scope_id)
        if cached is not None:
            if cached.version == state.version:
                return cached
            if cached.version > state.version:
                return None
            fresh = await caught_up(cached)
            if fresh is not None:
                sets.put(family, scope_id, fresh)
                return fresh
        if not fits:
            return None
        if state.rows > self._load_now_rows:  # the engine searches until it is read
            self._load_later(family, scope_id)
            return None
        return await read()

    async def _read_texts(
        self, cur: Any, family: Family, scope_id: str, state: search.ScopeState
    ) -> ScopeTexts:
        """Read the scope's searchable texts as of ``state`` and hold them (unless a
        newer set is held already)."""
        found = await held_texts.read_whole(cur, family, scope_id, state)
        loaded = await _in_thread(held_texts.of, state, found)
        if loaded.nbytes > self._held_texts.max_bytes:  # never held: not read again
            if len(self._texts_too_large) >= HOLDING_SCOPES:
                self._texts_too_large.clear()
            self._texts_too_large.add((family, scope_id))
        self._held_texts.newer(family, scope_id, loaded)
        return loaded

    async def _read_whole(
        self, cur: Any, family: Family, scope_id: str, state: search.ScopeState
    ) -> ScopeVectors:
        """Read the scope's vectors as of ``state`` and hold them (unless a newer set is
        held already)."""
        assert self._dimension is not None
        await cur.execute(sql.VECTORS_BETWEEN, (scope_id, family, 0, state.next_key))
        found = await cur.fetchall()
        keys, matrix = await _in_thread(parse_vectors, found, self._dimension)
        loaded = ScopeVectors.of(state.version, state.next_key, keys, matrix)
        self._vector_cache.newer(family, scope_id, loaded)
        return loaded

    def _load_later(self, family: Family, scope_id: str) -> None:
        """Read a large scope's vectors and texts in a task of the store's loop, on a
        connection and in a snapshot of its own (one at a time per scope); meanwhile
        the engine searches. A failed read is logged, and the next search asks again."""
        job = (family, scope_id)
        if job in self._loading:
            return
        task = asyncio.get_running_loop().create_task(self._load_scope(family, scope_id))
        self._loading[job] = task
        task.add_done_callback(lambda _: self._loading.pop(job, None))

    async def _load_scope(self, family: Family, scope_id: str) -> None:
        try:
            async with self._conns.connection(extra=True) as conn, conn.cursor() as cur:
                for statement in sql.SNAPSHOT:
                    await cur.execute(statement)
                try:
                    await cur.execute(sql.STATE, (family, scope_id))
                    found = await cur.fetchone()
                    if found is not None:
                        state = search.ScopeState(*(int(value or 0) for value in found))
                        await self._load_whole(cur, family, scope_id, state)
                finally:
                    await cur.execute("COMMIT")
        except Exception:
            logger.warning(
                "reading the vectors and texts of %s scope %r failed",
                family,
                scope_id,
                exc_info=True,
            )

    async def _load_whole(
        self, cur: Any, family: Family, scope_id: str, state: search.ScopeState
    ) -> None:
        """Read what this process does not hold of the scope at ``state``: its vectors
        (within the cache's bound) and its texts (within ``held_texts.MOST_ROWS``)."""
        vectors = self._vector_cache.get(family, scope_id)
        if (
            self._dimension is not None
            and rules(family).vector_channel
            and (vectors is None or vectors.version < state.version)
            and self._vectors_fit(state)
        ):
            await self._read_whole(cur, family, scope_id, state)
        texts = self._held_texts.get(family, scope_id)
        if (texts is None or texts.version < state.version) and self._texts_fit(
            family, scope_id, state
        ):
            await self._read_texts(cur, family, scope_id, state)

    def _vectors_fit(self, state: search.ScopeState) -> bool:
        """Whether a family's vectors at ``state`` fit the vector cache's bound."""
        assert self._dimension is not None
        return state.rows * self._dimension * 4 <= self._vector_cache.max_bytes

    def _texts_fit(self, family: Family, scope_id: str, state: search.ScopeState) -> bool:
        """Whether a family's texts at ``state`` may be held: few enough records, and not
        found larger than the held texts' bound before."""
        return (
            state.rows <= held_texts.MOST_ROWS and (family, scope_id) not in self._texts_too_large
        )

    async def _loads_done(self) -> None:
        """Wait, on the store's loop, for the background reads running now to end."""
        for task in list(self._loading.values()):
            with contextlib.suppress(asyncio.CancelledError):  # cancelled by the close
                await task

    async def neighbours(
        self, family: Family, scope_id: str, keys: Sequence[int], *, reach: int = 1
    ) -> Mapping[int, ThreadNeighbours]:
        """As the protocol says, with what was read kept while the scope's write version
        stands (``NeighbourCache``, as SQLite keeps it): the version the store's last
        retrieve of the scope read, which the version read with the keys' threads
        confirms (versions only grow). A scope whose family held no thread and no
        conversation turn at that version (a scope of notes) is answered with no
        statement: no key of it has a neighbour."""
        self._check_open()
        if not keys:
            return {}
        job = (family, scope_id)
        version = self._versions.get(scope_id)
        if version is None:
            found: dict[int, ThreadNeighbours] = {}
            missing = list(keys)
        elif self._threaded.get(job) == (version, False):
            return {}
        else:
            found, missing = self._neighbours.split(family, scope_id, reach, version, keys)
            if not missing:
                return found

        async def work(cur: Any) -> tuple[dict[int, ThreadNeighbours], tuple[int, bool] | None]:
            # From the scope's texts held at that version, when every key is threaded.
            held = self._held_texts.get(family, scope_id)
            if held is not None and held.version == version:
                around = await _in_thread(held.neighbours, missing, reach)
                if around is not None:
                    return around, (held.version, True)
            return await search.thread_neighbours(cur, scope_id, family, missing, reach)

        read, state = await self._call("neighbours", work)
        if state is not None:
            if len(self._threaded) >= THREADED_SCOPES:
                self._threaded.clear()
            self._threaded[job] = state
            # Kept under the version the pools were read at, when the state read with
            # the keys' threads says it still stood. A write landing between that read
            # and the threads' may show in what is kept, never a state older than the
            # version: it moved the version, which the next retrieve reads, and from
            # then on nothing kept under this one is served.
            if state[0] == version:
                self._neighbours.remember(family, scope_id, reach, version, (missing, read))
        return self._neighbours.joined(keys, found, read)

    async def evidence(
        self, family: Family, scope_id: str, keys: Sequence[int]
    ) -> Mapping[int, Evidence]:
        self._check_open()
        if not keys:
            return {}

        async def work(cur: Any) -> dict[int, Evidence]:
            # Every key served before at the scope's write version as this store last
            # read it (the version the pools of this prepare were read at, or later):
            # the same evidence, rated alike, and no statement (``TermCounts.keep``).
            # The others from the scope's texts held at that version (``_held_texts``).
            version = self._versions.get(scope_id)
            if version is not None:
                served = self._term_counts.at(family, scope_id, version).served(keys)
                if len(served) == len(keys):
                    return served
                held = self._held_texts.get(family, scope_id)
                if held is not None and held.version == version:
                    found = held.evidence(family, scope_id, [k for k in keys if k not in served])
                    at = search.ScopeState(version, held.next_key, held.rows, 0)
                    return {**served, **await rate_in_scope(cur, found, at)}
            # The evidence and the scope's state in one snapshot and one round trip; the
            # counts its rating needs and the scope does not keep, in one more.
            marks = ",".join(["%s"] * len(keys))
            statements = [
                *sql.SNAPSHOT,
                f"SELECT {sql.EVIDENCE_COLUMNS} FROM satchel_records WHERE scope = %s"
                f" AND family = %s AND live = 1 AND k IN ({marks})",
                sql.STATE,
            ]
            await cur.execute(
                "; ".join(statements),
                (scope_id, family, *[int(key) for key in keys], family, scope_id),
            )
            try:
                for _ in sql.SNAPSHOT:  # their answers say nothing
                    await cur.nextset()
                found = {
                    int(row[0]): search.evidence_of(family, scope_id, row)
                    for row in await cur.fetchall()
                }
                await cur.nextset()
                state = await cur.fetchone()
                if state is None or not found:
                    return found
                scope = search.ScopeState(*(int(value or 0) for value in state))
                return await rate_in_scope(cur, found, scope)
            finally:
                await cur.execute("COMMIT")

        async def rate_in_scope(
            cur: Any, found: dict[int, Evidence], scope: search.ScopeState
        ) -> dict[int, Evidence]:
            kept = self._term_counts.at(family, scope_id, scope.version)
            held = self._held_texts.get(family, scope_id)

            async def read_counts(terms: list[str]) -> dict[str, int]:
                if held is not None and held.version == scope.version:  # the counts, held
                    return held.counts(terms, sql.indexed_term)
                return await search.term_frequencies(cur, family, scope_id, terms)

            rated = await rate(found, kept, scope.rows, read_counts, on_host_loop=False)
            self._term_counts.keep(family, scope_id, kept, rated)
            return rated

        return await self._call("evidence", work)

    # -- copying (``CopySource``, ``CopyTarget``; ``_copy``) ---------------------------

    async def copy_scopes(self) -> list[str]:
        return await self._call("copy_scopes", copying.copy_scopes)

    async def count_versions(self, scope_id: str) -> Mapping[Family, int]:
        return await self._call("count_versions", lambda cur: copying.count_versions(cur, scope_id))

    async def read_versions(
        self, scope_id: str, family: Family, *, after: int, limit: int
    ) -> list[StoredVersion]:
        async def work(cur: Any) -> list[StoredVersion]:
            held = self._dimension is not None  # the vectors table exists
            return await copying.read_versions(cur, scope_id, family, after, limit, vectors=held)

        return await self._call("read_versions", work)

    async def read_tombstones(self) -> list[str]:
        return await self._call("read_tombstones", copying.read_tombstones)

    async def vectors_built_by(self) -> VectorOrigin:
        return await self._call("vectors_built_by", copying.vectors_built_by)

    async def held_versions(
        self, scope_id: str, family: Family, record_ids: Sequence[str]
    ) -> Mapping[tuple[str, int], bool]:
        async def work(cur: Any) -> dict[tuple[str, int], bool]:
            return await copying.held_versions(cur, scope_id, family, record_ids)

        return await self._call("held_versions", work)

    async def write_versions(
        self,
        scope_id: str,
        family: Family,
        versions: Sequence[StoredVersion],
        *,
        fingerprint: str | None,
    ) -> int:
        vectors = searchable_vectors(family, versions)
        if vectors is not None:
            _rules.check_vectors(vectors, len(vectors), self._dimension)

        async def work(cur: Any, write: rows.Write) -> int:
            return await copying.write_versions(cur, write, versions, fingerprint)

        return await self._write("write_versions", scope_id, family, len(versions), work, vectors)

    async def retire_versions(
        self, scope_id: str, family: Family, versions: Sequence[tuple[str, int]]
    ) -> int:
        async def work(cur: Any, write: rows.Write) -> int:
            return await copying.retire_versions(cur, write, versions)

        return await self._write("retire_versions", scope_id, family, 0, work, None)

    async def keep_tombstones(self, tombstones: Sequence[str]) -> int:
        """Keep the tombstones, then erase every entry held here that one names (run
        again, a copy interrupted between the two finishes the erasures)."""
        new = await self._call(
            "keep_tombstones", lambda cur: copying.keep_tombstones(cur, tombstones)
        )
        for scope_id, entry_id in await self._call("tombstoned", copying.tombstoned_entries):
            await self.erase("memory", scope_id, entry_id)
        return new

    # -- write internals ------------------------------------------------------------

    async def _write(
        self,
        operation: str,
        scope_id: str,
        family: Family | None,
        new_keys: int,
        work: Callable[[Any, rows.Write], Coroutine[Any, Any, T]],
        vectors: Vectors | None,
        known_scope: bool = False,
    ) -> T:
        """Run ``work`` in one transaction: the scope's row is locked and its write
        version moved first, so writes to one scope serialise across processes (the
        lock's waits are bounded: ``_locks``)."""

        async def transaction(cur: Any) -> T:
            if vectors is not None and len(vectors):
                await self._setup(cur, int(vectors.shape[-1]))
            if known_scope:
                await cur.execute("SELECT 1 FROM satchel_scopes WHERE scope = %s", (scope_id,))
                if await cur.fetchone() is None:
                    raise _rules.no_scope(scope_id)
            await locks.begin_locked(cur, operation, scope_id, new_keys)
            try:
                await cur.execute(
                    "SELECT version, next_key FROM satchel_scopes WHERE scope = %s", (scope_id,)
                )
                write_version, next_key = await cur.fetchone()
                write = rows.Write(
                    scope_id, family, self._dimension is not None, first_key=next_key - new_keys
                )
                result = await work(cur, write)
                if operation == "erase_scope":  # it holds nothing: no time to list
                    await listing.unstamp(cur, scope_id)
                else:
                    await listing.stamp(cur, scope_id)
                if write.vectors and self._embedder is not None:
                    await cur.execute(
                        "INSERT IGNORE INTO satchel_meta (name, value) VALUES ('embedder', %s)",
                        (self._embedder,),
                    )
                await write.flush(cur)
                await rows.apply_counts(cur, write)
                if write.removed:  # held vectors and terms of the scope are read again
                    await cur.execute(sql.REMOVED, (write_version, scope_id))
                await cur.execute("COMMIT")
            except BaseException as exc:
                with contextlib.suppress(Exception):
                    await cur.execute("ROLLBACK")
                if locks.lock_timed_out(exc):  # a row another transaction holds: say which
                    waited = QUERY_TIMEOUT
                    raise await locks.unavailable(cur, operation, scope_id, waited) from exc
                raise
            self._versions[scope_id] = write_version
            return result

        return await self._call(operation, transaction)

    # -- plumbing -------------------------------------------------------------------

    async def _setup(self, cur: Any, dimension: int | None) -> None:
        """Create and migrate the schema once per store object; the vectors table as soon
        as the vector dimension is known (from the database, or ``dimension``: the
        first vectors written). DDL, so never inside a write's transaction."""
        if self._ready and (self._dimension is not None or dimension is None):
            return
        if not self._ready:
            await _once_known(cur, self._create)
            self._conns.use_database(self._database)
            self._ready = True
        if self._dimension is None and dimension is not None:

            async def vectors(cur: Any) -> None:
                index = sql.VECTOR_INDEX if self._make_index else ""
                table = sql.VECTORS_TABLE.format(dimension=dimension, index=index)
                await cur.execute(sql.laid_out(table, self._partitions))
                await cur.execute(sql.KNOWN.format(table="satchel_vectors"))
                await cur.execute(
                    "INSERT IGNORE INTO satchel_meta (name, value) VALUES ('dimension', %s)",
                    (str(dimension),),
                )
                await cur.execute("SELECT value FROM satchel_meta WHERE name = 'dimension'")
                self._dimension = int((await cur.fetchone())[0])
                await self._read_indexed(cur)

            await _once_known(cur, vectors)

    async def _read_indexed(self, cur: Any) -> None:
        import asyncmy.errors

        try:
            await cur.execute(sql.VECTOR_INDEXES)
        except asyncmy.errors.MySQLError as exc:
            if not exc.args or exc.args[0] not in NOT_KNOWN:
                raise
            self._indexed = False  # no vectors table: no index either
            return
        self._indexed = any(row[2] == "by_vector" for row in await cur.fetchall())

    async def _create(self, cur: Any) -> None:
        """The database and its tables, made (those missing) or migrated as needed (every
        statement idempotent), then each table read once, so that this process's statements never
        meet one the engine does not know yet."""
        if await self._made_already(cur):
            return
        await cur.execute(
            "SELECT 1 FROM information_schema.schemata WHERE schema_name = %s",
            (self._database,),
        )
        if await cur.fetchone() is None:
            await cur.execute(f"CREATE DATABASE IF NOT EXISTS {self._database}")
        await cur.execute(f"USE {self._database}")
        await cur.execute(sql.EXISTING, (self._database,))
        existing = {name for (name,) in await cur.fetchall()}
        for statement in sql.BASE_TABLES:
            if sql.created_table(statement) not in existing:
                await cur.execute(sql.laid_out(statement, self._partitions))
        await self._migrate(cur, existing)
        await cur.execute(sql.ALL_KNOWN)
        await cur.execute("SELECT value FROM satchel_meta WHERE name = 'dimension'")
        found = await cur.fetchone()
        if found is not None:
            self._dimension = int(found[0])
            await self._read_indexed(cur)

    async def _made_already(self, cur: Any) -> bool:
        """Whether the database is made and at this schema version, every table known,
        read in one round trip (:data:`sql.MADE`) without the ``information_schema``
        reads of a database to make or migrate (measured on seekdb: a store's first call
        over a small database 0.26 s with them)."""
        import asyncmy.errors

        try:
            await cur.execute(sql.MADE.format(database=self._database))
            await cur.nextset()
            meta = dict(await cur.fetchall())
            await cur.nextset()  # every table known
        except asyncmy.errors.MySQLError:
            return False  # the full path makes, migrates or names what is missing
        if meta.get("schema") != str(sql.SCHEMA_VERSION):
            return False
        if "dimension" in meta:
            self._dimension = int(meta["dimension"])
            await self._read_indexed(cur)
        return True

    async def _migrate(self, cur: Any, existing: set[str]) -> None:
        await cur.execute("SELECT value FROM satchel_meta WHERE name = 'schema'")
        found = await cur.fetchone()
        current = 0 if found is None else int(found[0])
        if current > sql.SCHEMA_VERSION:
            raise StoreError(
                f"database {self._database!r} has satchel schema {current}, newer than this"
                f" satchel's {sql.SCHEMA_VERSION}: upgrade satchel"
            )
        for version in range(current + 1, sql.SCHEMA_VERSION + 1):
            for statement in sql.MIGRATIONS[version]:
                await _idempotent(cur, sql.laid_out(statement, self._partitions))
            for table, statement in sql.MIGRATIONS_IF_MADE.get(version, {}).items():
                if table in existing:
                    await _idempotent(cur, statement)
            if version == sql.REPARTITIONED and self._partitions:
                await self._repartition(cur, existing)
            if version in rows.STEPS:  # records the version in its own transaction
                await cur.execute(MIGRATION_TRX)
                await rows.migrate(cur, version)
                continue
            await cur.execute(
                "REPLACE INTO satchel_meta (name, value) VALUES ('schema', %s)", (str(version),)
            )

    async def _repartition(self, cur: Any, existing: set[str]) -> None:
        """Partition by scope each scoped table that a database made before schema 7
        holds whole (one ``ALTER TABLE`` each, the table locked meanwhile; another
        process may have done it first), then wait for the engine's DDL tasks to end."""
        altered = False
        for table in sql.SCOPED:
            if table not in existing or table in await _partitioned(cur, self._database):
                continue
            altered = True
            logger.warning(
                "satchel: partitioning %s.%s by scope (schema 7), once: about 15 s, and 25 s"
                " more per 100,000 records",
                self._database,
                table,
            )
            await cur.execute(f"SET SESSION ob_query_timeout = {sql.REPARTITION_TIMEOUT_US}")
            try:
                await cur.execute(sql.repartition(table, self._partitions))
            finally:
                await cur.execute(f"SET SESSION ob_query_timeout = {int(QUERY_TIMEOUT * 1e6)}")
        if altered:
            await _ddl_done(cur)

    async def _call(self, operation: str, work: Callable[[Any], Coroutine[Any, Any, T]]) -> T:
        """Run ``work(cursor)`` on a pooled connection on the bridge's loop, in a DB span;
        engine errors become ``StoreUnavailableError`` (connection lost) or
        ``StoreError``."""
        self._check_open()

        async def on_bridge() -> T:
            async with self._conns.connection() as conn, conn.cursor() as cur:
                await self._setup(cur, None)
                return await work(cur)

        import asyncmy.errors

        with self._span(operation):
            try:
                return await self._bridge.run(on_bridge)
            except unavailable_errors() as exc:
                raise StoreUnavailableError(
                    f"{operation}: the database at {self._where()} is unavailable: {exc}"
                ) from exc
            except asyncmy.errors.MySQLError as exc:
                raise StoreError(f"{operation} failed: {exc}") from exc

    def _where(self) -> str:
        if "unix_socket" in self._server:
            return str(self._server["unix_socket"])
        return f"{self._server['host']}:{self._server['port']}"

    def _span(self, operation: str) -> AbstractContextManager[Span]:
        attributes = {"db.system.name": "oceanbase", "db.operation.name": operation}
        return self._tracer.start_as_current_span(
            f"oceanbase {operation}", kind=SpanKind.CLIENT, attributes=attributes
        )

    def _check_open(self) -> None:
        if self._closed:
            raise StoreError(_rules.CLOSED)


async def _in_thread(work: Callable[..., T], *args: Any) -> T:
    """``work(*args)`` in a worker thread, awaited on the store's loop (whose context
    may name the host's backend: anyio's threads would look for a trio loop there)."""
    return await asyncio.get_running_loop().run_in_executor(None, work, *args)


async def _idempotent(cur: Any, statement: str) -> None:
    """Run a migration's statement; a column another process added first, or an index
    it dropped first, is no fault."""
    import asyncmy.errors

    try:
        await cur.execute(statement)
    except asyncmy.errors.MySQLError as exc:
        if not exc.args or exc.args[0] not in (sql.DUPLICATE_COLUMN, sql.DROPPED_ALREADY):
            raise


async def _partitioned(cur: Any, database: str) -> set[str]:
    await cur.execute(sql.PARTITIONED_TABLES, (database,))
    return {name for (name,) in await cur.fetchall()}


async def _ddl_done(cur: Any) -> None:
    """Wait until the engine runs no DDL task, at most :data:`DDL_WAIT`; an engine that
    does not show its tasks (an OceanBase user without access) is not waited for."""
    import asyncmy.errors

    deadline = time.monotonic() + DDL_WAIT
    while time.monotonic() < deadline:
        try:
            await cur.execute(sql.DDL_TASKS)
        except asyncmy.errors.MySQLError:
            return
        if (await cur.fetchone())[0] == 0:
            return
        await asyncio.sleep(0.1)


async def _once_known(cur: Any, create: Callable[[Any], Coroutine[Any, Any, None]]) -> None:
    """Run ``create`` (idempotent schema statements) again while the engine says it does
    not know a database or table that another process has just created. Its ``CREATE``
    returns, and ``information_schema`` lists it (``IF NOT EXISTS`` here finds it),
    before every session of the engine may use it: seen on seekdb with several processes
    opening one new database at once, which failed one of them with "Unknown database"
    or "Table ... doesn't exist". Bounded by :data:`NEW_SCHEMA_WAIT`."""
    import asyncmy.errors

    deadline = time.monotonic() + NEW_SCHEMA_WAIT
    while True:
        try:
            await create(cur)
        except asyncmy.errors.MySQLError as exc:
            if not exc.args or exc.args[0] not in NOT_KNOWN or time.monotonic() > deadline:
                raise
            await asyncio.sleep(NEW_SCHEMA_PAUSE)
            continue
        return
