"""The per-scope vector matrix: add, remove by swap, nearest rows."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from satchel.stores.sqlite._vectors import VectorMatrix
from satchel.vocabulary import apart_from_common


def unit(rows: int, dimension: int = 8, seed: int = 0) -> npt.NDArray[np.float32]:
    vectors = np.random.default_rng(seed).normal(size=(rows, dimension)).astype(np.float32)
    normed: npt.NDArray[np.float32] = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    return normed


def test_nearest_matches_brute_force() -> None:
    """nearest returns the k best rows apart from the rows' common direction, best
    first, with their cosines."""
    vectors = unit(200)
    matrix = VectorMatrix(8, np.arange(1000, 1200, dtype=np.int64), vectors)
    query = vectors[17]
    rows, sims = matrix.nearest(query, 5)
    scores, _ = apart_from_common(vectors, query, vectors.sum(axis=0, dtype=np.float64))
    expected = np.argsort(-scores, kind="stable")[:5]
    assert rows.tolist() == (expected + 1000).tolist()
    assert np.allclose(sims, vectors[expected] @ query, atol=1e-6)
    assert rows[0] == 1017


def test_the_common_direction_follows_writes() -> None:
    """The rows' sum is kept in step with adds and removes: a matrix written to
    ranks as one loaded with the same rows."""
    vectors = unit(120, seed=3)
    written = VectorMatrix(8, np.arange(100, dtype=np.int64), vectors[:100])
    written.add(np.arange(100, 120, dtype=np.int64), vectors[100:])
    written.remove(np.array([5, 50, 119], dtype=np.int64))
    kept = [row for row in range(120) if row not in (5, 50, 119)]
    loaded = VectorMatrix(8, np.array(kept, dtype=np.int64), vectors[kept])
    assert np.allclose(written.total, loaded.total, atol=1e-5)
    for query in vectors[:10]:
        assert written.nearest(query, 10)[0].tolist() == loaded.nearest(query, 10)[0].tolist()


def test_add_grows_and_remove_swaps() -> None:
    """Rows added past capacity are searchable; removed rows never come back."""
    matrix = VectorMatrix(8, np.empty(0, dtype=np.int64), unit(0))
    vectors = unit(150, seed=1)
    matrix.add(np.arange(150, dtype=np.int64), vectors)
    matrix.remove(np.array([3, 149, 999], dtype=np.int64))
    assert len(matrix) == 148
    rows, _ = matrix.nearest(vectors[3], 150)
    assert 3 not in rows.tolist()
    assert 149 not in rows.tolist()
    assert sorted(rows.tolist()) == [r for r in range(150) if r not in (3, 149)]
    assert matrix.nearest(vectors[10], 1)[0].tolist() == [10]


def test_adding_a_known_row_is_ignored() -> None:
    """A row loaded and then re-added by a racing write is kept once."""
    vectors = unit(3)
    matrix = VectorMatrix(8, np.arange(3, dtype=np.int64), vectors)
    matrix.add(np.array([2], dtype=np.int64), vectors[2:3])
    assert len(matrix) == 3


def test_empty_matrix_returns_nothing() -> None:
    """An empty scope has no nearest rows."""
    matrix = VectorMatrix(8, np.empty(0, dtype=np.int64), unit(0))
    rows, sims = matrix.nearest(unit(1)[0], 4)
    assert rows.size == 0
    assert sims.size == 0


def test_any_sequence_of_writes_keeps_every_row_with_its_own_vector() -> None:
    """Against a plain dict of row to vector, through random adds (some rows again),
    removals (some unknown, some named twice, some of rows a removal just moved) and
    lookups: every live row's similarity is its own vector's, and no other row is
    found."""
    rng = np.random.default_rng(7)
    pool = unit(400, seed=3)
    start = np.sort(rng.choice(400, size=120, replace=False)).astype(np.int64)
    model = {int(row): pool[row] for row in start}
    matrix = VectorMatrix(8, start, pool[start])
    query = unit(1, seed=9)[0]
    for _ in range(60):
        if rng.random() < 0.5:
            rows = rng.choice(400, size=int(rng.integers(1, 12)), replace=False).astype(np.int64)
            matrix.add(rows, pool[rows])
            model.update((int(row), pool[row]) for row in rows if int(row) not in model)
        else:
            named = rng.choice(400, size=int(rng.integers(1, 12))).astype(np.int64)  # repeats
            matrix.remove(named)
            for row in named.tolist():
                model.pop(row, None)
        asked = np.arange(400, dtype=np.int64)
        expected = [float(model[r] @ query) if r in model else -1.0 for r in asked.tolist()]
        np.testing.assert_allclose(matrix.similarities(asked, query), expected, rtol=1e-6)
        assert len(matrix) == len(model)
        found, _ = matrix.nearest(query, 400)
        assert sorted(found.tolist()) == sorted(model)
