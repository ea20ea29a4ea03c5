"""An approximate nearest-neighbour index for the embedded store's large scopes.

A scope of at least ``ANN_ROWS`` vectors in a file-backed store is searched through a
usearch HNSW index instead of one product over its whole float32 matrix. The index is a
derived cache kept beside the database (the SQLite rows stay the source of truth)::

    team.db
    team.db.vectors/
        memory-1.json                  what the index holds and what it was built from
        memory-1.<build id>.usearch    the HNSW graph and its int8 vectors
        memory-1.<build id>.rows.npy   the rows it holds (to find those retired since)

On open the index file is memory-mapped (``Index.restore(path, view=True)``): the first
search reads no vectors, and the process's resident memory grows only with the pages of
the file searches touch (in practice the whole file after the first search: the kernel
maps the cached pages around each fault). Before it is used, :func:`open_sidecar`
checks it against the database cheaply; what changed since the build is searched beside
it exactly (:class:`AnnMatrix`).

A search asks the graph for ``CANDIDATES`` rows, reads their float32 vectors from the
database (one statement; pages the OS caches, not the process) and ranks them by their
exact cosine: the similarities a pool carries are exact, as with the matrix.

Why it centres vectors, stores int8 and re-ranks ``CANDIDATES`` at depth
``EXPANSION_SEARCH``: measured, see docs/benchmarks.md ("Measurements behind the
embedded store's constants").
"""

from __future__ import annotations

import base64
import contextlib
import importlib.util
import json
import logging
import os
import sqlite3
import threading
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import attrs
import numpy as np

from ...vocabulary._retrieval import apart_from_common
from . import _schema as sql
from ._schema import embedder_of
from ._vectors import VectorMatrix, from_blobs

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from contextlib import AbstractContextManager

    import numpy.typing as npt

    from ...vocabulary._families import Family

    Vectors = npt.NDArray[np.float32]
    Rows = npt.NDArray[np.int64]

logger = logging.getLogger("satchel")

#: A scope's family gets an index once it holds this many vectors: where an index search
#: with its re-ranking overtakes the exact product (docs/benchmarks.md).
ANN_ROWS: Final = 150_000
#: The index is rebuilt once the rows written or retired since its build pass this share
#: of it: until then they are searched exactly beside it (the delta) or filtered out of
#: its results (the removed set).
REBUILD_FRACTION: Final = 0.10
#: HNSW parameters: edges per node, and search depth while inserting (usearch's
#: defaults; docs/benchmarks.md).
CONNECTIVITY: Final = 16
EXPANSION_ADD: Final = 128
#: Nodes each search explores (HNSW's ``ef``; at least the candidates it asks for).
EXPANSION_SEARCH: Final = 1024
#: Rows each search takes from the graph and re-ranks exactly (at least ``k``).
CANDIDATES: Final = 1024
#: Stored scalars and metric: see the module docstring.
SCALAR: Final = "i8"
METRIC: Final = "cos"
#: Vectors read per statement while building (each read is its own short transaction).
BUILD_CHUNK: Final = 16_384
#: Vectors inserted per call while building: a closing store stops a build between two.
ADD_BATCH: Final = 1024
#: Rows whose stored vectors are compared with the database's on open.
SAMPLES: Final = 16
#: Bumped when the sidecar layout or its meaning changes: an older one is rebuilt.
FORMAT: Final = 3
#: The least cosine between a stored int8 vector and its row's centred direction that
#: still counts as the same vector (int8 rounding keeps it above 0.995 here).
SAME_VECTOR: Final = 0.98

LIVE_ROWS: Final = "FROM records WHERE family = ? AND scope_key = ? AND live = 1"
#: A rowid range scan (``+`` keeps SQLite from reading the scope's index instead): each
#: build chunk and the delta read only their own rows.
CHUNK: Final = (
    "SELECT row, embedding FROM records WHERE row > ? AND row <= ? AND +family = ?"
    " AND +scope_key = ? AND live = 1 AND embedding IS NOT NULL ORDER BY row LIMIT ?"
)


