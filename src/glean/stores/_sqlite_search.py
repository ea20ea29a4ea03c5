"""Searching the embedded store: the scoped full-text query over the selective query
terms ranked with the scope's own statistics, evidence reads by key, and loading a
scope's vector matrix."""

from __future__ import annotations

import math
from datetime import UTC, date, datetime
from typing import TYPE_CHECKING, Final

import attrs
import numpy as np

from .._records import resource_text
from ..recall._analysis import match_expression
from . import _sqlite_schema as sql
from ._vectors import VectorMatrix

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Sequence

    import numpy.typing as npt

    from .._families import Family
    from ..recall._dates import DateMention
    from ..recall._evidence import Evidence

#: Most postings (rows matching any chosen term) one full-text search may rank.
POSTINGS_BUDGET = 2048
#: Postings up to which every match is scored here rather than ranked by FTS5 first:
#: FTS5's ranking reads the scope token's whole position list (~1.8 ms at 24k rows),
#: about what scoring a thousand candidates in Python costs (~2 us each).
EXACT_POSTINGS: Final = 1024
#: Vectors read per fetch while loading a scope's matrix.
LOAD_CHUNK: Final = 8192
#: Most records one time window may select before they are ranked by similarity.
WINDOW_SCAN: Final = 4096
#: Okapi BM25's term-frequency saturation and length normalisation (FTS5's defaults).
BM25_K1: Final = 1.2
BM25_B: Final = 0.75


@attrs.frozen
class LexicalHit:
    """One full-text candidate: its row, per-scope BM25 (higher is better) and how many
    distinct query terms its indexed text holds."""

    row: int
    score: float
    matches: int


def lexical_hits(
    conn: sqlite3.Connection,
    family: Family,
    key: int,
    terms: Sequence[str],
    limit: int,
    *,
    scope_ranking: bool = True,
) -> list[LexicalHit]:
    """The scope's best ``limit`` full-text candidates, ranked by per-scope BM25.

    FTS5's own ``bm25`` weighs terms by their frequency in the whole table, so a term
    common in one large scope would count as common in every small one. Candidates are
    scored with the scope's own document frequencies and average length from
    ``term_stats``. When the chosen terms' postings are few (``EXACT_POSTINGS``, or twice
    ``limit`` if more) every match is scored, exactly; beyond that FTS5 picks the
    ``limit`` candidates first (it cannot rank otherwise) and they are re-scored. ``scope_ranking=False``
    keeps FTS5's table-wide order (for benchmarks).
    """
    stats = scope_stats(conn, family, key, terms)
    chosen = selective_terms(stats.frequencies)
    if not chosen:
        return []
    table = sql.FTS_TABLES[family]
    statement = f"SELECT rowid, terms FROM {table} WHERE {table} MATCH ?"
    arguments: tuple[object, ...] = (sql.lexical_query(key, match_expression(chosen)),)
    postings = sum(stats.frequencies[term] for term in chosen)
    if not scope_ranking or postings > max(2 * limit, EXACT_POSTINGS):
        statement += " ORDER BY rank LIMIT ?"
        arguments += (limit,)
    hits = [stats.score(row, indexed) for row, indexed in conn.execute(statement, arguments)]
    if scope_ranking:
        hits.sort(key=lambda hit: hit.score, reverse=True)  # stable: FTS5's order breaks ties
    return hits[:limit]


@attrs.frozen
class ScopeStats:
    """A scope's statistics for one query's terms: each present term's idf (terms
    absent from the scope left out), its document frequency, and the average length."""

    frequencies: dict[str, int]
    idf: dict[str, float]
    average_length: float

    def score(self, row: int, indexed: str) -> LexicalHit:
        """Okapi BM25 of one indexed text, with the idf that never goes negative."""
        words = indexed.split()
        present = self.idf.keys() & set(words)
        score = 0.0
        if present:
            norm = BM25_K1 * (1 - BM25_B + BM25_B * len(words) / self.average_length)
            for term in present:
                tf = words.count(term)
                score += self.idf[term] * tf * (BM25_K1 + 1) / (tf + norm)
        return LexicalHit(row, score, len(present))


def scope_stats(
    conn: sqlite3.Connection, family: Family, key: int, terms: Sequence[str]
) -> ScopeStats:
    """One indexed read of ``term_stats`` for the query's terms and the two sentinels."""
    names = (*terms, sql.DOCUMENTS, sql.LENGTHS)
    found = dict(conn.execute(sql.term_frequencies(len(names)), (family, key, *names)).fetchall())
    documents = max(found.pop(sql.DOCUMENTS, 0), 1)
    total = found.pop(sql.LENGTHS, 0)
    frequencies = {term: found[term] for term in terms if found.get(term, 0) > 0}
    idf = {
        term: math.log(1 + (documents - df + 0.5) / (df + 0.5)) for term, df in frequencies.items()
    }
    return ScopeStats(frequencies, idf, max(total / documents, 1.0))


