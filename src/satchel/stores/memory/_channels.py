"""The in-process store's channels, as plain scans of a scope's searchable versions: BM25
over their analysed terms, a cosine product over their vectors, and the time windows
(ranked by ``TimeHits``, as every store ranks them).

It never writes and never keeps anything between calls; a large store would keep
indexes instead, and its results must be the same.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

import numpy as np

from ...vocabulary._families import rules
from ...vocabulary._retrieval import (
    RARE_POSTINGS,
    TimeHits,
    apart_from_common,
    bm25,
)
from .._rules import check_query_vector

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    import numpy.typing as npt

    from ...vocabulary._families import Family
    from ...vocabulary._retrieval import PoolRequest
    from ._stored import Stored

    Vectors = npt.NDArray[np.float32]


def frequencies(records: list[Stored], terms: Sequence[str]) -> dict[str, int]:
    """How many of ``records`` hold each of ``terms`` (terms none holds left out)."""
    wanted = frozenset(terms)
    holders = Counter(term for stored in records for term in wanted.intersection(stored.terms))
    return {term: holders[term] for term in terms if holders[term]}


def terms_starting(records: list[Stored], starts: Sequence[str], least: int) -> dict[str, int]:
    """The terms of ``records`` that start with any of ``starts`` and are held by at
    least ``least`` of them, with how many hold each (``PoolRequest.naming_held``)."""
    holders: Counter[str] = Counter(
        term for stored in records for term in stored.terms if term.startswith(tuple(starts))
    )
    return {term: count for term, count in holders.items() if count >= least}


def lexical(
    records: list[Stored], request: PoolRequest, frequencies: Mapping[str, int]
) -> tuple[list[int], list[float], list[int], int, int, int]:
    """The full-text channel as ``request.select_terms`` asks for it, given
    :func:`frequencies`: each candidate's key, its BM25 (lower is better) and how many
    distinct query terms it holds (the scope's common ones left out), how many terms
    were left out so, and how many of the others some record holds."""
    selection = request.select_terms(frequencies, len(records))
    if not selection.terms:
        return [], [], [], 0, 0, 0
    counted = [term for term in request.query.terms if term not in selection.common]
    average = sum(stored.length for stored in records) / len(records)

    def ranked(terms: Sequence[str]) -> list[tuple[float, Stored]]:
        """The records holding any of ``terms``, by BM25 over them (ties: older first)."""
        hits = [
            (bm25(stored.terms, stored.length, terms, frequencies, len(records), average), stored)
            for stored in records
            if any(term in stored.terms for term in terms)
        ]
        return sorted(hits, key=lambda hit: (hit[0], hit[1].key))

    found = ranked(selection.terms)[: selection.limit]
    if selection.rescue is not None:  # every other holder of the rare term, scored by it alone
        kept = {stored.key for _, stored in found}
        rescued = ranked([selection.rescue])[:RARE_POSTINGS]
        found += [(score, stored) for score, stored in rescued if stored.key not in kept]
    return (
        [stored.key for _, stored in found],
        [score for score, _ in found],
        [sum(term in stored.terms for term in counted) for _, stored in found],
        len(selection.common),
        selection.held,
        selection.distinctive,
    )


def nearest(
    family: Family,
    records: list[Stored],
    request: PoolRequest,
    query: Vectors | None,
    dimension: int | None,
) -> tuple[list[int], list[float]]:
    """The vector channel: the ``request.size`` most similar to ``query``
    (``PoolRequest.vector_for``) apart from the scope's common direction
    (``apart_from_common``), best first, with their cosine similarities."""
    if query is None or not rules(family).vector_channel or request.size <= 0:
        return [], []
    check_query_vector(query, dimension)
    keys, scores, similar = _ranked(records, query)
    order = np.lexsort((keys, -scores))[: request.size]  # ties: the older first
    return keys[order].tolist(), similar[order].tolist()


def _ranked(
    records: list[Stored], query: Vectors
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32], npt.NDArray[np.float32]]:
    """The keys of ``records`` holding a vector, each one's score apart from their
    common direction (``apart_from_common``) and its plain cosine to ``query``."""
    vectors = [stored.vector for stored in records if stored.vector is not None]
    keys = np.array([stored.key for stored in records if stored.vector is not None], np.int64)
    if not vectors:
        empty = np.empty(0, dtype=np.float32)
        return keys, empty, empty
    matrix = np.stack(vectors).astype(np.float32)
    scores, similar = apart_from_common(matrix, unit(query), matrix.sum(axis=0, dtype=np.float64))
    return keys, scores, similar


def time_channel(
    family: Family, records: list[Stored], request: PoolRequest, query: Vectors | None
) -> tuple[list[int], int]:
    """The records of the windows the query's dates name, and how many there are,
    ranked by ``TimeHits`` against ``query`` (records met in key order, so ties keep
    the older first)."""
    if not request.query.dates or not rules(family).time_channel or request.time_size <= 0:
        return [], 0
    said = [stored.said_at for stored in records if stored.said_at is not None]
    newest = max(said) if said and request.needs_reference else None
    windows = request.time_windows(newest)
    hits = TimeHits()
    found: list[Stored] = []
    for stored in records:
        at, seen = stored.said_at, len(hits)
        for window in windows:
            if at is not None and window.said_from <= at < window.said_to:
                hits.said(window, [(stored.key, at)])
            if any(window.names(start, end) for start, end in stored.mentions):
                hits.named([stored.key])
        if len(hits) > seen:
            found.append(stored)
    if not found:
        return [], 0
    similar = None
    if query is not None and rules(family).vector_channel:
        similar = _apart(records, found, query)
    return hits.ranked(request.time_size, similar).tolist(), len(hits)


def _apart(records: list[Stored], found: list[Stored], query: Vectors) -> npt.NDArray[np.float32]:
    """Each of ``found``'s score apart from the common direction of ``records``' vectors
    (-1 without a vector), as the vector channel ranks."""
    keys, scores, _ = _ranked(records, query)
    score_of = dict(zip(keys.tolist(), scores.tolist(), strict=True))
    return np.array([score_of.get(stored.key, -1.0) for stored in found], dtype=np.float32)


def similarities(records: list[Stored], query: Vectors) -> npt.NDArray[np.float32]:
    """The cosine similarity of each record's vector to ``query`` (-1 without one)."""
    direction = unit(query)
    return np.array(
        [-1.0 if stored.vector is None else stored.vector @ direction for stored in records],
        dtype=np.float32,
    )


def unit(vector: Vectors) -> Vectors:
    """A float32 copy of ``vector`` scaled to length 1 (a zero vector stays zero)."""
    copy = np.array(vector, dtype=np.float32)
    norm = float(np.linalg.norm(copy))
    return copy / norm if norm > 0 else copy
