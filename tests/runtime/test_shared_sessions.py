"""``open_runtime(shared_sessions=True)``: the session dedup ledger kept in the store, so
that runtimes over one store (replicas) taking turns of a session give exactly the packs
one runtime gives, on every store; a prepare that fails or is cancelled cools nothing;
sessions are their owner's; they expire by age and keep a bounded number of items."""

from __future__ import annotations

import contextlib
import sqlite3
from typing import TYPE_CHECKING, Any, Final

import anyio
import attrs
import pytest

import satchel
from satchel.orchestration import SharedLedger
from satchel.stores import MemoryStore, SqliteStore
from tests._envelope import contents
from tests._orchestration import StoreWrapper

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
    from pathlib import Path

pytestmark = pytest.mark.anyio

SCOPE: Final = "project:demo"
#: Sixteen notes a query about the kestrel rollout matches; a pack holds a few.
NOTES: Final = tuple(
    f"Kestrel deploy note {n}: step {n} of the rollout runs after the canary" for n in range(16)
)
QUERIES: Final = ("kestrel deploy", "kestrel rollout step", "deploy note canary")
TURNS: Final = 9
DEDUP_TURNS: Final = 2


def request(turn: int, session: str = "chat") -> satchel.PrepareContextRequest:
    return satchel.PrepareContextRequest(
        scope_id=SCOPE, query=QUERIES[turn % len(QUERIES)], max_bytes=600, session_id=session
    )


@contextlib.asynccontextmanager
async def runtime(store: satchel.Store, **options: Any) -> AsyncIterator[satchel.Runtime]:
    options.setdefault("dedup_turns", DEDUP_TURNS)
    options.setdefault("shared_sessions", True)
    async with satchel.open_runtime(
        store=store, embedder=satchel.HashingEmbedder(), **options
    ) as opened:
        yield opened


async def seed(store: satchel.Store) -> None:
    async with runtime(store, shared_sessions=False) as rt:
        await rt.add_memories(SCOPE, [satchel.MemoryEntry(text=text) for text in NOTES])


async def take_turns(
    runtimes: Sequence[satchel.Runtime], turns: int = TURNS, session: str = "chat"
) -> list[str | None]:
    """The packs of ``turns`` turns of one session, taken by the runtimes in turn."""
    packs = []
    for turn in range(turns):
        prepared = await runtimes[turn % len(runtimes)].prepare_context(request(turn, session))
        packs.append(prepared.content)
    return packs


def assert_sessions_mattered(packs: list[str | None]) -> None:
    """The packs are not all alike: the session held something back (so a comparison
    of two runs can tell shared sessions from unshared ones)."""
    assert all(packs)
    assert len(set(packs)) >= 3
    first = set(contents(packs[0]))
    assert first.isdisjoint(contents(packs[1]))


async def assert_alternation_matches_one_runtime(
    make: Callable[[], Awaitable[satchel.Store]],
    make_alone: Callable[[], Awaitable[satchel.Store]],
) -> None:
    """Two runtimes over stores ``make`` opens on one store take a session's turns
    alternately: their packs are byte for byte those of one runtime over a store
    ``make_alone`` opens (the same records), with shared sessions and with the
    in-process ledger, and not those of two runtimes with a ledger each."""
    async with runtime(await make_alone(), shared_sessions=False) as alone:
        expected = await take_turns([alone])
    assert_sessions_mattered(expected)
    async with runtime(await make_alone()) as alone:
        assert await take_turns([alone], session="alone") == expected
    async with runtime(await make()) as first, runtime(await make()) as second:
        assert await take_turns([first, second]) == expected
    async with (
        runtime(await make(), shared_sessions=False) as unshared_first,
        runtime(await make(), shared_sessions=False) as unshared_second,
    ):
        assert await take_turns([unshared_first, unshared_second]) != expected


def copy_database(source: Path, target: Path) -> None:
    with (
        contextlib.closing(sqlite3.connect(source)) as read,
        contextlib.closing(sqlite3.connect(target)) as write,
    ):
        read.backup(write)


async def test_two_runtimes_over_one_sqlite_file_give_one_runtimes_packs(
    tmp_path: Path,
) -> None:
    """Over one SQLite file, two runtimes alternating a session's turns give exactly the
    packs one runtime gives over an identical copy of the file: with shared sessions, and
    with the in-process ledger."""
    path, copy = tmp_path / "shared.db", tmp_path / "copy.db"
    await seed(await SqliteStore.open(str(path)))
    copy_database(path, copy)

    async def make() -> satchel.Store:
        return await SqliteStore.open(str(path))

    async def make_alone() -> satchel.Store:
        return await SqliteStore.open(str(copy))

    await assert_alternation_matches_one_runtime(make, make_alone)


