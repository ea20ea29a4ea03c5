"""SqliteStore: concurrency, vector bookkeeping, term statistics and its guards."""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING

import anyio
import numpy as np
import pytest

import satchel
from satchel.stores import PoolRequest, SqliteStore
from satchel.stores.testing import memories, records
from satchel.vocabulary._analysis import analyse_query
from tests._envelope import contents

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.anyio


async def prepare(rt: satchel.Runtime, query: str, scope: str = "s") -> list[str]:
    request = satchel.PrepareContextRequest(scope_id=scope, query=query)
    return contents((await rt.prepare_context(request)).content)


async def test_concurrent_prepares_and_writes_on_a_file(tmp_path: Path) -> None:
    """Many prepares run at once beside writes, each seeing a consistent store."""
    async with satchel.open_runtime(str(tmp_path / "g.db"), readers=3) as rt:
        await rt.add_memories(
            "s", [satchel.MemoryEntry(text=f"kestrel node {n}") for n in range(20)]
        )
        results: list[int] = []

        async def reader() -> None:
            results.append(len(await prepare(rt, "kestrel node")))

        async with anyio.create_task_group() as group:
            for _ in range(20):
                group.start_soon(reader)
            group.start_soon(rt.add_memories, "s", [satchel.MemoryEntry(text="kestrel node 99")])
        assert len(results) == 20
        assert set(results) <= {20, 21}
        assert "kestrel node 99" in await prepare(rt, "kestrel node 99")


@pytest.mark.parametrize(
    ("inline_rows", "parallel_rows"),
    [(0, 10**9), (1_000_000, 10**9), (0, 1)],
    ids=["thread", "inline", "thread-with-vector-thread"],
)
async def test_thread_and_inline_searches_agree(inline_rows: int, parallel_rows: int) -> None:
    """A search gives the same pool whether it runs inline, in a worker thread, or with
    its vector product on a thread of its own."""
    store = await SqliteStore.open()
    store._inline_rows = inline_rows
    store._vectors.parallel_rows = parallel_rows
    embedder = satchel.HashingEmbedder()
    texts = [f"rotation of the kestrel credential number {n}" for n in range(40)]
    entries = [satchel.MemoryEntry(text=t) for t in texts]
    await memories(store, "s", entries, await embedder.embed(texts))
    query = analyse_query("kestrel credential rotation")
    vector = (await embedder.embed([query.text]))[0]
    first = await store.retrieve("memory", "s", PoolRequest(query, vector, 32))
    second = await store.retrieve(
        "memory", "s", PoolRequest(query, vector, 32)
    )  # matrix now loaded
    assert len(first.lexical_keys) == len(first.vector_keys) == 32
    assert first.lexical_keys.tolist() == second.lexical_keys.tolist()
    assert first.lexical_matches.tolist() == second.lexical_matches.tolist()
    assert first.vector_keys.tolist() == second.vector_keys.tolist()
    await store.aclose()


async def test_vectors_follow_writes_after_the_matrix_is_loaded() -> None:
    """Updates and forgets change the loaded matrix: old versions leave the vector channel."""
    store = await SqliteStore.open()
    embedder = satchel.HashingEmbedder()

    async def search(text: str) -> list[int]:
        query = analyse_query(text)
        vector = (await embedder.embed([text]))[0]
        keys: list[int] = (
            await store.retrieve("memory", "s", PoolRequest(query, vector, 8))
        ).vector_keys.tolist()
        return keys

    (ref,) = await memories(
        store, "s", [satchel.MemoryEntry(text="alpha")], await embedder.embed(["alpha"])
    )
    (old_key,) = await search("alpha")
    new = await store.update_memory(
        ref, satchel.MemoryEntry(text="beta"), await embedder.embed(["beta"])
    )
    keys = await search("beta")
    assert old_key not in keys
    assert len(keys) == 1
    await store.forget_memory(new)
    assert await search("beta") == []
    await store.aclose()


async def test_scope_version_changes_on_every_write() -> None:
    """Every write to a scope changes its version; other scopes keep theirs."""
    async with satchel.open_runtime() as rt:
        store = rt.store
        assert store.scope_version("a") == 0
        await rt.add_memories("a", [satchel.MemoryEntry(text="one")])
        await rt.set_profile("a", satchel.Profile(text="p"))
        await rt.add_experiences("a", [satchel.Experience("s", "a", "o", "l")])
        assert store.scope_version("a") == 3
        assert store.scope_version("b") == 0


