"""Reads in worker threads leave the event loop a core: at most the cores less one."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pytest

from satchel.stores.sqlite import _connections

if TYPE_CHECKING:
    from pathlib import Path


@pytest.mark.parametrize(
    ("cores", "readers", "threads"),
    [(1, 4, 1), (2, 4, 1), (3, 4, 2), (8, 4, 4), (8, 2, 2), (16, 1, 1)],
)
def test_reads_in_threads_are_at_most_the_cores_less_the_loops(
    monkeypatch: pytest.MonkeyPatch, cores: int, readers: int, threads: int
) -> None:
    monkeypatch.setattr(_connections, "usable_cores", lambda: cores)
    assert _connections.read_threads(readers) == threads


def test_a_store_on_two_cores_reads_in_one_thread_at_a_time(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(_connections, "usable_cores", lambda: 2)
    conns = _connections.Connections(str(tmp_path / "c.db"), readers=4)
    try:
        assert conns.read_threads == 1
    finally:
        conns.close()


def test_usable_cores_are_those_this_process_may_run_on() -> None:
    assert 1 <= _connections.usable_cores() <= (os.cpu_count() or 1)
