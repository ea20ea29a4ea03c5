"""Per-scope vector matrices: one float32 matrix per (family, scope), one product per search.

Loaded once from the store, then kept in step with writes; never re-read per query.
Thread-safe: searches run in worker threads while writes mutate the matrix.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Final

import numpy as np
import numpy.typing as npt

from ...vocabulary._errors import StoreError
from ...vocabulary._retrieval import CommonDirection, apart_from_common

if TYPE_CHECKING:
    from collections.abc import Sequence

Matrix = npt.NDArray[np.float32]
Rows = npt.NDArray[np.int64]


class VectorMatrix:
    """The live vectors of one family in one scope, keyed by store row id.

    Rows are appended into spare capacity and removed by moving the last row into the
    hole, so both are O(dimension), and the rows' sum is kept in step; a search is one
    matrix-vector product ranked apart from the rows' common direction (their
    ``CommonDirection``, made again by the first search after a write) and an
    ``argpartition`` over the scope's rows only.

    A row's slot is found through a sorted copy of the rows (``searchsorted``), not a
    dict: a dict of 100k rows took 13 ms to build and its last resize 3 ms, holding the
    GIL throughout, where numpy sorts without it. Rows load in order, so a loaded
    matrix needs no sort; a write invalidates the copy, and the next lookup sorts again.
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
        #: The sum of the live vectors: the scope's common direction
        #: (:func:`~...vocabulary._retrieval.apart_from_common`), kept in step with writes.
        self._total = self._matrix[:count].sum(axis=0, dtype=np.float64)
        #: The rows' :class:`CommonDirection`, made at the first search after a write.
        self._common: CommonDirection | None = None
        #: The live rows sorted, and each one's slot; None until a lookup needs them, and
        #: again after any write (so a view of the rows themselves may serve as the first).
        self._index: tuple[Rows, Rows] | None = None

    def __len__(self) -> int:
        return self._count

    @property
    def dimension(self) -> int:
        return self._dimension

    @property
    def total(self) -> npt.NDArray[np.float64]:
        """The sum of the live vectors (a copy)."""
        with self._lock:
            total: npt.NDArray[np.float64] = self._total.copy()
        return total

    def add(self, rows: Rows, vectors: Matrix) -> None:
        """Append vectors for newly written rows; rows already present are skipped (a
        search may have loaded them from the database after their write committed)."""
        with self._lock:
            fresh = self._slots(rows) < 0
            rows, vectors = rows[fresh], vectors[fresh]
            if not len(rows):
                return
            self._reserve(self._count + len(rows))
            end = self._count + len(rows)
            self._matrix[self._count : end] = vectors
            self._rows[self._count : end] = rows
            self._total += vectors.sum(axis=0, dtype=np.float64)
            self._count = end
            self._index = self._common = None

    def remove(self, rows: Rows) -> None:
        """Drop the vectors of rows that are no longer searchable; unknown rows are ignored."""
        with self._lock:
            moved: dict[int, int] = {}  # rows this removal moved, and their new slots
            for row, found in zip(rows.tolist(), self._slots(rows).tolist(), strict=True):
                slot = moved.pop(row, found)
                if slot < 0 or slot >= self._count or int(self._rows[slot]) != row:
                    continue  # unknown, or named twice
                last = self._count - 1
                self._total -= self._matrix[slot]
                if slot != last:
                    self._matrix[slot] = self._matrix[last]
                    tail = int(self._rows[last])
                    self._rows[slot] = tail
                    moved[tail] = slot
                self._count = last
                self._index = self._common = None

    def _slots(self, rows: Rows) -> Rows:
        """Each row's slot, or -1 where the row has no vector here (lock held)."""
        count = self._count
        if count == 0 or not len(rows):
            return np.full(len(rows), -1, dtype=np.int64)
        if self._index is None:
            live = self._rows[:count]
            if bool(np.all(live[1:] > live[:-1])):  # as loaded: already in order
                self._index = (live, np.arange(count, dtype=np.int64))
            else:
                order = np.argsort(live, kind="stable")
                self._index = (live[order], order)
        ordered, slots = self._index
        at = np.minimum(np.searchsorted(ordered, rows), count - 1)
        return np.where(ordered[at] == rows, slots[at], -1)

    def nearest(self, query: Matrix, k: int) -> tuple[Rows, npt.NDArray[np.float32]]:
        """The ``k`` most similar rows, best first apart from these rows' common
        direction (``apart_from_common``), with their cosine similarities to ``query``."""
        rows, _, cosines = self.ranked(query, k)
        return rows, cosines

    def ranked(
        self, query: Matrix, k: int, total: npt.NDArray[np.float64] | None = None
    ) -> tuple[Rows, npt.NDArray[np.float32], npt.NDArray[np.float32]]:
        """:meth:`nearest`'s rows, their scores and their cosines, apart from the
        common direction of ``total`` (by default these rows' own sum)."""
        empty = np.empty(0, dtype=np.float32)
        with self._lock:
            count = self._count
            if count == 0 or k <= 0:
                return np.empty(0, dtype=np.int64), empty, empty
            matrix = self._matrix[:count]
            if total is not None:
                scores, cosines = apart_from_common(matrix, query, total)
            else:
                common = self._common_direction()
                if common is None:
                    scores = cosines = matrix @ query
                else:
                    scores, cosines = common.rank(matrix, query)
            rows = self._rows[:count].copy()
        top = np.argpartition(-scores, k - 1)[:k] if k < count else np.arange(count)
        order = top[np.argsort(-scores[top], kind="stable")]
        return rows[order], scores[order], cosines[order]

    def similarities(
        self,
        rows: Rows,
        query: Matrix,
        *,
        apart: bool = False,
        total: npt.NDArray[np.float64] | None = None,
    ) -> npt.NDArray[np.float32]:
        """The cosine similarity of each of ``rows`` to ``query`` (-1 for a row without a
        vector here): a product over those rows only. With ``apart``, each row's score
        apart from the common direction (of ``total``, by default these rows' own sum),
        as :meth:`nearest` ranks: how the time channel orders a window's records."""
        with self._lock:
            slots = self._slots(np.asarray(rows, dtype=np.int64))
            present = slots >= 0
            scores = np.full(len(rows), -1.0, dtype=np.float32)
            matrix, picked = self._matrix[: self._count], slots[present]
            common = self._common_direction() if apart and total is None else None
            if apart and total is not None:
                scores[present] = apart_from_common(matrix[picked], query, total)[0]
            elif common is not None:
                scores[present] = common.scores_of(matrix, query, picked)
            else:
                scores[present] = matrix[picked] @ query
        return scores

    def _common_direction(self) -> CommonDirection | None:
        """The rows' :class:`CommonDirection`, made at the first search after a write
        (lock held)."""
        if self._common is None:
            self._common = CommonDirection.of(self._matrix[: self._count], self._total)
        return self._common

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


