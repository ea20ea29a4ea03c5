"""SqliteStore's vector index for large scopes: it agrees with exact search, is saved
beside the database and mapped on reopen, follows writes and forgets, survives damage,
and never exists for ``:memory:``."""

from __future__ import annotations

import os
import shutil
import sqlite3
from typing import TYPE_CHECKING, NamedTuple

import anyio.to_thread
import numpy as np
import numpy.typing as npt
import pytest

import satchel
from satchel.stores import PoolRequest, SqliteStore
from satchel.stores.sqlite._ann import AnnMatrix, sidecar_folder
from satchel.stores.sqlite._vectors import VectorMatrix
from satchel.stores.testing import memories
from satchel.vocabulary import apart_from_common
from satchel.vocabulary._analysis import analyse_query

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.anyio

Vectors = npt.NDArray[np.float32]

ROWS = 3000
DIMENSION = 32
THRESHOLD = 1000


def unit(vectors: npt.NDArray[np.floating]) -> Vectors:
    normed: Vectors = (vectors / np.linalg.norm(vectors, axis=-1, keepdims=True)).astype(np.float32)
    return normed


def corpus(seed: int = 0) -> Vectors:
    """Seeded random unit vectors around a shared component (as a static embedder's
    are), every tenth one a near-duplicate of the one before it."""
    rng = np.random.default_rng(seed)
    vectors = rng.normal(size=(ROWS, DIMENSION)) + 1.5 * rng.normal(size=DIMENSION)
    vectors[1::10] = vectors[0::10] + 0.05 * rng.normal(size=(ROWS // 10, DIMENSION))
    return unit(vectors)


def near(vector: Vectors, seed: int) -> Vectors:
    noise = np.random.default_rng(seed).normal(size=vector.shape)
    return unit(vector + 0.2 * noise / np.sqrt(DIMENSION))


async def open_store(path: Path) -> SqliteStore:
    store = await SqliteStore.open(str(path))
    store._vectors.ann_rows = THRESHOLD
    return store


class Template(NamedTuple):
    """A store file holding :func:`corpus` in scope ``s``, and the refs of its entries."""

    path: Path
    refs: list[satchel.MemoryRef]


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Template:
    """The corpus written once into a store file, for every test to copy: writing it
    (3,000 entries, analysed and indexed for full text) was most of each test's work."""
    path = tmp_path_factory.mktemp("ann") / "template.db"

    async def fill() -> list[satchel.MemoryRef]:
        store = await open_store(path)
        vectors = corpus()
        entries = [satchel.MemoryEntry(text=f"note {n}") for n in range(ROWS)]
        refs: list[satchel.MemoryRef] = []
        for start in range(0, ROWS, 1000):
            chunk = slice(start, start + 1000)
            refs += await memories(store, "s", entries[chunk], vectors[chunk])
        await store.aclose()
        return refs

    return Template(path, anyio.run(fill))


async def filled(path: Path, template: Template) -> tuple[SqliteStore, list[satchel.MemoryRef]]:
    """A store at ``path`` holding the corpus (a copy of the template's files)."""
    for file in template.path.parent.glob(f"{template.path.name}*"):
        suffix = file.name.removeprefix(template.path.name)
        shutil.copyfile(file, path.with_name(path.name + suffix))
    return await open_store(path), list(template.refs)


async def search(store: SqliteStore, vector: Vectors, k: int = 10) -> tuple[list[int], Vectors]:
    pool = await store.retrieve("memory", "s", PoolRequest(analyse_query("zzz"), vector, k))
    return pool.vector_keys.tolist(), pool.vector_similarities


async def built(store: SqliteStore) -> None:
    assert await anyio.to_thread.run_sync(store._vectors.wait_for_builds, 60)


def loaded(store: SqliteStore) -> VectorMatrix | AnnMatrix | None:
    key = store._scope_keys["s"]
    return store._vectors.loaded("memory", key)


async def indexed(path: Path, template: Template) -> tuple[SqliteStore, list[satchel.MemoryRef]]:
    """A store whose scope was searched once (exactly) and then got its index."""
    store, refs = await filled(path, template)
    await search(store, corpus()[0])
    assert isinstance(loaded(store), VectorMatrix)
    await built(store)
    assert store._vectors.builds == 1
    assert isinstance(loaded(store), AnnMatrix)
    return store, refs


def exact(vectors: Vectors, rows: list[int], query: Vectors, k: int) -> list[int]:
    """The exact top ``k``, ranked as the vector channel ranks: apart from the
    vectors' common direction."""
    scores, _ = apart_from_common(vectors, query, vectors.sum(axis=0, dtype=np.float64))
    order = np.argsort(-scores, kind="stable")[:k]
    return [rows[i] for i in order]


def rows_of(refs: list[satchel.MemoryRef], store: SqliteStore) -> list[int]:
    """The store rows of the refs, in order (rows are assigned in insertion order)."""
    conn = sqlite3.connect(store._conns._database)
    found = [row for (row,) in conn.execute("SELECT row FROM records ORDER BY row")]
    conn.close()
    assert len(found) == len(refs)
    return found


async def test_the_index_agrees_with_exact_search(tmp_path: Path, template: Template) -> None:
    """Top 10 through the index, searched shallowly (64 nodes explored, 50 candidates
    re-ranked): at least 95% of the exact top 10, with exact similarities, best first
    apart from the scope's common direction."""
    vectors = corpus()
    store, refs = await indexed(tmp_path / "g.db", template)
    rows = rows_of(refs, store)
    matrix = loaded(store)
    assert isinstance(matrix, AnnMatrix)
    matrix.candidates = 50
    matrix._index.expansion_search = 64
    hits = 0
    queries = 100
    for n in range(queries):
        query = near(vectors[(n * 29) % ROWS], seed=n)
        found, similarities = await search(store, query)
        expected = exact(vectors, rows, query, 10)
        hits += len(set(found) & set(expected))
        position = {row: i for i, row in enumerate(rows)}
        truth = vectors[[position[row] for row in found]] @ query
        assert np.abs(similarities - truth).max() < 1e-6
        total = vectors.sum(axis=0, dtype=np.float64)
        ranked, _ = apart_from_common(vectors[[position[row] for row in found]], query, total)
        assert np.all(np.diff(ranked) <= 1e-5), ranked  # best first
    assert hits / (10 * queries) >= 0.95
    await store.aclose()


async def test_the_sidecar_is_mapped_on_reopen(tmp_path: Path, template: Template) -> None:
    """The index is saved beside the database; a reopened store maps it, no rebuild,
    and the first search gives the same results."""
    vectors = corpus()
    path = tmp_path / "g.db"
    store, _ = await indexed(path, template)
    query = near(vectors[5], seed=1)
    before = await search(store, query)
    await store.aclose()
    folder = sidecar_folder(str(path))
    assert sorted(p.suffix for p in folder.iterdir()) == [".json", ".npy", ".usearch"]

    store = await open_store(path)
    after = await search(store, query)
    await built(store)
    assert (store._vectors.mapped, store._vectors.builds) == (1, 0)
    assert isinstance(loaded(store), AnnMatrix)
    assert after[0] == before[0]
    await store.aclose()


async def test_writes_and_forgets_follow_the_index(tmp_path: Path, template: Template) -> None:
    """A vector written after the build is found at once; a forgotten entry never comes
    back, before and after reopening (twice: the second reopen knows it already)."""
    vectors = corpus()
    path = tmp_path / "g.db"
    store, refs = await indexed(path, template)
    rows = rows_of(refs, store)
    target = near(vectors[42], seed=7)
    (written,) = await memories(store, "s", [satchel.MemoryEntry(text="late")], target[None])
    forgotten = rows[42]
    await store.forget_memory(refs[42])
    found, similarities = await search(store, target)
    new_row = found[0]
    assert new_row not in rows
    assert similarities[0] == pytest.approx(1.0, abs=1e-5)
    assert forgotten not in found

    for _ in range(2):
        await store.aclose()
        store = await open_store(path)
        again, _ = await search(store, target)
        assert again[0] == new_row
        assert forgotten not in again
        assert forgotten not in (await search(store, vectors[42], k=50))[0]
        matrix = loaded(store)
        assert isinstance(matrix, AnnMatrix)
        assert matrix.meta["removed"] == [forgotten]  # recorded for the next open
        assert store._vectors.builds == 0
    assert written.entry_id
    await store.aclose()


async def test_similarities_of_named_rows(tmp_path: Path, template: Template) -> None:
    """The time channel's similarities of named rows: exact for indexed rows and the
    delta's, -1 for a row forgotten since."""
    vectors = corpus()
    store, refs = await indexed(tmp_path / "g.db", template)
    rows = rows_of(refs, store)
    extra = near(vectors[1], seed=3)
    await memories(store, "s", [satchel.MemoryEntry(text="late")], extra[None])
    await store.forget_memory(refs[3])
    matrix = loaded(store)
    assert isinstance(matrix, AnnMatrix)
    query = near(vectors[2], seed=4)
    new_row = max(rows) + 1
    keys = np.asarray([rows[0], rows[3], new_row, rows[2]], dtype=np.int64)
    found = matrix.similarities(keys, query)
    expected = [vectors[0] @ query, -1.0, extra @ query, vectors[2] @ query]
    assert found == pytest.approx(expected, abs=1e-6)
    await store.aclose()


async def test_a_damaged_sidecar_is_ignored_and_rebuilt(tmp_path: Path, template: Template) -> None:
    """A truncated index file is never mapped: the scope is searched exactly at once
    and the index rebuilt; results stay correct throughout."""
    vectors = corpus()
    path = tmp_path / "g.db"
    store, refs = await indexed(path, template)
    rows = rows_of(refs, store)
    await store.aclose()
    (index_file,) = sidecar_folder(str(path)).glob("*.usearch")
    os.truncate(index_file, index_file.stat().st_size // 2)

    store = await open_store(path)
    query = near(vectors[9], seed=9)
    found, _ = await search(store, query)
    assert isinstance(loaded(store), VectorMatrix)
    assert found == exact(vectors, rows, query, 10)
    await built(store)
    assert (store._vectors.builds, store._vectors.mapped) == (1, 1)
    assert isinstance(loaded(store), AnnMatrix)
    assert (await search(store, query))[0][:3] == found[:3]
    assert not index_file.exists()  # the damaged file was replaced
    await store.aclose()


async def test_changed_vectors_are_not_served_from_the_index(
    tmp_path: Path, template: Template
) -> None:
    """Vectors replaced under the same row ids (another database at the same path, a
    re-embedding) fail the sample check: the scope is searched exactly."""
    path = tmp_path / "g.db"
    store, refs = await indexed(path, template)
    rows = rows_of(refs, store)
    await store.aclose()
    other = corpus(seed=1)
    conn = sqlite3.connect(path)
    conn.executemany(
        "UPDATE records SET embedding = ? WHERE row = ?",
        [(v.tobytes(), row) for v, row in zip(other, rows, strict=True)],
    )
    conn.commit()
    conn.close()

    store = await open_store(path)
    query = near(other[11], seed=11)
    found, _ = await search(store, query)
    assert isinstance(loaded(store), VectorMatrix)
    assert found == exact(other, rows, query, 10)
    await built(store)
    await store.aclose()


async def test_a_re_embedded_store_is_not_served_from_the_old_index(
    tmp_path: Path, template: Template
) -> None:
    """After ``reembed`` with another embedder the old index is never used again: the
    scope is searched exactly, and a new index is built from the new vectors."""
    store, refs = await indexed(tmp_path / "g.db", template)
    rows = rows_of(refs, store)
    embedder = satchel.HashingEmbedder(dimension=DIMENSION)
    assert await store.reembed(embedder) == ROWS
    new = await embedder.embed([f"note {n}" for n in range(ROWS)])
    query = near(new[5], seed=5)
    found, _ = await search(store, query)
    assert isinstance(loaded(store), VectorMatrix)
    assert found == exact(new, rows, query, 10)
    await built(store)
    assert store._vectors.builds == 2
    assert isinstance(loaded(store), AnnMatrix)
    assert (await search(store, query))[0][:5] == found[:5]
    await store.aclose()


async def test_many_changes_rebuild_the_index(tmp_path: Path, template: Template) -> None:
    """Past a tenth of the index written since its build, it is rebuilt in the
    background and the new one takes over."""
    store, _ = await indexed(tmp_path / "g.db", template)
    extra = corpus(seed=2)[:400]
    entries = [satchel.MemoryEntry(text=f"more {n}") for n in range(len(extra))]
    await memories(store, "s", entries, extra)
    await built(store)
    assert store._vectors.builds == 2
    matrix = loaded(store)
    assert isinstance(matrix, AnnMatrix)
    assert matrix.changed == 0
    assert len(matrix) == ROWS + len(extra)
    found, _ = await search(store, extra[7])
    assert len(found) == 10
    await store.aclose()


async def test_small_scopes_and_memory_databases_stay_exact(
    tmp_path: Path, template: Template
) -> None:
    """Below the threshold no index is built; a ``:memory:`` database never gets one."""
    vectors = corpus()
    path = tmp_path / "g.db"
    store, _ = await filled(path, template)
    store._vectors.ann_rows = ROWS + 1
    await search(store, vectors[0])
    await built(store)
    assert store._vectors.builds == 0
    assert isinstance(loaded(store), VectorMatrix)
    assert not sidecar_folder(str(path)).exists()
    await store.aclose()

    memory = await SqliteStore.open()
    memory._vectors.ann_rows = 1
    await memories(memory, "s", [satchel.MemoryEntry(text="one")], vectors[:1])
    await search(memory, vectors[0])
    await built(memory)
    assert memory._vectors.builds == 0
    assert isinstance(loaded(memory), VectorMatrix)
    assert not sidecar_folder(":memory:").exists()
    await memory.aclose()


async def test_without_usearch_a_large_scope_is_searched_exactly_and_says_so(
    tmp_path: Path, template: Template, monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:  # fmt: skip
    """Without the ``satchel[ann]`` extra a scope large enough for an index is searched
    exactly (the same rows as with it), and the process says once which extra builds it:
    not again for another search, nor for another store."""
    import threading

    from satchel.stores.sqlite import _ann, _scope_matrices

    monkeypatch.setattr(_ann, "usearch_installed", lambda: False)
    monkeypatch.setattr(_scope_matrices, "ANN_MISSING_SAID", threading.Event())
    path = tmp_path / "h.db"
    store, _ = await filled(path, template)
    other, _ = await filled(tmp_path / "other.db", template)
    vectors = corpus()
    with caplog.at_level("WARNING", logger="satchel"):
        first = await search(store, vectors[0])
        await search(store, vectors[1])
        await search(other, vectors[2])
    await built(store)
    assert store._vectors.builds == 0
    assert isinstance(loaded(store), VectorMatrix)
    assert isinstance(loaded(other), VectorMatrix)
    assert not sidecar_folder(str(path)).exists()
    said = [
        record.getMessage() for record in caplog.records if "satchel[ann]" in record.getMessage()
    ]
    assert len(said) == 1
    assert "searched exactly" in said[0]
    assert "pip install 'satchel[ann]'" in said[0]
    await other.aclose()
    await store.aclose()
    rows = rows_of(template.refs, store)
    assert first[0] == exact(vectors, rows, vectors[0], 10)