async def test_term_statistics_follow_forget(tmp_path: Path) -> None:
    """Document frequencies drop when an entry leaves search, and survive reopening."""
    path = str(tmp_path / "g.db")
    async with satchel.open_runtime(path) as rt:
        (ref,) = await rt.add_memories("s", [satchel.MemoryEntry(text="zebra crossing")])
        await rt.add_memories("s", [satchel.MemoryEntry(text="zebra stripes")])
        await rt.forget_memory(ref)
    async with satchel.open_runtime(path) as rt:
        assert await prepare(rt, "zebra crossing") == ["zebra stripes"]
        store = rt.store
        assert isinstance(store, SqliteStore)
        frequencies = store._counts
        assert sum(frequencies.values()) == 1


async def test_a_store_refuses_another_embedder(tmp_path: Path) -> None:
    """A store remembers which embedder built its vectors and refuses another at open."""
    path = str(tmp_path / "g.db")
    async with satchel.open_runtime(path, embedder=satchel.HashingEmbedder(64)) as rt:
        await rt.add_memories("s", [satchel.MemoryEntry(text="kestrel")])
    with pytest.raises(
        satchel.StoreError, match=r"built by hashing-v1/64.*opened with hashing-v1/128"
    ):
        async with satchel.open_runtime(path, embedder=satchel.HashingEmbedder(128)):
            pass
    async with satchel.open_runtime(path, embedder=satchel.HashingEmbedder(64)) as rt:
        assert await prepare(rt, "kestrel") == ["kestrel"]


async def test_an_empty_store_accepts_any_embedder(tmp_path: Path) -> None:
    """Opening a store binds nothing until a vector is written."""
    path = str(tmp_path / "g.db")
    async with satchel.open_runtime(path, embedder=satchel.HashingEmbedder(64)) as rt:
        await rt.add_experiences("s", [satchel.Experience("s", "a", "o", "l")])  # no vectors
    async with satchel.open_runtime(path, embedder=satchel.HashingEmbedder(128)) as rt:
        await rt.add_memories("s", [satchel.MemoryEntry(text="kestrel")])
        assert await prepare(rt, "kestrel") == ["kestrel"]


async def test_reembed_rebuilds_vectors_for_a_new_embedder(tmp_path: Path) -> None:
    """reembed swaps every live vector and the recorded embedder in one transaction."""
    path = str(tmp_path / "g.db")
    async with satchel.open_runtime(path, embedder=satchel.HashingEmbedder(64)) as rt:
        (ref,) = await rt.add_memories("s", [satchel.MemoryEntry(text="kestrel one")])
        await rt.update_memory(ref, satchel.MemoryEntry(text="kestrel two"))
        await rt.add_topic_memories("s", [satchel.TopicMemory(title="kestrel", text="notes")])
    store = await SqliteStore.open(path)
    new = satchel.HashingEmbedder(128)
    seen: list[tuple[int, int]] = []
    count = await store.reembed(new, progress=lambda done, total: seen.append((done, total)))
    await store.aclose()
    assert count == 2  # the live memory version and the topic; the retired version has none
    assert seen[-1] == (2, 2)
    async with satchel.open_runtime(path, embedder=new) as rt:
        assert await prepare(rt, "kestrel two") == ["kestrel two", "kestrel\n\nnotes"]


async def test_closed_store_refuses_writes() -> None:
    """Writing to a closed store raises StoreError instead of touching a closed file."""
    store = await SqliteStore.open()
    await store.aclose()
    with pytest.raises(satchel.StoreError, match="closed"):
        await records(store, "experience", "s", [satchel.Experience("s", "a", "o", "l")])


async def test_unknown_scope_retrieves_nothing() -> None:
    """A scope nobody wrote to yields an empty pool without I/O."""
    store = await SqliteStore.open()
    pool = await store.retrieve(
        "memory", "nobody", PoolRequest(analyse_query("x"), np.ones(8, np.float32), 8)
    )
    assert pool.retrieved == 0
    await store.aclose()


