"""Per-scope vector matrices: one float32 matrix per (family, scope), one product per search.

Loaded once from the store, then kept in step with writes; never re-read per query.
Thread-safe: searches run in worker threads while writes mutate the matrix.
"""

from __future__ import annotations

import threading

import numpy as np
import numpy.typing as npt

Matrix = npt.NDArray[np.float32]
Rows = npt.NDArray[np.int64]


class VectorMatrix:
    """The live vectors of one family in one scope, keyed by store row id.

    Rows are appended into spare capacity and removed by moving the last row into the
    hole, so both are O(dimension); a search is one matrix-vector product and an
    ``argpartition`` over the scope's rows only.
    """

    def __init__(self, dimension: int, rows: Rows, vectors: Matrix) -> None:
        self._lock = threading.Lock()
        self._dimension = dimension
        self._count = count = len(rows)
        capacity = max(64, count)
        if vectors.shape == (capacity, dimension) and len(rows) == capacity:
            # Adopt a freshly loaded matrix: a million vectors must not be copied twice.
            self._matrix, self._rows = vectors, rows
        else:
            self._matrix = np.zeros((capacity, dimension), dtype=np.float32)
            self._rows = np.zeros(capacity, dtype=np.int64)
            self._matrix[:count] = vectors
            self._rows[:count] = rows
        self._slot = dict(zip(rows[:count].tolist(), range(count), strict=True))

    def __len__(self) -> int:
        return self._count

    @property
    def dimension(self) -> int:
        return self._dimension

    def add(self, rows: Rows, vectors: Matrix) -> None:
        """Append vectors for newly written rows; rows already present are skipped (a
        search may have loaded them from the database after their write committed)."""
        with self._lock:
            fresh = [i for i, row in enumerate(rows) if int(row) not in self._slot]
            rows, vectors = rows[fresh], vectors[fresh]
            self._reserve(self._count + len(rows))
            end = self._count + len(rows)
            self._matrix[self._count : end] = vectors
            self._rows[self._count : end] = rows
            for offset, row in enumerate(rows):
                self._slot[int(row)] = self._count + offset
            self._count = end

    def remove(self, rows: Rows) -> None:
        """Drop the vectors of rows that are no longer searchable; unknown rows are ignored."""
        with self._lock:
            for row in rows:
                slot = self._slot.pop(int(row), None)
                if slot is None:
                    continue
                last = self._count - 1
                if slot != last:
                    self._matrix[slot] = self._matrix[last]
                    moved = int(self._rows[last])
                    self._rows[slot] = moved
                    self._slot[moved] = slot
                self._count = last

    def nearest(self, query: Matrix, k: int) -> tuple[Rows, npt.NDArray[np.float32]]:
        """The ``k`` most similar rows, best first, with their cosine similarities.

        Stored vectors and the query are unit length, so the dot product is the cosine.
        """
        with self._lock:
            count = self._count
            if count == 0 or k <= 0:
                return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float32)
            scores = self._matrix[:count] @ query
            rows = self._rows[:count].copy()
        top = np.argpartition(-scores, k - 1)[:k] if k < count else np.arange(count)
        order = top[np.argsort(-scores[top], kind="stable")]
        return rows[order], scores[order]

    def similarities(self, rows: Rows, query: Matrix) -> npt.NDArray[np.float32]:
        """The cosine similarity of each of ``rows`` to ``query`` (-1 for a row without a
        vector here): a product over those rows only."""
        with self._lock:
            slots = np.fromiter((self._slot.get(int(row), -1) for row in rows), np.int64)
            present = slots >= 0
            scores = np.full(len(rows), -1.0, dtype=np.float32)
            scores[present] = self._matrix[slots[present]] @ query
        return scores

    def _reserve(self, needed: int) -> None:
        capacity = len(self._rows)
        if needed <= capacity:
            return
        capacity = max(needed, capacity * 2)
        matrix: Matrix = np.zeros((capacity, self._dimension), dtype=np.float32)
        matrix[: self._count] = self._matrix[: self._count]
        rows: Rows = np.zeros(capacity, dtype=np.int64)
        rows[: self._count] = self._rows[: self._count]
        self._matrix, self._rows = matrix, rows
