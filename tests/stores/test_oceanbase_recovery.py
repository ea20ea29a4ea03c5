"""OceanBaseStore after failures: a writer killed mid-write, a scope whose lock cannot be
had, the session's limits, and an HNSW index still loading after a restart."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from typing import TYPE_CHECKING, Any, Final

import numpy as np
import pytest

import satchel
from satchel.stores import OceanBaseStore, PoolRequest, open_store
from satchel.stores.oceanbase import _connections, _engine, _locks, _schema, _search
from satchel.stores.oceanbase._bridge import LoopThread
from satchel.stores.testing import memories
from satchel.vocabulary import analyse_query
from tests._processes import alive, announced, remove_engine_links

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

#: Records per killed write: their changes pass the 16 KB past which the engine logs a
#: transaction's changes before its commit (what an engine that dies then recovers).
BATCH = 300

#: Tenths of a second the hanging writer waits at most for the engine to log its
#: transaction (seconds on a loaded machine; killed unlogged, it must recover all the
#: same), and how long the test waits for it to say it is in its transaction: the
#: engine's start, the batch's rows, then that wait.
LOG_POLLS: Final = 1200
HANG_SECONDS: Final = 300.0

#: A process writing batch ARGV[3] of ``BATCH`` keyed entries into ``seekdb://ARGV[1]``,
#: scope ARGV[2], then printing the scope's count. With "hang", it stops inside the
#: transaction once every row is written, the scope is locked and the engine has logged
#: the changes, says "in transaction", and waits to be killed.
_WRITER = """
import sys, time, anyio, satchel
from satchel.stores import open_store
from satchel.stores.oceanbase import _rows
directory, scope, batch, hang = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]

async def in_transaction(cur, write):
    for _ in range(LOG_POLLS):
        await cur.execute(
            "SELECT FLUSHED_LOG_SIZE FROM oceanbase.V$OB_TRANSACTION_WRITE_STATE"
            " WHERE SESSION_ID = CONNECTION_ID()"
        )
        if (await cur.fetchone())[0] > 0:
            break
        time.sleep(0.1)
    print("in transaction", flush=True)
    time.sleep(3600)

if hang == "hang":
    _rows.apply_counts = in_transaction

async def main():
    entries = [
        satchel.MemoryEntry(text=f"note {n} of batch {batch} in {scope}", key=f"{batch}-{n}")
        for n in range(BATCH)
    ]
    async with open_store(f"seekdb://{directory}") as store:
        async with satchel.open_runtime(store=store, embedder=satchel.HashingEmbedder()) as rt:
            await rt.add_memories(scope, entries)
            print(dict(await store.scope_counts())[scope]["memory"], flush=True)
