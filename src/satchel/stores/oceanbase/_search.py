"""The OceanBase store's channels: full text, vectors and time, each a few statements
on one connection. The store runs them on its loop thread (``_oceanbase.py``)."""

from __future__ import annotations

import math
import time
from collections import OrderedDict
from datetime import datetime
from typing import TYPE_CHECKING, Any, Final

import attrs
import numpy as np

from ...vocabulary._evidence import Evidence, ThreadNeighbours
from ...vocabulary._families import rules
from ...vocabulary._retrieval import (
    APART_FLOOR,
    POSTINGS_BUDGET,
    RARE_POSTINGS,
    WINDOW_SCAN,
    TimeHits,
    bm25,
)
from ...vocabulary._speakers import passed_over
from .._postings import Totals
from . import _schema as sql
from ._rows import NO_TIME, vector_literal

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    import numpy.typing as npt

    from ...vocabulary._families import Family
    from ...vocabulary._retrieval import PoolRequest
    from .._postings import ScopePostings
    from ._vector_cache import ScopeVectors

    Vectors = npt.NDArray[np.float32]

#: The newest keys of a scope that an approximate search also scans exactly: the HNSW
#: index can lag a fresh insert, and a record just written must be findable at once.
FRESH_KEYS: Final = 1024
#: Seconds between two tries of an HNSW index found loading (see :class:`VectorIndex`).
INDEX_RETRY: Final = 10.0
#: The engine's error for a statement that ran out of time (OB_TIMEOUT).
STATEMENT_TIMEOUT: Final = 4012


@attrs.frozen
class ScopeState:
    """What a retrieve reads of a scope first: its write version, next key, the
    family's searchable records and their total term count, and the version of the last
    write that took a record out of search (``_vector_cache``)."""

    version: int
    next_key: int
    rows: int
    term_total: int
    removed_at: int = 0


@attrs.frozen
class ScopeStates:
    """A scope's :class:`ScopeState` for every family at one moment: ``families`` for
    those it counts records of, ``empty`` (no records) for the others."""

    empty: ScopeState
    families: dict[str, ScopeState]

    def of(self, family: Family) -> ScopeState:
        return self.families.get(family, self.empty)


async def scope_states(cur: Any, scope_id: str) -> ScopeStates | None:
    """The scope's state for every family (``sql.STATES``), in one statement (a
    snapshot of its own); None for a scope not made."""
    await cur.execute(sql.STATES, (scope_id,))
    rows = await cur.fetchall()
    return _states(rows) if rows else None


async def scopes_states(cur: Any, scope_ids: Sequence[str]) -> dict[str, ScopeStates]:
    """:func:`scope_states` of several scopes in one statement (``sql.STATES_OF``; one
    scope alone reads ``sql.STATES``): the states of those made, by scope."""
    if len(scope_ids) == 1:
        states = await scope_states(cur, scope_ids[0])
        return {} if states is None else {scope_ids[0]: states}
    marks = ", ".join(["%s"] * len(scope_ids))
    await cur.execute(sql.STATES_OF.format(marks=marks), tuple(scope_ids))
    rows: dict[str, list[Any]] = {}
    for scope, *row in await cur.fetchall():
        rows.setdefault(sql.name(scope), []).append(row)
    return {scope: _states(found) for scope, found in rows.items()}


def _states(rows: Sequence[Sequence[Any]]) -> ScopeStates:
    """The :class:`ScopeStates` of one scope's rows of ``sql.STATES``."""
    _, version, next_key, _, _, removed_at = rows[0]
    empty = ScopeState(int(version or 0), int(next_key or 0), 0, 0, int(removed_at or 0))
    families = {
        str(family): ScopeState(*(int(value or 0) for value in values))
        for family, *values in rows
        if family is not None
    }
    return ScopeStates(empty, families)


