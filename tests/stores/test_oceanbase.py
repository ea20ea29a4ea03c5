"""OceanBaseStore on a real engine (seekdb, embedded): schema, channels, processes, faults."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import uuid
from datetime import UTC, datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any

import attrs
import numpy as np
import pytest

import satchel
from satchel.stores import OceanBaseStore, PoolRequest, open_store, redact
from satchel.stores.oceanbase import _held_texts
from satchel.stores.testing import memories, set_profile
from satchel.vocabulary import analyse_query
from tests._orchestration import QUERY, ScriptedEmbedder, StoreWrapper, policy

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

pytestmark = pytest.mark.anyio


async def admin(socket: str, statement: str, args: Any = None) -> list[Any]:
    """Run one statement on a connection of its own, outside any store."""
    from satchel.stores.oceanbase._bridge import LoopThread

    bridge = LoopThread("test-admin")

    async def work() -> list[Any]:
        import asyncmy

        conn = await asyncmy.connect(unix_socket=socket, user="root", autocommit=True)
        try:
            async with conn.cursor() as cur:
                await cur.execute(statement, args)
                return list(await cur.fetchall())
        finally:
            conn.close()

    try:
        return await bridge.run(work)
    finally:
        bridge.close()


async def _drop_connections(socket: str, database: str) -> int:
    """Kill every connection the engine holds open on ``database``."""
    found = await admin(
        socket, "SELECT id FROM information_schema.processlist WHERE db = %s", (database,)
    )
    for (connection,) in found:
        await admin(socket, f"KILL {int(connection)}")
    return len(found)


async def _seed(store: OceanBaseStore) -> None:
    """Round 0 admits one entry (two query terms); five more need round 1's floor.
    Closes ``store`` (the runtime does): tests go on with another store object."""
    async with satchel.open_runtime(store=store, embedder=ScriptedEmbedder()) as rt:
        entries = [satchel.MemoryEntry(text="alpha beta strong match in a")]
        entries += [satchel.MemoryEntry(text=f"alpha weak note {n} in a") for n in range(5)]
        await rt.add_memories("a", entries)


def _request() -> satchel.PrepareContextRequest:
    return satchel.PrepareContextRequest(scope_id="a", query=QUERY)


async def test_a_runtime_on_oceanbase_writes_reads_and_forgets(
    oceanbase: Callable[..., OceanBaseStore],
) -> None:
    """The public API on the OceanBase store: add, exact read, update, forget, prepare;
    scopes differing only in case are different scopes (binary collation)."""
    async with satchel.open_runtime(store=oceanbase(), embedder=satchel.HashingEmbedder()) as rt:
        refs = await rt.add_memories(
            "Proj", [satchel.MemoryEntry(text="staging frozen on Sundays")]
        )
        await rt.add_memories("proj", [satchel.MemoryEntry(text="staging open on Sundays")])
        new = await rt.update_memory(
            refs[0], satchel.MemoryEntry(text="staging frozen all weekend")
        )
        assert (await rt.get_memory(refs[0])).text == "staging frozen on Sundays"
        request = satchel.PrepareContextRequest(scope_id="Proj", query="staging weekend")
        items = satchel.parse_context((await rt.prepare_context(request)).content or "")
        assert [item.text for item in items] == ["staging frozen all weekend"]
        await rt.forget_memory(new)
        assert (await rt.prepare_context(request)).status == "empty"
        assert (await rt.get_memory(new)).text == "staging frozen all weekend"


async def test_the_session_engine_gives_a_loaded_machine_time(seekdb: str) -> None:
    """The tests' engine runs with a statement limit sized for a busy machine, not the
    engine's 10 s default (``tests/conftest.py``): a slow machine is no failure."""
    from tests.conftest import SEEKDB_QUERY_TIMEOUT_US

    assert await admin(seekdb, "SELECT @@ob_query_timeout") == [(SEEKDB_QUERY_TIMEOUT_US,)]


