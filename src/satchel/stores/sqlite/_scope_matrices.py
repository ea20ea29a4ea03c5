"""The embedded store's vector side: one searchable set of vectors per (family, scope),
loaded once, kept in step with committed writes, and searched beside the full text.

A scope below ``ann_rows`` vectors (and every scope of a ``:memory:`` database) is one
exact float32 matrix (:class:`~._vectors.VectorMatrix`) read from the database. A larger
scope of a database file is searched through an HNSW index memory-mapped from a sidecar
file beside the database (:class:`~._ann.AnnMatrix`, see ``_ann``): opening it reads no
vectors. When the sidecar is missing, damaged or too far behind the database, the scope
is searched exactly while one background thread (re)builds it from the database; the
finished index replaces the exact matrix at once.

Never re-reads vectors per query. Thread-safe: searches run in worker threads while
writes apply to loaded matrices.
"""

from __future__ import annotations

import logging
import queue
import threading
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from . import _ann
from . import _search as search
from ._ann import ANN_ROWS, AnnMatrix, Stale

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Callable, Iterable, Iterator

    import numpy.typing as npt

    from ...vocabulary._families import Family
    from ._rows import Write
    from ._vectors import VectorMatrix

    Vectors = npt.NDArray[np.float32]

logger = logging.getLogger("satchel")
#: Set once a store of this process said that a scope would be indexed with usearch
#: installed: the user needs to hear it once, not once per store or per scope.
ANN_MISSING_SAID: Final = threading.Event()
_ann_saying = threading.Lock()

#: Vector products over at least this many rows run beside the full-text query, on a
#: thread of their own. Below it the two channels share the search's worker thread: two
#: busy threads beside the event loop's on two cores kept the host's loop waiting (a
#: heartbeat's lag p99 at 100k records: 4.5 ms with the extra thread, 2.7 ms without,
#: for a prepare p50 of 18 against 22 ms).
PARALLEL_VECTOR_ROWS: Final = 250_000
NO_ROWS: Final = np.empty(0, dtype=np.int64)
NO_SIMILARITIES: Final = np.empty(0, dtype=np.float32)
MEMORY: Final = ":memory:"