anyio.run(main)
""".replace("BATCH", str(BATCH)).replace("LOG_POLLS", str(LOG_POLLS))


def _argv(directory: Path, batch: int, *, hang: bool) -> list[str]:
    return [sys.executable, "-c", _WRITER, str(directory), "s", str(batch), "hang" if hang else "-"]


def _write(directory: Path, batch: int) -> str:
    """Write batch ``batch`` in a process of its own: the scope's count it printed, or
    the last line of its error."""
    done = subprocess.run(
        _argv(directory, batch, hang=False), capture_output=True, text=True, timeout=600
    )
    return done.stdout.strip() or done.stderr.strip().splitlines()[-1]


def _killed_mid_write(directory: Path, batch: int, *, engine_too: bool = False) -> None:
    """Start writing batch ``batch``; SIGKILL the process inside its transaction (and,
    with ``engine_too``, the engine first)."""
    writer = subprocess.Popen(_argv(directory, batch, hang=True), stdout=subprocess.PIPE)
    try:
        announced(writer.stdout, rb"in transaction", "the writer", HANG_SECONDS)
        if engine_too:
            engine = int((directory / "run" / "seekdb.pid").read_text())
            os.kill(engine, signal.SIGKILL)
            while alive(engine):
                time.sleep(0.05)
    finally:
        os.kill(writer.pid, signal.SIGKILL)
        writer.wait()
        remove_engine_links(writer.pid)
        assert writer.stdout is not None
        writer.stdout.close()


@pytest.mark.slow
def test_writers_killed_mid_write_leave_their_scope_writable(tmp_path: Path) -> None:
    """A process killed inside its write (rows written, the scope locked, the changes
    in the engine's log) leaves nothing locked: twice, the next process writes the
    same batch into the same scope, which ends with exactly the entries written."""
    directory = tmp_path / "engine"
    assert _write(directory, 0) == str(BATCH)
    for batch in (1, 2):
        _killed_mid_write(directory, batch)
        assert _write(directory, batch) == str(BATCH * (batch + 1))


@pytest.mark.slow
def test_an_engine_killed_mid_write_leaves_its_scope_locked_and_says_so(
    tmp_path: Path,
) -> None:
    """What the keeper cannot prevent: the engine itself killed inside a write recovers
    the transaction with no session, for good; the next write to the scope fails at its
    first lock wait, naming that transaction rather than timing out bare, and the fix:
    a copy of the store (reads still work), which then takes the write."""
    directory = tmp_path / "engine"
    assert _write(directory, 0) == str(BATCH)
    _killed_mid_write(directory, 1, engine_too=True)
    failed = _write(directory, 1)
    assert failed.startswith("satchel.vocabulary._errors.StoreUnavailableError: add_memories:")
    assert re.search(r"scope 's' stayed locked for \d+ s", failed)
    assert "transaction(s) with no session" in failed
    assert "'A writer killed mid-write'" in failed
    assert "satchel copy --verify SOURCE NEW" in failed
    # the operator's fix the error names: a copy into a new store, which takes writes
    fresh = tmp_path / "fresh"
    copied = subprocess.run(
        [sys.executable, "-m", "satchel", "copy", "--verify",
         f"seekdb://{directory}", f"seekdb://{fresh}"],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert copied.returncode == 0, copied.stderr
    assert _write(fresh, 1) == str(2 * BATCH)


@pytest.mark.slow
@pytest.mark.anyio
async def test_a_new_engine_is_never_stopped_while_it_loads_its_system_packages(
    tmp_path: Path,
) -> None:
    """A store opened on a new directory and closed at once (its engine up for a few
    seconds) stops the engine only once the engine's one-time job loading its system
    packages has succeeded: an engine stopped inside that job recovered one of its
    transactions with no session, which every later ``CREATE TABLE`` waited on."""
    url = f"seekdb://{tmp_path / 'engine'}"

    async def job_and_sessionless(cur: Any) -> tuple[Any, list[Any]]:
        await cur.execute(_engine.PACKAGES_LOADED)
        job = await cur.fetchone()
        await cur.execute(
            "SELECT TX_ID FROM oceanbase.V$OB_TRANSACTION_WRITE_STATE WHERE SESSION_ID = 0"
        )
        return job, list(await cur.fetchall())

    async with open_store(url):
        pass
    async with open_store(url) as store:
        assert isinstance(store, OceanBaseStore)
        job, sessionless = await store._call("probe", job_and_sessionless)
    assert job == ("SUCCESS",)
    assert sessionless == []


@pytest.mark.anyio
async def test_opening_a_made_database_runs_no_ddl(
    oceanbase: Callable[..., OceanBaseStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The second store on a database finds every table made: it sends no DDL, which
    would wait on any table lock the engine holds (a transaction recovered with no
    session holds one for good)."""
    first = oceanbase()
    assert await first.scope_counts() == {}
    await first.aclose()
    sent: list[str] = []
    create = OceanBaseStore._create

    class Recording:
        def __init__(self, cur: Any) -> None:
            self._cur = cur

        async def execute(self, statement: str, *args: Any) -> Any:
            sent.append(" ".join(statement.split()))
            return await self._cur.execute(statement, *args)

        def __getattr__(self, name: str) -> Any:
            return getattr(self._cur, name)

    async def recording(self: OceanBaseStore, cur: Any) -> None:
        await create(self, Recording(cur))

    monkeypatch.setattr(OceanBaseStore, "_create", recording)
    second = oceanbase()
    assert await second.scope_counts() == {}
    await second.aclose()
    assert sent, "the second store read the schema"
    assert [s for s in sent if s.split()[0].upper() in {"CREATE", "ALTER", "DROP"}] == []


class _RowHolder:
    """Another session holding a scope's row lock in an open transaction."""

    def __init__(self, socket: str, table: str, scope: str) -> None:
        self._socket, self._table, self._scope = socket, table, scope
        self._bridge = LoopThread("test-holder")
        self._conn: Any = None

    async def __aenter__(self) -> None:
        async def hold() -> None:
            import asyncmy

            self._conn = await asyncmy.connect(
                unix_socket=self._socket, user="root", autocommit=True
            )
            async with self._conn.cursor() as cur:
                await cur.execute("BEGIN")
                await cur.execute(
                    f"SELECT * FROM {self._table} WHERE scope = %s FOR UPDATE", (self._scope,)
                )

        await self._bridge.run(hold)

    async def __aexit__(self, *exc: object) -> None:
        async def release() -> None:
            self._conn.close()

        try:
            await self._bridge.run(release)
        finally:
            self._bridge.close()


@pytest.mark.anyio
async def test_each_session_has_satchels_limits_and_a_write_its_own(
    oceanbase: Callable[..., OceanBaseStore],
) -> None:
    """Every connection sets the statement and idle limits; a write's transaction limit
    is sized by its batch."""
    store = oceanbase()
    await store.bind_embedder("test", 2)

    async def limits(cur: Any) -> tuple[int, ...]:
        await cur.execute("SELECT @@ob_query_timeout, @@ob_trx_idle_timeout")
        return tuple(await cur.fetchone())

    assert await store._call("limits", limits) == (120_000_000, 120_000_000)
    assert _connections.QUERY_TIMEOUT == _connections.TRX_IDLE_TIMEOUT == 120

    async def transaction_limit(cur: Any, write: Any) -> int:
        await cur.execute("SELECT @@ob_trx_timeout")
        return int((await cur.fetchone())[0])

    limit = await store._write("probe", "s", "memory", 40, transaction_limit, None)
    assert limit == _locks.write_timeout_us(40) == 602_000_000
    await store.aclose()


@pytest.mark.anyio
async def test_a_scope_a_live_writer_holds_fails_clearly_once_the_wait_runs_out(
    oceanbase: Callable[..., OceanBaseStore], seekdb: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another session holding the scope's row: the write asks again at each bounded
    wait, then fails naming the scope and a live writer; once the row is free, the next
    write goes through."""
    monkeypatch.setattr(_locks, "LOCK_WAIT", 0.2)
    monkeypatch.setattr(_locks, "LOCK_BUDGET", 0.5)
    store = oceanbase()
    await store.bind_embedder("test", 2)
    one = np.ones((1, 2), dtype=np.float32)
    await memories(store, "s", [satchel.MemoryEntry(text="first")], one)
    async with _RowHolder(seekdb, f"{store._database}.satchel_scopes", "s"):
        with pytest.raises(satchel.StoreUnavailableError) as failed:
            await memories(store, "s", [satchel.MemoryEntry(text="second")], one)
    assert str(failed.value).startswith("add_memories: another writer held scope 's'")
    await memories(store, "s", [satchel.MemoryEntry(text="second")], one)
    assert (await store.scope_counts())["s"]["memory"] == 2
    await store.aclose()


@pytest.mark.anyio
async def test_a_loading_index_is_searched_exactly_until_it_answers(
    oceanbase: Callable[..., OceanBaseStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Above ``exact_rows``, an approximate search that runs out of time (the HNSW index
    still loading after a restart; injected here with a 1 microsecond limit) gives way
    to an exact scan with the same answer; searches stay exact, never asking the index,
    until ``INDEX_RETRY`` seconds later, when the index answers again. (No vectors held
    in the process: the engine searches.)"""
    store = oceanbase(exact_rows=4, vector_cache_bytes=0, vector_index=True)
    await store.bind_embedder("test", 8)
    vectors = np.random.default_rng(5).normal(size=(9, 8)).astype(np.float32)
    await memories(store, "s", [satchel.MemoryEntry(text=f"note {n}") for n in range(9)], vectors)
    now = [100.0]
    store._vector_index.clock = lambda: now[0]
    request = PoolRequest(analyse_query("x"), vectors[4], 4)
    real = _schema.APPROXIMATE_NEAREST
    loading = real.replace(f"QUERY_TIMEOUT({_schema.APPROXIMATE_TIMEOUT_US})", "QUERY_TIMEOUT(1)")
    assert loading != real

    monkeypatch.setattr(_schema, "APPROXIMATE_NEAREST", loading)
    pool = await store.retrieve("memory", "s", request)  # times out, then scans exactly
    assert pool.scope_rows == 9
    assert pool.vector_similarities[0] == pytest.approx(1.0)
    assert not store._vector_index.ready()

    monkeypatch.setattr(_schema, "APPROXIMATE_NEAREST", "not even SQL")  # never sent
    now[0] += _search.INDEX_RETRY - 1
    again = await store.retrieve("memory", "s", request)
    assert again.vector_keys.tolist() == pool.vector_keys.tolist()

    monkeypatch.setattr(_schema, "APPROXIMATE_NEAREST", real)
    now[0] += 1
    assert store._vector_index.ready()
    answered = await store.retrieve("memory", "s", request)
    assert answered.vector_keys.tolist() == pool.vector_keys.tolist()
    assert store._vector_index.ready()
    await store.aclose()