async def test_cached_evidence_never_outlives_a_forget_or_update() -> None:
    """Evidence cached by one prepare is not served after its entry is forgotten or updated."""
    async with satchel.open_runtime() as rt:
        (kept, gone) = await rt.add_memories(
            "s",
            [satchel.MemoryEntry(text="kestrel north"), satchel.MemoryEntry(text="kestrel south")],
        )
        assert sorted(await prepare(rt, "kestrel")) == ["kestrel north", "kestrel south"]
        await rt.forget_memory(gone)
        await rt.update_memory(kept, satchel.MemoryEntry(text="kestrel west"))
        assert await prepare(rt, "kestrel") == ["kestrel west"]


def test_evidence_cache_ignores_reads_older_than_a_retirement() -> None:
    """A read that started before rows were retired is not cached; capacity is a bound."""
    from satchel.stores.sqlite._evidence_cache import EvidenceCache
    from tests.recall._factory import evidence

    cache = EvidenceCache(capacity=2)
    before = cache.generation
    cache.retire([1])
    cache.remember({1: evidence("one")}, before)
    assert cache.split([1], "memory", "s") == ({}, [1])
    cache.remember({n: evidence(str(n)) for n in (1, 2, 3)}, cache.generation)
    found, missing = cache.split([1, 2, 3], "memory", "s")
    assert (sorted(found), missing) == ([2, 3], [1])  # the oldest was evicted
    # A row cached for one family and scope is never served for another.
    assert cache.split([2], "memory", "t") == ({}, [2])
    assert cache.split([2], "experience", "s") == ({}, [2])


async def test_matched_terms_count_whole_query_terms_only() -> None:
    """A candidate's match count is how many distinct query terms it holds as whole
    terms: repeats count once, and a term inside a longer one (cat, category) is no match,
    nor is a term indexed in another scope."""
    store = await SqliteStore.open()
    embedder = satchel.HashingEmbedder()
    texts = ["cat cat cat", "category catalogue", "cat and dog", "dog only"]
    vectors = await embedder.embed(texts)
    await memories(store, "s", [satchel.MemoryEntry(text=t) for t in texts], vectors)
    await memories(store, "t", [satchel.MemoryEntry(text="cat dog")], vectors[:1])
    pool = await store.retrieve("memory", "s", PoolRequest(analyse_query("cat dog"), None, 32))
    matches = dict(zip(pool.lexical_keys.tolist(), pool.lexical_matches.tolist(), strict=True))
    evidence = await store.evidence("memory", "s", list(matches))
    by_text = {evidence[key].text: count for key, count in matches.items()}
    assert by_text == {"cat cat cat": 1, "cat and dog": 2, "dog only": 1}
    await store.aclose()


async def test_one_row_reads_keep_bm25_order_and_exact_text(tmp_path: Path) -> None:
    """Full-text hits read as one JSON row come in the order SQLite ranked them, and
    evidence text comes back exactly, control characters, NUL and astral characters
    included."""
    store = await SqliteStore.open(str(tmp_path / "g.db"))
    embedder = satchel.HashingEmbedder()
    rng = np.random.default_rng(7)
    words = ["kestrel", "osprey", "merlin", "harrier", "falcon", "eagle", "kite"]
    texts = [" ".join(rng.choice(words, size=int(rng.integers(2, 12)))) for _ in range(300)]
    odd = 'kestrel \x00 nul \x01\x1f\u2028 \u202e bidi \U0001f985 "quoted" \\ back'
    texts.append(odd)
    await memories(
        store, "s", [satchel.MemoryEntry(text=t) for t in texts], await embedder.embed(texts)
    )
    query = analyse_query("kestrel osprey merlin")
    pool = await store.retrieve("memory", "s", PoolRequest(query, None, 64))
    conn = sqlite3.connect(str(tmp_path / "g.db"))
    key = conn.execute("SELECT scope_key FROM scopes WHERE scope = 's'").fetchone()[0]
    terms = " OR ".join(f"s{key}x{term}" for term in query.terms)
    expected = [
        row
        for (row,) in conn.execute(
            "SELECT rowid FROM fts_memory WHERE fts_memory MATCH ? ORDER BY rank LIMIT 64",
            (terms,),
        )
    ]
    conn.close()
    assert pool.lexical_keys.tolist() == expected
    assert np.all(np.diff(pool.lexical_scores) >= 0)
    evidence = await store.evidence("memory", "s", pool.lexical_keys.tolist())
    assert len(evidence) == len(expected)
    only_odd = await store.retrieve(
        "memory", "s", PoolRequest(analyse_query("bidi quoted"), None, 8)
    )
    (row,) = only_odd.lexical_keys.tolist()
    assert (await store.evidence("memory", "s", [row]))[row].text == odd
    await store.aclose()