async def snapshot_state(
    cur: Any, family: Family, scope_id: str, terms: Sequence[str]
) -> tuple[ScopeState | None, dict[str, int] | None]:
    """Start a retrieve's snapshot (``sql.SNAPSHOT``) and read in it the scope's state
    and the query terms' frequencies (:func:`term_frequencies`; None without terms),
    the statements sent together: one round trip where they took four (measured on
    seekdb at 10,000 records: 0.4-0.7 ms each). The caller commits."""
    statements = [*sql.SNAPSHOT, sql.STATE]
    arguments: list[Any] = [family, scope_id]
    if terms:
        statements.append(sql.TERM_FREQUENCIES.format(marks=",".join(["%s"] * len(terms))))
        arguments += [scope_id, family, *terms]
    await cur.execute("; ".join(statements), arguments)
    for _ in sql.SNAPSHOT:  # their answers say nothing
        await cur.nextset()
    found = await cur.fetchone()
    state = None if found is None else ScopeState(*(int(value or 0) for value in found))
    if not terms:
        return state, None
    await cur.nextset()
    return state, {term: int(df) for term, df in await cur.fetchall() if df > 0}


def evidence_of(family: Family, scope_id: str, row: Sequence[Any]) -> Evidence:
    """A record's evidence from its row (``sql.EVIDENCE_COLUMNS``, then any others)."""
    _, rid, revision, text, created_at, thread, abstract, overview = row[:8]
    return Evidence.from_record(
        family, scope_id, rid, int(revision), text=text, abstract=abstract, overview=overview,
        thread=thread, created_at=datetime.fromisoformat(created_at) if created_at else None,
    )  # fmt: skip


async def term_frequencies(
    cur: Any, family: Family, scope_id: str, terms: Sequence[str]
) -> dict[str, int]:
    """How many of the scope's searchable records hold each of ``terms`` (terms none
    holds left out)."""
    if not terms:
        return {}
    marks = ",".join(["%s"] * len(terms))
    await cur.execute(sql.TERM_FREQUENCIES.format(marks=marks), (scope_id, family, *terms))
    return {term: int(df) for term, df in await cur.fetchall() if df > 0}


async def terms_starting(
    cur: Any, family: Family, scope_id: str, starts: Sequence[str], least: int
) -> dict[str, int]:
    """The terms of the scope's searchable records that start with any of ``starts``
    and are held by at least ``least`` of them, with how many hold each
    (``PoolRequest.naming_held``): one range read per start."""
    found: dict[str, int] = {}
    for start in starts:
        past = start[:-1] + chr(ord(start[-1]) + 1)
        await cur.execute(sql.TERMS_STARTING, (scope_id, family, start, past, least))
        found.update((term, int(df)) for term, df in await cur.fetchall())
    return found


