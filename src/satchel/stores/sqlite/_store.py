"""``SqliteStore``: the embedded default store.

One SQLite file in WAL mode; FTS5 for text; float32 embeddings in BLOBs, held per scope
as a numpy matrix so a vector search is one BLAS product. All SQLite work runs in anyio
worker threads, so the store behaves identically under asyncio and trio. Sessions
(``SessionStore``) live in tables of their own (``_sessions``). It never touches the
gate, the coordinator or the Builder.
"""

from __future__ import annotations

import itertools
import sqlite3
from typing import TYPE_CHECKING, Any, TypeVar

import anyio.to_thread
import attrs
import numpy as np
from opentelemetry.trace import SpanKind

from ..._loop import loop_turn
from ...embedders import embed_checked, fingerprint_of
from ...vocabulary import _telemetry as tracing
from ...vocabulary._errors import InvalidRequestError, StoreError
from ...vocabulary._evidence import Evidence, Pool, ThreadNeighbours
from ...vocabulary._families import rules
from ...vocabulary._rarity import remember_terms
from ...vocabulary._records import MemoryRef
from ...vocabulary._speakers import opens_with_speaker, variant_floor
from .. import _rules
from .._copy_protocol import searchable_vectors
from .._neighbour_cache import NeighbourCache
from .._placing import place
from .._postings import PLAIN_TEXT
from .._rounds import current_round
from .._sessions import erased_identities, session_key
from .._term_counts import Kept, Spellings, TermCounts, rate
from . import _copy as copying
from . import _erase as erasing
from . import _listing as listing
from . import _rows as rows
from . import _schema as sql
from . import _search as search
from . import _sessions as sessions
from ._connections import Connections
from ._evidence_cache import EvidenceCache
from ._postings_cache import PostingsCache
from ._scope_matrices import NO_ROWS, NO_SIMILARITIES, ScopeMatrices

#: Each scope's searchable records per family (the document count ``term_stats`` keeps
#: under the empty term) and its profile, scopes in order.
SCOPE_COUNTS = (
    "SELECT s.scope, t.family, t.df FROM term_stats t JOIN scopes s USING (scope_key)"
    " WHERE t.term = ? AND t.df > 0"
    " UNION ALL SELECT s.scope, 'profile', 1 FROM profiles p JOIN scopes s USING (scope_key)"
    " ORDER BY 1"
)

#: Searches of a family with at most this many records in the scope (and their evidence
#: reads) run on the calling thread; larger ones in a worker thread. Measured: see
#: docs/benchmarks.md, "Measurements behind the embedded store's constants".
INLINE_ROWS = 4096

#: Neighbour reads of at most this many keys (round 0's best hits) run on the calling
#: thread; more (a full-text channel's thread context) in a worker thread.
INLINE_NEIGHBOURS = 64

#: What a refused embedder's message advises.
REMEDY = "Open it with the same embedder, or rebuild its vectors with `satchel reembed`."

T = TypeVar("T")

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from contextlib import AbstractContextManager
    from datetime import datetime

    import numpy.typing as npt
    from opentelemetry.trace import Span, TracerProvider

    from ...embedders import Embedder
    from ...vocabulary._families import Family, FamilyRules
    from ...vocabulary._listing import ListedRecord
    from ...vocabulary._records import Columns, MemoryEntry, MemoryRecord, Record, Ref
    from ...vocabulary._retrieval import PoolRequest
    from .._copy_protocol import StoredVersion, VectorOrigin
    from .._postings import ScopePostings, Totals

    Vectors = npt.NDArray[np.float32]


