"""The loop bench's stall probe: why a long step was long, and where the loop was."""

from __future__ import annotations

import time

import pytest
from bench._heartbeat import STALL, Stall, Watch, _Timer, cause
from bench.loop import PROBED, with_probe


def stall(wall: float, thread: float, process: float, collecting: float = 0.0) -> Stall:
    return Stall("t", wall, thread, process, collecting, samples=())


@pytest.mark.parametrize(
    ("measured", "expected"),
    [
        (stall(0.010, 0.002, 0.003, collecting=0.006), "collection"),
        (stall(0.010, 0.009, 0.009), "running"),
        (stall(0.010, 0.007, 0.007), "running"),
        # The loop thread ran 2 ms of 10; a worker thread ran 7: it held the GIL.
        (stall(0.010, 0.002, 0.009), "gil"),
        # Nothing of the process ran: a blocking call, or no core.
        (stall(0.010, 0.002, 0.003), "off-cpu"),
    ],
)
def test_a_stall_is_told_by_its_own_measurements(measured: Stall, expected: str) -> None:
    assert cause(measured) == expected


def spin_until_sampled(timer: _Timer) -> None:
    """Hold the thread on the CPU until the watchdog has seen it (at most 10 s)."""
    started = time.perf_counter()
    while time.perf_counter() - started < 10:
        if timer.samples and time.perf_counter() - started > 2 * STALL:
            return


def test_a_long_step_is_recorded_with_where_the_thread_was() -> None:
    watch = Watch()
    timer = _Timer(watch)
    with timer.watching():
        timer.begin()
        timer.end("short")  # a step well under STALL is timed, not recorded
        timer.begin()
        spin_until_sampled(timer)
        timer.end("spinning")
    assert set(watch.steps) == {"short", "spinning"}
    [recorded] = watch.stalls
    assert recorded.task == "spinning"
    assert recorded.wall >= 2 * STALL
    assert recorded.samples
    # The loop thread's frames come first; other busy threads' (a test runner's own,
    # say) follow, each marked.
    loop_frames = [f for f in recorded.samples[0] if not f.startswith("other thread")]
    assert "spin_until_sampled" in loop_frames[-1]
    assert recorded.thread_cpu > 0
    # The summary carries the stall with its cause.
    summary = watch.summary()
    assert summary["stalls"] == 1
    assert summary["longest_stalls"][0]["task"] == "spinning"


def test_a_cell_reports_the_lag_of_its_pass_without_the_probe() -> None:
    """The probe lengthens the steps it explains, so a cell's lag, latencies and
    collections are the plain pass's and only its steps and stalls the probed pass's."""
    plain = Watch()
    plain.lags = [0.0004, 0.0012, 0.0031]
    probed = Watch()
    probed.lags = [0.0004, 0.0091]
    probed.stalls.append(stall(0.009, 0.002, 0.009))
    probed.steps["satchel.search"] = [3, 0.012, 0.009]
    cell = with_probe({"prepare_p50_ms": 2.5, **plain.summary()}, probed.summary())
    assert cell["lag_max_ms"] == pytest.approx(3.1)
    assert cell["lags_over_2ms"] == 1
    assert cell["lags_over_5ms"] == 0
    assert cell["prepare_p50_ms"] == 2.5
    assert cell["probed_lag_max_ms"] == pytest.approx(9.1)
    assert cell["stall_causes"] == {"gil": 1}
    assert cell["longest_step_ms"] == pytest.approx(9.0)
    assert cell["longest_step_task"] == "satchel.search"
    assert set(PROBED) <= set(cell)