def selective_terms(frequencies: dict[str, int]) -> list[str]:
    """The query terms that drive the full-text search, rarest first.

    BM25 ranking costs per matching row, so a term found in most of a scope would make
    every search scan the scope while adding almost nothing to the ranking. Terms absent
    from the scope are skipped; the rest are taken rarest first while their postings stay
    within ``POSTINGS_BUDGET`` (the rarest term is always taken). Admission still counts
    every query term a candidate contains.
    """
    chosen: list[str] = []
    postings = 0
    for term in sorted(frequencies, key=frequencies.__getitem__):
        if chosen and postings + frequencies[term] > POSTINGS_BUDGET:
            break
        chosen.append(term)
        postings += frequencies[term]
    return chosen


def window_rows(
    conn: sqlite3.Connection, family: Family, key: int, dates: Sequence[DateMention]
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
    """The live records recorded in any window ``dates`` name, each with its distance in
    seconds from the middle of its window (at most ``WINDOW_SCAN`` per window).

    Relative dates resolve against the day of the scope's newest record; both reads
    are range scans of the ``records_time`` index.
    """
    reference: date | None = None
    if any(mention.relative for mention in dates):
        newest = conn.execute(sql.NEWEST, (family, key)).fetchone()[0]
        if newest is not None and newest > sql.NO_TIME:
            reference = datetime.fromtimestamp(newest, UTC).date()
    distance: dict[int, float] = {}
    for mention in dates:
        window = mention.window(reference)
        if window is None:
            continue
        middle = (window[0] + window[1]) / 2
        for row, at in conn.execute(sql.IN_WINDOW, (family, key, *window, WINDOW_SCAN)):
            distance[row] = min(distance.get(row, math.inf), abs(at - middle))
    rows = np.fromiter(distance, dtype=np.int64, count=len(distance))
    return rows, np.fromiter(distance.values(), dtype=np.float64, count=len(distance))


def thread_neighbours(
    conn: sqlite3.Connection, family: Family, key: int, rows: Sequence[int]
) -> dict[int, tuple[int, ...]]:
    """The live records just before and after each of ``rows`` in its own thread; two
    range reads of the ``records_thread`` index per row."""
    marks = ",".join("?" * len(rows))
    found = conn.execute(
        f"SELECT row, thread, created_ts FROM records WHERE row IN ({marks})"
        " AND family = ? AND scope_key = ? AND live = 1 AND thread IS NOT NULL",
        (*rows, family, key),
    ).fetchall()
    around: dict[int, tuple[int, ...]] = {}
    for row, thread, at in found:
        near = (
            conn.execute(statement, (family, key, thread, at, row)).fetchone()
            for statement in (sql.BEFORE, sql.AFTER)
        )
        around[row] = tuple(hit[0] for hit in near if hit is not None)
    return around


def fetch(
    conn: sqlite3.Connection, family: Family, scope_id: str, rows: list[int]
) -> dict[int, Evidence]:
    if not rows:
        return {}
    found = conn.execute(sql.fetch_statement(len(rows)), rows).fetchall()
    return {row[0]: sql.evidence_from_row(family, scope_id, row) for row in found if row[-1]}


def load_matrix(conn: sqlite3.Connection, family: Family, key: int, dimension: int) -> VectorMatrix:
    """A scope's live vectors, streamed into one preallocated matrix (its peak memory is
    the matrix plus one chunk, not three copies of it)."""
    where = "FROM records WHERE family = ? AND scope_key = ? AND live = 1 AND embedding IS NOT NULL"
    (count,) = conn.execute(f"SELECT count(*) {where}", (family, key)).fetchone()
    vectors = np.empty((count, dimension), dtype=np.float32)
    rows = np.empty(count, dtype=np.int64)
    cursor = conn.execute(f"SELECT row, embedding {where} ORDER BY row", (family, key))
    done = 0
    while chunk := cursor.fetchmany(LOAD_CHUNK):
        end = done + len(chunk)
        rows[done:end] = [row for row, _ in chunk]
        blob = b"".join(embedding for _, embedding in chunk)
        vectors[done:end] = np.frombuffer(blob, dtype=np.float32).reshape(len(chunk), dimension)
        done = end
    return VectorMatrix(dimension, rows[:done], vectors[:done])


def embedding_sources(conn: sqlite3.Connection) -> list[tuple[int, str]]:
    """Every searchable vector's row and the text it embeds (as the runtime embeds it)."""
    found = conn.execute(
        "SELECT row, family, text, abstract, overview, rid FROM records"
        " WHERE live = 1 AND family IN ('memory', 'topic-memory', 'resource') ORDER BY row"
    ).fetchall()
    out: list[tuple[int, str]] = []
    for row, family, text, abstract, overview, rid in found:
        if family == "resource":
            text = resource_text(abstract, overview, rid)
        out.append((row, text))
    return out
