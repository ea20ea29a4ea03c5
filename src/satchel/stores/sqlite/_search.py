"""Searching the embedded store: the full-text query over the scope's selective query
terms, the time windows and thread neighbours, evidence reads by key, and loading a
scope's vector matrix."""

from __future__ import annotations

import json
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Final

import attrs
import numpy as np

from ...vocabulary._analysis import MAX_QUERY_TERMS, match_expression
from ...vocabulary._evidence import ThreadNeighbours
from ...vocabulary._families import FAMILY_RULES
from ...vocabulary._rarity import content_terms_indexed
from ...vocabulary._retrieval import RARE_POSTINGS, WINDOW_SCAN, TimeHits
from ...vocabulary._turns import let_loop_in
from .._postings import first_of_each_row
from .._rules import columns_from
from . import _schema as sql
from ._postings import answers
from ._vectors import VectorMatrix, from_blobs

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Iterator, Mapping, Sequence

    from ...vocabulary._evidence import Evidence
    from ...vocabulary._families import Family
    from ...vocabulary._retrieval import PoolRequest
    from .._postings import ScopePostings, Totals

#: Vectors read per fetch while loading a scope's matrix: a megabyte at 256
#: dimensions. Joining and copying a chunk holds the GIL, so the loop's thread waits
#: for it (at 8,192 a cold 100k-record search lagged the loop 6-11 ms).
LOAD_CHUNK: Final = 1024


@attrs.frozen
class LexicalHits:
    """The full-text channel of one search as parallel lists: each candidate's row,
    FTS5's BM25 (lower is better) and how many distinct query terms its indexed text
    holds. Ranked rows come in BM25 order, then any rows held only for a rare term
    (scored by that term alone)."""

    rows: list[int] = attrs.Factory(list)
    scores: list[float] = attrs.Factory(list)
    matches: list[int] = attrs.Factory(list)
    #: Query terms left out as common in the scope (``TermSelection.common``).
    common: int = 0
    #: The query's other terms some record of the scope holds (``TermSelection.held``).
    held: int = 0
    #: Of those, the ones rare in the language (``TermSelection.distinctive``).
    distinctive: int = 0


def lexical_hits(
    conn: sqlite3.Connection,
    family: Family,
    scope_key: int,
    request: PoolRequest,
    rows: int,
    frequencies: Mapping[str, int],
    held: tuple[ScopePostings, Totals] | None = None,
) -> LexicalHits:
    """The full-text search ``request.select_terms`` asks for, ranked by FTS5's BM25
    over the scope's own terms, given ``frequencies`` (:func:`term_frequencies`).

    With the scope's ``held`` postings and its table's totals (``_postings``), the
    search runs from them with no statement, to the same rows, scores and counts
    (unless a searched term is neither held nor plain: ``_postings.answers``).

    Every indexed term carries its scope's prefix, so a term's postings, and with them
    BM25's document frequencies, are the scope's alone: a term common in one large scope
    is not common in a small one, and the search reads no other scope's postings.

    SQLite counts each candidate's matched query terms itself (a token lookup in the
    space-separated indexed text), so no indexed text crosses into Python: the count
    runs without the GIL, and concurrent searches overlap (1.5 against 2.7 ms per
    search at 24k rows when Python split each text).
    """
    selection = request.select_terms(frequencies, rows)
    if not selection.terms:
        return LexicalHits()
    prefix = sql.term_prefix(scope_key)
    if held is not None:
        postings, totals = held
        searched = (*selection.terms, *(() if selection.rescue is None else (selection.rescue,)))
        if answers(postings, prefix, searched):
            counted = [term for term in frequencies if term not in selection.common]
            found, scores, matches = postings.hits(prefix.__add__, selection, counted, totals)
            return LexicalHits(
                found, scores, matches, len(selection.common), selection.held,
                selection.distinctive,
            )  # fmt: skip
    match = match_expression([prefix + term for term in selection.terms])
    tokens = [f" {prefix}{term} " for term in frequencies if term not in selection.common]
    parameters: tuple[object, ...] = (*tokens, match, selection.limit)
    rescue = selection.rescue is not None
    if selection.rescue is not None:
        parameters += (match_expression([prefix + selection.rescue]), RARE_POSTINGS)
    statement = sql.lexical_search(family, len(tokens), rescue=rescue)
    found, scores, matches = (
        json.loads(column) for column in conn.execute(statement, parameters).fetchone()
    )
    if rescue:
        found, scores, matches = first_of_each_row(found, scores, matches)
    return LexicalHits(
        found, scores, matches, len(selection.common), selection.held, selection.distinctive
    )