def usearch_installed() -> bool:
    """Whether usearch (the ``satchel[ann]`` extra) can be imported."""
    return importlib.util.find_spec("usearch") is not None


def import_usearch() -> Any:
    """usearch's ``Index`` class. Importing it takes 40-50 ms with the GIL held, so the
    store imports it while opening, in a worker thread, never on a search."""
    from usearch.index import Index

    return Index


def connect(database: str) -> sqlite3.Connection:
    """A connection of the index builder's own (reads only)."""
    conn = sqlite3.connect(database, check_same_thread=False)
    conn.execute("PRAGMA busy_timeout = 5000")
    return conn


def sidecar_folder(database: str) -> Path:
    """Where a database file's vector indexes live."""
    return Path(database + ".vectors")


def _meta_path(folder: Path, family: Family, scope_key: int) -> Path:
    return folder / f"{family}-{scope_key}.json"


def _chunks(
    conn: sqlite3.Connection, family: Family, scope_key: int, dimension: int, after: int, upto: int
) -> Iterable[tuple[Rows, Vectors]]:
    """The scope's live vectors with ``after < row <= upto``, in row order, a chunk per
    statement: no read transaction stays open while the caller works on a chunk."""
    while True:
        chunk = conn.execute(CHUNK, (after, upto, family, scope_key, BUILD_CHUNK)).fetchall()
        if not chunk:
            return
        yield from_blobs(chunk, dimension)
        after = int(chunk[-1][0])


def build_sidecar(
    database: str,
    family: Family,
    scope_key: int,
    dimension: int,
    *,
    threads: int = 1,
    cancelled: Callable[[], bool] = lambda: False,
) -> Path | None:
    """Build the scope's index from the database and save it beside it; returns its
    metadata file, or None when ``cancelled()`` turned true or the vectors changed
    embedder meanwhile.

    Reads run on a connection of its own, a chunk per statement; memory is the index
    being built plus a chunk. The index file is written under a fresh name, then the
    metadata file naming it replaces the old one atomically, so a reader sees either
    the old index or the new one, never half of one. A build across an erase (the
    database's count of erases moved) saves nothing, or deletes what it saved.
    """
    index_class = import_usearch()
    started = time.perf_counter()
    conn = connect(database)
    try:
        embedder, erased = embedder_of(conn), erasures(conn)
        (upto,) = conn.execute("SELECT coalesce(max(row), 0) FROM records").fetchone()
        # Pass 1: the scope's mean vector, the centre the index stores vectors around.
        total = np.zeros(dimension, dtype=np.float64)
        count = 0
        for _, vectors in _chunks(conn, family, scope_key, dimension, 0, upto):
            total += vectors.sum(axis=0, dtype=np.float64)
            count += len(vectors)
            if cancelled():
                return None
        center = (total / max(count, 1)).astype(np.float32)
        index = index_class(
            ndim=dimension,
            metric=METRIC,
            dtype=SCALAR,
            connectivity=CONNECTIVITY,
            expansion_add=EXPANSION_ADD,
        )
        # Pass 2: insert, recording each chunk's first row to check on open.
        rows_seen: list[int] = []
        indexed: list[Rows] = []
        for rows, vectors in _chunks(conn, family, scope_key, dimension, 0, upto):
            rows_seen.append(int(rows[0]))
            indexed.append(rows)
            centred = centred_directions(vectors, center)
            for start in range(0, len(rows), ADD_BATCH):
                index.add(
                    rows[start : start + ADD_BATCH],
                    centred[start : start + ADD_BATCH],
                    threads=threads,
                )
                if cancelled():
                    return None
        if embedder_of(conn) != embedder or erasures(conn) != erased:
            return None  # re-embedded or erased from while building: stale chunks
        samples = _identities(conn, rows_seen)
    finally:
        conn.close()
    keys = np.concatenate(indexed) if indexed else np.empty(0, dtype=np.int64)
    built = _Built(index, keys, center, upto, embedder, samples, started)
    saved = _save(database, family, scope_key, built)
    conn = connect(database)
    try:
        if erasures(conn) == erased:
            return saved
    finally:
        conn.close()
    # An erase committed while the index was saved: it may hold erased vectors, and the
    # erase may have deleted the scope's files before these were written.
    remove_sidecar(database, family, scope_key)
    return None


