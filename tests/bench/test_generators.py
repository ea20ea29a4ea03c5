"""What every workload generator promises: a seed fixes its files byte for byte, and
satchel's own workload reader accepts every line it writes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

import pytest

from bench import _conversations, _synthetic
from bench import _hard_conversations as hard
from bench import _lifelike_conversations as lifelike
from satchel._workload import read_entries, read_queries
from tests.bench._rows import read_rows

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

NAMES: Final = pytest.mark.parametrize(
    "name", ["synthetic", "conversations", "hard-conversations", "lifelike-conversations"]
)

#: Each generator at a size small enough to write three times in a test.
SMALL: Final[dict[str, Callable[[Path, int], None]]] = {
    "synthetic": lambda folder, seed: _synthetic.generate(
        folder, scopes=2, projects=2, filler=20, seed=seed
    ),
    "conversations": lambda folder, seed: _conversations.generate(
        folder, conversations=2, sessions=5, seed=seed
    ),
    "hard-conversations": lambda folder, seed: hard.generate(
        folder, conversations=1, sessions=6, seed=seed
    ),
    "lifelike-conversations": lambda folder, seed: lifelike.generate(
        folder, conversations=1, sessions=6, seed=seed
    ),
}


@NAMES
def test_same_seed_same_files_other_seed_other_files(tmp_path: Path, name: str) -> None:
    """A seed fixes both files byte for byte; another seed changes them."""
    for folder, seed in (("a", 3), ("b", 3), ("c", 4)):
        SMALL[name](tmp_path / folder, seed)
    for file in ("entries.jsonl", "queries.jsonl"):
        first = (tmp_path / "a" / file).read_bytes()
        assert first == (tmp_path / "b" / file).read_bytes()
        assert first != (tmp_path / "c" / file).read_bytes()


@NAMES
def test_satchel_reads_every_line(generated: Callable[[str], Path], name: str) -> None:
    """satchel's own workload reader accepts every entry and query line."""
    workload = generated(name)
    rows = read_rows(workload / "entries.jsonl")
    read, errors = read_entries(workload / "entries.jsonl")
    assert errors == []
    assert [e.id for e in read] == [row["id"] for row in rows]
    asked, query_errors = read_queries(workload / "queries.jsonl")
    assert query_errors == []
    assert len(asked) == len(read_rows(workload / "queries.jsonl"))
