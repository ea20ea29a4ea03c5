"""``IdMap``: a database's workload ids and the citations their latest writes carry, one
line per id, with what each write was."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from satchel._workload import IdMap, append_id_map

if TYPE_CHECKING:
    from pathlib import Path

S = "project:demo"


def lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_a_write_is_new_a_new_version_or_unchanged(tmp_path: Path) -> None:
    """Against the map, an id is new, cites a new version, or cites what it cited; only
    the first two append a line, and compact leaves one line per id, in first order."""
    path = tmp_path / "db.ids.jsonl"
    ids = IdMap.load(path)
    assert ids.record({"m1": ("memory", S, "e1", 1), "m2": ("memory", S, "e2", 1)}) == [
        "new",
        "new",
    ]
    again = IdMap.load(path)
    changes = again.record({"m1": ("memory", S, "e1", 1), "m2": ("memory", S, "e2", 2)})
    assert changes == ["unchanged", "new version"]
    assert len(lines(path)) == 3
    again.compact()
    assert lines(path) == [
        {"id": "m1", "key": ["memory", S, "e1", 1]},
        {"id": "m2", "key": ["memory", S, "e2", 2]},
    ]


def test_load_skips_a_torn_line_and_compact_drops_it(tmp_path: Path) -> None:
    """A line cut short (a crash mid-append) is no mapping; compacting removes it."""
    path = tmp_path / "db.ids.jsonl"
    append_id_map(path, {"m1": ("memory", S, "e1", 1)})
    with path.open("a", encoding="utf-8") as out:
        out.write('{"id": "m2", "ke')
    ids = IdMap.load(path)
    assert ids.keys == {"m1": ("memory", S, "e1", 1)}
    ids.compact()
    assert lines(path) == [{"id": "m1", "key": ["memory", S, "e1", 1]}]