def _identities(conn: sqlite3.Connection, rows: list[int]) -> list[list[Any]]:
    """``[row, rid]`` of each of ``rows``: a record's id never changes, and a new entry's
    is random, so they tell this database from another one at the same path."""
    if not rows:
        return []
    marks = ",".join("?" * len(rows))
    found = conn.execute(f"SELECT row, rid FROM records WHERE row IN ({marks})", rows)
    return [[int(row), str(rid)] for row, rid in found.fetchall()]


def centred_directions(vectors: Vectors, center: Vectors) -> Vectors:
    """What the index stores for each vector: its direction from the centre (a vector
    at the centre keeps its own direction)."""
    centred = vectors - center
    norms = np.linalg.norm(centred, axis=1, keepdims=True)
    at_center = norms[:, 0] < 1e-6
    centred[at_center], norms[at_center] = vectors[at_center], 1.0
    directions: Vectors = (centred / norms).astype(np.float32)
    return directions


def read_vectors(conn: sqlite3.Connection, rows: Rows, dimension: int) -> tuple[Rows, Vectors]:
    """The stored vectors of ``rows`` (those that have one), in row order: one statement."""
    if not len(rows):
        return np.empty(0, dtype=np.int64), np.empty((0, dimension), dtype=np.float32)
    marks = ",".join("?" * len(rows))
    found = conn.execute(
        f"SELECT row, embedding FROM records WHERE row IN ({marks})"
        " AND embedding IS NOT NULL ORDER BY row",
        rows.tolist(),
    ).fetchall()
    if not found:
        return np.empty(0, dtype=np.int64), np.empty((0, dimension), dtype=np.float32)
    return from_blobs(found, dimension)


@attrs.frozen
class _Built:
    """A finished build, to save: the index, the rows it holds (in insertion order),
    and what the metadata records about it."""

    index: Any
    rows: Rows
    center: Vectors
    upto: int
    embedder: str | None
    samples: list[list[Any]]
    started: float


def _save(database: str, family: Family, scope_key: int, built: _Built) -> Path:
    folder = sidecar_folder(database)
    folder.mkdir(exist_ok=True)
    stem = f"{family}-{scope_key}.{uuid.uuid4().hex}"
    name, rows_name = f"{stem}.usearch", f"{stem}.rows.npy"
    partial = folder / (name + ".partial")
    built.index.save(str(partial))
    _sync(partial)
    os.replace(partial, folder / name)
    # The index's rows: what the retired rows are found against (usearch cannot list
    # the keys of an index mapped without its key table).
    partial = folder / (rows_name + ".partial")
    with open(partial, "wb") as handle:
        np.save(handle, built.rows.astype("<i8"), allow_pickle=False)
    _sync(partial)
    os.replace(partial, folder / rows_name)
    index, center = built.index, built.center
    meta = {
        "format": FORMAT,
        "family": family,
        "scope_key": scope_key,
        "dimension": int(center.shape[0]),
        "scalar": SCALAR,
        "connectivity": CONNECTIVITY,
        "index_file": name,
        "rows_file": rows_name,
        "index_bytes": (folder / name).stat().st_size,
        "count": len(index),
        "built_through_row": int(built.upto),
        "embedder": built.embedder,
        "center": base64.b64encode(center.astype("<f4").tobytes()).decode("ascii"),
        "samples": built.samples,
        "removed": [],
        "build_seconds": round(time.perf_counter() - built.started, 3),
    }
    path = _meta_path(folder, family, scope_key)
    _write_meta(path, meta)
    _clean(folder, family, scope_key, {name, rows_name})
    return path


