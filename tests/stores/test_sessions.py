"""The session contract (``satchel.stores.SessionStore``), on every store of the record
contract (``test_contract.STORES``), and what sharing a store's sessions needs of the
stores shared between processes: turns numbered atomically, and a session's turn that
costs no other process its caches."""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING, Any, Final

import anyio
import pytest

from satchel.stores import MemoryEntry, SessionStore, SqliteStore, Store
from satchel.stores.sqlite._schema import SCHEMA_VERSION as SQLITE_SCHEMA
from satchel.stores.testing import remember
from satchel.vocabulary._evidence import Evidence

from .test_contract import STORES

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Sequence
    from pathlib import Path

pytestmark = pytest.mark.anyio

#: A day after the epoch: every session below is dated around it.
NOW: Final = 86_400.0
DAY: Final = 86_400.0


@pytest.fixture(params=list(STORES))
async def store(request: pytest.FixtureRequest) -> AsyncIterator[Any]:
    """An open, empty store of each kind; closed after the test."""
    opened = await STORES[request.param](request)
    yield opened
    await opened.aclose()


def memory(scope: str, entry: str, version: int = 1) -> str:
    return Evidence.from_record("memory", scope, entry, version, text="x").identity


async def turn(
    store: Any,
    served: Sequence[str],
    *,
    owner: str | None = None,
    session: str = "chat",
    now: float = NOW,
    keep: int = 100,
) -> int:
    """Record one turn that served ``served``; its number."""
    turn_number: int = await store.record_turn(
        owner, session, served, now=now, active_since=now - DAY, keep=keep
    )
    return turn_number


async def held(
    store: Any,
    *,
    owner: str | None = None,
    session: str = "chat",
    turns: int = 2,
    now: float = NOW,
) -> tuple[int, set[str]]:
    """The session's next turn and what it holds back (a set, to compare with)."""
    turn_number, identities = await store.next_turn(
        owner, session, turns=turns, active_since=now - DAY
    )
    return turn_number, set(identities)


async def test_every_store_keeps_sessions(store: Store) -> None:
    """The three stores implement the optional session protocol."""
    assert isinstance(store, SessionStore)


async def test_a_served_identity_is_held_for_the_next_turns(store: Any) -> None:
    """Turns count 1, 2, 3 ...; what turn t served is held at turns t+1 .. t+n and not
    at t+n+1; a new session is at turn 1 with nothing held."""
    a, b = memory("s", "a"), memory("s", "b")
    assert await held(store) == (1, set())
    assert await turn(store, [a]) == 1
    assert await held(store) == (2, {a})
    assert await turn(store, [b]) == 2
    assert await held(store) == (3, {a, b})
    assert await turn(store, []) == 3
    assert await held(store) == (4, {b})
    assert await held(store, turns=3) == (4, {a, b})
    assert await turn(store, [a]) == 4  # served again: held from this turn on
    assert await held(store, turns=1) == (5, {a})


async def test_sessions_are_namespaced_by_owner(store: Any) -> None:
    """One session id under the owners None, "" and "tenant" is three sessions, and
    another session id is another session."""
    a = memory("s", "a")
    await turn(store, [a], owner="tenant")
    assert await held(store, owner="tenant") == (2, {a})
    assert await held(store, owner=None) == (1, set())
    assert await held(store, owner="") == (1, set())
    assert await held(store, owner="tenant", session="other") == (1, set())
    assert await turn(store, [], owner=None) == 1
    assert await held(store, owner="tenant") == (2, {a})


async def test_a_session_expires_a_day_after_its_last_turn(store: Any) -> None:
    """A session with no turn since ``active_since`` holds nothing and starts again at
    turn 1; one with a turn since lives on."""
    a, b = memory("s", "a"), memory("s", "b")
    await turn(store, [a], now=NOW)
    await turn(store, [b], session="other", now=NOW + DAY / 2)
    assert await held(store, now=NOW + DAY) == (2, {a})  # exactly a day: still live
    assert await held(store, now=NOW + DAY + 1) == (1, set())
    assert await turn(store, [], now=NOW + DAY + 1) == 1  # drops the expired sessions
    assert await held(store, now=NOW + DAY + 1) == (2, set())
    assert await held(store, session="other", now=NOW + DAY + 1) == (2, {b})


async def test_a_session_keeps_its_most_recently_served_identities(store: Any) -> None:
    """Past ``keep``, the identities served longest ago are forgotten (within one turn,
    the greater identities first)."""
    served = [memory("s", name) for name in ("a", "b", "c", "d")]
    await turn(store, served[:2], keep=3)
    assert await held(store) == (2, set(served[:2]))
    await turn(store, served[2:], keep=3)
    assert await held(store) == (3, {served[0], *served[2:]})
    await turn(store, served[:1], keep=1)
    assert await held(store) == (4, {served[0]})