async def test_two_runtimes_over_one_oceanbase_database_give_one_runtimes_packs(
    oceanbase: Callable[[], Any],
) -> None:
    """Over one seekdb database (two ``OceanBaseStore`` objects on one engine), two
    runtimes alternating a session's turns give exactly one runtime's packs (over the
    same database: a prepare writes no record, and another session is another)."""
    await seed(oceanbase())

    async def make() -> satchel.Store:
        store: satchel.Store = oceanbase()
        return store

    await assert_alternation_matches_one_runtime(make, make)


async def test_two_runtimes_over_one_memory_store_give_one_runtimes_packs() -> None:
    """The same over one ``MemoryStore``, which both runtimes hold."""
    store = MemoryStore()
    async with runtime(store, shared_sessions=False) as rt:
        await rt.add_memories(SCOPE, [satchel.MemoryEntry(text=text) for text in NOTES])
        # Closing a runtime closes its store: these share it inside the one above.
        expected = await take_turns([rt], session="alone")
        assert_sessions_mattered(expected)
        async with runtime(store) as first, runtime(store) as second:
            assert await take_turns([first, second]) == expected


class FailsWhenAsked(StoreWrapper):
    """A store whose evidence reads fail (round 0 fails) while ``failing`` is set."""

    failing = False

    async def on_evidence(self, family: str, scope_id: str, call: int) -> None:
        if self.failing:
            raise OSError("disk read failed")


async def test_a_failed_prepare_through_another_runtime_cools_nothing(tmp_path: Path) -> None:
    """Prepares of a session that fail in one runtime are no turns: the other runtime's
    next turns hold back what the first turn served for exactly ``dedup_turns``."""
    path = tmp_path / "shared.db"
    await seed(await SqliteStore.open(str(path)))
    failing: Any = FailsWhenAsked(await SqliteStore.open(str(path)))
    async with runtime(failing) as flaky, runtime(await SqliteStore.open(str(path))) as steady:
        first = contents((await steady.prepare_context(request(0))).content)
        failing.failing = True
        for turn in range(3):
            with pytest.raises(satchel.PrepareFailedError):
                await flaky.prepare_context(request(turn))
        held = [contents((await steady.prepare_context(request(0))).content) for _ in range(2)]
        back = contents((await steady.prepare_context(request(0))).content)
    assert first
    assert all(set(first).isdisjoint(each) for each in held)
    assert set(first) <= set(back)


async def test_a_cancelled_prepare_cools_nothing(tmp_path: Path) -> None:
    """A prepare cancelled by its caller (here while the effort sink runs) is no turn:
    the other runtime's next turn serves the same pack."""
    path = tmp_path / "shared.db"
    await seed(await SqliteStore.open(str(path)))
    entered = anyio.Event()

    async def stuck(effort: satchel.RecallEffort) -> None:
        entered.set()
        await anyio.sleep_forever()

    async with (
        runtime(await SqliteStore.open(str(path)), recall_effort_sink=stuck) as stalls,
        runtime(await SqliteStore.open(str(path))) as steady,
    ):
        async with anyio.create_task_group() as group:
            cancel = anyio.CancelScope()

            async def cancelled_turn() -> None:
                with cancel:
                    await stalls.prepare_context(request(0))

            group.start_soon(cancelled_turn)
            await entered.wait()
            cancel.cancel()
        assert cancel.cancelled_caught
        first = (await steady.prepare_context(request(0))).content
        second = (await steady.prepare_context(request(0))).content
    async with runtime(await SqliteStore.open(str(path))) as fresh:
        alone = (await fresh.prepare_context(request(0, session="fresh"))).content
    assert first == alone
    assert set(contents(first)).isdisjoint(contents(second))


class HoldsTheTurn(StoreWrapper):
    """A store whose session turns wait for ``release`` once ``recording`` is set."""

    def __init__(self, inner: Any) -> None:
        super().__init__(inner)
        self.recording = anyio.Event()
        self.release = anyio.Event()

    async def record_turn(self, *args: Any, **kwargs: Any) -> int:
        self.recording.set()
        await self.release.wait()
        turn: int = await self.inner.record_turn(*args, **kwargs)
        return turn


