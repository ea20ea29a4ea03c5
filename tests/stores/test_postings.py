"""Held postings: the embedded store's full-text search from numpy arrays gives FTS5's
own rows, BM25 scores, order and matched-term counts, and is read again after a write."""

from __future__ import annotations

import random
import sqlite3
import threading
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest

import satchel
from satchel.stores import SqliteStore
from satchel.stores import _postings as shared
from satchel.stores.sqlite import _postings, _postings_cache, _rows, _search
from satchel.stores.sqlite import _schema as sql
from satchel.stores.testing import EMBEDDER
from satchel.vocabulary._analysis import MAX_QUERY_TERMS, analyse_query
from satchel.vocabulary._retrieval import PoolRequest

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable
    from pathlib import Path

#: Few words, so texts share terms (ties, common terms, repeated terms, the rescue).
WORDS = [f"w{n}" for n in range(40)] + ["apple", "river", "stone", "harbour", "café", "東京"]


def _word(chance: random.Random) -> str:
    """Skewed: low words are frequent, so some terms are common in a scope."""
    if chance.random() < 0.01:
        return chance.choice(["café", "東京"])
    return WORDS[min(int(chance.expovariate(0.15)), len(WORDS) - 1)]


def _database(seed: int, scopes: int = 3) -> sqlite3.Connection:
    """A store's schema holding random memory texts in ``scopes`` scopes, written the
    way the store writes them."""
    conn = sqlite3.connect(":memory:")
    _rows.create_schema(conn)
    chance = random.Random(seed)
    for scope in range(scopes):
        scope_key = _rows.ensure_scope(conn, f"s{scope}")
        for n in range(chance.choice([5, 40, 300])):
            size = chance.choice([0, 1, 3, 8, 20, 60])
            words = [_word(chance) for _ in range(size)]
            _rows.insert(conn, "memory", scope_key, f"r{n}", 1, " ".join(words))
    conn.commit()  # FTS5 writes its totals at the commit
    return conn


def _hits(
    conn: sqlite3.Connection, scope_key: int, query: str, size: int, held: bool
) -> _search.LexicalHits:
    request = PoolRequest(analyse_query(query), None, size)
    rows = conn.execute(
        "SELECT df FROM term_stats WHERE family = 'memory' AND scope_key = ? AND term = ''",
        (scope_key,),
    ).fetchone()[0]
    frequencies = _search.term_frequencies(conn, "memory", scope_key, request.query.terms)
    kept = None
    if held:
        postings = _postings.read_postings(conn, "memory", scope_key)
        assert postings is not None
        kept = (postings, _postings.read_totals(conn, "memory"))
    return _search.lexical_hits(conn, "memory", scope_key, request, rows, frequencies, kept)


@pytest.mark.parametrize("seed", range(12))
def test_held_postings_rank_as_fts5_does(seed: int) -> None:
    """Random scopes and queries (ties, terms held by most of a scope, repeated terms,
    a rare term's rescue, pools smaller and larger than the matches): the same rows in
    the same order, the same scores to the bit, the same matched-term counts."""
    conn = _database(seed)
    chance = random.Random(1000 + seed)
    compared = 0
    for scope_key in (1, 2, 3):
        for _ in range(25):
            query = " ".join(chance.sample(WORDS, chance.choice([1, 2, 4, 7])))
            size = chance.choice([1, 4, 16, 64, 400])
            _same_frequencies(conn, scope_key, query)
            statement = _hits(conn, scope_key, query, size, held=False)
            held = _hits(conn, scope_key, query, size, held=True)
            assert held.rows == statement.rows, (scope_key, query, size)
            assert held.matches == statement.matches
            assert (held.common, held.held) == (statement.common, statement.held)
            # The statement's scores cross SQLite's JSON at 15 digits; a pool keeps float32.
            assert [float(f"{score:.15g}") for score in held.scores] == statement.scores
            assert np.array_equal(
                np.asarray(held.scores, np.float32), np.asarray(statement.scores, np.float32)
            )
            compared += len(statement.rows)
            _same_ranks_to_the_bit(conn, scope_key, query, size)
    assert compared > 100