async def test_schema_creation_is_idempotent_and_versioned(
    new_oceanbase: Callable[..., OceanBaseStore], seekdb: str
) -> None:
    """Two stores on one database create the schema once; a newer schema is refused."""
    from satchel.stores.oceanbase import _schema

    first, second = new_oceanbase(), new_oceanbase()
    await first.bind_embedder("hashing", 8)
    await second.bind_embedder("hashing", 8)
    database = first._database
    rows = await admin(seekdb, f"SELECT value FROM {database}.satchel_meta WHERE name = 'schema'")
    assert rows == [(str(_schema.SCHEMA_VERSION),)]
    await admin(seekdb, f"UPDATE {database}.satchel_meta SET value = '99' WHERE name = 'schema'")
    newer = new_oceanbase()
    with pytest.raises(satchel.StoreError, match="newer than this satchel"):
        await newer.bind_embedder("hashing", 8)
    for store in (first, second, newer):
        await store.aclose()


#: The tables with a scope column, once vectors are written.
SCOPED_TABLES = (
    "satchel_scopes", "satchel_counts", "satchel_terms", "satchel_mentions",
    "satchel_profiles", "satchel_records", "satchel_vectors",
)  # fmt: skip
UNIT = np.array([[1.0, 0.0, 0.0, 0.0]], dtype=np.float32)


async def test_a_schema_2_database_takes_scope_names_as_exact_bytes(
    new_oceanbase: Callable[..., OceanBaseStore], seekdb: str
) -> None:
    """A database of schema 2 (scope columns of the PAD SPACE collation, where ``'pad '``
    is ``'pad'``) is migrated on open: its records stay, and ``'pad '`` is a scope of its
    own from then on, its vectors and profile apart from ``'pad'``'s."""
    from satchel.stores.oceanbase import _schema

    store = new_oceanbase()
    await store.bind_embedder("hashing", 4)
    await memories(store, "pad", [satchel.MemoryEntry(text="kestrel in pad", key="k")], UNIT)
    await set_profile(store, "pad", satchel.Profile(text="pad's profile"))
    await store.aclose()
    database = store._database
    for table in SCOPED_TABLES:
        await admin(
            seekdb,
            f"ALTER TABLE {database}.{table} MODIFY scope VARCHAR(256) NOT NULL"
            " COLLATE utf8mb4_bin",
        )
    await admin(seekdb, f"UPDATE {database}.satchel_meta SET value = '2' WHERE name = 'schema'")
    assert await admin(
        seekdb, f"SELECT COUNT(*) FROM {database}.satchel_scopes WHERE scope = 'pad '"
    ) == [(1,)]  # the breach the migration ends

    migrated = new_oceanbase()
    (alike,) = await memories(
        migrated, "pad ", [satchel.MemoryEntry(text="heron in pad space", key="k")], UNIT
    )
    assert (alike.scope_id, alike.version) == ("pad ", 1)
    assert await migrated.get_profile("pad ") is None
    profile = await migrated.get_profile("pad")
    assert profile is not None
    assert profile.text == "pad's profile"
    pad = {"memory": 1, "profile": 1}
    assert await migrated.scope_counts() == {"pad": pad, "pad ": {"memory": 1}}
    pool = await migrated.retrieve("memory", "pad", PoolRequest(analyse_query(""), UNIT[0], 8))
    assert len(pool.vector_keys) == 1
    assert await migrated.erase_scope("pad ") == 1
    assert await migrated.scope_counts() == {"pad": pad}
    await migrated.aclose()
    found = await admin(
        seekdb,
        "SELECT table_name, data_type FROM information_schema.columns"
        " WHERE table_schema = %s AND column_name = 'scope'",
        (database,),
    )
    assert sorted(found) == sorted((table, "varbinary") for table in SCOPED_TABLES)
    rows = await admin(seekdb, f"SELECT value FROM {database}.satchel_meta WHERE name = 'schema'")
    assert rows == [(str(_schema.SCHEMA_VERSION),)]


