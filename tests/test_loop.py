"""The loop's turn: satchel's stretches of work on the event loop run one per loop pass."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import anyio
import anyio.lowlevel
import pytest

from satchel import _loop
from satchel._loop import Turn, loop_turn, turn_known

if TYPE_CHECKING:
    from collections.abc import Callable, Coroutine

pytestmark = pytest.mark.anyio


def longest_run(log: list[str], mark: str) -> int:
    """The most ``mark`` entries in a row in ``log``."""
    longest = run = 0
    for entry in log:
        run = run + 1 if entry == mark else 0
        longest = max(longest, run)
    return longest


async def run_observed(
    log: list[str], tasks: list[Callable[[], Coroutine[Any, Any, None]]]
) -> None:
    """Run ``tasks`` side by side while an observer task on the same loop logs "host"
    each time it gets to run, until they are all done."""

    async def observer(done: anyio.Event) -> None:
        while not done.is_set():
            log.append("host")
            await anyio.lowlevel.checkpoint()

    done = anyio.Event()
    async with anyio.create_task_group() as outer:
        outer.start_soon(observer, done)
        async with anyio.create_task_group() as group:
            for task in tasks:
                group.start_soon(task)
        done.set()


async def test_another_task_runs_between_any_two_turns(anyio_backend: object) -> None:
    # Four workers want the loop at once; an observer task checkpoints in a loop. Without
    # turns each loop pass runs all four workers' stretches back to back (a run of at
    # least four); with them one stretch per pass, so the observer sees at most two in
    # a row (one at the end of a pass, one at the start of the next).
    log: list[str] = []
    stretches = 10

    async def worker() -> None:
        for _ in range(stretches):
            async with loop_turn():
                log.append("satchel")

    await run_observed(log, [worker] * 4)
    assert log.count("satchel") == 4 * stretches
    assert longest_run(log, "satchel") <= 2


async def test_a_turn_is_given_back_when_its_work_fails(anyio_backend: object) -> None:
    with pytest.raises(ValueError, match="boom"):
        async with loop_turn():
            raise ValueError("boom")
    assert not loop_turn().locked()
    with anyio.fail_after(1):
        async with loop_turn():
            pass


def test_each_run_of_an_event_loop_has_a_turn_of_its_own() -> None:
    async def same_within_a_run() -> object:
        first = loop_turn()
        assert loop_turn() is first
        return first

    assert anyio.run(same_within_a_run) is not anyio.run(same_within_a_run)


async def take(turn: Turn, name: str, log: list[str], release: anyio.Event | None = None) -> None:
    """Take ``turn``, log ``name``, and hold it until ``release`` is set (if given)."""
    async with turn:
        log.append(name)
        if release is not None:
            await release.wait()


async def test_waiters_take_the_turn_in_the_order_they_asked(anyio_backend: object) -> None:
    turn, log, release = Turn(), list[str](), anyio.Event()
    async with anyio.create_task_group() as group:
        group.start_soon(take, turn, "holder", log, release)
        await anyio.wait_all_tasks_blocked()
        for name in ("a", "b", "c"):
            group.start_soon(take, turn, name, log)
            await anyio.wait_all_tasks_blocked()  # each queued before the next asks
        release.set()
    assert log == ["holder", "a", "b", "c"]
    assert not turn.locked()


async def test_a_waiter_cancelled_before_its_turn_leaves_the_queue(anyio_backend: object) -> None:
    turn, log, release = Turn(), list[str](), anyio.Event()
    async with anyio.create_task_group() as group:
        group.start_soon(take, turn, "holder", log, release)
        await anyio.wait_all_tasks_blocked()
        with anyio.CancelScope() as gone:
            async with anyio.create_task_group() as waiting:
                waiting.start_soon(take, turn, "cancelled", log)
                await anyio.wait_all_tasks_blocked()
                group.start_soon(take, turn, "next", log)
                await anyio.wait_all_tasks_blocked()
                gone.cancel()
        release.set()
    assert log == ["holder", "next"]
    assert not turn.locked()


async def test_a_waiter_cancelled_as_it_is_handed_the_turn_passes_it_on(
    anyio_backend: object,
) -> None:
    turn, log = Turn(), list[str]()
    async with anyio.create_task_group() as group:
        with anyio.CancelScope() as gone:
            async with anyio.create_task_group() as waiting, turn:
                waiting.start_soon(take, turn, "cancelled", log)
                await anyio.wait_all_tasks_blocked()
                group.start_soon(take, turn, "next", log)
                await anyio.wait_all_tasks_blocked()
                gone.cancel()  # before the release hands it the turn
    assert log == ["next"]
    assert not turn.locked()


async def test_a_cancelled_task_asking_for_a_free_turn_gives_it_back(
    anyio_backend: object,
) -> None:
    turn = Turn()
    with anyio.CancelScope() as scope:
        scope.cancel()
        async with turn:
            pytest.fail("a cancelled task ran a stretch")
    assert scope.cancelled_caught
    assert not turn.locked()


async def test_within_turn_known_the_loop_is_asked_for_its_turn_once(
    anyio_backend: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A prepare runs inside ``turn_known``: every turn it and the tasks it starts take
    is the loop's, found without asking the run variable again."""
    real = _loop._TURN
    asked: list[str] = []

    class Counted:
        def get(self) -> Turn:
            asked.append("get")
            return real.get()

        def set(self, value: Turn) -> object:
            return real.set(value)

    monkeypatch.setattr(_loop, "_TURN", Counted())
    turns: list[Turn] = []

    async def stretch() -> None:
        turns.append(loop_turn())
        async with loop_turn():
            pass

    with turn_known():
        assert len(asked) == 1
        for _ in range(3):
            await stretch()
        async with anyio.create_task_group() as group:
            for _ in range(3):
                group.start_soon(stretch)
        assert len(asked) == 1
    assert len(turns) == 6
    assert all(turn is turns[0] for turn in turns)
    assert loop_turn() is turns[0]  # asked again once the block ended
    assert len(asked) == 2