async def test_a_long_note_holding_a_rare_term_joins_the_full_text_pool() -> None:
    """Short notes holding two common query terms outrank, by BM25, a long note naming the
    rare term once; past the pool's limit the long note still joins, after the ranked
    ones, and holds all three terms. A rare term held within the limit changes nothing."""
    store = await SqliteStore.open()
    embedder = satchel.HashingEmbedder()
    shorts = [f"incident runbook note {n}" for n in range(40)]
    others = [f"unrelated memo {n} about lunch" for n in range(400)]
    filler = " ".join(f"word{n} plain sentence" for n in range(300))
    long_note = f"opening line. The zephyrine incident runbook is here. {filler}"
    texts = [*shorts, *others, long_note]
    await memories(
        store, "s", [satchel.MemoryEntry(text=t) for t in texts], await embedder.embed(texts)
    )
    query = analyse_query("zephyrine incident runbook")
    pool = await store.retrieve("memory", "s", PoolRequest(query, None, 8))
    evidence = await store.evidence("memory", "s", pool.lexical_keys.tolist())
    ordered = [evidence[key].text for key in pool.lexical_keys.tolist()]
    assert len(ordered) == 9
    assert ordered[-1] == long_note
    assert pool.lexical_matches.tolist()[-1] == 3
    assert len(set(pool.lexical_keys.tolist())) == 9
    roomy = await store.retrieve("memory", "s", PoolRequest(query, None, 64))
    assert len(roomy.lexical_keys) == len(shorts) + 1  # every match, ranked: no rescue
    await store.aclose()


class _WithoutJson:
    """A connection whose SQLite has no JSON functions (everything else passes through)."""

    def __init__(self, inner: sqlite3.Connection) -> None:
        self.inner = inner

    def execute(self, statement: str) -> sqlite3.Cursor:
        if "json_" in statement:
            raise sqlite3.OperationalError("no such function: json_array")
        return self.inner.execute(statement)


def test_a_sqlite_without_json_functions_is_refused_by_name() -> None:
    """Opening on a SQLite that lacks a feature the store needs fails at once, naming it,
    rather than at the first search."""
    from satchel.stores.sqlite._rows import require_features

    conn = sqlite3.connect(":memory:")
    require_features(conn)  # this Python's SQLite has both
    with pytest.raises(satchel.StoreError, match="lacks JSON functions"):
        require_features(_WithoutJson(conn))  # type: ignore[arg-type]
    conn.close()


