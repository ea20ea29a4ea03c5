"""The OceanBase store's tables partitioned by scope (schema 7): made so in a new
database, repartitioned on the open of one made before, every record kept."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest

import satchel
from satchel.stores import OceanBaseStore, PoolRequest, StoreError
from satchel.stores.oceanbase import _engine, _schema
from satchel.stores.testing import memories
from satchel.vocabulary import analyse_query

from .test_oceanbase import admin

if TYPE_CHECKING:
    from collections.abc import Callable

pytestmark = pytest.mark.anyio

BASIS = np.eye(4, dtype=np.float32)


async def _partitions(seekdb: str, database: str) -> dict[str, int]:
    """Each partitioned table of ``database`` with its number of partitions."""
    found = await admin(
        seekdb,
        "SELECT table_name, COUNT(*) FROM information_schema.partitions"
        " WHERE table_schema = %s AND partition_name IS NOT NULL GROUP BY table_name",
        (database,),
    )
    return {name: int(count) for name, count in found}


async def _fill(store: OceanBaseStore) -> None:
    """Two scopes of notes, one of them dated with a day its text names."""
    await store.bind_embedder("test", 4)
    notes = [satchel.MemoryEntry(text=f"kestrel survey note {n}") for n in range(6)]
    await memories(store, "alice", notes, np.repeat(BASIS[:1], 6, 0))
    dated = satchel.MemoryEntry(
        text="heron count on 3 March 2026", created_at=datetime(2026, 3, 5, tzinfo=UTC)
    )
    await memories(store, "bob", [dated], BASIS[1:2])


async def _pools(store: OceanBaseStore) -> list[tuple[list[int], list[int]]]:
    out = []
    for scope, axis in (("alice", 0), ("bob", 1)):
        request = PoolRequest(analyse_query("kestrel heron survey"), BASIS[axis], 8)
        pool = await store.retrieve("memory", scope, request)
        out.append((pool.lexical_keys.tolist(), pool.vector_keys.tolist()))
    return out


def test_partitions_outside_its_range_are_refused_naming_the_option() -> None:
    """``partitions`` below 0 or above the bound is refused before anything connects."""
    for bad in (-1, 1_025):
        with pytest.raises(StoreError, match="partitions must be 0 to 1024"):
            OceanBaseStore(unix_socket="/nowhere", partitions=bad)


async def test_a_new_database_partitions_the_scoped_tables_by_scope(
    new_oceanbase: Callable[..., OceanBaseStore], seekdb: str
) -> None:
    """A new database's records, terms, mentions and (once the first vectors come)
    vectors tables are partitioned by scope, 16 ways by default; the tables read by
    primary key are not; ``partitions=0`` leaves every table whole."""
    assert OceanBaseStore(unix_socket=seekdb)._partitions == 16
    store = new_oceanbase(partitions=16)
    await _fill(store)
    assert await _partitions(seekdb, store._database) == dict.fromkeys(_schema.SCOPED, 16)
    lexical, vectors = (await _pools(store))[0]
    assert len(lexical) == 6
    assert len(vectors) == 6
    await store.aclose()

    whole = OceanBaseStore(unix_socket=seekdb, database=f"{store._database}_w", partitions=0)
    await _fill(whole)
    assert await _partitions(seekdb, whole._database) == {}
    await whole.aclose()


async def test_a_schema_6_database_is_partitioned_on_open_and_keeps_every_record(
    new_oceanbase: Callable[..., OceanBaseStore], seekdb: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A database at schema 6 (its tables whole) opened by this store: its scoped tables
    are partitioned, every record and count is still there and searches alike, writes
    go on, and an open that finds the tables partitioned sends no ``ALTER``."""
    old = new_oceanbase(partitions=0)
    await _fill(old)
    before = (await _pools(old), await old.scope_counts())
    await old.aclose()
    database = old._database
    await admin(seekdb, f"UPDATE {database}.satchel_meta SET value = '6' WHERE name = 'schema'")

    store = new_oceanbase(partitions=4)
    assert (await _pools(store), await store.scope_counts()) == before
    assert await _partitions(seekdb, database) == dict.fromkeys(_schema.SCOPED, 4)
    schema = await admin(seekdb, f"SELECT value FROM {database}.satchel_meta WHERE name = 'schema'")
    assert schema == [(str(_schema.SCHEMA_VERSION),)]
    await memories(store, "alice", [satchel.MemoryEntry(text="kestrel again")], BASIS[:1])
    assert (await store.scope_counts())["alice"]["memory"] == 7
    await store.aclose()

    await admin(seekdb, f"UPDATE {database}.satchel_meta SET value = '6' WHERE name = 'schema'")
    monkeypatch.setattr(_schema, "PARTITIONED", " not even SQL {partitions}")
    again = new_oceanbase(partitions=4)  # partitioned already: nothing is altered
    assert (await again.scope_counts())["alice"]["memory"] == 7
    await again.aclose()


class _Tasks:
    """A stand-in for pylibseekdb's instance whose engine reports DDL tasks running."""

    def __init__(self, counts: list[int] | None) -> None:
        self.counts = counts
        self.polls = 0

    def connect(self, **options: Any) -> Any:
        return self

    def cursor(self) -> Any:
        return self

    def close(self) -> None:
        pass

    def execute(self, statement: str) -> None:
        assert statement == _engine.DDL_TASKS
        self.polls += 1
        if self.counts is None:
            raise RuntimeError("no such table")

    def fetchone(self) -> tuple[int]:
        assert self.counts is not None
        return (self.counts.pop(0),)


def test_the_keeper_detaches_only_once_no_ddl_task_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    """Before it detaches, the keeper waits until the engine runs no DDL task (a
    repartitioning's returns before its tasks end), and does not wait on an engine
    that does not show them."""
    monkeypatch.setattr(time, "sleep", lambda seconds: None)
    running = _Tasks([2, 1, 0, 5])
    _engine._await_ddl(running)
    assert (running.polls, running.counts) == (3, [5])
    hidden = _Tasks(None)
    _engine._await_ddl(hidden)
    assert hidden.polls == 1
