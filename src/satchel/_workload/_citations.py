"""The workload id map: which citation each ingested workload id will be delivered as.

A :data:`CitationKey` is what one rendered citation names; ingestion maps every workload
id to the key of what it wrote and appends the mapping to ``DB.ids.jsonl`` as it goes,
so a pack's citations can be mapped back to workload ids. :class:`IdMap` keeps that file
at one line per id across ingests, and says of each id written whether it is new, now
cites a new version, or cites what it cited before.

The file spells a record id as a pack prints it (22 characters for an id satchel
minted), so an id copied off a pack is found in it by ``grep``; :func:`key_of` reads a
line's key back, and takes the 32-hex spelling of files written before as well.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Literal, TypeAlias

import attrs

from ..vocabulary._refs import compact_id, full_id

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

CitationKey: TypeAlias = tuple[str | int, ...]
"""What a delivered citation names: its family, its scope, then the family's identity."""

Change: TypeAlias = Literal["new", "new version", "unchanged"]
"""What an ingest did to one workload id, as its map sees it: an id it did not hold, an
id that now cites another version (new content under the id's key), or the citation it
held already (the same content: the store wrote nothing)."""


def append_id_map(path: str | Path, ids: Mapping[str, CitationKey]) -> None:
    """Append ``{"id": ..., "key": [...]}`` lines, one per workload id, to ``path``,
    each key's record id spelled as a pack prints it.

    Nothing to append creates no file.
    """
    if not ids:
        return
    with Path(path).open("a", encoding="utf-8") as out:
        for workload_id, key in ids.items():
            line = {"id": workload_id, "key": _spelled(key, compact_id)}
            out.write(json.dumps(line, ensure_ascii=False))
            out.write("\n")


def key_of(spelled: list[str | int]) -> CitationKey:
    """The citation key an id-map line's ``key`` spells (its record id in either
    spelling: as a pack prints it, or in full)."""
    return tuple(_spelled(spelled, full_id))


def _spelled(key: Sequence[str | int], spell: Callable[[str], str]) -> list[str | int]:
    # family, scope, then the record id (a profile has none), then the version
    if len(key) > 2 and isinstance(key[2], str):
        return [key[0], key[1], spell(key[2]), *key[3:]]
    return list(key)


@attrs.define
class IdMap:
    """A database's id map: every workload id with the citation key of its latest write.

    Lines are appended as batches are written (an interrupted ingest still maps what it
    wrote), only for ids that are new or cite another version than before;
    :meth:`compact` then leaves one line per id, the latest.
    """

    path: Path
    keys: dict[str, CitationKey]
    #: Lines in the file, including superseded and unreadable ones.
    lines: int = 0

    @classmethod
    def load(cls, path: str | Path) -> IdMap:
        """The map at ``path`` (empty when there is no file). A line that is not an
        id-map record (a line cut short by a crash) is skipped, and gone after
        :meth:`compact`."""
        keys: dict[str, CitationKey] = {}
        lines = 0
        try:
            with Path(path).open(encoding="utf-8") as file:
                for line in file:
                    lines += bool(line.strip())
                    record = _record(line)
                    if record is not None:
                        keys[record[0]] = record[1]
        except FileNotFoundError:
            pass
        return cls(Path(path), keys, lines)

    def record(self, ids: Mapping[str, CitationKey]) -> list[Change]:
        """Map ``ids`` (just written), appending a line for each new or changed one;
        what each write was, in order. A version of the known record no newer than
        the known one was not written (the store returned it: the content of a
        forgotten record's earlier version, which stays forgotten)."""
        changes: list[Change] = []
        appended: dict[str, CitationKey] = {}
        for workload_id, key in ids.items():
            known = self.keys.get(workload_id)
            if known is not None and _not_after(key, known):
                changes.append("unchanged")
                continue
            changes.append("new" if known is None else "new version")
            self.keys[workload_id] = appended[workload_id] = key
        append_id_map(self.path, appended)
        self.lines += len(appended)
        return changes

    def compact(self) -> None:
        """Rewrite the file at one line per id when it holds more, atomically."""
        if self.lines > len(self.keys):
            self._rewrite()

    def purge(self, scope: str, entry_id: str | None = None) -> int:
        """Drop the ids that cite what an erase removed: the memory entry ``entry_id``
        of ``scope`` (every version), or, with no entry id, every record of ``scope``.
        The file is rewritten atomically (an erased key or citation must not stay
        readable in it); returns how many ids were dropped."""
        erased = [
            workload_id
            for workload_id, key in self.keys.items()
            if key[1] == scope and (entry_id is None or (key[0] == "memory" and key[2] == entry_id))
        ]
        for workload_id in erased:
            del self.keys[workload_id]
        if erased or self.lines > len(self.keys):
            self._rewrite()
        return len(erased)

    def _rewrite(self) -> None:
        spare = self.path.with_name(self.path.name + ".tmp")
        spare.unlink(missing_ok=True)
        spare.touch()  # a map left with no id is an empty file, not the old one
        append_id_map(spare, self.keys)
        os.replace(spare, self.path)
        self.lines = len(self.keys)


def _record(line: str) -> tuple[str, CitationKey] | None:
    try:
        record = json.loads(line)
        workload_id, key = record["id"], record["key"]
    except (ValueError, TypeError, KeyError):
        return None
    if not isinstance(workload_id, str) or not isinstance(key, list):
        return None
    return workload_id, key_of(key)


def _not_after(key: CitationKey, known: CitationKey) -> bool:
    """Whether ``key`` cites ``known``'s record at ``known``'s version or an earlier one."""
    if key == known:
        return True
    version, latest = key[-1], known[-1]
    if not (isinstance(version, int) and isinstance(latest, int)):
        return False
    return key[:-1] == known[:-1] and version <= latest