def _clean(folder: Path, family: Family, scope_key: int, kept: set[str]) -> None:
    """Delete the scope's earlier index files, and files a crashed build left (a
    ``.partial`` younger than a day may be another process's build in progress). A
    process that still maps a deleted file keeps reading it (POSIX)."""
    now = time.time()
    for path in folder.glob(f"{family}-{scope_key}.*"):
        if path.name in kept or path.suffix == ".json":
            continue
        with contextlib.suppress(OSError):  # gone already, or mapped (Windows)
            if path.suffix != ".partial" or now - path.stat().st_mtime > 86_400:
                path.unlink()


def _sync(path: Path) -> None:
    with open(path, "rb+") as handle:
        os.fsync(handle.fileno())


def _write_meta(path: Path, meta: dict[str, Any]) -> None:
    partial = path.with_name(f"{path.name}.{uuid.uuid4().hex}.partial")
    partial.write_text(json.dumps(meta))
    _sync(partial)
    os.replace(partial, path)


def _read_meta(path: Path) -> dict[str, Any] | None:
    try:
        meta = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return meta if isinstance(meta, dict) else None


def prefetch(path: Path) -> None:
    """Ask the OS to read a whole index file into its cache, in the background (where it
    can): mapped on a cold cache, the graph's scan and the first searches would fault
    its pages in one at a time (1.35 s for the first call at 1M rows against 0.82 s to
    read the file in one go)."""
    advise = getattr(os, "posix_fadvise", None)
    if advise is None:
        return
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            advise(fd, 0, 0, os.POSIX_FADV_WILLNEED)
        finally:
            os.close(fd)


def sidecar_exists(database: str, family: Family, scope_key: int) -> bool:
    return _meta_path(sidecar_folder(database), family, scope_key).exists()


def remove_sidecar(database: str, family: Family, scope_key: int) -> None:
    """Delete the scope's index files, those of a build in progress included: after an
    erase they hold vectors of erased records. The metadata goes first, so a reader
    never finds it naming a deleted index."""
    folder = sidecar_folder(database)
    with contextlib.suppress(OSError):
        _meta_path(folder, family, scope_key).unlink()
    for path in folder.glob(f"{family}-{scope_key}.*"):
        with contextlib.suppress(OSError):  # gone already
            path.unlink()


def erasures(conn: sqlite3.Connection) -> int:
    """How many erases the database has seen (``meta``): a build across one is void."""
    found = conn.execute("SELECT value FROM meta WHERE key = ?", (sql.ERASURES,)).fetchone()
    return 0 if found is None else int(found[0])


class Stale(Exception):
    """The sidecar cannot serve this database: its message says why."""


