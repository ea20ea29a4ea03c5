"""``bench primitives``: every piece of the round machinery measured on both backends,
and the table naming each."""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING

import anyio
import pytest

from bench import primitives

if TYPE_CHECKING:
    from pathlib import Path


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_every_piece_is_measured_in_microseconds(backend: str, tmp_path: Path) -> None:
    database = str(tmp_path / "p.db")
    sqlite3.connect(database).close()
    measured = anyio.run(primitives.measure, 20, database, backend=backend)
    assert set(measured) == {
        "task group, empty",
        "task group, 3 tasks",
        "memory stream",
        "stream send + receive",
        "loop turn",
        "lock acquire + release",
        "cancel scope",
        "checkpoint",
        "stat + PRAGMA data_version",
    }
    assert all(0 < value < 1e5 for value in measured.values())
    # Three tasks cost their group more than none.
    assert measured["task group, 3 tasks"] > measured["task group, empty"]


def test_the_table_has_a_column_per_backend() -> None:
    text = primitives.report(
        {
            "asyncio": {"checkpoint": 6.25, "cancel scope": 3.5},
            "trio": {"checkpoint": 4.75, "cancel scope": 7.0},
        }
    )
    assert text.splitlines() == [
        "| operation | asyncio us | trio us |",
        "|---|---:|---:|",
        "| checkpoint | 6.2 | 4.8 |",
        "| cancel scope | 3.5 | 7.0 |",
    ]