#: How a stored vector may miss unit length (float32 rounding, with room to spare).
UNIT_SLACK: Final = 1e-2


def from_blobs(found: Sequence[tuple[int, bytes]], dimension: int) -> tuple[Rows, Matrix]:
    """Rows and their vectors from ``(row, embedding BLOB)`` pairs, in their order.

    Raises:
        StoreError: a stored vector is not ``dimension`` float32 values, finite and of
            unit length (or zero): written by an embedder whose output went unchecked.
            It names the row and how to rebuild every vector.
    """
    rows = np.fromiter((row for row, _ in found), np.int64, len(found))
    blob = b"".join(embedding for _, embedding in found)
    width = 4 * dimension
    if len(blob) != width * len(found):
        row = next(row for row, embedding in found if len(embedding) != width)
        raise _unreadable(row, f"it is not {dimension} float32 values")
    matrix = np.frombuffer(blob, dtype=np.float32).reshape(len(found), dimension)
    squares = np.einsum("ij,ij->i", matrix, matrix)  # float32: no copy of the chunk
    bad = ~np.isfinite(squares) | ((np.abs(squares - 1.0) > UNIT_SLACK) & (squares != 0.0))
    if bad.any():
        raise _unreadable(int(rows[np.argmax(bad)]), "it is not finite and of unit length")
    return rows, matrix


def _unreadable(row: int, fault: str) -> StoreError:
    return StoreError(
        f"the stored vector of record row {row} cannot be searched ({fault}): rebuild this"
        " database's vectors with 'satchel reembed --db PATH --embedder SPEC'"
    )