def open_sidecar(
    conn: sqlite3.Connection,
    database: str,
    family: Family,
    scope_key: int,
    dimension: int,
    min_rows: int,
    reader: Callable[[], AbstractContextManager[sqlite3.Connection]],
) -> AnnMatrix:
    """Map the scope's index and check it against the database; the rows written since
    its build are loaded as an exact delta, the rows retired since are filtered out.

    The checks read no vectors but a few samples: the metadata's format, dimension and
    embedder; the index file's size and header; that the rows sampled at the build
    still carry the same record ids (the same database) and that a few of their
    vectors are in the index (not changed since); that the index holds exactly the live
    rows up to the build's last row, less those known retired (the scope's count of
    live records, from the full-text statistics, against the index's size; a full list
    of the live rows only when they disagree). Retired rows found by the full list are
    recorded in the metadata, so the next open takes the cheap path again. Searches
    read their candidates' vectors on a connection ``reader()`` lends them.

    Raises:
        Stale: the sidecar is missing, damaged, of another database, dimension or
            embedder, or holds fewer than ``min_rows`` rows; the caller searches
            exactly (and rebuilds it if the scope is large).
    """
    folder = sidecar_folder(database)
    meta_path = _meta_path(folder, family, scope_key)
    meta = _read_meta(meta_path)
    if meta is None:
        raise Stale("no readable metadata")
    try:
        index_path = folder / str(meta["index_file"])
        rows_path = folder / str(meta["rows_file"])
        center = np.frombuffer(base64.b64decode(meta["center"]), dtype="<f4").astype(np.float32)
        built, count = int(meta["built_through_row"]), int(meta["count"])
        samples = {int(row): str(rid) for row, rid in meta["samples"]}
        known = {int(row) for row in meta["removed"]}
        if (meta["format"], meta["family"], meta["scope_key"]) != (FORMAT, family, scope_key):
            raise Stale("another format or scope")
        if (meta["dimension"], meta["scalar"], len(center)) != (dimension, SCALAR, dimension):
            raise Stale("another dimension or scalar type")
        expected_bytes = int(meta["index_bytes"])
        if count - len(known) < min_rows:
            raise Stale(f"{count - len(known)} rows, fewer than {min_rows}")
    except (KeyError, TypeError, ValueError) as exc:
        raise Stale(f"malformed metadata: {exc!r}") from None
    if meta["embedder"] != embedder_of(conn):
        raise Stale("vectors of another embedder")
    try:
        size = index_path.stat().st_size
    except OSError:
        raise Stale("index file missing") from None
    if size != expected_bytes:
        raise Stale(f"index file of {size} bytes, {expected_bytes} expected")
    prefetch(index_path)
    try:
        # No key lookups: usearch's key -> node table would cost 0.15 s and 34 MB at
        # 1M rows; the index is only searched, and its rows are those up to the build.
        index = import_usearch().restore(
            str(index_path), view=True, enable_key_lookups=False, expansion_search=64
        )
    except (RuntimeError, ValueError, OSError) as exc:
        raise Stale(f"unreadable index file: {exc}") from None
    if index is None or index.ndim != dimension or len(index) != count:
        raise Stale("index file does not match its metadata")
    _check_samples(conn, index, center, samples)
    index.expansion_search = EXPANSION_SEARCH
    delta = _delta(conn, family, scope_key, dimension, built)
    removed = known
    if _documents(conn, family, scope_key) - len(delta) != count - len(known):
        removed = _retired(conn, family, scope_key, built, rows_path, count)
        meta["removed"] = sorted(removed)
        _update_meta(meta_path, meta)
    return AnnMatrix(index, center, built, delta, removed, meta, reader)