async def test_a_schema_3_database_hashes_memory_times_as_instants(
    new_oceanbase: Callable[..., OceanBaseStore], seekdb: str
) -> None:
    """Schema 3 hashed a memory's time as written; the step to 4 hashes it as its
    instant, so a forgotten entry replayed with its time in another UTC offset stays
    forgotten on a migrated database too."""
    from satchel.stores._rules import content_hash

    said = datetime(2023, 5, 8, 15, tzinfo=timezone(timedelta(hours=2)))
    entry = satchel.MemoryEntry(text="kestrel window", key="k", created_at=said)
    store = new_oceanbase()
    (ref,) = await memories(store, "s", [entry], UNIT)
    await store.forget_memory(ref)
    await store.aclose()
    database = store._database
    as_written = content_hash(("kestrel window", "fact", (), said.isoformat(), None))
    await admin(seekdb, f"UPDATE {database}.satchel_records SET content_hash = %s", (as_written,))
    await admin(seekdb, f"UPDATE {database}.satchel_meta SET value = '3' WHERE name = 'schema'")

    migrated = new_oceanbase()
    in_utc = attrs.evolve(entry, created_at=said.astimezone(UTC))
    assert await memories(migrated, "s", [in_utc], UNIT) == [ref]
    await migrated.aclose()
    hashes = await admin(seekdb, f"SELECT content_hash FROM {database}.satchel_records")
    assert hashes != [(as_written,)]
    assert len(hashes) == 1


async def test_a_database_the_suite_reuses_holds_nothing_of_the_test_before(
    new_oceanbase: Callable[..., OceanBaseStore], seekdb_engine: Any, seekdb: str
) -> None:
    """The suite's ``oceanbase`` fixture hands a test a database an earlier test used
    (``tests/conftest.py``): emptied, it holds no row but its schema version and no
    vectors table, and a store opens it as a made database, binding any dimension. A
    database a store still holds open, or whose schema a test changed, is not reused."""
    from satchel.stores.oceanbase import _schema
    from tests.conftest import emptied_for_reuse

    store = new_oceanbase()
    await store.bind_embedder("hashing", 4)
    may_8 = datetime(2023, 5, 8, 10, tzinfo=UTC)
    dated = satchel.MemoryEntry(text="we met on May 7, 2023", created_at=may_8)
    await memories(store, "s", [dated], np.ones((1, 4), dtype=np.float32))
    await set_profile(store, "s", satchel.Profile(text="prefers tea"))
    await store.record_turn(None, "chat", ["memory:s:x:1"], now=1.0, active_since=0.0, keep=4)
    database = store._database
    assert not emptied_for_reuse(seekdb_engine, database)  # the store is still open
    await store.aclose()
    assert emptied_for_reuse(seekdb_engine, database)

    for table in _schema.TABLES:
        rows = await admin(seekdb, f"SELECT COUNT(*) FROM {database}.{table}")
        assert rows == [(1 if table == "satchel_meta" else 0,)], table
    found = await admin(seekdb, _schema.EXISTING, (database,))
    assert ("satchel_vectors",) not in found
    again = new_oceanbase()
    assert await again.scope_counts() == {}
    await again.bind_embedder("other", 8)
    await memories(again, "s", [satchel.MemoryEntry(text="x")], np.ones((1, 8), np.float32))
    await again.aclose()

    await admin(seekdb, f"UPDATE {database}.satchel_meta SET value = '99' WHERE name = 'schema'")
    assert not emptied_for_reuse(seekdb_engine, database)


class _LaggingSchema:
    """Schema statements that meet a database or table as unknown until their ``lag``-th
    run, as a seekdb session did when another process had just created it."""

    def __init__(self, lag: int, code: int) -> None:
        self.lag, self.code, self.runs = lag, code, 0

    async def __call__(self, cur: object) -> None:
        import asyncmy.errors

        self.runs += 1
        if self.runs < self.lag:
            raise asyncmy.errors.ProgrammingError(self.code, "not known (yet)")