async def lexical(
    cur: Any,
    family: Family,
    scope_id: str,
    request: PoolRequest,
    state: ScopeState,
    frequencies: Mapping[str, int] | None = None,
    postings: ScopePostings | None = None,
) -> tuple[list[int], list[float], list[int], int, int, int]:
    """The full-text channel. The engine finds the records holding the selection's terms
    (its FULLTEXT index); satchel ranks them by BM25 over the scope's own statistics
    and counts each one's matched query terms on its analysed text (the scope's common
    ones left out, whose number comes next, and last how many of the others some
    record holds). ``frequencies`` (:func:`term_frequencies`) when already read; with
    the scope's ``postings`` held as of ``state`` (``_held_texts``), the same search
    over them, and no statement."""
    terms = request.query.terms
    if not terms:
        return [], [], [], 0, 0, 0
    if frequencies is None:
        frequencies = await term_frequencies(cur, family, scope_id, terms)
    selection = request.select_terms(frequencies, state.rows)
    if not selection.terms:
        return [], [], [], 0, 0, 0
    counted = [term for term in terms if term not in selection.common]
    if postings is not None:
        keys, scores, matched = postings.hits(
            sql.indexed_term, selection, counted, Totals(state.rows, state.term_total)
        )
        return keys, scores, matched, len(selection.common), selection.held, selection.distinctive
    average = state.term_total / max(state.rows, 1)

    async def holders_of(words: tuple[str, ...], limit: int) -> tuple[list[_Held], bool]:
        """The records holding any of ``words`` with their terms, and whether they are
        every one of them (else the engine's best ``limit`` or more)."""
        against = " ".join(sql.indexed_term(word) for word in words)
        scan = max(limit, POSTINGS_BUDGET)
        holders = None
        if sum(frequencies.get(word, 0) for word in words) <= scan:
            # Every holder fits: read them unordered, unless the engine finds more
            # than the scope's frequencies say (then its best ones, as below).
            await cur.execute(sql.EVERY_HOLDER, (scope_id, family, against, scan + 1))
            holders = await cur.fetchall()
        every = holders is not None and len(holders) <= scan
        if not every:
            await cur.execute(sql.HOLDERS, (scope_id, family, against, against, scan))
            holders = await cur.fetchall()
        assert holders is not None
        return [(int(key), *_query_terms_held(text, forms)) for key, text in holders], every

    def ranked(
        holders: list[_Held], words: tuple[str, ...], limit: int
    ) -> list[tuple[float, int, int]]:
        hits = [
            (
                bm25(held, length, words, frequencies, state.rows, average),
                key,
                sum(term in held for term in counted),
            )
            for key, length, held in holders
        ]
        return sorted(hits)[:limit]

    # Each query term as the FULLTEXT column spells it: a holder's text is read for
    # these alone (up to 2,048 holders a search; counting every term of each was two
    # thirds of the channel's Python on a chat's scope).
    forms = {sql.indexed_term(term): term for term in (*selection.terms, *counted)}

    holders, every = await holders_of(selection.terms, selection.limit)
    found = ranked(holders, selection.terms, selection.limit)
    if selection.rescue is not None:  # every other holder of the rare term, scored by it alone
        kept = {key for _, key, _ in found}
        rare = (selection.rescue,)
        if every:  # the rare term is one of the terms read: its holders are among them
            holding = [holder for holder in holders if selection.rescue in holder[2]]
        else:
            holding, _ = await holders_of(rare, RARE_POSTINGS)
        found += [hit for hit in ranked(holding, rare, RARE_POSTINGS) if hit[1] not in kept]
    keys, scores = [key for _, key, _ in found], [score for score, _, _ in found]
    matched = [matches for _, _, matches in found]
    return keys, scores, matched, len(selection.common), selection.held, selection.distinctive


#: A full-text holder as read: its key, its analysed text's length in terms, and how
#: many times it holds each query term it holds.
_Held = tuple[int, int, dict[str, int]]


def _query_terms_held(indexed: str, forms: Mapping[str, str]) -> tuple[int, dict[str, int]]:
    """How many terms an indexed text holds, and how many times each of the query's
    (``forms``: a term as indexed, to the term) that it holds."""
    held: dict[str, int] = {}
    tokens = indexed.split()
    for token in tokens:
        term = forms.get(token)
        if term is not None:
            held[term] = held.get(term, 0) + 1
    return len(tokens), held


@attrs.define
class VectorIndex:
    """Whether the HNSW index answers approximate searches. After a restart the engine
    loads a large index in the background, and an approximate search waits for it
    until its statement runs out (``sql.APPROXIMATE_TIMEOUT_US``; at 100k rows the
    loading took tens of seconds). The first search that runs out marks the index as
    loading: searches then scan exactly, and one tries the index again every
    :data:`INDEX_RETRY` seconds. No prepare fails for it, slower ones meanwhile."""

    clock: Callable[[], float] = time.monotonic
    retry_at: float = -math.inf

    def ready(self) -> bool:
        return self.clock() >= self.retry_at

    def loading(self) -> None:
        self.retry_at = self.clock() + INDEX_RETRY


