"""Worker threads let the event loop in between the pieces of a long text."""

from __future__ import annotations

import itertools
import threading
import time

import anyio
import anyio.to_thread
import pytest

from satchel.vocabulary._turns import pieces

pytestmark = pytest.mark.anyio


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
