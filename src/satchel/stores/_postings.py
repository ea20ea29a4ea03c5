"""A scope's full-text postings held in the process: Okapi BM25 over numpy arrays, so a
full-text search of a scope that did not change runs no statement. Both stores hold
them (``sqlite._postings``, ``oceanbase._store``); each store says whose statistics
the scores take (``Totals``) and keeps its postings confirmed by the scope's write
version.

BM25, with ``k1 = 1.2`` and ``b = 0.75`` as FTS5's ``bm25()`` (SQLite's ``fts5_aux.c``),
scores a row ``D`` for the query's terms ``q`` (in the query's order) as minus the sum,
term by term, of::

    idf(q) * f(q, D) * (k1 + 1) / (f(q, D) + k1 * (1 - b + b * |D| / avgdl))

where ``f(q, D)`` is how often ``D`` holds the term, ``|D|`` its length in terms,
``avgdl`` the average length, and ``idf(q) = log((N - n(q) + 0.5) / (n(q) + 0.5))``
(``1e-6`` when not positive), ``N`` the rows and ``n(q)`` the scope's rows holding the
term. Ties keep the order of the rows, ascending.

A text's terms are its words split on spaces, each with the store's prefix (SQLite's
FTS5 terms carry the scope's; the OceanBase store's carry none).
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Final, cast

import attrs
import numpy as np

from ..vocabulary._keys import among
from ..vocabulary._retrieval import RARE_POSTINGS

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    import numpy.typing as npt

    from ..vocabulary._retrieval import TermSelection

#: BM25's constants, FTS5's (``fts5_aux.c``).
K1: Final = 1.2
B: Final = 0.75

#: Rows split per stretch while building (the GIL is given up between stretches):
#: about a millisecond of Python.
BUILD_CHUNK: Final = 256

#: Terms from which :meth:`ScopePostings.frequencies` counts in one array step: fewer
#: cost less as a lookup each (equal at about 16 terms, 3.2 us).
ARRAY_COUNTS: Final = 16
#: Texts of plain terms: ASCII letters and digits, lowercase, split by single spaces.
PLAIN_TEXT: Final = re.compile(r"[a-z0-9 ]*")


@attrs.frozen
class Totals:
    """What BM25 takes of the rows searched: how many, and their terms together."""

    rows: int
    tokens: int

    @property
    def average_length(self) -> float:
        return float(self.tokens) / float(self.rows) if self.rows else 0.0


@attrs.frozen(eq=False)
class ScopePostings:
    """One scope's rows as postings: ``rows`` ascending, each one's length in terms,
    and for each term (``terms``: its id) a run of ``starts[id]`` .. ``starts[id + 1]``
    in ``positions`` (into ``rows``, ascending) and ``counts``."""

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
        """The positions of the rows holding a term, and how often each holds it."""
        found = self.terms.get(term)
        if found is None:
            return self.positions[:0], self.counts[:0]
        start, end = self.starts[found], self.starts[found + 1]
        return self.positions[start:end], self.counts[start:end]

    def frequencies(self, prefix: str, terms: Sequence[str]) -> dict[str, int]:
        """How many of the scope's rows hold each of ``terms`` (unprefixed; absent terms
        left out): their document frequencies."""
        get = self.terms.get
        found: list[str] = []
        ids: list[int] = []
        for term in terms:
            held = get(prefix + term)
            if held is not None:
                found.append(term)
                ids.append(held)
        starts = self.starts
        if len(ids) < ARRAY_COUNTS:  # a query's few terms: a lookup each costs less
            return {
                term: int(starts[at + 1] - starts[at]) for term, at in zip(found, ids, strict=True)
            }
        # One array step for every count: a rating after a write asks for a thousand.
        at = np.asarray(ids, dtype=np.int64)
        counts: list[int] = (starts[at + 1] - starts[at]).tolist()
        return dict(zip(found, counts, strict=True))

    def ranked(
        self, terms: Sequence[str], limit: int, totals: Totals
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
        """The positions of the best ``limit`` rows holding any of ``terms`` and their
        BM25 (lower is better), as FTS5's ``ORDER BY rank LIMIT`` gives them."""
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
        """How many of ``terms`` each row at ``positions`` holds."""
        holding = [self.holders(term)[0] for term in terms]
        if not holding:
            return [0] * len(positions)
        # A row is in a term's postings once, so counting its places counts its terms.
        held = np.bincount(np.concatenate(holding), minlength=len(self.rows))
        return held[positions].tolist()  # type: ignore[no-any-return]

    def hits(
        self,
        spelled: Callable[[str], str],
        selection: TermSelection,
        counted: Sequence[str],
        totals: Totals,
    ) -> tuple[list[int], list[float], list[int]]:
        """The search ``selection`` asks for: its rows ranked by BM25 (the best
        ``selection.limit``), then the rescue's (each row once, at its first place),
        with their scores and how many of the ``counted`` terms each holds. A query
        term is held as ``spelled(term)`` (with the store's prefix, or its form)."""
        positions, scores = self.ranked([spelled(term) for term in selection.terms],
                                        selection.limit, totals)  # fmt: skip
        if selection.rescue is not None:
            rescue = [spelled(selection.rescue)]
            rescued, rescue_scores = self.ranked(rescue, RARE_POSTINGS, totals)
            positions = np.concatenate((positions, rescued))
            scores = np.concatenate((scores, rescue_scores))
        found = self.rows[positions].tolist()
        matches = self.matched(positions, [spelled(term) for term in counted])
        listed: list[float] = scores.tolist()
        if selection.rescue is not None:
            return first_of_each_row(found, listed, matches)
        return found, listed, matches

    def patched(
        self,
        prefix: str,
        added: Sequence[tuple[int, str]],
        removed: Sequence[int],
        *,
        plain: bool = True,
    ) -> ScopePostings | None:
        """These postings after a write that added ``added`` rows (each with its
        analysed terms, unprefixed) and took ``removed`` rows out of search; None when
        the write cannot be followed: a new row not past every row, or, with ``plain``,
        a term that is not plain ASCII (whose token only the store's index knows)."""
        added_rows = np.asarray([row for row, _ in added], dtype=np.int64)
        if len(added_rows) and (
            np.any(np.diff(added_rows) <= 0) or (len(self.rows) and added_rows[0] <= self.rows[-1])
        ):
            return None
        texts = [terms for _, terms in added]
        joined = " ".join(texts)
        if plain and PLAIN_TEXT.fullmatch(joined) is None:
            return None
        keep = ~among(self.rows, removed)
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