async def nearest(
    cur: Any,
    family: Family,
    scope_id: str,
    request: PoolRequest,
    vector: Vectors | None,
    state: ScopeState,
    exact_rows: int,
    index: VectorIndex | None,
    sums: VectorSums | None = None,
) -> tuple[list[int], list[float]]:
    """The vector channel, most similar to ``vector`` (``PoolRequest.vector_for``): an
    exact scan up to ``exact_rows`` records, the HNSW index above (and the newest keys
    exactly, which the index may not hold yet); an exact scan too while the index is
    loading, and always when the vectors table has none (``index`` None)."""
    if vector is None or not rules(family).vector_channel:
        return [], []
    apart = await _apart_from_common(cur, (family, scope_id, state.version), vector, sums)
    literal, common = apart.literals
    size = request.size
    fetch = 2 * size  # ordered by the query apart, then re-ranked by each record's rest
    found: dict[int, tuple[float, float]] = {}
    approximate = None
    if index is not None and state.rows > exact_rows and index.ready():
        arguments = (literal, common, scope_id, family, fetch)
        approximate = await _approximate(cur, arguments, index)
    if approximate is None:
        await cur.execute(sql.EXACT_NEAREST, (literal, common, scope_id, family, 0, fetch))
        statements = [await cur.fetchall()]
    else:
        fresh_from = max(0, state.next_key - FRESH_KEYS)
        fresh = (literal, common, scope_id, family, fresh_from, fetch)
        await cur.execute(sql.EXACT_NEAREST, fresh)
        statements = [approximate, await cur.fetchall()]
    for found_rows in statements:
        for key, distance, off in found_rows:
            if distance is not None:
                found[int(key)] = apart.scored(float(distance), float(off or 1.0))
    ranked = sorted(found, key=lambda key: -found[key][0])[:size]
    return ranked, [found[key][1] for key in ranked]


@attrs.frozen
class _Apart:
    """The query apart from a scope's common direction, as the engine is asked it:
    ``literals`` the query apart and the direction, ``along`` the query's cosine to the
    direction, ``length`` the length of the query apart (``apart_from_common``'s terms
    for a search the engine runs)."""

    literals: tuple[str, str]
    along: float
    length: float
    plain: bool = False

    def scored(self, distance: float, off: float) -> tuple[float, float]:
        """A record's score apart from the direction and its plain cosine, from the
        engine's cosine distances to the query apart and to the direction (``plain``:
        no direction, the first is the plain cosine's)."""
        if self.plain:
            return 1.0 - distance, 1.0 - distance
        apart, share = (1.0 - distance) * self.length, 1.0 - off
        rest = math.sqrt(max(1.0 - share * share, APART_FLOOR * APART_FLOOR))
        return apart / rest, apart + self.along * share


class VectorSums:
    """The sums of scopes' vectors the engine added up, each kept with the scope's write
    version it was read at and served only at that version (so a write from any process
    is seen at once); the least recently used dropped past ``MAX_SUMS``."""

    def __init__(self) -> None:
        self._held: OrderedDict[tuple[Family, str], tuple[int, npt.NDArray[np.float64]]] = (
            OrderedDict()
        )

    def get(self, family: Family, scope_id: str, version: int) -> npt.NDArray[np.float64] | None:
        found = self._held.get((family, scope_id))
        if found is None or found[0] != version:
            return None
        self._held.move_to_end((family, scope_id))
        return found[1]

    def drop(self, scope_id: str) -> None:
        """Forget the scope's sums (an erase: nothing of erased vectors kept here)."""
        for key in [key for key in self._held if key[1] == scope_id]:
            del self._held[key]

    def put(
        self, family: Family, scope_id: str, version: int, total: npt.NDArray[np.float64]
    ) -> None:
        self._held[family, scope_id] = (version, total)
        self._held.move_to_end((family, scope_id))
        while len(self._held) > MAX_SUMS:
            self._held.popitem(last=False)


