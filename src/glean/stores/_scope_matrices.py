"""The embedded store's vector side: one matrix per (family, scope), loaded once from
the database, kept in step with committed writes, and searched beside the full text.

Never re-reads vectors per query. Thread-safe: searches run in worker threads while
writes apply to loaded matrices.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from . import _sqlite_search as search

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Callable

    import numpy.typing as npt

    from ..vocabulary._families import Family
    from ._sqlite_rows import Written
    from ._vectors import VectorMatrix

    Vectors = npt.NDArray[np.float32]

#: Vector products over at least this many rows run beside the full-text query, on a
#: thread of their own. Below it the two channels share the search's worker thread: two
#: busy threads beside the event loop's on two cores kept the host's loop waiting (a
#: heartbeat's lag p99 at 100k records: 4.5 ms with the extra thread, 2.7 ms without,
#: for a prepare p50 of 18 against 22 ms).
PARALLEL_VECTOR_ROWS: Final = 250_000
NO_ROWS: Final = np.empty(0, dtype=np.int64)
NO_SIMILARITIES: Final = np.empty(0, dtype=np.float32)


class ScopeMatrices:
    """Every loaded (family, scope) matrix of one store, and the thread that runs a
    lone search's product beside its full-text query."""

    def __init__(self) -> None:
        self._matrices: dict[tuple[Family, int], VectorMatrix] = {}
        # Serialises loading a scope's matrix with applying committed writes to loaded
        # ones, so a matrix loaded from a snapshot never misses a write. Searches read
        # ``_matrices`` without it.
        self._load_lock = threading.Lock()
        self._threads = ThreadPoolExecutor(2, thread_name_prefix="glean-vectors")
        #: A lone search over at least this many rows overlaps its two channels.
        self.parallel_rows = PARALLEL_VECTOR_ROWS
        #: Searches now in worker threads (only the event loop changes it).
        self.threaded_searches = 0

    def loaded(self, family: Family, key: int) -> VectorMatrix | None:
        """The scope's matrix if a search has loaded it."""
        return self._matrices.get((family, key))

    def apply(self, written: Written, vectors: Any) -> None:
        """Follow a committed write in a loaded matrix (an unloaded one reads it later)."""
        with self._load_lock:
            matrix = self._matrices.get((written.family, written.scope_key))
            if matrix is None:
                return
            matrix.remove(np.asarray(written.removed_rows, dtype=np.int64))
            if vectors is not None and written.added_rows:
                matrix.add(np.asarray(written.added_rows, dtype=np.int64), vectors)

    def forget_all(self) -> None:
        """Drop every loaded matrix (the vectors were rebuilt): each reloads when searched."""
        with self._load_lock:
            self._matrices.clear()

    def start_nearest(
        self, conn: sqlite3.Connection, family: Family, key: int, vector: Vectors, k: int
    ) -> Callable[[], tuple[Any, Any]]:
        """Begin the vector search; the returned callable yields its rows and similarities.

        When this is the only search in a worker thread, a product over a large matrix
        runs on the vector thread while the caller runs the full-text query: both
        release the GIL, so the two channels overlap on two cores instead of queueing.
        """
        matrix = self._load(conn, family, key, len(vector))
        # With other searches in worker threads the cores are busy already: a product on
        # the vector thread would only oversubscribe them (measured: 2 scopes took 21 ms
        # with it, 17 ms without).
        if len(matrix) < self.parallel_rows or self.threaded_searches > 1:
            found = matrix.nearest(vector, k)
            return lambda: found
        return self._threads.submit(matrix.nearest, vector, k).result

    def close(self) -> None:
        self._threads.shutdown(wait=True)

    def _load(self, conn: sqlite3.Connection, family: Family, key: int, dimension: int) -> Any:
        matrix = self._matrices.get((family, key))
        if matrix is None:
            with self._load_lock:
                matrix = self._matrices.get((family, key))
                if matrix is None:
                    matrix = search.load_matrix(conn, family, key, dimension)
                    self._matrices[(family, key)] = matrix
        return matrix
