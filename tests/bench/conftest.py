"""Fixtures shared by the workload generator tests: each generator's workload, written
once per session, and each module's ``entries`` and ``queries`` of its ``workload``."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Final

import pytest

from bench import _conversations, _synthetic
from bench import _hard_conversations as hard
from bench import _lifelike_conversations as lifelike
from tests.bench._rows import read_rows

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from tests.bench._rows import Row

#: The synthetic workload's filler records per scope in the tests (its default is 2500).
SYNTHETIC_FILLER: Final = 100

#: Each workload generator the tests check, with the small arguments they check it at.
GENERATORS: Final[dict[str, Callable[..., None]]] = {
    "synthetic": functools.partial(_synthetic.generate, filler=SYNTHETIC_FILLER),
    "conversations": functools.partial(
        _conversations.generate, conversations=3, sessions=8, seed=5
    ),
    "hard-conversations": functools.partial(hard.generate, conversations=3, sessions=10, seed=5),
    # Full-length conversations: a scope's length and vocabulary are what it checks.
    "lifelike-conversations": functools.partial(lifelike.generate, conversations=2, seed=5),
}


@pytest.fixture(scope="session")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Path]:
    """The folder of a generator's workload (by its name in ``GENERATORS``), written the
    first time a test asks for it."""
    folders: dict[str, Path] = {}

    def folder(name: str) -> Path:
        if name not in folders:
            folders[name] = tmp_path_factory.mktemp(name)
            GENERATORS[name](folders[name])
        return folders[name]

    return folder


@pytest.fixture(scope="module")
def entries(workload: Path) -> dict[str, Row]:
    """The module's workload entries by id (each test module defines ``workload``)."""
    return {row["id"]: row for row in read_rows(workload / "entries.jsonl")}


@pytest.fixture(scope="module")
def queries(workload: Path) -> list[Row]:
    """The module's workload queries, in file order."""
    return read_rows(workload / "queries.jsonl")