#: Most scopes whose vectors' sum a store keeps (:class:`VectorSums`): 2 KB each at 256
#: dimensions.
MAX_SUMS: Final = 4096


async def _apart_from_common(
    cur: Any,
    scope: tuple[Family, str, int],
    vector: Vectors,
    sums: VectorSums | None,
) -> _Apart:
    """The query apart from the common direction of the vectors of ``scope`` (family,
    scope, write version), whose sum the engine adds up (one statement, unless ``sums``
    holds it at that version)."""
    family, scope_id, version = scope
    query = np.asarray(vector, dtype=np.float32).reshape(-1)
    query = query / max(float(np.linalg.norm(query)), 1e-12)
    total = None if sums is None else sums.get(family, scope_id, version)
    if total is None:
        await cur.execute(sql.VECTOR_SUM, (scope_id, family))
        found = await cur.fetchone()
        total = (
            np.fromstring(str(found[0]).strip("[]"), dtype=np.float64, sep=",")
            if found is not None and found[0] is not None
            else np.zeros(len(query))
        )
        if sums is not None:
            sums.put(family, scope_id, version, total)
    norm = float(np.linalg.norm(total))
    plain = _Apart((vector_literal(query),) * 2, 0.0, 1.0, plain=True)
    if norm == 0.0 or len(total) != len(query):
        return plain
    common = (total / norm).astype(np.float32)
    along = float(query @ common)
    asked = query - along * common
    length = float(np.linalg.norm(asked))
    if length == 0.0:  # the query lies along the direction: rank by the plain cosine
        return plain
    return _Apart((vector_literal(asked), vector_literal(common)), along, length)


async def _approximate(
    cur: Any, arguments: tuple[Any, ...], index: VectorIndex
) -> list[Any] | None:
    """The approximate search's rows, or None when it ran out of time (the index is
    loading: ``index`` is told)."""
    import asyncmy.errors

    try:
        await cur.execute(sql.APPROXIMATE_NEAREST, arguments)
    except asyncmy.errors.OperationalError as exc:
        if not exc.args or exc.args[0] != STATEMENT_TIMEOUT:
            raise
        index.loading()
        return None
    return list(await cur.fetchall())


def scans_time(family: Family, request: PoolRequest) -> bool:
    """Whether the time channel reads the engine for ``request``: the query names a
    date and the family's records are searched by time."""
    return bool(request.query.dates) and rules(family).time_channel and request.time_size > 0


async def time_channel(
    cur: Any,
    family: Family,
    scope_id: str,
    request: PoolRequest,
    vector: Vectors | None,
    *,
    vectors: bool,
    held: ScopeVectors | None = None,
    sums: tuple[VectorSums, int] | None = None,
) -> tuple[Any, int]:
    """The time channel's keys and how many records the windows held, ranked by
    similarity to ``vector`` apart from the scope's common direction; ``vectors``: the
    database holds vectors to rank them by, ``held``: the scope's vectors held in the
    process, which rank them instead; ``sums``: the store's kept sums and the scope's
    write version."""
    if not scans_time(family, request):
        return [], 0
    size = request.time_size
    newest: float | None = None
    if request.needs_reference:
        await cur.execute(sql.NEWEST, (scope_id, family))
        newest = (await cur.fetchone())[0]
        if newest is not None and newest <= NO_TIME:
            newest = None
    hits = TimeHits()
    for window in request.time_windows(newest):
        said = (scope_id, family, window.said_from, window.said_to, WINDOW_SCAN)
        await cur.execute(sql.IN_WINDOW, said)
        hits.said(window, await cur.fetchall())
        named = (
            scope_id, family, window.mentions_from, window.day_to, window.day_from,
            window.widest_mention,
        )  # fmt: skip
        await cur.execute(sql.MENTIONING, named)
        hits.named(key for (key,) in await cur.fetchall())
    if not hits:
        return [], 0
    similar = None
    if vector is not None and rules(family).vector_channel and vectors:
        if held is not None:
            similar = held.similarities(hits.keys, vector, apart=True)
        else:
            kept, version = sums if sums is not None else (None, -1)
            scope = (family, scope_id, version)
            similar = await similarities(cur, scope, vector, hits.keys, kept)
    return hits.ranked(size, similar), len(hits)


