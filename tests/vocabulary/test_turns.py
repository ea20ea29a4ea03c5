"""The loop's turn: satchel's stretches of work on the event loop run one per loop pass."""

from __future__ import annotations

import itertools
import threading
import time
from typing import TYPE_CHECKING, Any

import anyio
import anyio.lowlevel
import anyio.to_thread
import pytest

from satchel.vocabulary import loop_turn
from satchel.vocabulary._turns import pieces

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


@pytest.mark.parametrize("size", [32, 64, 4096])
def test_pieces_cover_a_text_exactly_and_cut_only_after_whitespace(size: int) -> None:
    words = [("word" * (n % 5 + 1)) for n in range(3000)]
    text = " ".join(words[:1500]) + "\n" + " ".join(words[1500:])
    spans = list(pieces(text, size))
    assert spans[0][0] == 0
    assert spans[-1][1] == len(text)
    assert all(end == start for (_, end), (start, _) in itertools.pairwise(spans))
    assert all(end - start <= size for start, end in spans)
    assert all(text[end - 1] in " \n" for _, end in spans[:-1])


def test_a_piece_without_whitespace_is_cut_at_its_size() -> None:
    assert list(pieces("x" * 10, 4)) == [(0, 4), (4, 8), (8, 10)]
    assert list(pieces("short", 4096)) == [(0, 5)]
    assert list(pieces("", 4096)) == [(0, 0)]


def test_a_worker_thread_lets_the_loop_in_between_pieces_of_a_long_text(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from satchel.vocabulary import _analysis, _dates

    calls: list[str] = []
    for module in (_analysis, _dates):
        name = module.__name__
        monkeypatch.setattr(module, "let_loop_in", lambda name=name: calls.append(name))
    sentence = "we met on May 7, 2023 and talked for hours "
    text = sentence * 5000  # 215 kB
    assert _analysis.analyse(text) == _analysis.analyse(sentence) * 5000
    assert calls.count(_analysis.__name__) >= len(list(pieces(text)))
    assert len(_dates.extract_dates(text)) == 5000
    assert calls.count(_dates.__name__) >= len(text) // 512


@pytest.fixture
def gil_yields(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """Zero sleeps ``let_loop_in`` takes, under a clock that moves a tenth of a
    millisecond per reading (each reading: some work done)."""
    from satchel.vocabulary import _turns

    monkeypatch.setattr(_turns, "_since", threading.local())  # no thread has yielded yet
    clock = [time.perf_counter()]
    sleeps: list[float] = []

    def tick() -> float:
        clock[0] += 0.0001
        return clock[0]

    monkeypatch.setattr(time, "perf_counter", tick)
    monkeypatch.setattr(time, "sleep", sleeps.append)
    return sleeps


def _let_loop_in_many() -> None:
    from satchel.vocabulary import _turns

    for _ in range(1000):  # 0.1-0.2 s of work by the clock
        _turns.let_loop_in()


def test_a_worker_gives_up_the_gil_once_per_yield_interval(gil_yields: list[float]) -> None:
    """Giving the GIL up costs a zero sleep (~75 µs): it happens once ``YIELD_EVERY``
    has passed since the thread last did, not on every call."""
    from satchel.vocabulary import _turns

    started = time.perf_counter()
    _let_loop_in_many()
    elapsed = time.perf_counter() - started  # by the fixture's clock
    assert set(gil_yields) == {0}
    intervals = elapsed / _turns.YIELD_EVERY
    assert intervals / 2 <= len(gil_yields) <= intervals + 1
    assert len(gil_yields) < 1000 / 5


async def test_the_loops_own_thread_never_sleeps(
    anyio_backend: object, gil_yields: list[float]
) -> None:
    """A short text analysed inline runs on the loop's thread: there a sleep would only
    stall the loop, so it never happens; the same work in a worker thread yields."""
    _let_loop_in_many()
    assert gil_yields == []
    await anyio.to_thread.run_sync(_let_loop_in_many)
    assert len(gil_yields) >= 10