async def test_a_turn_being_recorded_is_recorded_whole_and_returned() -> None:
    """A caller cancelling while its turn is being recorded still gets the pack (the
    record is shielded), so the turn it counts was returned: the next turn holds back
    what it served."""
    store: Any = HoldsTheTurn(MemoryStore())
    async with runtime(store) as rt:
        await rt.add_memories(SCOPE, [satchel.MemoryEntry(text=text) for text in NOTES])
        returned: list[str | None] = []
        async with anyio.create_task_group() as group:
            cancel = anyio.CancelScope()

            async def turn() -> None:
                with cancel:
                    returned.append((await rt.prepare_context(request(0))).content)

            group.start_soon(turn)
            await store.recording.wait()
            cancel.cancel()
            store.release.set()
        store.recording, store.release = anyio.Event(), anyio.Event()
        store.release.set()
        (first,) = returned
        second = (await rt.prepare_context(request(0))).content
    assert first
    assert set(contents(first)).isdisjoint(contents(second))


async def test_a_session_is_its_owners_across_runtimes(tmp_path: Path) -> None:
    """One session id under two owners (two service tokens' names) is two sessions,
    whichever runtime takes the turn; the runtime's own host (None) is a third."""
    path = tmp_path / "shared.db"
    await seed(await SqliteStore.open(str(path)))
    async with (
        runtime(await SqliteStore.open(str(path))) as one,
        runtime(await SqliteStore.open(str(path))) as two,
    ):
        served_a = await one.prepare_context(request(0), session_owner="tenant-a")
        served_b = await two.prepare_context(request(0), session_owner="tenant-b")
        served_host = await two.prepare_context(request(0))
        again_a = await two.prepare_context(request(0), session_owner="tenant-a")
    assert served_a.content == served_b.content == served_host.content
    assert set(contents(served_a.content)).isdisjoint(contents(again_a.content))


async def test_a_session_expires_a_day_after_its_last_turn(tmp_path: Path) -> None:
    """With the runtimes' injected clock: a turn 24 h after the session's last one still
    holds back what it served; one a second later finds the session gone."""
    path = tmp_path / "shared.db"
    await seed(await SqliteStore.open(str(path)))
    now = [1_700_000_000.0]
    day = 24 * 3600.0

    def clock() -> float:
        return now[0]

    async with (
        runtime(await SqliteStore.open(str(path)), clock=clock) as one,
        runtime(await SqliteStore.open(str(path)), clock=clock) as two,
    ):
        first = contents((await one.prepare_context(request(0))).content)
        now[0] += day
        within = contents((await two.prepare_context(request(0))).content)
        now[0] += day + 1
        after = contents((await one.prepare_context(request(0))).content)
    assert first
    assert set(first).isdisjoint(within)
    assert after == first


async def test_a_session_keeps_its_most_recently_served_items() -> None:
    """Past the bound on a session's items, what was served longest ago is no longer
    held back, even within ``dedup_turns``: with room for one, one item of the pack is
    held back at the next turn; with the default room, every one."""
    store = MemoryStore()
    async with runtime(store) as rt:
        await rt.add_memories(SCOPE, [satchel.MemoryEntry(text=text) for text in NOTES])
        first = contents((await rt.prepare_context(request(0))).content)
        wide = contents((await rt.prepare_context(request(0))).content)
        rt._preparer = attrs.evolve(
            rt._preparer, ledger=SharedLedger(store, DEDUP_TURNS, max_items=1)
        )
        assert contents((await rt.prepare_context(request(0, "narrow"))).content) == first
        narrow = contents((await rt.prepare_context(request(0, "narrow"))).content)
    assert len(first) >= 2
    assert set(first).isdisjoint(wide)
    assert len(set(first) - set(narrow)) == 1


async def test_shared_sessions_need_a_store_that_keeps_them() -> None:
    """A store without sessions is refused by name before anything opens; the option is
    a flag."""

    class Plain(StoreWrapper):
        """A store without the session methods."""

    plain: Any = Plain(MemoryStore())
    for name in ("next_turn", "record_turn"):
        setattr(plain, name, None)
    with pytest.raises(satchel.InvalidRequestError, match="shared_sessions"):
        async with satchel.open_runtime(store=plain, dedup_turns=1, shared_sessions=True):
            pass
    with pytest.raises(satchel.InvalidRequestError, match="shared_sessions"):
        async with satchel.open_runtime(shared_sessions="yes"):
            pass