def _check_samples(
    conn: sqlite3.Connection, index: Any, center: Vectors, samples: dict[int, str]
) -> None:
    """The sample rows still have the ids they had at the build (the same database),
    and the vectors of a few live ones are in the index (not changed since): a search
    for each must find it at distance ~0 (a shallow one: most must, not all)."""
    if not samples:
        return
    marks = ",".join("?" * len(samples))
    found = conn.execute(
        f"SELECT row, rid, live, embedding FROM records WHERE row IN ({marks})", list(samples)
    ).fetchall()
    if {int(row): str(rid) for row, rid, _, _ in found} != samples:
        raise Stale("the rows it was built from have other ids: another database")
    blobs = [blob for _, _, live, blob in found if live and blob is not None]
    blobs = blobs[:: max(1, len(blobs) // SAMPLES)][:SAMPLES]
    if not blobs:
        return
    vectors = np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(blobs), -1)
    if vectors.shape[1] != len(center):
        raise Stale("vectors of another dimension")
    nearest = index.search(centred_directions(vectors.copy(), center), 1, threads=1)
    distances = np.asarray(nearest.distances, dtype=np.float32).reshape(-1)
    if np.count_nonzero(distances < 1.0 - SAME_VECTOR) * 2 < len(blobs):
        raise Stale("vectors changed since the build")


def _delta(
    conn: sqlite3.Connection, family: Family, scope_key: int, dimension: int, built: int
) -> VectorMatrix:
    """The scope's live vectors written since the build, as an exact matrix."""
    (upto,) = conn.execute("SELECT coalesce(max(row), 0) FROM records").fetchone()
    parts = list(_chunks(conn, family, scope_key, dimension, built, upto))
    if not parts:
        empty = np.empty((0, dimension), dtype=np.float32)
        return VectorMatrix(dimension, np.empty(0, dtype=np.int64), empty)
    rows = np.concatenate([rows for rows, _ in parts])
    vectors = np.concatenate([vectors for _, vectors in parts])
    return VectorMatrix(dimension, rows, vectors)


def _documents(conn: sqlite3.Connection, family: Family, scope_key: int) -> int:
    """The scope's live records of the family, as the full-text statistics count them
    (one row of ``term_stats``, kept in the transaction of every write); -1 when they
    cannot be read, which sends the check to the full list of live rows."""
    try:
        found = conn.execute(
            "SELECT df FROM term_stats WHERE family = ? AND scope_key = ? AND term = ?",
            (family, scope_key, sql.DOCUMENTS),
        ).fetchone()
    except sqlite3.Error:
        return -1
    return 0 if found is None else int(found[0])


def _retired(
    conn: sqlite3.Connection,
    family: Family,
    scope_key: int,
    built: int,
    rows_file: Path,
    count: int,
) -> set[int]:
    """The index's rows that are no longer live, from one read of the scope's live rows
    (0.5 s at 1M rows: only when the cheap count disagrees).

    Raises:
        Stale: the index's rows cannot be read, or a live row of the build's range is
            missing from the index.
    """
    try:
        keys = np.load(rows_file, allow_pickle=False).astype(np.int64)
    except (OSError, ValueError) as exc:
        raise Stale(f"unreadable rows file: {exc}") from None
    if keys.shape != (count,):
        raise Stale("rows file does not match the index")
    cursor = conn.execute(f"SELECT row {LIVE_ROWS} AND row <= ?", (family, scope_key, built))
    live = np.fromiter((row for (row,) in cursor), np.int64)
    removed = np.setdiff1d(keys, live)
    if len(keys) - len(removed) != len(live):
        raise Stale("live rows missing from the index")
    return set(removed.tolist())


def _update_meta(path: Path, meta: dict[str, Any]) -> None:
    """Record the retired rows found, unless another build replaced the index since."""
    current = _read_meta(path)
    if current is not None and current.get("index_file") == meta["index_file"]:
        with contextlib.suppress(OSError):  # a read-only folder: found again next open
            _write_meta(path, meta)


class AnnMatrix:
    """A scope's vectors as a mapped HNSW index, the rows written since its build (an
    exact delta) and its rows retired since (filtered out of its results).

    Offers :class:`~._vectors.VectorMatrix`'s interface: ``nearest``, ``similarities``,
    ``add``, ``remove``. Similarities are exact: the index only proposes candidates,
    whose float32 vectors are read from the database on a connection ``reader()``
    lends. Thread-safe: the mapped index is read-only; the delta has its own lock; the
    removed set only grows, and results are filtered after the search.
    """

    def __init__(
        self,
        index: Any,
        center: Vectors,
        built: int,
        delta: VectorMatrix,
        removed: set[int],
        meta: dict[str, Any],
        reader: Callable[[], AbstractContextManager[sqlite3.Connection]],
    ) -> None:
        self._index = index
        self._center = center
        self._built = built
        self._delta = delta
        self._removed = removed
        self._indexed = len(index)
        self._reader = reader
        self._lock = threading.Lock()
        self.meta = meta
        #: Rows each search takes from the graph and re-ranks (at least ``k``).
        self.candidates = CANDIDATES

    def __len__(self) -> int:
        return self._indexed - len(self._removed) + len(self._delta)

    @property
    def dimension(self) -> int:
        return len(self._center)

    @property
    def changed(self) -> int:
        """Rows written or retired since the build."""
        return len(self._removed) + len(self._delta)

    def stale(self) -> bool:
        """Whether enough changed since the build that it should be rebuilt."""
        return self.changed > REBUILD_FRACTION * max(self._indexed, 1)

    def add(self, rows: Rows, vectors: Vectors) -> None:
        """Rows written since the build go to the exact delta (rows already there or in
        the index are skipped)."""
        fresh = ~self._in_index(rows)
        self._delta.add(rows[fresh], vectors[fresh])

    def remove(self, rows: Rows) -> None:
        """Rows no longer searchable leave the delta or join the removed set."""
        self._delta.remove(rows)
        indexed = rows[self._in_index(rows)]
        with self._lock:
            self._removed.update(indexed.tolist())

    def nearest(self, query: Vectors, k: int) -> tuple[Rows, npt.NDArray[np.float32]]:
        """The ``k`` most similar live rows, best first apart from the scope's common
        direction (``apart_from_common``), with their exact cosine similarities: the
        index's candidates (retired rows filtered out) re-ranked, merged with the
        delta's best."""
        if k <= 0:
            return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float32)
        total = self._total()
        # The index holds each vector's direction from the centre: asked with the query
        # apart from the common direction, its nearest are those the ranking wants.
        common = (total / max(float(np.linalg.norm(total)), 1e-12)).astype(np.float32)
        rows, vectors = self._candidates(query - float(query @ common) * common, k)
        scores, cosines = apart_from_common(vectors, query, total)
        extra_rows, extra_scores, extra = self._delta.ranked(query, k, total)
        rows = np.concatenate([rows, extra_rows])
        ranked = np.concatenate([scores, extra_scores])
        similarities = np.concatenate([cosines, extra]).astype(np.float32)
        order = np.lexsort((rows, -ranked))[:k]  # ties: the older row first
        return rows[order], similarities[order]

    def similarities(
        self, rows: Rows, query: Vectors, *, apart: bool = False
    ) -> npt.NDArray[np.float32]:
        """The cosine similarity of each of ``rows`` to ``query`` (-1 for a row not
        searchable here): from the delta, or from the database's vectors. With
        ``apart``, each row's score apart from the scope's common direction, as
        :meth:`nearest` ranks."""
        total = self._total() if apart else None
        scores = self._delta.similarities(rows, query, apart=apart, total=total)
        wanted = (scores == -1.0) & self._in_index(rows)
        wanted &= np.fromiter((int(row) not in self._removed for row in rows), bool, len(rows))
        if wanted.any():
            with self._reader() as conn:
                found, vectors = read_vectors(conn, rows[wanted], self.dimension)
            slots = np.searchsorted(found, rows[wanted])
            present = slots < len(found)
            present[present] = found[slots[present]] == rows[wanted][present]
            picked = np.flatnonzero(wanted)[present]
            scores[picked] = apart_from_common(vectors[slots[present]], query, total)[0]
        return scores

    def _total(self) -> npt.NDArray[np.float64]:
        """The sum of the scope's vectors: the build's rows (its centre, once each; rows
        retired since stay in it until the next build) and the delta's."""
        total: npt.NDArray[np.float64] = (
            self._center.astype(np.float64) * self._indexed + self._delta.total
        )
        return total

    def _candidates(self, query: Vectors, k: int) -> tuple[Rows, Vectors]:
        """The index's best live candidates for ``query`` and their stored vectors."""
        fetch = max(k, self.candidates)
        fetch += min(len(self._removed), fetch)  # retired rows are dropped after
        while True:
            found = self._index.search(query, fetch, threads=1)
            keys = np.asarray(found.keys, dtype=np.int64)
            removed = self._removed
            keys = keys[np.fromiter((int(row) not in removed for row in keys), bool, len(keys))]
            if len(keys) >= k or len(found.keys) < fetch or fetch >= self._indexed:
                break
            fetch *= 2  # many retired rows among the best: look further
        with self._reader() as conn:
            return read_vectors(conn, keys, self.dimension)

    def _in_index(self, rows: Rows) -> npt.NDArray[np.bool_]:
        """Whether live ``rows`` are in the index: a live row is there exactly when it
        is not past the build's last row (rows only ever leave search, and the build
        read every live row up to it)."""
        return np.asarray(rows <= self._built, dtype=bool)