def term_frequencies(
    conn: sqlite3.Connection, family: Family, scope_key: int, terms: Sequence[str]
) -> dict[str, int]:
    """How many of the scope's searchable records hold each query term (absent terms
    left out): one indexed read of ``term_stats`` (of :func:`term_counts`' for more
    terms than a query has, its respellings among them)."""
    if not terms:
        return {}
    if len(terms) > MAX_QUERY_TERMS:
        return term_counts(conn, family, scope_key, terms)
    found = dict(
        conn.execute(sql.term_frequencies(len(terms)), (family, scope_key, *terms)).fetchall()
    )
    return {term: found[term] for term in terms if found.get(term, 0) > 0}


#: Terms per statement of :func:`term_counts`: one statement text, compiled once.
COUNT_CHUNK: Final = 128


def term_counts(
    conn: sqlite3.Connection, family: Family, scope_key: int, terms: Sequence[str]
) -> dict[str, int]:
    """How many of the scope's searchable records hold each of ``terms`` (absent terms
    left out), ``COUNT_CHUNK`` terms a statement (the last padded with its own last
    term, so every statement is the one the connection has compiled)."""
    statement = sql.term_frequencies(COUNT_CHUNK)
    found: dict[str, int] = {}
    for first in range(0, len(terms), COUNT_CHUNK):
        chunk = list(terms[first : first + COUNT_CHUNK])
        chunk += chunk[-1:] * (COUNT_CHUNK - len(chunk))
        found.update(conn.execute(statement, (family, scope_key, *chunk)).fetchall())
    return {term: df for term, df in found.items() if df > 0}


def terms_starting(
    conn: sqlite3.Connection,
    family: Family,
    scope_key: int,
    starts: Sequence[str],
    least: int,
) -> dict[str, int]:
    """The terms of the scope's searchable records that start with any of ``starts``
    and are held by at least ``least`` of them, with how many hold each: one range read
    of ``term_stats`` per start (``PoolRequest.naming_held`` reads them)."""
    found: dict[str, int] = {}
    for start in starts:
        past = start[:-1] + chr(ord(start[-1]) + 1)
        found.update(conn.execute(sql.TERMS_STARTING, (family, scope_key, start, past, least)))
    return found


def time_hits(
    conn: sqlite3.Connection, family: Family, scope_key: int, request: PoolRequest
) -> TimeHits:
    """The live records of the windows the query's dates name (see ``TimeWindow``).

    Relative dates are seen from today when the scope is live (``PoolRequest.reference``,
    given the scope's newest record). Records said in a window are at most
    ``WINDOW_SCAN`` per window; every read is a range scan of an index.
    """
    newest: float | None = None
    if request.needs_reference:
        newest = conn.execute(sql.NEWEST, (family, scope_key)).fetchone()[0]
        if newest is not None and newest <= sql.NO_TIME:
            newest = None
    hits = TimeHits()
    for window in request.time_windows(newest):
        said = (family, scope_key, window.said_from, window.said_to, WINDOW_SCAN)
        hits.said(window, conn.execute(sql.IN_WINDOW, said))
        named = (
            family, scope_key, window.mentions_from, window.day_to, window.day_from,
            window.widest_mention,
        )  # fmt: skip
        hits.named(row for (row,) in conn.execute(sql.MENTIONING, named))
    return hits


