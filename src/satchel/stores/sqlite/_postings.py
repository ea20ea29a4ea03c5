"""A scope's full-text postings held in the process, so a full-text search of a scope
that did not change runs no statement: FTS5's BM25 computed over numpy arrays, to the
same numbers and in the same order as ``_schema.lexical_search``.

FTS5's ``bm25()`` (SQLite's ``fts5_aux.c``), with ``k1 = 1.2`` and ``b = 0.75``, scores a
row ``D`` for the query's phrases ``q`` (here one scoped term each, in the MATCH
expression's order) as minus the sum, phrase by phrase, of::

    idf(q) * f(q, D) * (k1 + 1) / (f(q, D) + k1 * (1 - b + b * |D| / avgdl))

where ``f(q, D)`` is how often ``D`` holds the term, ``|D|`` its length in tokens,
``avgdl`` the table's tokens over its rows (every scope's: the table's own totals),
and ``idf(q) = log((N - n(q) + 0.5) / (n(q) + 0.5))`` (``1e-6`` when not positive), ``N``
the table's rows and ``n(q)`` the rows holding the term (the scope's alone: its terms
carry its prefix). The sums here run in the same order over the same doubles, so the
scores are the same bits; ties keep FTS5's order, row ascending.

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

import math
import re
from typing import TYPE_CHECKING, Final, cast

import attrs
import numpy as np

from ...vocabulary._turns import let_loop_in
from . import _schema as sql

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Sequence

    import numpy.typing as npt

    from ...vocabulary._families import Family

#: FTS5's BM25 constants (``fts5_aux.c``).
K1: Final = 1.2
B: Final = 0.75

#: Texts split per stretch while building (the GIL is given up between stretches):
#: about a millisecond of Python.
BUILD_CHUNK: Final = 256

#: FTS5's id of the record holding the table's row count and token totals.
_AVERAGES_ID: Final = 1

#: A term as the statement-free search can take it: what ``unicode61`` leaves as is.
_PLAIN_TERM: Final = re.compile(r"[a-z0-9]+")
_PLAIN_TEXT: Final = re.compile(r"[a-z0-9 ]*")
#: The first character past a prefix's ``x``: a scope's terms are ``[prefix, prefix_end)``.
_PAST_PREFIX: Final = "y"


@attrs.frozen
class Totals:
    """What BM25 reads of the whole FTS5 table: its rows and their tokens."""

    rows: int
    tokens: int

    @property
    def average_length(self) -> float:
        return float(self.tokens) / float(self.rows) if self.rows else 0.0


@attrs.frozen(eq=False)
class ScopePostings:
    """One scope's FTS5 rows as postings: ``rows`` ascending, each one's length in
    tokens, and for each scoped term (``terms``: its id) a run of ``starts[id]`` ..
    ``starts[id + 1]`` in ``positions`` (into ``rows``, ascending) and ``counts``."""

    rows: npt.NDArray[np.int64]
    lengths: npt.NDArray[np.float64]
    terms: dict[str, int]
    starts: npt.NDArray[np.int64]
    positions: npt.NDArray[np.int64]
    counts: npt.NDArray[np.float64]

    @property
    def nbytes(self) -> int:
        arrays = (self.rows, self.lengths, self.starts, self.positions, self.counts)
        return sum(array.nbytes for array in arrays) + 96 * len(self.terms)

    def holders(self, term: str) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
        """The positions of the rows holding a scoped term, and how often each holds it."""
        found = self.terms.get(term)
        if found is None:
            return self.positions[:0], self.counts[:0]
        start, end = self.starts[found], self.starts[found + 1]
        return self.positions[start:end], self.counts[start:end]

    def frequencies(self, prefix: str, terms: Sequence[str]) -> dict[str, int]:
        """How many of the scope's rows hold each of ``terms`` (unscoped; absent terms
        left out), as ``term_stats`` counts them: FTS5's document frequencies."""
        found = {}
        for term in terms:
            held = self.terms.get(prefix + term)
            if held is not None:
                found[term] = int(self.starts[held + 1] - self.starts[held])
        return found

    def ranked(
        self, terms: Sequence[str], limit: int, totals: Totals
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
        """The positions of the best ``limit`` rows holding any of the scoped ``terms``
        and their BM25 (lower is better), as ``ORDER BY rank LIMIT`` gives them."""
        held = [self.holders(term) for term in terms]
        positions = np.concatenate([found for found, _ in held])
        counts = np.concatenate([count for _, count in held])
        idf = np.repeat([_idf(totals.rows, len(found)) for found, _ in held],
                        [len(found) for found, _ in held])  # fmt: skip
        lengths = self.lengths[positions]
        # The same operations as fts5_aux.c's fts5Bm25Function, element by element; a
        # row's terms add up in the query's order, as there (bincount adds in input
        # order), from 0.0, and a term a row lacks adds nothing there either.
        average = totals.average_length
        terms_scores = idf * (
            (counts * (K1 + 1.0)) / (counts + K1 * (1 - B + B * lengths / average))
        )
        scores = cast(
            "npt.NDArray[np.float64]",
            np.bincount(positions, terms_scores, minlength=len(self.rows)),
        )
        # The distinct positions in order, as ``np.unique`` gives them, at the cost of
        # a count like the one above rather than a sort (3 against 15 us at 300 postings).
        present = np.bincount(positions, minlength=len(self.rows))
        candidates = np.flatnonzero(present).astype(np.int64, copy=False)
        order = np.argsort(-scores[candidates], kind="stable")[:limit]
        best = candidates[order]
        return best, -1.0 * scores[best]

    def matched(self, positions: npt.NDArray[np.int64], terms: Sequence[str]) -> list[int]:
        """How many of the scoped ``terms`` each row at ``positions`` holds."""
        holding = [self.holders(term)[0] for term in terms]
        if not holding:
            return [0] * len(positions)
        # A row is in a term's postings once, so counting its places counts its terms.
        held = np.bincount(np.concatenate(holding), minlength=len(self.rows))
        return held[positions].tolist()  # type: ignore[no-any-return]

    def patched(
        self, prefix: str, added: Sequence[tuple[int, str]], removed: Sequence[int]
    ) -> ScopePostings | None:
        """These postings after a write that indexed ``added`` rows (each with its
        analysed terms, unscoped) and took ``removed`` rows out of search; None when
        the write cannot be followed (a new row not past every row, or a term that is
        not plain ASCII, whose FTS5 token only the index could confirm)."""
        added_rows = np.asarray([row for row, _ in added], dtype=np.int64)
        if len(added_rows) and (
            np.any(np.diff(added_rows) <= 0) or (len(self.rows) and added_rows[0] <= self.rows[-1])
        ):
            return None
        texts = [terms for _, terms in added]
        joined = " ".join(texts)
        if _PLAIN_TEXT.fullmatch(joined) is None:
            return None
        keep = ~np.isin(self.rows, np.asarray(removed, dtype=np.int64))
        kept = int(keep.sum())
        count = kept + len(added_rows)
        moved = np.cumsum(keep) - 1  # each kept row's new position
        term_of = np.repeat(np.arange(len(self.terms), dtype=np.int64), np.diff(self.starts))
        staying = keep[self.positions]
        terms = dict(self.terms)
        new_ids = [terms.setdefault(prefix + term, len(terms)) for term in joined.split()]
        lengths = [len(text.split()) for text in texts]
        documents = kept + np.repeat(np.arange(len(texts), dtype=np.int64), lengths)
        new_keys, new_counts = np.unique(
            np.asarray(new_ids, dtype=np.int64) * max(count, 1) + documents, return_counts=True
        )
        keys = np.concatenate((term_of[staying] * max(count, 1) + moved[self.positions[staying]],
                               new_keys))  # fmt: skip
        counts = np.concatenate((self.counts[staying], new_counts.astype(np.float64)))
        order = np.argsort(keys, kind="stable")
        keys, counts = keys[order], counts[order]
        return ScopePostings(
            np.concatenate((self.rows[keep], added_rows)),
            np.concatenate((self.lengths[keep], np.asarray(lengths, dtype=np.float64))),
            terms,
            np.searchsorted(keys // max(count, 1), np.arange(len(terms) + 1)).astype(np.int64),
            keys % max(count, 1),
            counts,
        )


def _idf(rows: int, held: int) -> float:
    """FTS5's IDF of a term ``held`` by that many of the table's ``rows``."""
    idf = math.log((rows - held + 0.5) / (held + 0.5))
    return 1e-6 if idf <= 0.0 else idf


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

    Read and split ``BUILD_CHUNK`` rows at a time, each stretch's numbers made into
    arrays at once, with the GIL given up between stretches: the sqlite3 module converts
    rows holding the GIL, and one ``fetchall`` of a 20,000-turn scope kept a waiting
    event loop out for 14 ms (``bench loop``'s heartbeat lagged 5-10 ms in every cell
    of 20,000 entries)."""
    table = sql.FTS_TABLES[family]
    prefix = sql.term_prefix(scope_key)
    cursor = conn.execute(
        f"SELECT c.id, c.c0 FROM {table}_content c JOIN records r ON r.row = c.id"
        " WHERE r.family = ? AND r.scope_key = ? ORDER BY c.id",
        (family, scope_key),
    )
    ids: dict[str, int] = {}
    row_parts: list[npt.NDArray[np.int64]] = []
    term_parts: list[npt.NDArray[np.int64]] = []
    length_parts: list[npt.NDArray[np.int64]] = []
    plain = True
    while found := cursor.fetchmany(BUILD_CHUNK):
        texts = [text for _, text in found]
        joined = " ".join(texts)
        tokens = joined.split()
        if (" " + joined).count(" " + prefix) != len(tokens):
            return None  # a token without the prefix: the tokenizer split one
        plain = plain and _PLAIN_TEXT.fullmatch(joined) is not None
        row_parts.append(np.fromiter((row for row, _ in found), dtype=np.int64, count=len(found)))
        length_parts.append(
            np.fromiter((len(text.split()) for text in texts), dtype=np.int64, count=len(texts))
        )
        term_parts.append(
            np.fromiter(
                (ids.setdefault(token, len(ids)) for token in tokens),
                dtype=np.int64,
                count=len(tokens),
            )
        )
        let_loop_in()
    if not plain and not _indexed_as_split(conn, table, prefix, ids):
        return None
    rows = _joined(row_parts)
    length_array = _joined(length_parts)
    count = len(rows)
    documents = np.repeat(np.arange(count, dtype=np.int64), length_array)
    keys, counts = np.unique(_joined(term_parts) * max(count, 1) + documents,
                             return_counts=True)  # fmt: skip
    term_of = keys // max(count, 1)
    starts = np.searchsorted(term_of, np.arange(len(ids) + 1))
    return ScopePostings(
        rows,
        length_array.astype(np.float64),
        ids,
        starts.astype(np.int64),
        keys % max(count, 1),
        counts.astype(np.float64),
    )


def _joined(parts: list[npt.NDArray[np.int64]]) -> npt.NDArray[np.int64]:
    return np.concatenate(parts) if parts else np.empty(0, dtype=np.int64)