class ScopeMatrices:
    """Every loaded (family, scope) vector set of one store, the thread that runs a lone
    search's product beside its full-text query, and the thread that builds indexes."""

    def __init__(self, database: str | None = None) -> None:
        self._matrices: dict[tuple[Family, int], VectorMatrix | AnnMatrix] = {}
        # Serialises loading a scope's vectors with applying committed writes to loaded
        # ones, so vectors loaded from a snapshot never miss a write. Searches read
        # ``_matrices`` without it.
        self._load_lock = threading.Lock()
        self._threads = ThreadPoolExecutor(2, thread_name_prefix="satchel-vectors")
        #: A lone search over at least this many rows overlaps its two channels.
        self.parallel_rows = PARALLEL_VECTOR_ROWS
        #: Searches now in worker threads (only the event loop changes it).
        self.threaded_searches = 0
        #: A scope's family of at least this many vectors gets an index (file stores).
        self.ann_rows = ANN_ROWS
        #: Threads one index build uses: one, so the host keeps the other cores.
        self.build_threads = 1
        #: Indexes this store built, and sidecars it mapped (for tests and benchmarks).
        self.builds = 0
        self.mapped = 0
        self._database: str | None = None
        #: usearch is not installed: no index is built or read (said once, when a scope
        #: is large enough for one).
        self.ann_missing = False
        self._pending: set[tuple[Family, int]] = set()
        self._failed: set[tuple[Family, int]] = set()
        # The build running now, and those an erase is stopping (see :meth:`erase`).
        self._building: tuple[Family, int] | None = None
        self._cancelled: set[tuple[Family, int]] = set()
        self._build_done = threading.Condition(self._load_lock)
        self._queue: queue.SimpleQueue[tuple[Family, int, int] | None] = queue.SimpleQueue()
        self._builder: threading.Thread | None = None
        self._idle = threading.Event()
        self._idle.set()
        self._closed = False
        # Connections for reading an index's candidate vectors, one per concurrent
        # read: the search's own may be running its full-text query at that moment.
        self._idle_readers: queue.SimpleQueue[sqlite3.Connection] = queue.SimpleQueue()
        self._readers: list[sqlite3.Connection] = []
        self._readers_lock = threading.Lock()
        if database is not None:
            self.persist_beside(database)

    def persist_beside(self, database: str) -> None:
        """Keep the indexes of large scopes in files beside ``database`` (a path; a
        ``:memory:`` database never gets one). Imports usearch: call it in a worker
        thread, as the store's open does. Without usearch (the ``satchel[ann]`` extra)
        every scope is searched exactly, and a scope large enough for an index says
        so once (:meth:`_consider_index`)."""
        if database == MEMORY:
            return
        if not _ann.usearch_installed():
            self.ann_missing = True
            return
        _ann.import_usearch()
        self._database = database

    def loaded(self, family: Family, scope_key: int) -> VectorMatrix | AnnMatrix | None:
        """The scope's vectors if a search has loaded them."""
        return self._matrices.get((family, scope_key))

    def apply(self, written: Write, vectors: Any) -> None:
        """Follow a committed write in loaded vectors (unloaded ones read it later)."""
        with self._load_lock:
            matrix = self._matrices.get((written.record_family, written.scope_key))
            if matrix is None:
                return
            matrix.remove(np.asarray(written.removed_rows, dtype=np.int64))
            if vectors is not None and written.added_rows:
                added = np.delete(vectors, written.unwritten, axis=0)  # an unchanged record's
                matrix.add(np.asarray(written.added_rows, dtype=np.int64), added)
            self._consider_index(written.record_family, written.scope_key, matrix)

    def erase(self, jobs: Iterable[tuple[Family, int]]) -> None:
        """Forget the vectors of (family, scope) pairs records were erased from: each
        loaded set is dropped (read again from the database when next searched) and its
        index files are deleted, once a build of it that is running has stopped (it
        sees the erase, stops at its next batch and keeps nothing)."""
        erased = set(jobs)
        with self._load_lock:
            self._cancelled |= erased
            while self._building in erased:
                self._build_done.wait()
            self._cancelled -= erased
            for job in erased:  # after the wait: a build may have installed its index
                self._matrices.pop(job, None)
                self._failed.discard(job)
        if self._database is not None:
            for family, scope_key in erased:
                _ann.remove_sidecar(self._database, family, scope_key)

    def forget_all(self) -> None:
        """Drop every loaded matrix (the vectors were rebuilt): each reloads when searched."""
        with self._load_lock:
            self._matrices.clear()

    def start_nearest(
        self, conn: sqlite3.Connection, family: Family, scope_key: int, vector: Vectors, k: int
    ) -> Callable[[], tuple[Any, Any]]:
        """Begin the vector search; the returned callable yields its rows and similarities.

        When this is the only search in a worker thread, a product over a large matrix
        runs on the vector thread while the caller runs the full-text query: both
        release the GIL, so the two channels overlap on two cores instead of queueing.
        """
        matrix = self._load(conn, family, scope_key, len(vector))
        # With other searches in worker threads the cores are busy already: a product on
        # the vector thread would only oversubscribe them (measured: 2 scopes took 21 ms
        # with it, 17 ms without).
        if len(matrix) < self.parallel_rows or self.threaded_searches > 1:
            found = matrix.nearest(vector, k)
            return lambda: found
        return self._threads.submit(matrix.nearest, vector, k).result

    def wait_for_builds(self, timeout: float | None = None) -> bool:
        """Block until no index build is queued or running; False on timeout."""
        return self._idle.wait(timeout)

    def close(self) -> None:
        """Stop searching; a running build stops at its next batch, unsaved."""
        self._closed = True  # not under the load lock: an install may hold it a while
        self._queue.put(None)
        self._threads.shutdown(wait=True)
        with self._readers_lock:
            for conn in self._readers:
                conn.close()
            self._readers.clear()

    def _load(
        self, conn: sqlite3.Connection, family: Family, scope_key: int, dimension: int
    ) -> VectorMatrix | AnnMatrix:
        matrix = self._matrices.get((family, scope_key))
        if matrix is None:
            with self._load_lock:
                matrix = self._matrices.get((family, scope_key))
                if matrix is None:
                    matrix = self._read(conn, family, scope_key, dimension)
                    self._matrices[(family, scope_key)] = matrix
        return matrix

    def _read(
        self, conn: sqlite3.Connection, family: Family, scope_key: int, dimension: int
    ) -> VectorMatrix | AnnMatrix:
        """The scope's mapped index if its sidecar serves, else its exact matrix (and an
        index build queued when the scope is large)."""
        if self._database is not None and _ann.sidecar_exists(self._database, family, scope_key):
            try:
                found = _ann.open_sidecar(
                    conn, self._database, family, scope_key, dimension, self.ann_rows, self._reader
                )
            except Stale as why:
                logger.info("vector index of %s scope %d not used: %s", family, scope_key, why)
            except Exception:  # a broken cache never fails a search: it goes exact
                logger.warning(
                    "vector index of %s scope %d unreadable", family, scope_key, exc_info=True
                )
            else:
                self.mapped += 1
                self._consider_index(family, scope_key, found)
                return found
        matrix = search.load_matrix(conn, family, scope_key, dimension)
        self._consider_index(family, scope_key, matrix)
        return matrix

    def _consider_index(
        self, family: Family, scope_key: int, matrix: VectorMatrix | AnnMatrix
    ) -> None:
        """Queue an index build for a large exact matrix or a stale index (once at a time,
        never again after a failure). Holds ``_load_lock``."""
        large = len(matrix) >= self.ann_rows
        if self.ann_missing and large:
            _say_ann_missing(family, scope_key, len(matrix))
        if self._database is None or self._closed:
            return
        wanted = matrix.stale() if isinstance(matrix, AnnMatrix) else large
        job = (family, scope_key)
        if not wanted or job in self._pending or job in self._failed:
            return
        self._pending.add(job)
        self._idle.clear()
        self._queue.put((family, scope_key, matrix.dimension))
        if self._builder is None:
            self._builder = threading.Thread(
                target=self._build_loop, name="satchel-vector-index", daemon=True
            )
            self._builder.start()

    @contextmanager
    def _reader(self) -> Iterator[sqlite3.Connection]:
        """A connection for reading candidate vectors, for the time of one read."""
        try:
            conn = self._idle_readers.get_nowait()
        except queue.Empty:
            assert self._database is not None
            conn = _ann.connect(self._database)
            with self._readers_lock:
                self._readers.append(conn)
        try:
            yield conn
        finally:
            self._idle_readers.put(conn)

    def _build_loop(self) -> None:
        """The builder thread: one index at a time, until the store closes."""
        while (job := self._queue.get()) is not None:
            family, scope_key, dimension = job
            with self._load_lock:
                self._building = (family, scope_key)
            try:
                self._build(family, scope_key, dimension)
            except Exception:  # never kills the thread: the scope stays exact
                logger.exception(
                    "building the vector index of %s scope %d failed", family, scope_key
                )
                self._failed.add((family, scope_key))
            finally:
                with self._load_lock:
                    self._building = None
                    self._build_done.notify_all()
                    self._pending.discard((family, scope_key))
                    if not self._pending:
                        self._idle.set()
        self._idle.set()

    def _build(self, family: Family, scope_key: int, dimension: int) -> None:
        assert self._database is not None
        built = _ann.build_sidecar(
            self._database,
            family,
            scope_key,
            dimension,
            threads=self.build_threads,
            cancelled=lambda: self._closed or (family, scope_key) in self._cancelled,
        )
        if built is None:
            return
        self.builds += 1
        conn = _ann.connect(self._database)
        try:
            with self._load_lock:
                if self._closed or (family, scope_key) not in self._matrices:
                    return  # not loaded now (or erased from): the next search maps it
                try:
                    found = _ann.open_sidecar(
                        conn, self._database, family, scope_key, dimension, 0, self._reader
                    )
                except Stale as why:
                    logger.warning(
                        "vector index of %s scope %d unusable: %s", family, scope_key, why
                    )
                    self._failed.add((family, scope_key))
                    return
                self.mapped += 1
                self._matrices[(family, scope_key)] = found
        finally:
            conn.close()


def _say_ann_missing(family: Family, scope_key: int, rows: int) -> None:
    """Warn, once per process, that a scope is searched exactly for want of usearch."""
    with _ann_saying:
        if ANN_MISSING_SAID.is_set():
            return
        ANN_MISSING_SAID.set()
    logger.warning(
        "%s scope %d holds %d vectors, enough for a vector index, but usearch is not"
        " installed: it is searched exactly (slower); pip install 'satchel[ann]' for the"
        " index (said once per process)",
        family, scope_key, rows,
    )  # fmt: skip