@pytest.fixture
def no_connections(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail the test if SqliteStore.open opens a connection."""
    from satchel.stores.sqlite import _store as _sqlite

    def refuse(*args: object, **kwargs: object) -> object:
        raise AssertionError("a connection opened before the arguments were validated")

    monkeypatch.setattr(_sqlite, "Connections", refuse)


@pytest.mark.usefixtures("no_connections")
@pytest.mark.parametrize("database", [5, None, "", b"g.db"])
async def test_open_refuses_a_database_that_is_not_a_path(database: object) -> None:
    """SqliteStore.open with a non-string or empty database raises naming database."""
    with pytest.raises(satchel.InvalidRequestError, match=r"^database must be"):
        await SqliteStore.open(database)  # type: ignore[arg-type]


@pytest.mark.usefixtures("no_connections")
@pytest.mark.parametrize("readers", ["x", 0, -1, True, 2.0])
async def test_open_refuses_a_bad_readers_count(readers: object) -> None:
    """readers must be an integer >= 1 (0 would hang every worker-thread read)."""
    with pytest.raises(satchel.InvalidRequestError, match=r"^readers must be an integer >= 1"):
        await SqliteStore.open(readers=readers)  # type: ignore[arg-type]


@pytest.mark.usefixtures("no_connections")
async def test_open_refuses_a_bad_tracer_provider_before_connecting() -> None:
    """A tracer_provider that is not a TracerProvider raises naming it; nothing opens."""
    with pytest.raises(satchel.InvalidRequestError, match=r"^tracer_provider must be"):
        await SqliteStore.open(tracer_provider=object())  # type: ignore[arg-type]


@pytest.mark.parametrize("count", [1, 8, 64, 256])
async def test_reads_by_row_look_rows_up_by_key(tmp_path: Path, count: int) -> None:
    """Evidence and neighbour reads find their rows by key, never by scanning the scope
    through an index led by (family, scope): that scan made 64 evidence rows of a
    100k-record scope cost 34 ms instead of 0.8. The keys are one parameter, so one
    statement serves every count."""
    from satchel.stores.sqlite import _schema as sql

    path = tmp_path / "g.db"
    async with satchel.open_runtime(str(path)) as rt:
        await rt.add_memories("s", [satchel.MemoryEntry(text="one", thread="t")])
    arguments = [sql.rows_parameter(range(1, count + 1)), "memory", 1]
    with sqlite3.connect(path) as conn:

        def plan(statement: str, arguments: list[object]) -> list[str]:
            return [step[3] for step in conn.execute(f"EXPLAIN QUERY PLAN {statement}", arguments)]

        def scans(steps: list[str]) -> list[str]:
            """The steps that scan a table: the keys' own list aside."""
            return [s for s in steps if s.startswith("SCAN") and "json_each" not in s]

        by_key = "USING INTEGER PRIMARY KEY (rowid=?)"
        steps = plan(sql.fetch_statement("memory"), arguments)
        assert steps[0] == f"SEARCH records {by_key}", steps
        # Each row's full-text terms by its key in the FTS5 content table, never a scan.
        assert [step for step in steps[1:] if "fts_memory" in step] == [
            f"SEARCH fts_memory_content {by_key}"
        ], steps
        assert not scans(steps), steps
        # Each hit by key, then two range reads of its thread in the thread index, or,
        # for a turn without a thread, of the scope's such turns in the timeline index.
        steps = plan(sql.neighbours_statement(), [2, *arguments])
        assert steps[0] == f"SEARCH hit {by_key}", steps
        ranges = [step for step in steps if step.startswith("SEARCH near")]
        assert len(ranges) == 4, steps
        assert sum("USING INDEX records_thread " in step for step in ranges) == 2, steps
        assert sum("USING INDEX records_timeline " in step for step in ranges) == 2, steps
        assert not [step for step in scans(steps) if "subquery" not in step], steps


async def test_a_read_thread_lets_the_loop_in_between_evidence_rows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Reading many rows' evidence in a worker thread is milliseconds of Python: the
    thread offers the loop the GIL after each row (``let_loop_in`` decides when)."""
    from satchel.stores.sqlite import _search

    offered: list[int] = []
    monkeypatch.setattr(_search, "let_loop_in", lambda: offered.append(1))
    store = await SqliteStore.open()
    store._inline_rows = 0  # every read in a worker thread
    embedder = satchel.HashingEmbedder()
    texts = [f"note {n} about the kestrel rotation" for n in range(40)]
    entries = [satchel.MemoryEntry(text=t) for t in texts]
    await memories(store, "s", entries, await embedder.embed(texts))
    query = analyse_query("kestrel rotation")
    pool = await store.retrieve("memory", "s", PoolRequest(query, None, 32))
    keys = pool.lexical_keys.tolist()
    found = await store.evidence("memory", "s", keys)
    await store.aclose()
    assert len(found) == len(keys) == 32
    assert len(offered) == 32


def test_the_family_table_names_the_tables_and_columns_files_hold() -> None:
    """What the store reads off the family table is what existing files hold: the FTS5
    table of each searchable family, and the columns each family's key compares."""
    from satchel.stores.sqlite import _rows, _schema

    assert _schema.FTS_TABLES == {
        "memory": "fts_memory",
        "experience": "fts_experience",
        "topic-memory": "fts_topic",
        "resource": "fts_resource",
    }
    body = "(SELECT body FROM resource_bodies b WHERE b.row = records.row)"
    assert {family: _rows.content_columns(family) for family in _schema.FTS_TABLES} == {
        "memory": "text, kind, tags, created_at, thread",
        "experience": "text",
        "topic-memory": "title, text",
        "resource": f"rid, abstract, overview, {body}",
    }