async def similarities(
    cur: Any,
    scope: tuple[Family, str, int],
    vector: Vectors,
    keys: list[int],
    sums: VectorSums | None = None,
) -> Any:
    """Each key's score apart from the common direction of ``scope`` (family, scope,
    write version), as the vector channel ranks (-1 for a record without a vector)."""
    family, scope_id, _ = scope
    apart = await _apart_from_common(cur, scope, vector, sums)
    marks = ",".join(["%s"] * len(keys))
    await cur.execute(
        "SELECT k, cosine_distance(embedding, %s), cosine_distance(embedding, %s)"
        f" FROM satchel_vectors WHERE scope = %s AND family = %s AND k IN ({marks})",
        (*apart.literals, scope_id, family, *keys),
    )
    found = {
        int(k): apart.scored(float(d), float(off or 1.0))[0]
        for k, d, off in await cur.fetchall()
        if d is not None
    }
    return np.array([found.get(key, -1.0) for key in keys], dtype=np.float32)


#: The most rows of the hits' threads a neighbour read takes whole; threads longer than
#: that (one thread per user, say) are read around each hit instead.
THREAD_ROWS: Final = 4096


async def thread_neighbours(
    cur: Any, scope_id: str, family: Family, keys: Sequence[int], reach: int
) -> tuple[dict[int, ThreadNeighbours], tuple[int, bool] | None]:
    """The live records up to ``reach`` places before and after each of ``keys`` in its
    own thread, nearest first; a conversation turn without a thread
    (``sql.TURN``) is in the scope's conversation, its other turns without one. Beside
    them, the scope's write version as the keys' threads were read and whether the
    family then held any thread or turn (``sql.THREADED``; None for a scope not made).

    Two round trips: the keys' threads with the scope's state, then those threads whole
    (conversation sessions are tens of turns), ordered here. Threads holding more than
    ``THREAD_ROWS`` rows between them are read around each key instead, in one ``UNION
    ALL`` of two range reads per key (measured on seekdb: 9 ms for 32 keys, where the
    threads whole took about a tenth of that); so are the turns without a thread, one
    more round trip.
    """
    marks = ",".join(["%s"] * len(keys))
    await cur.execute(
        "SELECT k, thread, created_ts FROM satchel_records WHERE scope = %s AND family = %s"
        f" AND live = 1 AND (thread IS NOT NULL OR {sql.TURN}) AND k IN ({marks}); " + sql.THREADED,
        (scope_id, family, *keys, family, scope_id),
    )
    found = [(int(key), thread, float(at)) for key, thread, at in await cur.fetchall()]
    await cur.nextset()
    row = await cur.fetchone()
    state = None if row is None else (int(row[0] or 0), row[1] is not None)
    threaded = [hit for hit in found if hit[1] is not None]
    around = await _in_threads(cur, scope_id, family, threaded, reach) if threaded else {}
    untold = [hit for hit in found if hit[1] is None]
    if untold:
        statements = (sql.BEFORE_UNTOLD, sql.AFTER_UNTOLD)
        around.update(await _around_each(cur, scope_id, family, untold, reach, statements))
    return around, state


