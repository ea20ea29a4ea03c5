"""Fixtures shared by the workload generator tests: each module defines ``workload``."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from tests.bench._rows import read_rows

if TYPE_CHECKING:
    from pathlib import Path

    from tests.bench._rows import Row


@pytest.fixture(scope="module")
def entries(workload: Path) -> dict[str, Row]:
    """The module's workload entries by id (each test module defines ``workload``)."""
    return {row["id"]: row for row in read_rows(workload / "entries.jsonl")}


@pytest.fixture(scope="module")
def queries(workload: Path) -> list[Row]:
    """The module's workload queries, in file order."""
    return read_rows(workload / "queries.jsonl")
