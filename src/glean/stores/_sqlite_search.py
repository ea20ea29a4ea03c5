"""Searching the embedded store: the scoped full-text query over the selective query
terms, evidence reads by key, and loading a scope's vector matrix."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .._records import resource_text
from ..recall._analysis import match_expression
from . import _sqlite_schema as sql
from ._vectors import VectorMatrix

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Sequence

    from .._families import Family
    from ..recall._evidence import Evidence

#: Most postings (rows matching any chosen term) one full-text search may rank.
POSTINGS_BUDGET = 2048


def lexical_rows(
    conn: sqlite3.Connection, family: Family, key: int, terms: Sequence[str], limit: int
) -> list[tuple[int, str, float]]:
    match = match_expression(selective_terms(conn, family, key, terms))
    if not match:
        return []
    table = sql.FTS_TABLES[family]
    statement = (
        f"SELECT rowid, terms, rank FROM {table} WHERE {table} MATCH ? ORDER BY rank LIMIT ?"
    )
    return conn.execute(statement, (sql.lexical_query(key, match), limit)).fetchall()


def selective_terms(
    conn: sqlite3.Connection, family: Family, key: int, terms: Sequence[str]
) -> list[str]:
    """The query terms that drive the full-text search, rarest first.

    BM25 ranking costs per matching row, so a term found in most of a scope would make
    every search scan the scope while adding almost nothing to the ranking. Terms absent
    from the scope are skipped; the rest are taken rarest first while their postings stay
    within ``POSTINGS_BUDGET`` (the rarest term is always taken). Admission still counts
    every query term a candidate contains.
    """
    if not terms:
        return []
    found = dict(conn.execute(sql.term_frequencies(len(terms)), (family, key, *terms)).fetchall())
    chosen: list[str] = []
    postings = 0
    for term in sorted(found, key=found.__getitem__):
        if found[term] <= 0:
            continue
        if chosen and postings + found[term] > POSTINGS_BUDGET:
            break
        chosen.append(term)
        postings += found[term]
    return chosen


def fetch(
    conn: sqlite3.Connection, family: Family, scope_id: str, rows: list[int]
) -> dict[int, Evidence]:
    if not rows:
        return {}
    found = conn.execute(sql.fetch_statement(len(rows)), rows).fetchall()
    return {row[0]: sql.evidence_from_row(family, scope_id, row) for row in found if row[-1]}


def load_matrix(conn: sqlite3.Connection, family: Family, key: int, dimension: int) -> VectorMatrix:
    found = conn.execute(
        "SELECT row, embedding FROM records WHERE family = ? AND scope_key = ? AND live = 1"
        " AND embedding IS NOT NULL ORDER BY row",
        (family, key),
    ).fetchall()
    rows = np.fromiter((row for row, _ in found), dtype=np.int64, count=len(found))
    vectors = np.frombuffer(b"".join(blob for _, blob in found), dtype=np.float32)
    return VectorMatrix(dimension, rows, vectors.reshape(len(found), dimension))


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
