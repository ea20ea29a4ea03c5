"""A scope's FTS5 rows held as postings (``stores._postings``), so a full-text search
of a scope that did not change runs no statement: FTS5's BM25 computed over numpy
arrays, to the same numbers and in the same order as ``_schema.lexical_search``.

FTS5's ``bm25()`` takes ``N`` and the average length from the whole table (every
scope's rows: ``read_totals``) and a term's document frequency from the scope alone
(its terms carry its prefix); the held postings' BM25 takes the same, and sums in the
same order over the same doubles, so the scores are the same bits.

The postings are the texts split on spaces, which must be the tokens FTS5's
``unicode61`` tokenizer made of them. A scope whose every token is ASCII letters and
digits (lowercase, as analysis leaves them) is so by construction. A scope with any
other token (``café``) is held only once its distinct terms are found to be the very
terms FTS5's index holds under the scope's prefix (read through an ``fts5vocab`` table
in the connection's temporary schema): a token the tokenizer folded or split would be
a term of one set and not of the other, since a folded token is a fixed point of the
folding. A scope that fails keeps the statement; so does a query term the postings do
not hold that is not plain (FTS5 might fold it onto a held one).

Which scopes are held, and when they are read, is ``_postings_cache``.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Final

from ...vocabulary._turns import let_loop_in
from .._postings import BUILD_CHUNK, PLAIN_TEXT, Builder, ScopePostings, Totals
from . import _schema as sql

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Sequence

    from ...vocabulary._families import Family

#: FTS5's id of the record holding the table's row count and token totals.
_AVERAGES_ID: Final = 1

#: A term as the statement-free search can take it: what ``unicode61`` leaves as is.
_PLAIN_TERM: Final = re.compile(r"[a-z0-9]+")
#: The first character past a prefix's ``x``: a scope's terms are ``[prefix, prefix_end)``.
_PAST_PREFIX: Final = "y"


def answers(postings: ScopePostings, prefix: str, terms: Sequence[str]) -> bool:
    """Whether held postings search ``terms`` as FTS5 would: each one held, or plain
    (a term no row holds matches nothing in either)."""
    return all(prefix + term in postings.terms or _PLAIN_TERM.fullmatch(term) for term in terms)


def read_totals(conn: sqlite3.Connection, family: Family) -> Totals:
    """The FTS5 table's row count and token total, from its averages record: SQLite
    varints, the rows then each column's tokens (``fts5_index.c``)."""
    table = sql.FTS_TABLES[family]
    row = conn.execute(f"SELECT block FROM {table}_data WHERE id = ?", (_AVERAGES_ID,)).fetchone()
    if row is None or not row[0]:
        return Totals(0, 0)
    values = varints(bytes(row[0]))
    return Totals(values[0], values[1] if len(values) > 1 else 0)


def varints(blob: bytes) -> list[int]:
    """SQLite's variable-length integers, one after another (``sqlite3GetVarint``):
    big-endian seven-bit groups, the ninth byte whole."""
    values: list[int] = []
    place = 0
    while place < len(blob):
        value = 0
        for _ in range(8):
            byte = blob[place]
            place += 1
            value = (value << 7) | (byte & 0x7F)
            if not byte & 0x80:
                break
        else:
            value = (value << 8) | blob[place]
            place += 1
        values.append(value)
    return values


def _indexed_as_split(
    conn: sqlite3.Connection, table: str, prefix: str, terms: dict[str, int]
) -> bool:
    """Whether the FTS5 index holds exactly ``terms`` under ``prefix``."""
    vocabulary = f"{table}_terms"
    conn.execute(
        f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{vocabulary}"
        f" USING fts5vocab(main, {table}, 'row')"
    )
    indexed = conn.execute(
        f"SELECT term FROM temp.{vocabulary} WHERE term >= ? AND term < ?",
        (prefix, prefix[:-1] + _PAST_PREFIX),
    ).fetchall()
    return len(indexed) == len(terms) and all(term in terms for (term,) in indexed)


def read_postings(conn: sqlite3.Connection, family: Family, scope_key: int) -> ScopePostings | None:
    """The scope's FTS5 rows as postings, from the table's stored texts; None when a
    text holds a token that is not plain.

    Read and split ``BUILD_CHUNK`` rows at a time, with the GIL given up between
    stretches: the sqlite3 module converts rows holding the GIL, and one ``fetchall``
    of a 20,000-turn scope kept a waiting event loop out for 14 ms (``bench loop``'s
    heartbeat lagged 5-10 ms in every cell of 20,000 entries)."""
    table = sql.FTS_TABLES[family]
    prefix = sql.term_prefix(scope_key)
    cursor = conn.execute(
        f"SELECT c.id, c.c0 FROM {table}_content c JOIN records r ON r.row = c.id"
        " WHERE r.family = ? AND r.scope_key = ? ORDER BY c.id",
        (family, scope_key),
    )
    builder = Builder()
    plain = True
    while found := cursor.fetchmany(BUILD_CHUNK):
        joined, tokens = builder.add(found)
        if (" " + joined).count(" " + prefix) != tokens:
            return None  # a token without the prefix: the tokenizer split one
        plain = plain and PLAIN_TEXT.fullmatch(joined) is not None
        let_loop_in()
    if not plain and not _indexed_as_split(conn, table, prefix, builder.terms):
        return None
    return builder.built()