async def test_an_erase_forgets_what_sessions_were_served_of_it(store: Any) -> None:
    """Erasing a record drops every version of it from every session (ids and scope
    names are the caller's: nothing of an erased record stays); erasing a scope drops
    all of its identities, and no other scope's."""
    refs = await remember(store, "s", ["kestrel one", "kestrel two"])
    await remember(store, "t", ["kestrel three"])
    one, two = refs[0].entry_id, refs[1].entry_id
    kept = [memory("s", one, 1), memory("s", one, 2), memory("s", two), memory("t", "x")]
    await turn(store, kept)
    await turn(store, [memory("s", two)], session="other", owner="tenant")
    assert await store.erase("memory", "s", one) == 1
    assert await held(store) == (2, set(kept[2:]))
    assert await store.erase_scope("s") == 1
    assert await held(store) == (2, {kept[3]})
    assert await held(store, session="other", owner="tenant") == (2, set())


async def test_a_turn_moves_no_write_version(store: Any) -> None:
    """Session state is not record state: a turn leaves every scope's write version."""
    await remember(store, "s", ["kestrel"])
    before = store.scope_version("s")
    await turn(store, [memory("s", "a")])
    assert store.scope_version("s") == before


# -- shared between processes ---------------------------------------------------------


async def sqlite_pair(tmp_path: Path) -> tuple[Any, Any]:
    path = str(tmp_path / "shared.db")
    first = await SqliteStore.open(path)
    return first, await SqliteStore.open(path)


async def test_turns_recorded_at_once_through_two_stores_are_numbered_apart(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """Two stores over one SQLite file and two over one OceanBase database record 20
    turns of one session at once: the turns are numbered 1..20, each once."""
    make = request.getfixturevalue("oceanbase")
    pairs = [await sqlite_pair(tmp_path), (make(), make())]
    try:
        for first, second in pairs:
            # Each store's first call makes its tables, alone (a fresh OceanBase database
            # opened by several calls at once is another matter).
            assert await held(first) == await held(second) == (1, set())
            numbers: list[int] = []

            async def record(through: Any, numbers: list[int] = numbers) -> None:
                numbers.append(await turn(through, [memory("s", "a")]))

            async with anyio.create_task_group() as group:
                for n in range(20):
                    group.start_soon(record, (first, second)[n % 2])
            assert sorted(numbers) == list(range(1, 21))
            assert await held(second) == (21, {memory("s", "a")})
    finally:
        for pair in pairs:
            for each in pair:
                await each.aclose()


async def test_another_process_turn_costs_no_cache_but_its_write_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two stores over one file: a session's turn recorded through one leaves the
    other's caches and write versions (no reload); a record written through one makes
    the other reload on its next call."""
    first, second = await sqlite_pair(tmp_path)
    reloads = 0
    reload = second._reload

    def counted(conn: Any) -> None:
        nonlocal reloads
        reloads += 1
        reload(conn)

    monkeypatch.setattr(second, "_reload", counted)
    try:
        await remember(first, "s", ["kestrel"])
        await second.get_profile("s")
        assert reloads == 1
        version = second.scope_version("s")
        await turn(first, [memory("s", "a")])
        await second.get_profile("s")
        await remember(second, "t", [MemoryEntry(text="own write")])
        assert (reloads, second.scope_version("s")) == (1, version)
        assert await held(second) == (2, {memory("s", "a")})
        await remember(first, "s", ["kestrel again"])
        await second.get_profile("s")
        assert reloads == 2
        assert second.scope_version("s") > version
    finally:
        await first.aclose()
        await second.aclose()


async def test_a_schema_6_file_is_migrated_and_keeps_sessions(tmp_path: Path) -> None:
    """A file of schema 6 (no session tables, no record commit count) opens at the
    current schema: its records stay, sessions work and a record write counts a commit."""
    path = tmp_path / "six.db"
    store = await SqliteStore.open(str(path))
    await remember(store, "s", ["kestrel"])
    await store.aclose()
    with sqlite3.connect(path) as conn:
        conn.execute("DROP TABLE sessions")
        conn.execute("DROP TABLE session_items")
        conn.execute("DELETE FROM meta WHERE key = 'record_commits'")
        conn.execute("UPDATE meta SET value = '6' WHERE key = 'schema'")
    conn.close()
    store = await SqliteStore.open(str(path))
    try:
        assert await store.scope_counts() == {"s": {"memory": 1}}
        assert await turn(store, [memory("s", "a")]) == 1
        assert await held(store) == (2, {memory("s", "a")})
        await remember(store, "s", ["kestrel again"])
    finally:
        await store.aclose()
    with sqlite3.connect(path) as conn:
        meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
    conn.close()
    assert meta["schema"] == SQLITE_SCHEMA
    assert int(meta["record_commits"]) >= 2