class Builder:
    """Postings made from rows given a stretch at a time (``add``), each stretch's
    numbers made into arrays at once, then ``built`` once. The caller gives up the GIL
    between stretches (``let_loop_in``) when it builds in a worker thread."""

    def __init__(self) -> None:
        self._ids: dict[str, int] = {}
        self._rows: list[npt.NDArray[np.int64]] = []
        self._terms: list[npt.NDArray[np.int64]] = []
        self._lengths: list[npt.NDArray[np.int64]] = []

    @property
    def terms(self) -> dict[str, int]:
        """Every term added so far, each with its id."""
        return self._ids

    def add(self, found: Sequence[tuple[int, str]]) -> tuple[str, int]:
        """Rows (ascending, past every row added before) with their terms, prefixed;
        returns their texts joined by spaces and how many terms they hold."""
        ids = self._ids
        texts = [text for _, text in found]
        joined = " ".join(texts)
        tokens = joined.split()
        self._rows.append(np.fromiter((row for row, _ in found), dtype=np.int64, count=len(found)))
        self._lengths.append(
            np.fromiter((len(text.split()) for text in texts), dtype=np.int64, count=len(texts))
        )
        self._terms.append(
            np.fromiter(
                (ids.setdefault(token, len(ids)) for token in tokens),
                dtype=np.int64,
                count=len(tokens),
            )
        )
        return joined, len(tokens)

    def built(self) -> ScopePostings:
        rows = _joined(self._rows)
        lengths = _joined(self._lengths)
        count = len(rows)
        documents = np.repeat(np.arange(count, dtype=np.int64), lengths)
        keys, counts = np.unique(_joined(self._terms) * max(count, 1) + documents,
                                 return_counts=True)  # fmt: skip
        starts = np.searchsorted(keys // max(count, 1), np.arange(len(self._ids) + 1))
        return ScopePostings(
            rows,
            lengths.astype(np.float64),
            self._ids,
            starts.astype(np.int64),
            keys % max(count, 1),
            counts.astype(np.float64),
        )


def first_of_each_row(
    found: list[int], scores: list[float], matches: list[int]
) -> tuple[list[int], list[float], list[int]]:
    """Each row once, at its first place: a rescued row that BM25 ranked stays ranked."""
    first: dict[int, int] = {}
    for place, row in enumerate(found):
        first.setdefault(row, place)
    if len(first) == len(found):
        return found, scores, matches
    places = list(first.values())
    return list(first), [scores[place] for place in places], [matches[place] for place in places]


def _idf(rows: int, held: int) -> float:
    """FTS5's IDF of a term ``held`` by that many of ``rows`` (the floor when the term
    is in every row, or in more than the rows said: postings ahead of the statistics)."""
    if held >= rows:
        return 1e-6
    idf = math.log((rows - held + 0.5) / (held + 0.5))
    return 1e-6 if idf <= 0.0 else idf


def _joined(parts: list[npt.NDArray[np.int64]]) -> npt.NDArray[np.int64]:
    return np.concatenate(parts) if parts else np.empty(0, dtype=np.int64)