class SqliteStore:
    """The embedded store. Open it with :meth:`open`; close it with :meth:`aclose`."""

    def __init__(
        self,
        connections: Connections,
        scopes: dict[str, int],
        dimension: int | None,
        counts: dict[tuple[Family, int], int],
    ) -> None:
        self._conns = connections
        self._scope_keys = scopes
        self._dimension = dimension
        self._counts = counts
        self._inline_rows = INLINE_ROWS
        self._versions: dict[str, int] = {}
        # Moves with every scope's write version: the FTS5 tables' totals are every
        # scope's (``_postings``).
        self._epoch = 0
        # Scopes that ever held a memory entry with a thread or a turn without one (a
        # forget never clears it: the flag only spares other scopes the neighbour lookup).
        self._threaded: set[int] = set()
        self._vectors = ScopeMatrices()
        self._tracer = tracing.tracer(None)
        self._evidence = EvidenceCache()
        self._neighbours = NeighbourCache()
        self._postings = PostingsCache()
        self._term_counts = TermCounts()
        self._embedder: str | None = None  # the fingerprint bound by the runtime
        self._copy_order = copying.RowOrder()  # the rows a copy reads (``_copy``)
        self._looked_in: object | None = None  # the round of the last look (``_look``)
        self._closed = False

    @classmethod
    async def open(
        cls,
        database: str = ":memory:",
        *,
        readers: int = 4,
        tracer_provider: TracerProvider | None = None,
    ) -> SqliteStore:
        """Open (creating if needed) an embedded store at ``database``.

        Args:
            database: a file path or ``":memory:"``.
            readers: reader connections for concurrent searches.
            tracer_provider: where its DB spans go; the global provider when None.

        Raises:
            InvalidRequestError: an argument is malformed (the message names it); nothing
                is opened.
            StoreError: the database cannot be opened.
        """
        if not isinstance(database, str) or not database:
            raise InvalidRequestError("database must be a file path or ':memory:'")
        if isinstance(readers, bool) or not isinstance(readers, int) or readers < 1:
            raise InvalidRequestError("readers must be an integer >= 1")
        tracing.check_provider(tracer_provider)
        tracer = tracing.tracer(tracer_provider)
        store = await anyio.to_thread.run_sync(cls._open_sync, database, readers)
        store._tracer = tracer
        return store

    @classmethod
    def _open_sync(cls, database: str, readers: int) -> SqliteStore:
        try:
            conns = Connections(database, readers=readers)
        except sqlite3.Error as exc:
            raise StoreError(_unopenable(database, exc)) from exc
        try:
            scopes, dimension, counts, threaded = conns.write_now(rows.create_schema)
        except BaseException as exc:
            conns.close()
            if isinstance(exc, sqlite3.Error):
                raise StoreError(_unopenable(database, exc)) from exc
            raise
        store = cls(conns, scopes, dimension, counts)
        store._threaded = threaded
        store._vectors.persist_beside(database)  # large scopes' vector indexes
        return store

    async def aclose(self) -> None:
        """Close every connection. Idempotent."""
        if not self._closed:
            self._closed = True
            self._vectors.close()
            self._conns.close()

    def scope_version(self, scope_id: str) -> int:
        self._check_open()
        return self._versions.get(scope_id, 0)

    def holds_nothing(self, family: Family, scope_id: str) -> bool:
        """Whether the scope holds no searchable record of ``family``
        (``stores.EmptyFamilies``): from the counts the store keeps, once other
        processes' commits were looked for as a retrieve looks (once per round)."""
        if self._closed:
            return False
        try:
            self._look()
        except sqlite3.Error:
            return False  # the search runs, and its read says what is wrong
        scope_key = self._scope_keys.get(scope_id)
        return scope_key is None or not self._counts.get((family, scope_key), 0)

    async def bind_embedder(self, fingerprint: str, dimension: int) -> None:
        """Accept the embedder the runtime will write and search with.

        The fingerprint of the embedder that built the store's vectors is recorded with
        the first vector written; a different one is refused instead of returning garbage.

        Raises:
            StoreError: the store's vectors were built by another embedder.
        """

        recorded = await self._read("bind_embedder", sql.embedder_of, inline=True)
        _rules.check_embedder(recorded, self._dimension, fingerprint, dimension, REMEDY)
        self._embedder = fingerprint

    async def reembed(
        self,
        embedder: Embedder,
        *,
        batch_size: int = 512,
        progress: Callable[[int, int], object] | None = None,
    ) -> int:
        """Rebuild every searchable vector with ``embedder``, atomically; returns how many.

        Run it while no prepare uses the store.
        """
        fingerprint = fingerprint_of(embedder)

        def read(conn: sqlite3.Connection) -> list[tuple[int, str]]:
            return search.embedding_sources(conn)

        sources = await self._read("reembed", read, inline=False)
        vectors: list[Any] = []
        for start in range(0, len(sources), batch_size):
            chunk = sources[start : start + batch_size]
            texts = [text for _, text in chunk]
            vectors.append(await embed_checked(embedder, texts))
            if progress is not None:
                progress(start + len(chunk), len(sources))
        blobs = [v.tobytes() for block in vectors for v in block]

        def write(conn: sqlite3.Connection) -> rows.Write:
            rows.replace_embeddings(conn, [row for row, _ in sources], blobs, fingerprint)
            return rows.Write("", 0, None)

        def after(_: rows.Write) -> None:
            self._vectors.forget_all()
            self._dimension = embedder.dimension
            self._embedder = fingerprint
            for scope in list(self._versions):  # every pool read before is stale now
                self._versions[scope] += 1
            self._epoch += 1

        await self._conns.write(write, after)
        return len(sources)

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
            return await self._replace(family_rules, scope_id, records[0])
        if vectors is not None:
            self._take_vectors(vectors, len(records))

        def work(conn: sqlite3.Connection) -> rows.Write:
            write = rows.Write(scope_id, rows.ensure_scope(conn, scope_id), family)
            placer = rows.Placer(conn, write)
            kept = [family_rules.columns_of(record) for record in records]
            # Each record's vector taken here, in the write's thread: listing 36,187 rows
            # of the array on the host's loop held it 4 ms.
            paired = itertools.repeat(None, len(records)) if vectors is None else iter(vectors)
            for columns, vector in zip(kept, paired, strict=True):
                decision = place(family, columns, placer)
                if decision.writes:
                    cited = (decision.record_id, decision.version)
                    write.added_rows.append(
                        rows.insert_version(conn, write, cited, columns, vector)
                    )
                else:
                    write.unwritten.append(len(write.refs))
                write.refs.append(_rules.ref_of(family, scope_id, decision))
            self._note_threads(write.scope_key, kept)
            return write

        return (await self._write(family_rules.write_name, work, vectors)).refs

    async def _replace(self, family_rules: FamilyRules, scope_id: str, record: Record) -> list[Ref]:
        """Replace the scope's one record of a family kept one per scope (the profile)."""
        text = family_rules.columns_of(record).text

        def work(conn: sqlite3.Connection) -> rows.Write:
            scope_key = rows.ensure_scope(conn, scope_id)
            conn.execute("INSERT OR REPLACE INTO profiles VALUES (?, ?)", (scope_key, text))
            return rows.Write(scope_id, scope_key, None)

        await self._write(family_rules.write_name, work, None)
        return []

    async def update_memory(self, ref: MemoryRef, entry: MemoryEntry, vector: Vectors) -> MemoryRef:
        self._take_vectors(vector, 1)

        def work(conn: sqlite3.Connection) -> rows.Write:
            write = rows.Write(ref.scope_id, self._known_scope(ref.scope_id), "memory")
            row, latest = rows.live_memory(conn, write.scope_key, ref)
            kept = rules("memory").columns_of(entry)
            if entry.key is None:  # a new version keeps the entry's idempotency key
                (caller_key,) = conn.execute(
                    "SELECT caller_key FROM records WHERE row = ?", (row,)
                ).fetchone()
                kept = attrs.evolve(kept, key=caller_key)
            rows.Placer(conn, write).retire(row)
            cited = (ref.entry_id, latest + 1)
            write.added_rows.append(rows.insert_version(conn, write, cited, kept, vector[0]))
            write.refs.append(MemoryRef(ref.scope_id, *cited))
            self._note_threads(write.scope_key, [kept])
            return write

        return (await self._write("update_memory", work, vector)).refs[0]  # type: ignore[no-any-return]

    async def forget_memory(self, ref: MemoryRef) -> bool:
        def work(conn: sqlite3.Connection) -> rows.Write:
            scope_key = self._known_scope(ref.scope_id)
            row, _ = rows.live_memory(conn, scope_key, ref, forgotten_ok=True)
            if row is not None:
                rows.retire(conn, "memory", row)
            removed = [] if row is None else [row]
            return rows.Write(ref.scope_id, scope_key, "memory", [], [], removed)

        written = await self._write("forget_memory", work, None)
        return bool(written.removed_rows)

    async def erase(self, family: Family, scope_id: str, record_id: str | None) -> int:
        """Erase every version of one record (see ``satchel.Store``; ``_erase`` says how
        every copy SQLite keeps is cleared)."""

        def work(conn: sqlite3.Connection) -> erasing.Erasure:
            sessions.forget(conn, erased_identities(family, scope_id, record_id))
            erasure = erasing.erase_record(conn, scope_id, family, record_id)
            if erasure.erased and erasure.scope_key is not None:
                listing.stamp(conn, erasure.scope_key)
            return erasure

        return (await self._erase("erase", work)).erased

    async def erase_scope(self, scope_id: str) -> int:
        """Erase every record of the scope, its profile included (see ``satchel.Store``)."""

        def work(conn: sqlite3.Connection) -> erasing.Erasure:
            sessions.forget(conn, erased_identities(None, scope_id, None))
            erasure = erasing.erase_scope(conn, scope_id)
            if erasure.scope_key is not None:
                listing.unstamp(conn, erasure.scope_key)
            return erasure

        return (await self._erase("erase_scope", work)).erased

    # -- sessions (``SessionStore``) --------------------------------------------------

    async def next_turn(
        self, owner: str | None, session_id: str, *, turns: int, active_since: float
    ) -> tuple[int, frozenset[str]]:
        key = session_key(owner, session_id)

        def work(conn: sqlite3.Connection) -> tuple[int, frozenset[str]]:
            return sessions.next_turn(conn, key, turns, active_since)

        return await self._read("next_turn", work, inline=True)

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
        """Record a session's turn in its own transaction, which is no record write: no
        scope's write version moves and no cache is dropped, here or in another
        process (``Connections.write(records=False)``)."""
        self._check_open()
        key = session_key(owner, session_id)

        def work(conn: sqlite3.Connection) -> int:
            return sessions.record_turn(conn, key, served, now, active_since, keep)

        try:
            with self._span("record_turn"):
                return await self._conns.write(work, records=False)
        except sqlite3.Error as exc:
            raise StoreError(f"record_turn failed: {exc}") from exc

    async def _erase(
        self, operation: str, work: Callable[[sqlite3.Connection], erasing.Erasure]
    ) -> erasing.Erasure:
        """Run an erase's transaction (``Connections.write`` with a purge), then drop
        from every cache what it erased: evidence, counts, the loaded vectors and their
        index files, the terms counted for ratings."""
        self._check_open()

        def after(erasure: erasing.Erasure) -> None:
            scope_key = erasure.scope_key
            if not erasure.erased or scope_key is None:
                return
            self._versions[erasure.scope_id] = self._versions.get(erasure.scope_id, 0) + 1
            self._epoch += 1
            self._evidence.retire(erasure.all_rows())
            for family, live in erasure.live.items():
                self._counts[(family, scope_key)] = self._counts.get((family, scope_key), 0) - live
            self._vectors.erase((family, scope_key) for family in erasure.rows)
            self._postings.erase((family, scope_key) for family in erasure.rows)
            self._term_counts.drop(erasure.scope_id)

        try:
            with self._span(operation):
                return await self._conns.write(work, after, self._reload, purge=erasing.purge)
        except sqlite3.Error as exc:
            raise StoreError(f"{operation} failed: {exc}") from exc

    # -- reads ----------------------------------------------------------------------

    async def get_memory(self, ref: MemoryRef) -> MemoryRecord:
        self._check_open()
        self._look()
        scope_key = self._scope_keys.get(ref.scope_id)
        if scope_key is None:
            raise _rules.no_version(ref)

        def work(conn: sqlite3.Connection) -> tuple[Any, ...] | bool:
            """The version's columns; else whether its entry was erased."""
            statement = (
                "SELECT text, kind, tags, created_at, thread, caller_key FROM records"
                " WHERE family = 'memory' AND scope_key = ? AND rid = ? AND revision = ?"
            )
            row: tuple[Any, ...] | None = conn.execute(
                statement, (scope_key, ref.entry_id, ref.version)
            ).fetchone()
            if row is not None:
                return row
            buried = (_rules.tombstone(ref.scope_id, ref.entry_id),)
            return bool(conn.execute("SELECT 1 FROM erased WHERE tombstone = ?", buried).fetchone())

        row = await self._read("get_memory", work, inline=True)
        if row is True:
            raise _rules.erased(ref)
        if not isinstance(row, tuple):
            raise _rules.no_version(ref)
        return _rules.memory_record(ref, *row)

    async def get_profile(self, scope_id: str) -> Evidence | None:
        self._check_open()
        self._look()
        scope_key = self._scope_keys.get(scope_id)
        if scope_key is None:
            return None

        def work(conn: sqlite3.Connection) -> str | None:
            row = conn.execute(
                "SELECT text FROM profiles WHERE scope_key = ?", (scope_key,)
            ).fetchone()
            return None if row is None else str(row[0])

        text = await self._read("get_profile", work, inline=True)
        if text is None:
            return None
        return Evidence.from_record("profile", scope_id, text=text)

    async def read_resource_bodies(self, scope_id: str, uris: Sequence[str]) -> Mapping[str, str]:
        self._check_open()
        self._look()
        scope_key = self._scope_keys.get(scope_id)
        if scope_key is None or not uris:
            return {}

        def work(conn: sqlite3.Connection) -> dict[str, str]:
            marks = ",".join("?" * len(uris))
            statement = (
                "SELECT r.rid, b.body FROM records r JOIN resource_bodies b ON b.row = r.row"
                f" WHERE r.family = 'resource' AND r.scope_key = ? AND r.live = 1"
                f" AND r.rid IN ({marks})"
            )
            return dict(conn.execute(statement, (scope_key, *uris)).fetchall())

        return await self._read("read_resource_bodies", work, inline=True)

    async def scope_counts(self) -> Mapping[str, Mapping[Family, int]]:
        """Every scope holding a searchable record or a profile, with its searchable
        records per family (a profile counts 1).

        Read from the tables in one statement, not from this store's caches: one
        snapshot of what every connection (every process) committed, even while this
        store is writing."""
        self._check_open()

        def work(conn: sqlite3.Connection) -> list[tuple[str, Family, int]]:
            return conn.execute(SCOPE_COUNTS, (sql.DOCUMENTS,)).fetchall()

        counts: dict[str, dict[Family, int]] = {}
        for scope, family, count in await self._read("scope_counts", work, inline=True):
            counts.setdefault(scope, {})[family] = int(count)
        return counts

    async def scope_writes(self) -> Mapping[str, datetime | None]:
        """Read from the tables (every process's commits), like :meth:`scope_counts`."""
        return await self._read("scope_writes", listing.scope_writes, inline=False)

    async def list_records(
        self,
        scope_id: str,
        families: Sequence[Family],
        *,
        include_forgotten: bool,
        before: int | None,
        limit: int,
    ) -> Sequence[ListedRecord]:
        """A keyset page read in a worker thread (``_listing``), from the tables."""

        def work(conn: sqlite3.Connection) -> list[ListedRecord]:
            scope_key = erasing.scope_key_of(conn, scope_id)
            if scope_key is None:
                return []
            return listing.list_records(
                conn, scope_key, families, include_forgotten=include_forgotten,
                before=before, limit=limit,
            )  # fmt: skip

        return await self._read("list_records", work, inline=False)

    async def retrieve(self, family: Family, scope_id: str, request: PoolRequest) -> Pool:
        self._check_open()
        self._look()
        version = self.scope_version(scope_id)
        scope_key = self._scope_keys.get(scope_id)
        scope_rows = 0 if scope_key is None else self._counts.get((family, scope_key), 0)
        if scope_key is None or scope_rows == 0:
            return Pool(family, scope_id, version)  # nothing to search: no I/O at all
        vector = request.vector
        epoch = self._epoch
        held_rows = scope_rows <= self._postings.most_rows
        inline = (
            scope_rows <= self._inline_rows
            and (
                vector is None
                or not rules(family).vector_channel
                or self._vectors.loaded(family, scope_key)
            )
            and (not held_rows or self._postings.ready(family, scope_key, version, scope_rows))
        )
        at = (version, epoch, scope_rows)
        # Names the scope never holds are read as it spells them, once per version.
        named = self._term_counts.at(family, scope_id, version) if request.query.names else None

        def work(conn: sqlite3.Connection) -> Pool:
            held = (
                self._held(conn, family, scope_key, at, may_read=not inline) if held_rows else None
            )
            terms = request.frequency_terms
            if held is None:
                counts = search.term_frequencies(conn, family, scope_key, terms)
            else:  # the same counts: the held postings are the FTS5 table's
                counts = held[0].frequencies(sql.term_prefix(scope_key), terms)
            asked, frequencies = request.respelled(counts)
            if named is not None and (starts := asked.name_starts(frequencies)):
                least = variant_floor(scope_rows)  # a name spelled otherwise?
                spelled = named.spellings.get((starts, least))
                if spelled is None:
                    names_held = search.terms_starting(conn, family, scope_key, starts, least)
                    spelled = named.spellings[(starts, least)] = Spellings(names_held, {})
                asked, frequencies = asked.naming_held(
                    frequencies, spelled.held, scope_rows, spelled.variants
                )
            ranking = asked.vector_for(frequencies, scope_rows)
            nearest = self._start_nearest(conn, family, scope_key, ranking, request.size)
            lexical = search.lexical_hits(
                conn, family, scope_key, asked, scope_rows, frequencies, held
            )
            found, similarities = nearest()
            timed, matched = self._time_channel(conn, family, scope_key, asked, ranking)
            return Pool(
                family,
                scope_id,
                version,
                scope_rows=scope_rows,
                lexical_keys=lexical.rows,
                lexical_scores=lexical.scores,
                lexical_matches=lexical.matches,
                vector_keys=found,
                vector_similarities=similarities,
                time_keys=timed,
                time_matched=matched,
                common_terms=lexical.common,
                held_terms=lexical.held,
                distinctive_terms=lexical.distinctive,
                unheld_names=asked.unheld_names(frequencies),
                spelled_names=asked.spelled,
            )

        if inline:
            return await self._read("retrieve", work, inline=True)
        self._vectors.threaded_searches += 1
        try:
            return await self._read("retrieve", work, inline=False)
        finally:
            self._vectors.threaded_searches -= 1

    async def neighbours(
        self, family: Family, scope_id: str, keys: Sequence[int], *, reach: int = 1
    ) -> Mapping[int, ThreadNeighbours]:
        """For each key, the searchable records up to ``reach`` places before and after
        it in its thread (ordered by ``created_at``, then insertion), nearest first,
        passing over those whose text says nothing (``vocabulary.passed_over``); a
        conversation turn without a thread (``opens_with_speaker``) is in the scope's
        conversation, its other turns without one. Keys of neither, or no longer
        searchable, are absent. Never crosses a thread, a scope or a family."""
        self._check_open()
        scope_key = self._scope_keys.get(scope_id)
        if scope_key is None or not keys or scope_key not in self._threaded:
            return {}  # no entry of the scope has a thread or is a turn: no I/O at all

        # Kept while the scope is unchanged (``_neighbour_cache``): most hits of a
        # conversation's questions are the hits of its earlier questions. Another
        # process's commit moves every scope's version, so it is looked for first.
        self._look()
        version = self._versions.get(scope_id, 0)
        found, missing = self._neighbours.split(family, scope_id, reach, version, keys)
        if not missing:
            return found

        def work(conn: sqlite3.Connection) -> dict[int, ThreadNeighbours]:
            return search.thread_neighbours(conn, family, scope_key, missing, reach)

        # A few keys take microseconds; the many of a full-text channel's thread context
        # go to a worker thread, so the host's loop never waits on them.
        inline = len(missing) <= INLINE_NEIGHBOURS
        read = await self._read("neighbours", work, inline=inline)
        if self._versions.get(scope_id, 0) == version:  # no write landed meanwhile
            self._neighbours.remember(family, scope_id, reach, version, (missing, read))
        return self._neighbours.joined(keys, found, read)

    async def evidence(
        self, family: Family, scope_id: str, keys: Sequence[int]
    ) -> Mapping[int, Evidence]:
        """Read the evidence of record versions a pool named; a key whose record was
        retired since is missing from the result (searched versions only)."""
        self._check_open()
        self._look()
        scope_key = self._scope_keys.get(scope_id)
        if scope_key is None:
            return self._evidence.split(keys, family, scope_id)[0]
        # The rated evidence served earlier at the scope's write version, as it was
        # (``TermCounts.keep``): no rebuilt ``Evidence``, no rating.
        kept = self._term_counts.at(family, scope_id, self._versions.get(scope_id, 0))
        ready = kept.served(keys)
        if len(ready) == len(keys):
            return ready
        if ready:
            keys = [key for key in keys if key not in ready]
        found, missing = self._evidence.split(keys, family, scope_id)
        # A large scope's evidence is read in a worker thread (docs/benchmarks.md).
        small = self._counts.get((family, scope_key), 0) <= self._inline_rows
        if missing:
            generation = self._evidence.generation

            def work(
                conn: sqlite3.Connection,
            ) -> tuple[dict[int, Evidence], dict[str, tuple[str, ...]]]:
                return search.fetch(conn, family, scope_key, scope_id, missing)

            inline = small and len(missing) <= 256
            fetched, said = await self._read("evidence", work, inline=inline)
            for text, terms in said.items():  # a rating finds them, and analyses nothing
                remember_terms(text, terms)
            self._evidence.remember(fetched, generation)
            found.update(fetched)
        rated = await self._rated(family, scope_key, found, kept, inline=small)
        self._term_counts.keep(family, scope_id, kept, rated)
        if ready:
            ready.update(rated)
            return ready
        return rated

    async def _rated(
        self,
        family: Family,
        scope_key: int,
        found: dict[int, Evidence],
        kept: Kept,
        *,
        inline: bool,
    ) -> dict[int, Evidence]:
        """``found`` rated with the scope's counts (``vocabulary.rarity``): those
        ``kept`` at the scope's write version, and for the rest the scope's held
        postings at that version (``_postings``: the FTS5 table's counts, no statement)
        or else one read of ``term_stats``."""
        if not found:
            return found

        async def read_counts(terms: list[str]) -> dict[str, int]:
            held = self._postings.held(family, scope_key, kept.version)
            if held is not None:
                return held.frequencies(sql.term_prefix(scope_key), terms)

            def work(conn: sqlite3.Connection) -> dict[str, int]:
                return search.term_counts(conn, family, scope_key, terms)

            kept.exact = False
            return await self._read("term counts", work, inline=inline)

        rows = self._counts.get((family, scope_key), 0)
        return await rate(found, kept, rows, read_counts, on_host_loop=True)

    async def _read(
        self, operation: str, work: Callable[[sqlite3.Connection], T], *, inline: bool
    ) -> T:
        """Run a read on the calling thread when ``inline`` and a connection is free, else
        in a worker thread; one DB span either way."""
        self._check_open()
        with self._span(operation):
            try:
                if inline:
                    async with loop_turn():
                        done, result = self._conns.read_inline(work)
                    if done:
                        return result  # type: ignore[return-value]
                return await self._conns.read(work)
            except sqlite3.Error as exc:
                raise StoreError(
                    f"{operation} could not read the database: {exc} (if the file is"
                    " damaged, restore it from a backup)"
                ) from exc

    def _look(self) -> None:
        """Look for other processes' commits (``Connections.sync``) before a read: once
        per round of searches (``stores._rounds``), at every read outside one."""
        round = current_round()
        if round is not None and round is self._looked_in:
            return
        if self._conns.sync(self._reload):
            self._looked_in = round

    def _reload(self, conn: sqlite3.Connection) -> None:
        """Follow commits of other connections (another process on the same file): its
        scopes, counts and threads are read again, and every cached vector, evidence and
        pool is dropped (each scope's write version moves), so nothing stale is served."""
        scopes, dimension, counts, threaded = rows.load_state(conn)
        self._evidence.retire_all()
        self._vectors.forget_all()
        self._term_counts.forget()
        self._scope_keys.update(scopes)
        self._counts = counts
        self._threaded = threaded
        if dimension is not None:
            self._dimension = dimension
        for scope in {*self._versions, *scopes}:
            self._versions[scope] = self._versions.get(scope, 0) + 1
        self._epoch += 1

    def _check_open(self) -> None:
        if self._closed:
            raise StoreError(_rules.CLOSED)

    def _span(self, operation: str) -> AbstractContextManager[Span]:
        attributes = {"db.system.name": "sqlite", "db.operation.name": operation}
        return self._tracer.start_as_current_span(
            f"sqlite {operation}", kind=SpanKind.CLIENT, attributes=attributes
        )

    # -- copying (``CopySource``, ``CopyTarget``; ``_copy``) ---------------------------

    async def copy_scopes(self) -> list[str]:
        return await self._read("copy_scopes", copying.copy_scopes, inline=False)

    async def count_versions(self, scope_id: str) -> Mapping[Family, int]:
        def work(conn: sqlite3.Connection) -> dict[Family, int]:
            scope_key = erasing.scope_key_of(conn, scope_id)
            return {} if scope_key is None else copying.count_versions(conn, scope_key)

        return await self._read("count_versions", work, inline=False)

    async def read_versions(
        self, scope_id: str, family: Family, *, after: int, limit: int
    ) -> list[StoredVersion]:
        self._check_open()
        self._look()  # another process's commit moves the version
        version = self.scope_version(scope_id)

        def work(conn: sqlite3.Connection) -> list[StoredVersion]:
            scope_key = erasing.scope_key_of(conn, scope_id)
            if scope_key is None:
                return []
            rows = self._copy_order.page(conn, (scope_key, family, version), after, limit)
            return copying.read_versions(conn, family, rows)

        return await self._read("read_versions", work, inline=False)

    async def read_tombstones(self) -> list[str]:
        return await self._read("read_tombstones", copying.read_tombstones, inline=False)

    async def vectors_built_by(self) -> VectorOrigin:
        return await self._read("vectors_built_by", copying.vectors_built_by, inline=False)

    async def held_versions(
        self, scope_id: str, family: Family, record_ids: Sequence[str]
    ) -> Mapping[tuple[str, int], bool]:
        def work(conn: sqlite3.Connection) -> dict[tuple[str, int], bool]:
            scope_key = erasing.scope_key_of(conn, scope_id)
            if scope_key is None:
                return {}
            return copying.held_versions(conn, scope_key, family, record_ids)

        return await self._read("held_versions", work, inline=False)

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
            self._take_vectors(vectors, len(vectors))

        written = 0

        def work(conn: sqlite3.Connection) -> rows.Write:
            nonlocal written
            write = rows.Write(scope_id, rows.ensure_scope(conn, scope_id), family)
            written = copying.write_versions(conn, write, versions, fingerprint)
            if any(
                version.live and (version.thread is not None or opens_with_speaker(version.text))
                for version in versions
            ):
                self._threaded.add(write.scope_key)
            return write

        await self._write("write_versions", work, vectors)
        return written

    async def retire_versions(
        self, scope_id: str, family: Family, versions: Sequence[tuple[str, int]]
    ) -> int:
        def work(conn: sqlite3.Connection) -> rows.Write:
            write = rows.Write(scope_id, rows.ensure_scope(conn, scope_id), family)
            copying.retire_versions(conn, write, versions)
            return write

        return len((await self._write("retire_versions", work, None)).removed_rows)

    async def keep_tombstones(self, tombstones: Sequence[str]) -> int:
        """Keep the tombstones, then erase every entry held here that one names (run
        again, a copy interrupted between the two finishes the erasures)."""
        self._check_open()
        try:
            with self._span("keep_tombstones"):
                new = await self._conns.write(
                    lambda conn: copying.keep_tombstones(conn, tombstones), None, self._reload
                )
        except sqlite3.Error as exc:
            raise StoreError(f"keep_tombstones failed: {exc}") from exc
        entries = await self._read("tombstoned", copying.tombstoned_entries, inline=False)
        for scope_id, entry_id in entries:
            await self.erase("memory", scope_id, entry_id)
        return new

    # -- internals ------------------------------------------------------------------

    async def _write(
        self, operation: str, work: Callable[[sqlite3.Connection], rows.Write], vectors: Any
    ) -> rows.Write:
        self._check_open()

        def after(written: rows.Write) -> None:
            self._scope_keys[written.scope_id] = written.scope_key
            before = self._versions.get(written.scope_id, 0)
            self._versions[written.scope_id] = before + 1
            self._epoch += 1
            if written.family is None:
                return
            versions = (before, before + 1)
            self._postings.follow(written.record_family, written.scope_key, versions, written)
            self._term_counts.follow(
                written.record_family, written.scope_id, versions, _added_terms(written)
            )
            if written.removed_rows:
                self._evidence.retire(written.removed_rows)
            count = (written.record_family, written.scope_key)
            delta = len(written.added_rows) - len(written.removed_rows)
            self._counts[count] = self._counts.get(count, 0) + delta
            self._vectors.apply(written, vectors)

        def recorded(conn: sqlite3.Connection) -> rows.Write:
            written = work(conn)
            if written.family is None or written.added_rows or written.removed_rows:
                listing.stamp(conn, written.scope_key)
            if vectors is not None and self._embedder is not None:
                rows.record_embedder(conn, self._embedder)
            return written

        try:
            with self._span(operation):
                return await self._conns.write(recorded, after, self._reload)
        except sqlite3.Error as exc:
            raise StoreError(f"write failed: {exc}") from exc

    def _start_nearest(
        self,
        conn: sqlite3.Connection,
        family: Family,
        scope_key: int,
        vector: Vectors | None,
        k: int,
    ) -> Callable[[], tuple[Any, Any]]:
        if vector is None or not rules(family).vector_channel:
            return lambda: (NO_ROWS, NO_SIMILARITIES)
        _rules.check_query_vector(vector, self._dimension)
        return self._vectors.start_nearest(conn, family, scope_key, vector, k)

    def _held(
        self,
        conn: sqlite3.Connection,
        family: Family,
        scope_key: int,
        at: tuple[int, int, int],
        *,
        may_read: bool,
    ) -> tuple[ScopePostings, Totals] | None:
        """The scope's held postings at its write version and the family's FTS5 totals
        at the store's write epoch (``at``, with the scope's rows), read first when due
        and ``may_read`` (never on the event loop's thread); None when not held
        (``_postings``)."""
        version, epoch, rows = at
        postings = self._postings.postings(
            conn, family, scope_key, (version, rows), may_read=may_read
        )
        if postings is None:
            return None
        return postings, self._postings.totals(conn, family, epoch)

    def _time_channel(
        self,
        conn: sqlite3.Connection,
        family: Family,
        scope_key: int,
        request: PoolRequest,
        vector: Vectors | None,
    ) -> tuple[Any, int]:
        """The time channel's keys and how many records the windows held, each group
        ranked by similarity to ``vector`` (``PoolRequest.vector_for``) apart from the
        scope's common direction, as the vector channel ranks."""
        size = request.time_size
        if not request.query.dates or not rules(family).time_channel or size <= 0:
            return NO_ROWS, 0
        hits = search.time_hits(conn, family, scope_key, request)
        matrix = self._vectors.loaded(family, scope_key)
        similarities = None
        if vector is not None and matrix is not None and len(hits):
            similarities = matrix.similarities(np.asarray(hits.keys), vector, apart=True)
        return hits.ranked(size, similarities), len(hits)

    def _note_threads(self, scope_key: int, kept: Sequence[Columns]) -> None:
        # Set before the commit: a failed write leaves a flag that costs one lookup.
        if any(columns.thread is not None or opens_with_speaker(columns.text) for columns in kept):
            self._threaded.add(scope_key)

    def _take_vectors(self, vectors: Vectors, count: int) -> None:
        """Refuse vectors that do not fit, before the write; the first ones fix the
        dimension at once, so a concurrent write of another dimension is refused too."""
        self._dimension = _rules.check_vectors(vectors, count, self._dimension)

    def _known_scope(self, scope_id: str) -> int:
        scope_key = self._scope_keys.get(scope_id)
        if scope_key is None:
            raise _rules.no_scope(scope_id)
        return scope_key


def _unopenable(database: str, exc: sqlite3.Error) -> str:
    return (
        f"cannot open database {database!r}: {exc}. Check that it is a satchel database,"
        " that it and its -wal and -shm files are readable and writable, and, if it is"
        " damaged, restore it from a backup"
    )


def _added_terms(written: rows.Write) -> list[str] | None:
    """The analysed terms of each record a write added, as indexed, when it took none
    out and every one's are at hand and plain (a term of other characters is split as
    the full-text index's tokenizer alone knows); else None."""
    if written.removed_rows:
        return None
    added = []
    for row in written.added_rows:
        terms = written.indexed.get(row)
        if terms is None or PLAIN_TEXT.fullmatch(terms) is None:
            return None
        added.append(terms)
    return added