def thread_neighbours(
    conn: sqlite3.Connection, family: Family, scope_key: int, rows: Sequence[int], reach: int
) -> dict[int, ThreadNeighbours]:
    """The live records up to ``reach`` places before and after each of ``rows`` in its
    own thread, nearest first; one statement."""
    parameters = (reach, sql.rows_parameter(rows), family, scope_key)
    return {
        row: ThreadNeighbours(tuple(before), tuple(after))
        for row, before, after in one_row(conn, sql.neighbours_statement(), parameters)
    }


def fetch(
    conn: sqlite3.Connection, family: Family, scope_key: int, scope_id: str, rows: list[int]
) -> tuple[dict[int, Evidence], dict[str, tuple[str, ...]]]:
    """The evidence of those ``rows`` that are live records of the family in the scope,
    and by text the content terms of those that are conversation turns
    (``content_terms``), read off their full-text rows rather than analysed again."""
    if not rows:
        return {}, {}
    found = one_row(
        conn, sql.fetch_statement(family), (sql.rows_parameter(rows), family, scope_key)
    )
    evidence: dict[int, Evidence] = {}
    said: dict[str, tuple[str, ...]] = {}
    for *columns, terms in found:
        if columns[-1]:
            item = evidence[columns[0]] = sql.evidence_from_row(family, scope_id, columns)
            if terms is not None and item.text is not None:
                unscoped = sql.unscoped_terms(scope_key, terms)
                said[item.text] = content_terms_indexed(item.text, unscoped)
            let_loop_in()  # hundreds of rows are milliseconds of Python in a read thread
    return evidence, said


def one_row(
    conn: sqlite3.Connection, statement: str, parameters: Sequence[object]
) -> list[list[Any]]:
    """The rows of a :func:`~._sqlite_schema.as_one_row` statement."""
    (found,) = conn.execute(statement, parameters).fetchone()
    return json.loads(found)  # type: ignore[no-any-return]


def load_matrix(
    conn: sqlite3.Connection, family: Family, scope_key: int, dimension: int
) -> VectorMatrix:
    """A scope's live vectors, streamed into one preallocated matrix (its peak memory is
    the matrix plus one chunk, not three copies of it)."""
    where = "FROM records WHERE family = ? AND scope_key = ? AND live = 1 AND embedding IS NOT NULL"
    with snapshot(conn):  # the count and the rows as of one commit (another process writes)
        (count,) = conn.execute(f"SELECT count(*) {where}", (family, scope_key)).fetchone()
        vectors = np.empty((count, dimension), dtype=np.float32)
        rows = np.empty(count, dtype=np.int64)
        cursor = conn.execute(f"SELECT row, embedding {where} ORDER BY row", (family, scope_key))
        done = 0
        while chunk := cursor.fetchmany(LOAD_CHUNK):
            end = done + len(chunk)
            rows[done:end], vectors[done:end] = from_blobs(chunk, dimension)
            done = end
            let_loop_in()
    return VectorMatrix(dimension, rows[:done], vectors[:done])


@contextmanager
def snapshot(conn: sqlite3.Connection) -> Iterator[None]:
    """Run the statements inside as of one commit: in WAL mode a read transaction sees no
    commit another connection (or process) makes after its first read. Inside a
    transaction already (a write's), that one is the snapshot."""
    if conn.in_transaction:
        yield
        return
    conn.execute("BEGIN")
    try:
        yield
    finally:
        conn.execute("COMMIT")


def embedding_sources(conn: sqlite3.Connection) -> list[tuple[int, str]]:
    """Every searchable vector's row and the text it embeds (as the runtime embeds it)."""
    embedded = [family for family, rules in FAMILY_RULES.items() if rules.vector_channel]
    found = conn.execute(
        "SELECT row, family, text, abstract, overview, rid FROM records"
        f" WHERE live = 1 AND family IN ({','.join('?' * len(embedded))}) ORDER BY row",
        embedded,
    ).fetchall()
    out: list[tuple[int, str]] = []
    for row, family, text, abstract, overview, rid in found:
        stored = {"text": text, "abstract": abstract, "overview": overview, "uri": rid}
        out.append((row, FAMILY_RULES[family].embedded_text(columns_from(family, stored, None))))
    return out
