"""``IdMap``: a database's workload ids and the citations their latest writes carry, one
line per id, with what each write was."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from satchel._wire import compact_id
from satchel._workload import IdMap, append_id_map, key_of

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


MINTED = "3f2a9c0e1b7d4e5f8a6b2c1d0e9f8a7b"


def test_the_file_spells_a_minted_id_as_a_pack_does(tmp_path: Path) -> None:
    """A minted id is written in the 22 characters a pack prints (so an id copied off a
    pack greps in the file) and read back in full; the scope-only profile key is kept."""
    path = tmp_path / "db.ids.jsonl"
    IdMap.load(path).record({"m1": ("memory", S, MINTED, 2), "p1": ("profile", S)})
    assert lines(path) == [
        {"id": "m1", "key": ["memory", S, compact_id(MINTED), 2]},
        {"id": "p1", "key": ["profile", S]},
    ]
    assert compact_id(MINTED) in path.read_text(encoding="utf-8")
    assert MINTED not in path.read_text(encoding="utf-8")
    assert IdMap.load(path).keys == {"m1": ("memory", S, MINTED, 2), "p1": ("profile", S)}


def test_a_map_written_with_full_ids_still_reads(tmp_path: Path) -> None:
    """A map written before ids were spelled as packs spell them (32 hex digits) reads
    the same keys, and a new write of the same citation is unchanged."""
    path = tmp_path / "db.ids.jsonl"
    path.write_text(json.dumps({"id": "m1", "key": ["memory", S, MINTED, 1]}) + "\n")
    ids = IdMap.load(path)
    assert ids.keys == {"m1": ("memory", S, MINTED, 1)}
    assert ids.record({"m1": ("memory", S, MINTED, 1)}) == ["unchanged"]
    assert key_of(["memory", S, MINTED, 1]) == key_of(["memory", S, compact_id(MINTED), 1])