def _same_frequencies(conn: sqlite3.Connection, scope_key: int, query: str) -> None:
    """The held postings count each query term's rows as ``term_stats`` does."""
    terms = analyse_query(query).terms
    postings = _postings.read_postings(conn, "memory", scope_key)
    assert postings is not None
    counted = _search.term_frequencies(conn, "memory", scope_key, terms)
    assert postings.frequencies(sql.term_prefix(scope_key), terms) == counted
    assert list(postings.frequencies(sql.term_prefix(scope_key), terms)) == list(counted)
    prefix = sql.term_prefix(scope_key)  # the whole vocabulary: counted in one array step
    held = [term.removeprefix(prefix) for term in postings.terms][:200]
    vocabulary = [*held * (1 + shared.ARRAY_COUNTS // len(held)), "unheld"]
    every = _search.term_counts(conn, "memory", scope_key, vocabulary)
    assert postings.frequencies(prefix, vocabulary) == every


def _same_ranks_to_the_bit(conn: sqlite3.Connection, scope_key: int, query: str, size: int) -> None:
    """FTS5's own ``rank`` doubles, not through JSON, against the held postings'."""
    prefix = sql.term_prefix(scope_key)
    terms = [prefix + term for term in analyse_query(query).terms]
    expression = " OR ".join(f'"{term}"' for term in terms)
    exact = conn.execute(
        "SELECT rowid, rank FROM fts_memory WHERE fts_memory MATCH ? ORDER BY rank LIMIT ?",
        (expression, size),
    ).fetchall()
    postings = _postings.read_postings(conn, "memory", scope_key)
    assert postings is not None
    positions, scores = postings.ranked(terms, size, _postings.read_totals(conn, "memory"))
    assert list(zip(postings.rows[positions].tolist(), scores.tolist(), strict=True)) == exact


def test_the_rescue_ties_and_other_letters_are_compared() -> None:
    """The random cases above reach the rescue query, tied scores and held scopes with
    non-ASCII terms (else they would prove less than they say)."""
    conn = _database(3)
    accented = [
        key
        for key in (1, 2, 3)
        if (held := _postings.read_postings(conn, "memory", key)) is not None
        and any(not term.isascii() for term in held.terms)
    ]
    assert accented
    rescued = tied = 0
    chance = random.Random(7)
    for scope_key in (1, 2, 3):
        for _ in range(60):
            query = " ".join(chance.sample(WORDS, chance.choice([2, 4, 7])))
            request = PoolRequest(analyse_query(query), None, chance.choice([1, 4, 16]))
            frequencies = _search.term_frequencies(conn, "memory", scope_key, request.query.terms)
            live = "SELECT count(*) FROM records WHERE scope_key = ? AND live = 1"
            (rows,) = conn.execute(live, (scope_key,)).fetchone()
            rescued += request.select_terms(frequencies, rows).rescue is not None
            hits = _search.lexical_hits(conn, "memory", scope_key, request, rows, frequencies)
            tied += len(set(hits.scores)) < len(hits.scores)
    assert rescued
    assert tied


def test_table_totals_are_the_rows_and_tokens_of_every_scope() -> None:
    """The averages record FTS5 keeps decodes to the table's rows and tokens."""
    conn = _database(5)
    texts = [text for (text,) in conn.execute("SELECT terms FROM fts_memory")]
    totals = _postings.read_totals(conn, "memory")
    assert totals == shared.Totals(len(texts), sum(len(text.split()) for text in texts))


def test_sqlite_varints_decode_every_width() -> None:
    """One to nine bytes, the ninth whole."""
    assert _postings.varints(bytes([0x05, 0x81, 0x00, 0xFF, 0x7F])) == [5, 128, 0x3FFF]
    nine = bytes([0xFF] * 8 + [0xFF])
    assert _postings.varints(nine) == [2**64 - 1]


def test_a_scope_whose_tokens_fts5_folds_or_splits_is_not_held() -> None:
    """Plain ASCII terms are held; other letters are held once the index is found to
    hold the very same terms; a token FTS5 folds (an upper-case letter) or splits (a
    separator inside it) keeps the statement."""
    conn = sqlite3.connect(":memory:")
    _rows.create_schema(conn)
    texts = {"plain": "cafe river", "accented": "café 東京 river", "folded": "Café river",
             "split": "caf·e river"}  # fmt: skip
    keys = {name: _rows.ensure_scope(conn, name) for name in texts}
    for name, text in texts.items():
        _rows.insert(conn, "memory", keys[name], "a", 1, text)
    conn.commit()
    held = {name: _postings.read_postings(conn, "memory", key) for name, key in keys.items()}
    assert held["plain"] is not None
    assert held["accented"] is not None
    assert sorted(held["accented"].terms) == ["s2xcafé", "s2xriver", "s2x東京"]
    assert held["folded"] is None
    assert held["split"] is None
    prefix = sql.term_prefix(keys["plain"])
    assert _postings.answers(held["plain"], prefix, ["river", "lamp"])
    assert not _postings.answers(held["plain"], prefix, ["river", "lämp"])
    assert _postings.answers(held["accented"], sql.term_prefix(keys["accented"]), ["café"])


def test_a_full_cache_drops_the_least_recently_searched_scope() -> None:
    """Within its byte capacity, the scope searched last stays and the oldest goes."""
    conn = _database(1, scopes=3)
    sizes = {}
    for key in (1, 2, 3):
        held = _postings.read_postings(conn, "memory", key)
        assert held is not None
        sizes[key] = held.nbytes
    cache = _postings_cache.PostingsCache(capacity=sizes[1] + sizes[3])
    for key in (1, 2, 1, 3):
        while cache.postings(conn, "memory", key, (0, 0)) is None:  # due at the 2nd search
            pass
    assert cache.ready("memory", 1, 0, 0)
    assert cache.ready("memory", 3, 0, 0)
    assert cache.nbytes == sizes[1] + sizes[3]
    assert cache.postings(conn, "memory", 2, (0, 0)) is None  # dropped: counted again
    assert not cache.ready("memory", 2, 0, 0)  # the next search reads it
    assert cache.postings(conn, "memory", 1, (1, 0)) is None  # another write version


def test_a_scope_is_read_once_searched_as_often_as_its_size_asks() -> None:
    """A scope is read at the search after its ``1 + rows // ROWS_PER_SEARCH``-th by
    the statement, counted across write versions (held postings follow writes, so a
    scope written between searches is still worth reading once)."""
    conn = _database(1, scopes=1)
    cache = _postings_cache.PostingsCache()
    rows = 2 * _postings_cache.ROWS_PER_SEARCH + 7  # three statement searches first
    for version in (0, 1, 2):
        assert cache.ready("memory", 1, version, rows)
        assert cache.postings(conn, "memory", 1, (version, rows)) is None
    assert not cache.ready("memory", 1, 3, rows)
    assert cache.builds == 0
    assert cache.postings(conn, "memory", 1, (3, rows)) is not None
    assert cache.ready("memory", 1, 3, rows)
    assert cache.builds == 1


def test_the_searches_counted_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past ``COUNTED_SCOPES`` scopes the counts start again."""
    monkeypatch.setattr(_postings_cache, "COUNTED_SCOPES", 3)
    conn = _database(1, scopes=1)
    cache = _postings_cache.PostingsCache()
    for key in range(3):
        cache.postings(conn, "memory", key, (0, 0))
    assert not cache.ready("memory", 2, 0, 0)
    cache.postings(conn, "memory", 9, (0, 0))  # the fourth: counting starts again
    assert cache.ready("memory", 2, 0, 0)
    assert not cache.ready("memory", 9, 0, 0)


# -- in the store -----------------------------------------------------------------------


@pytest.fixture
async def runtime(tmp_path: Path) -> AsyncIterator[tuple[SqliteStore, satchel.Runtime]]:
    store = await SqliteStore.open(str(tmp_path / "p.db"))
    async with satchel.open_runtime(store=store, embedder=EMBEDDER) as rt:
        texts = ["the river stone", "a lamp by the river", "harbour lights", "stone harbour"]
        await rt.add_memories("s", [satchel.MemoryEntry(text=text) for text in texts])
        await rt.add_memories("t", [satchel.MemoryEntry(text="river river river")])
        yield store, rt


def _lexical(pool: satchel.vocabulary.Pool) -> tuple[list[int], list[float], list[int]]:
    return pool.lexical_keys.tolist(), pool.lexical_scores.tolist(), pool.lexical_matches.tolist()


async def _by_statement(
    store: SqliteStore, request: PoolRequest
) -> tuple[list[int], list[float], list[int]]:
    """The same search by FTS5's statement, the held postings set aside."""
    held = store._postings
    store._postings = _postings_cache.PostingsCache(most_rows=0)
    try:
        return _lexical(await store.retrieve("memory", "s", request))
    finally:
        store._postings = held


@pytest.mark.anyio
async def test_a_store_searches_held_postings_until_a_write_moves_the_scope(
    runtime: tuple[SqliteStore, satchel.Runtime], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once read, a scope's searches run no full-text statement (nor read its terms'
    counts) and find what the statement finds; a write to the scope is searched at
    once, new row included."""
    store, rt = runtime
    request = PoolRequest(analyse_query("river stone"), None, 16)
    first = await _by_statement(store, request)
    statements: list[str] = []

    def counted(name: str, real: Callable[..., Any]) -> Callable[..., Any]:
        def run(*args: object, **kwargs: object) -> object:
            statements.append(name)
            return real(*args, **kwargs)

        return run

    monkeypatch.setattr(sql, "lexical_search", counted("lexical", sql.lexical_search))
    frequencies = counted("frequencies", _search.term_frequencies)
    monkeypatch.setattr(_search, "term_frequencies", frequencies)
    assert _lexical(await store.retrieve("memory", "s", request)) == first  # by statement
    assert statements == ["frequencies", "lexical"]
    assert _lexical(await store.retrieve("memory", "s", request)) == first  # read, held
    assert _lexical(await store.retrieve("memory", "s", request)) == first
    assert statements == ["frequencies", "lexical"]
    assert store._postings.builds == 1
    await rt.add_memories("s", [satchel.MemoryEntry(text="a stone in the river")])
    after = await _by_statement(store, request)
    assert len(after[0]) == len(first[0]) + 1
    assert _lexical(await store.retrieve("memory", "s", request)) == after
    assert store._postings.builds == 1  # followed the write (see the test below)


@pytest.mark.anyio
async def test_a_word_typed_with_a_slip_is_found_alike_held_or_by_statement(
    runtime: tuple[SqliteStore, satchel.Runtime],
) -> None:
    """The respellings a query carries are counted and searched the same way from held
    postings and by the statement (more terms than a query has: read in chunks)."""
    store, rt = runtime
    await rt.add_memories("s", [satchel.MemoryEntry(text="the harbuor at dusk")])
    request = PoolRequest(analyse_query("harbour stone lights"), None, 16)
    assert len(request.frequency_terms) > MAX_QUERY_TERMS
    first = await _by_statement(store, request)
    found = await store.evidence("memory", "s", first[0])
    assert "the harbuor at dusk" in {item.text for item in found.values()}
    for _ in range(2):  # read, then held
        assert _lexical(await store.retrieve("memory", "s", request)) == first


@pytest.mark.anyio
async def test_totals_follow_a_write_to_another_scope(
    runtime: tuple[SqliteStore, satchel.Runtime],
) -> None:
    """BM25's totals are the whole table's: a write to another scope changes a held
    scope's scores as it changes FTS5's."""
    store, rt = runtime
    request = PoolRequest(analyse_query("river stone"), None, 16)
    for _ in range(3):
        before = _lexical(await store.retrieve("memory", "s", request))
    assert store._postings.builds == 1
    await rt.add_memories("t", [satchel.MemoryEntry(text=f"other words {n}") for n in range(30)])
    held = _lexical(await store.retrieve("memory", "s", request))
    assert store._postings.builds == 1  # the scope's own version did not move
    assert held[0] == before[0]
    assert held[1] != before[1]
    assert await _by_statement(store, request) == held


def test_lexical_hits_from_held_postings_are_numpy_free_lists() -> None:
    """The hits are plain lists of Python numbers, as the statement's are."""
    conn = _database(2)
    hits = _hits(conn, 1, "w1 w2 apple", 16, held=True)
    assert all(type(row) is int for row in hits.rows)
    assert all(type(score) is float for score in hits.scores)
    assert all(type(count) is int for count in hits.matches)
    assert np.all(np.diff(hits.scores) >= 0)


def _same_postings(held: shared.ScopePostings, read: shared.ScopePostings) -> None:
    """The same rows, lengths and every term's holders (term ids may differ)."""
    assert held.rows.tolist() == read.rows.tolist()
    assert held.lengths.tolist() == read.lengths.tolist()
    for term in {*held.terms, *read.terms}:
        positions, counts = held.holders(term)
        expected = read.holders(term)
        assert positions.tolist() == expected[0].tolist(), term
        assert counts.tolist() == expected[1].tolist(), term


@pytest.mark.parametrize("seed", range(6))
def test_patched_postings_are_those_a_fresh_read_gives(seed: int) -> None:
    """Random writes (rows added, rows taken out of search, both at once, empty texts)
    patched into held postings give what reading the scope again gives."""
    conn = _database(seed, scopes=2)
    chance = random.Random(seed)
    prefix = sql.term_prefix(1)
    held = _postings.read_postings(conn, "memory", 1)
    assert held is not None
    for step in range(8):
        live = held.rows.tolist()
        removed = chance.sample(live, min(len(live), chance.choice([0, 0, 1, 3])))
        for row in removed:
            _rows.retire(conn, "memory", row)
        added = []
        for n in range(chance.choice([0, 1, 4])):
            terms = " ".join(_word(chance) for _ in range(chance.choice([0, 2, 9])))
            terms = terms.replace("café", "cafe").replace("東京", "tokyo")  # plain ASCII
            row = _rows.insert(conn, "memory", 1, f"n{step}-{n}", 1, terms)
            added.append((row, terms))
        conn.commit()
        patched = held.patched(prefix, added, removed)
        assert patched is not None
        read = _postings.read_postings(conn, "memory", 1)
        assert read is not None
        _same_postings(patched, read)
        held = patched


def test_a_write_that_cannot_be_followed_is_not_patched() -> None:
    """A new term that is not plain ASCII, or a new row not past every held row, gives
    no patched postings (the scope is read again instead)."""
    conn = _database(2, scopes=1)
    held = _postings.read_postings(conn, "memory", 1)
    assert held is not None
    last = int(held.rows[-1])
    assert held.patched("s1x", [(last + 1, "café")], []) is None
    assert held.patched("s1x", [(last, "river")], []) is None
    assert held.patched("s1x", [(last + 2, "river"), (last + 1, "lamp")], []) is None
    assert held.patched("s1x", [(last + 1, "river")], []) is not None


@pytest.mark.anyio
async def test_a_write_of_a_held_scope_patches_its_postings(
    runtime: tuple[SqliteStore, satchel.Runtime],
) -> None:
    """Held postings follow the process's own writes to the scope (added, forgotten,
    replaced): the scope is not read again, and its searches find what the statement
    finds."""
    store, rt = runtime
    request = PoolRequest(analyse_query("river stone"), None, 16)
    for _ in range(3):
        await store.retrieve("memory", "s", request)
    assert store._postings.builds == 1
    refs = await rt.add_memories("s", [satchel.MemoryEntry(text="a stone in the river")])
    bend = [satchel.MemoryEntry(text="river bend"), satchel.MemoryEntry(text="?!")]
    await rt.add_memories("s", bend)
    await store.forget_memory(refs[0])
    for _ in range(2):
        assert _lexical(await store.retrieve("memory", "s", request)) == await _by_statement(
            store, request
        )
    assert store._postings.builds == 1
    await rt.add_memories("s", [satchel.MemoryEntry(text="the 東京 tower by the river")])
    for _ in range(2):  # not plain: dropped, and read again (the index confirms it)
        assert _lexical(await store.retrieve("memory", "s", request)) == await _by_statement(
            store, request
        )
    assert store._postings.builds == 2


@pytest.mark.anyio
async def test_an_erase_drops_the_scope_s_held_postings(
    runtime: tuple[SqliteStore, satchel.Runtime],
) -> None:
    """No term of an erased record outlives the erase in held postings; the scope's
    searches go on finding what the statement finds."""
    store, rt = runtime
    request = PoolRequest(analyse_query("river stone"), None, 16)
    for _ in range(3):
        await store.retrieve("memory", "s", request)
    assert store._postings.nbytes > 0
    refs = await rt.add_memories("s", [satchel.MemoryEntry(text="a secret river")])
    assert any(term.endswith("secret") for term in _held_terms(store))
    await rt.erase(refs[0])
    assert store._postings.nbytes == 0
    assert not any(term.endswith("secret") for term in _held_terms(store))
    assert _lexical(await store.retrieve("memory", "s", request)) == await _by_statement(
        store, request
    )


def _held_terms(store: SqliteStore) -> list[str]:
    return [
        term
        for _, held in store._postings._scopes.values()
        if held is not None
        for term in held.terms
    ]


@pytest.mark.anyio
async def test_postings_are_never_read_on_the_event_loop_s_thread(
    runtime: tuple[SqliteStore, satchel.Runtime], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A search judged to run inline (on the loop) does not read a scope's postings even
    when another search made them due meanwhile (here: judged ready every time); the
    read happens in a worker thread."""
    store, _ = runtime
    loop_thread = threading.current_thread()
    reads: list[threading.Thread] = []
    real = _postings.read_postings

    def recorded(*args: Any) -> Any:
        reads.append(threading.current_thread())
        return real(*args)

    monkeypatch.setattr(_postings, "read_postings", recorded)
    request = PoolRequest(analyse_query("river stone"), None, 16)
    monkeypatch.setattr(_postings_cache.PostingsCache, "ready", lambda *_: True)
    for _ in range(4):
        await store.retrieve("memory", "s", request)
    assert reads == []  # due since the second search, but every search ran inline
    monkeypatch.undo()
    monkeypatch.setattr(_postings, "read_postings", recorded)
    await store.retrieve("memory", "s", request)
    assert len(reads) == 1
    assert reads[0] is not loop_thread


def test_postings_are_read_a_stretch_at_a_time_giving_the_gil_up_between(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The sqlite3 module converts rows holding the GIL: a scope is read
    ``BUILD_CHUNK`` rows at a time, never whole, with the GIL given up after each
    stretch, so an event loop waiting beside the read waits one stretch at most."""
    conn = sqlite3.connect(":memory:")
    _rows.create_schema(conn)
    scope_key = _rows.ensure_scope(conn, "s")
    for n in range(2 * shared.BUILD_CHUNK + 10):
        _rows.insert(conn, "memory", scope_key, f"r{n}", 1, f"kestrel word{n % 7} row{n}")
    conn.commit()
    fetched: list[str] = []

    class Watched:
        def __init__(self, cursor: sqlite3.Cursor) -> None:
            self._cursor = cursor

        def fetchall(self) -> list[Any]:
            fetched.append("all")
            return self._cursor.fetchall()

        def fetchmany(self, size: int) -> list[Any]:
            fetched.append(f"many {size}")
            return self._cursor.fetchmany(size)

    class Connection:
        def execute(self, *args: Any) -> Watched:
            return Watched(conn.execute(*args))

    yields: list[None] = []
    monkeypatch.setattr(_postings, "let_loop_in", lambda: yields.append(None))
    held = _postings.read_postings(Connection(), "memory", scope_key)  # type: ignore[arg-type]
    assert len(yields) == 3  # after each of the 3 stretches
    assert held is not None
    assert len(held.rows) == 2 * shared.BUILD_CHUNK + 10
    read = _postings.read_postings(conn, "memory", scope_key)
    assert read is not None
    _same_postings(held, read)
    assert "all" not in fetched
    assert fetched.count(f"many {shared.BUILD_CHUNK}") == 4  # 3 stretches, then none


@pytest.mark.anyio
async def test_evidence_is_rated_by_held_postings_without_reading_counts(
    runtime: tuple[SqliteStore, satchel.Runtime], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A scope whose postings are held at its write version rates the turns it reads
    by their counts (the FTS5 table's, as ``term_stats`` holds them): no statement
    reads counts, and every rating is the one the statement's counts give."""
    store, rt = runtime
    turns = ["Ana: the river stone", "Ben: a lamp by the river", "Ana: harbour lights"]
    await rt.add_memories("c", [satchel.MemoryEntry(text=text, thread="t") for text in turns])
    keys = list(range(1, 20))
    by_statement = dict(await store.evidence("memory", "c", keys))
    assert {item.rarity for item in by_statement.values()} - {None}
    request = PoolRequest(analyse_query("river stone"), None, 16)
    while store._postings.held("memory", store._scope_keys["c"], store.scope_version("c")) is None:
        await store.retrieve("memory", "c", request)
    counted: list[tuple[Any, ...]] = []
    real = _search.term_counts

    def term_counts(*args: Any) -> dict[str, int]:
        counted.append(args)
        return real(*args)

    monkeypatch.setattr(_search, "term_counts", term_counts)
    store._term_counts.forget()
    store._evidence.retire_all()
    assert dict(await store.evidence("memory", "c", keys)) == by_statement
    assert counted == []
    store._postings = _postings_cache.PostingsCache(most_rows=0)  # none held: the statement
    store._term_counts.forget()
    assert dict(await store.evidence("memory", "c", keys)) == by_statement
    assert len(counted) == 1