async def _in_threads(
    cur: Any, scope_id: str, family: Family, threaded: list[tuple[int, Any, float]], reach: int
) -> dict[int, ThreadNeighbours]:
    """:func:`thread_neighbours` of keys in a thread: the threads whole, when short."""
    threads = sorted({thread for _, thread, _ in threaded})
    marks = ",".join(["CAST(%s AS BINARY)"] * len(threads))
    await cur.execute(
        f"SELECT thread, created_ts, k, {sql.SHORT_TEXT} FROM satchel_records"
        f" WHERE scope = %s AND family = %s AND live = 1 AND thread IN ({marks}) LIMIT %s",
        (scope_id, family, *threads, THREAD_ROWS + 1),
    )
    rows = await cur.fetchall()
    if len(rows) > THREAD_ROWS:
        return await _around_each(cur, scope_id, family, threaded, reach)
    ordered: dict[Any, list[tuple[float, int]]] = {}
    passed: set[int] = set()
    for thread, at, key, short in rows:
        ordered.setdefault(thread, []).append((float(at), int(key)))
        if passed_over(short):  # a longer text, read as None, says something
            passed.add(int(key))
    places: dict[int, tuple[list[int], int]] = {}
    for members in ordered.values():
        members.sort()
        keys_in_order = [key for _, key in members]
        for place, key in enumerate(keys_in_order):
            places[key] = (keys_in_order, place)
    return {
        key: ThreadNeighbours.in_line(*places[key], reach, passed.__contains__)
        for key, _, _ in threaded
    }


async def _around_each(
    cur: Any,
    scope_id: str,
    family: Family,
    threaded: list[tuple[int, Any, float]],
    reach: int,
    reads: tuple[str, str] = (sql.BEFORE, sql.AFTER),
) -> dict[int, ThreadNeighbours]:
    """:func:`thread_neighbours` for long threads (or, with ``sql.BEFORE_UNTOLD`` and
    ``sql.AFTER_UNTOLD``, the turns without one): two range reads per key, one trip.
    Each read takes ``PASSED_SLACK`` rows beyond ``reach`` for the turns that say
    nothing it passes over; a key with a side whose read came back full and still short
    of ``reach`` is read again, four times wider."""
    around: dict[int, ThreadNeighbours] = {}
    asked, limit = threaded, reach + PASSED_SLACK
    while asked:
        sides = await _sides_read(cur, scope_id, family, asked, limit, reads)
        short: list[tuple[int, Any, float]] = []
        for hit in asked:
            key = hit[0]
            before, after = sides.get((key, 0), []), sides.get((key, 1), [])
            near = ThreadNeighbours(_said(before, reach, reverse=True), _said(after, reach))
            if any(
                len(side) == limit and len(said) < reach
                for side, said in ((before, near.before), (after, near.after))
            ):
                short.append(hit)
            else:
                around[key] = near
        asked, limit = short, limit * 4
    return around


#: Rows beyond ``reach`` a neighbour read around each key takes, for the turns that say
#: nothing between a key and its neighbours ("lol", "<Media omitted>"), which it passes over.
PASSED_SLACK: Final = 8


async def _sides_read(
    cur: Any,
    scope_id: str,
    family: Family,
    asked: list[tuple[int, Any, float]],
    limit: int,
    reads: tuple[str, str],
) -> dict[tuple[int, int], list[tuple[float, int, str | None]]]:
    """Up to ``limit`` rows on each side of each key (``reads``), by key and side."""
    statements, parameters = [], []
    for key, thread, at in asked:
        for statement in reads:
            statements.append(statement)
            named = [at, at] if thread is None else [thread]  # the gap's, or the thread
            parameters += [key, scope_id, family, *named, at, at, key, limit]
    await cur.execute(" UNION ALL ".join(statements), parameters)
    sides: dict[tuple[int, int], list[tuple[float, int, str | None]]] = {}
    for hit, side, near, at, short in await cur.fetchall():
        sides.setdefault((int(hit), int(side)), []).append((float(at), int(near), short))
    return sides


def _said(
    side: list[tuple[float, int, str | None]], reach: int, *, reverse: bool = False
) -> tuple[int, ...]:
    """The nearest ``reach`` keys of one side's rows that say something (by time, then
    key: ``reverse`` for the side before), passing over the turns that say nothing."""
    said = [near for _, near, short in sorted(side, reverse=reverse) if not passed_over(short)]
    return tuple(said[:reach])