@pytest.mark.parametrize("code", [1049, 1146])
def test_a_database_or_table_another_process_just_created_is_waited_for(
    code: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Several processes opening one new database at once: ``CREATE ... IF NOT EXISTS``
    (or ``information_schema``) finds the database or a table before this session may
    use it, which failed the open with "Unknown database" (1049) or "Table ... doesn't
    exist" (1146). The idempotent schema statements run again, for a bounded time; any
    other error, or the bound running out, still fails."""
    import asyncio

    import asyncmy.errors

    from satchel.stores.oceanbase import _store

    monkeypatch.setattr(_store, "NEW_SCHEMA_PAUSE", 0.0)
    create = _LaggingSchema(lag=3, code=code)
    asyncio.run(_store._once_known(None, create))
    assert create.runs == 3
    with pytest.raises(asyncmy.errors.ProgrammingError):
        asyncio.run(_store._once_known(None, _LaggingSchema(lag=3, code=1064)))
    monkeypatch.setattr(_store, "NEW_SCHEMA_WAIT", -1.0)
    with pytest.raises(asyncmy.errors.ProgrammingError):
        asyncio.run(_store._once_known(None, _LaggingSchema(lag=3, code=code)))


async def test_large_scopes_search_approximately_and_find_a_fresh_insert(
    oceanbase: Callable[..., OceanBaseStore],
) -> None:
    """Above ``exact_rows`` the HNSW index serves the vector channel; a record written
    a moment ago is found at once (its key is among the freshest, scanned exactly), with
    no wait in the library."""
    store = oceanbase(exact_rows=4, vector_index=True)
    await store.bind_embedder("test", 4)
    basis = np.eye(4, dtype=np.float32)
    await memories(
        store,
        "s",
        [satchel.MemoryEntry(text=f"note {n}") for n in range(8)],
        np.repeat(basis[:1], 8, 0),
    )
    await memories(store, "s", [satchel.MemoryEntry(text="fresh")], basis[3:4])
    pool = await store.retrieve("memory", "s", PoolRequest(analyse_query("x"), basis[3], 4))
    assert pool.scope_rows == 9
    evidence = await store.evidence("memory", "s", pool.vector_keys[:1].tolist())
    assert [item.text for item in evidence.values()] == ["fresh"]
    assert pool.vector_similarities[0] == pytest.approx(1.0)
    await store.aclose()


async def test_neighbours_of_long_threads_are_read_around_each_key(
    oceanbase: Callable[..., OceanBaseStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A neighbour read takes the keys' threads whole while they are short, and reads
    around each key once they hold more than ``THREAD_ROWS`` rows: both give the same
    neighbours, nearest first, a forgotten turn skipped and another thread untouched."""
    from satchel.stores.oceanbase import _search

    store = oceanbase()
    await store.bind_embedder("test", 4)
    start = datetime(2024, 1, 1, tzinfo=UTC)
    turns = [
        satchel.MemoryEntry(
            text=f"turn {n}", thread="a" if n % 5 else "b", created_at=start + timedelta(minutes=n)
        )
        for n in range(20)
    ]
    refs = await memories(store, "s", turns, np.ones((20, 4), dtype=np.float32))
    await store.forget_memory(refs[7])
    pool = await store.retrieve("memory", "s", PoolRequest(analyse_query("turn"), None, 32))
    keys = pool.lexical_keys.tolist()
    whole = await store.neighbours("memory", "s", keys, reach=2)
    monkeypatch.setattr(_search, "THREAD_ROWS", 3)
    assert await store.neighbours("memory", "s", keys, reach=2) == whole
    text = {key: item.text for key, item in (await store.evidence("memory", "s", keys)).items()}
    by_text = {text[key]: near for key, near in whole.items()}
    key_of = {value: key for key, value in text.items()}
    assert by_text["turn 8"].before == (key_of["turn 6"], key_of["turn 4"])
    assert by_text["turn 8"].after == (key_of["turn 9"], key_of["turn 11"])
    assert by_text["turn 10"].before == (key_of["turn 5"], key_of["turn 0"])
    assert by_text["turn 10"].after == (key_of["turn 15"],)
    await store.aclose()


async def test_terms_under_three_letters_still_count_as_matches(
    oceanbase: Callable[..., OceanBaseStore],
) -> None:
    """The engine's parser drops words under 3 letters; the matched-term count is taken
    on satchel's analysed text, so "QA" still counts for a record found by "tokyo"."""
    store = oceanbase()
    await store.bind_embedder("test", 2)
    vectors = np.ones((2, 2), dtype=np.float32)
    await memories(
        store,
        "s",
        [satchel.MemoryEntry(text="QA in Tokyo"), satchel.MemoryEntry(text="Tokyo")],
        vectors,
    )
    pool = await store.retrieve("memory", "s", PoolRequest(analyse_query("QA Tokyo"), None, 8))
    assert sorted(pool.lexical_matches.tolist()) == [1, 2]
    await store.aclose()


_CHILD = """
import sys, anyio, satchel, json
from satchel.stores import open_store
url, action, payload = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
async def main():
    store = await open_store(url)
    async with satchel.open_runtime(store=store, embedder=satchel.HashingEmbedder()) as rt:
        if action == "add":
            entry = satchel.MemoryEntry(text=payload["text"])
            (ref,) = await rt.add_memories(payload["scope"], [entry])
            print(json.dumps([ref.scope_id, ref.entry_id, ref.version]))
        else:
            await rt.forget_memory(satchel.MemoryRef(*payload))
anyio.run(main)
"""


def _in_child(url: str, action: str, payload: Any) -> str:
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, url, action, json.dumps(payload)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return done.stdout


@pytest.mark.slow
async def test_two_processes_see_each_others_writes_and_forgets(
    oceanbase: Callable[..., OceanBaseStore], seekdb: str
) -> None:
    """A scope another process creates is found on the next prepare; its forget is
    seen too: no cache in this process serves the forgotten entry."""
    store = oceanbase()
    url = f"oceanbase://root@localhost/{store._database}?unix_socket={seekdb}"
    request = satchel.PrepareContextRequest(scope_id="theirs", query="lighthouse keeper")
    async with satchel.open_runtime(store=store, embedder=satchel.HashingEmbedder()) as rt:
        assert (await rt.prepare_context(request)).status == "empty"
        added = _in_child(url, "add", {"scope": "theirs", "text": "the lighthouse keeper"})
        ref = json.loads(added)
        context = await rt.prepare_context(request)
        assert [item.text for item in satchel.parse_context(context.content or "")] == [
            "the lighthouse keeper"
        ]
        _in_child(url, "forget", ref)
        assert (await rt.prepare_context(request)).status == "empty"


class DropConnectionsInRoundOne(StoreWrapper):
    """Before round 1's evidence read, the engine drops every connection of the store."""

    socket = ""

    async def on_evidence(self, family: str, scope_id: str, call: int) -> None:
        if call == 2:
            assert await _drop_connections(self.socket, self.inner._database) > 0


async def test_a_dropped_connection_discards_the_expansion_round_and_reconnects(
    oceanbase: Callable[..., OceanBaseStore], seekdb: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Connections dropped during round 1: that round is discarded and round 0's result
    returned; the next prepare connects again and expands. (No texts are held in the
    process, so round 1 reads its evidence from the engine.)"""
    monkeypatch.setattr(_held_texts, "MOST_ROWS", 0)
    await _seed(oceanbase())
    store = oceanbase()
    wrapper = DropConnectionsInRoundOne(store)
    wrapper.socket = seekdb
    efforts: list[satchel.RecallEffort] = []

    async def sink(effort: satchel.RecallEffort) -> None:
        efforts.append(effort)

    async with satchel.open_runtime(
        store=wrapper,
        embedder=ScriptedEmbedder(),
        recall_policy=policy(),
        recall_effort_sink=sink,
    ) as rt:
        first = await rt.prepare_context(_request())
        assert len(satchel.parse_context(first.content or "")) == 1  # round 0's one entry
        second = await rt.prepare_context(_request())
        assert len(satchel.parse_context(second.content or "")) == 6
        assert efforts[1].rounds >= 2


async def test_a_dropped_connection_in_round_zero_is_store_unavailable(
    oceanbase: Callable[..., OceanBaseStore], seekdb: str
) -> None:
    """Round 0 on a dropped connection raises StoreUnavailableError; the next call
    reconnects."""
    await _seed(oceanbase())
    store = oceanbase()
    async with satchel.open_runtime(store=store, embedder=ScriptedEmbedder()) as rt:
        assert (await rt.prepare_context(_request())).status == "ready"  # pools a connection
        assert await _drop_connections(seekdb, store._database) > 0
        with pytest.raises(satchel.StoreUnavailableError):
            await rt.prepare_context(_request())
        assert (await rt.prepare_context(_request())).status == "ready"


class KillEngineInRoundOne(StoreWrapper):
    """Before round 1's evidence read, the engine process is killed."""

    pid = 0

    async def on_evidence(self, family: str, scope_id: str, call: int) -> None:
        if call == 2:
            os.kill(self.pid, signal.SIGKILL)


def _engine_pid(directory: Path) -> int:
    found = subprocess.run(
        ["pgrep", "-f", f"seekdb --base-dir={directory}"], capture_output=True, text=True
    )
    (pid,) = found.stdout.split()
    return int(pid)


@pytest.mark.slow
async def test_a_killed_engine_discards_the_round_then_fails_clearly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The engine killed during an expansion round: round 0's result is returned; the
    next prepare fails with StoreUnavailableError, not a driver error. (No texts are
    held in the process, so the round reads its evidence from the engine.)"""
    monkeypatch.setattr(_held_texts, "MOST_ROWS", 0)
    from tests.conftest import SEEKDB_QUERY_TIMEOUT_US

    directory = tmp_path / "engine"
    async with open_store(f"seekdb://{directory}") as store:
        assert isinstance(store, OceanBaseStore)
        socket = store._server["unix_socket"]
        # The session engine's limit for a loaded machine (see tests/conftest.py).
        await admin(socket, f"SET GLOBAL ob_query_timeout = {SEEKDB_QUERY_TIMEOUT_US}")
        await _seed(OceanBaseStore(unix_socket=socket))
        wrapper = KillEngineInRoundOne(store)
        wrapper.pid = _engine_pid(directory)
        async with satchel.open_runtime(
            store=wrapper,
            embedder=ScriptedEmbedder(),
            recall_policy=policy(),
        ) as rt:
            first = await rt.prepare_context(_request())
            assert len(satchel.parse_context(first.content or "")) == 1
            with pytest.raises(satchel.StoreUnavailableError):
                await rt.prepare_context(_request())


async def test_open_store_urls_and_redaction(tmp_path: Path, seekdb: str) -> None:
    """Every scheme opens its store; a password never shows in a repr or a message."""
    async with open_store(f"sqlite:///{tmp_path}/a.db") as store:
        assert type(store).__name__ == "SqliteStore"
    async with open_store("memory://") as store:
        assert type(store).__name__ == "MemoryStore"
    url = f"oceanbase://root:s3cret@localhost:2881/db_{uuid.uuid4().hex[:8]}?unix_socket={seekdb}"
    async with open_store(url) as store:
        assert "s3cret" not in repr(store)
        with pytest.raises(satchel.StoreError) as failed:
            await store.bind_embedder("x", 4)  # root has no password: access denied
        assert "s3cret" not in str(failed.value)
    assert "s3cret" not in redact(url)
    assert "***" in redact(url)
    with pytest.raises(satchel.InvalidRequestError, match="scheme"):
        await open_store("postgres://x")
    with pytest.raises(satchel.InvalidRequestError, match="absolute"):
        await open_store("seekdb://relative/dir")


async def test_every_store_call_is_a_db_span(
    oceanbase: Callable[..., OceanBaseStore], spans: tuple[Any, Any]
) -> None:
    """Each call is one CLIENT span named after its operation, ``db.system.name`` =
    ``oceanbase``; no statement text or query text on it."""
    provider, exporter = spans
    store = oceanbase(tracer_provider=provider)
    await store.bind_embedder("test", 2)
    await memories(
        store, "s", [satchel.MemoryEntry(text="secret words")], np.ones((1, 2), np.float32)
    )
    await store.retrieve("memory", "s", PoolRequest(analyse_query("secret words"), None, 8))
    await store.aclose()
    finished = exporter.get_finished_spans()
    assert [span.name for span in finished] == [
        "oceanbase bind_embedder",
        "oceanbase add_memories",
        "oceanbase retrieve",
    ]
    for span in finished:
        assert span.attributes["db.system.name"] == "oceanbase"
        assert "secret" not in str(dict(span.attributes))
