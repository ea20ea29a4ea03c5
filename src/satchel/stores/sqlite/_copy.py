"""The embedded store's side of a copy (``satchel.stores.CopySource`` and ``CopyTarget``):
reading a scope's versions in row order, and writing versions verbatim.

Rows are the store's keys: a version is read with its row as its position, and one
written gets the next row, so a family's versions in a scope keep the source's order.
A searchable version is inserted as every write inserts one (``_rows.insert_version``:
its row, full-text terms, term statistics, days named, body); one that is not is then
retired as a forget retires it (``_rows.retire``), so the target holds exactly what the
source would after the same writes. A copy's pages are slices of the scope's rows in order,
read once (:class:`RowOrder`). Every function runs on a connection the store hands it,
writes inside the store's write transaction.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from .. import _rules
from .._copy_protocol import VERSIONED, StoredVersion, VectorOrigin
from .._rules import decode_tags
from . import _rows as rows
from . import _schema as sql

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Sequence

    from ...vocabulary._families import Family

#: Every column of a version a copy moves, its row first (the position).
COLUMNS: Final = (
    "r.row, r.rid, r.revision, r.live, r.caller_key, r.text, r.kind, r.tags, r.created_at,"
    " r.thread, r.title, r.abstract, r.overview, b.body,"
    " CASE WHEN r.live THEN r.embedding END"
)

#: Record ids one statement looks up (SQLite allows 32,766 parameters since 3.32).
IDS_PER_STATEMENT: Final = 500

#: Every scope holding a record version or a profile.
SCOPES: Final = (
    "SELECT scope FROM scopes WHERE scope_key IN"
    " (SELECT scope_key FROM records UNION SELECT scope_key FROM profiles) ORDER BY scope"
)


def copy_scopes(conn: sqlite3.Connection) -> list[str]:
    return [scope for (scope,) in conn.execute(SCOPES)]


def count_versions(conn: sqlite3.Connection, scope_key: int) -> dict[Family, int]:
    """The scope's versions per family (one index range each), and its profile as one."""
    counts: dict[Family, int] = {}
    for family in VERSIONED:
        (count,) = conn.execute(
            "SELECT count(*) FROM records WHERE family = ? AND scope_key = ?", (family, scope_key)
        ).fetchone()
        if count:
            counts[family] = int(count)
    if conn.execute("SELECT 1 FROM profiles WHERE scope_key = ?", (scope_key,)).fetchone():
        counts["profile"] = 1
    return counts


class RowOrder:
    """The rows of the (scope, family) a copy reads, in row order, kept while the
    scope's write version holds: each page is then a slice of it. Read page by page
    from the index on (family, scope, id, version), every page would sort the family's
    whole scope again (measured on 100,000 versions in pages of 512: 15,000 versions a
    second of CPU that way, 56,000 this way). Thread-safe: one pair is swapped in."""

    def __init__(self) -> None:
        self._held: tuple[tuple[int, str, int], Any] = ((0, "", -1), np.empty(0, np.int64))

    def page(
        self, conn: sqlite3.Connection, order: tuple[int, Family, int], after: int, limit: int
    ) -> list[int]:
        """At most ``limit`` rows past ``after`` of ``order``: (scope key, family, the
        scope's write version)."""
        held, rows = self._held
        if held != order:
            scope_key, family, _ = order
            found = conn.execute(
                "SELECT row FROM records WHERE family = ? AND scope_key = ?", (family, scope_key)
            )
            rows = np.sort(np.fromiter((row for (row,) in found), dtype=np.int64))
            self._held = (order, rows)
        start = int(np.searchsorted(rows, after, side="right"))
        return [int(row) for row in rows[start : start + limit]]


def read_versions(conn: sqlite3.Connection, family: Family, rows: list[int]) -> list[StoredVersion]:
    """The versions at ``rows`` (of ``family``), in row order."""
    if not rows:
        return []
    found = conn.execute(
        f"SELECT {COLUMNS} FROM records r LEFT JOIN resource_bodies b ON b.row = r.row"
        f" WHERE r.row IN ({','.join('?' * len(rows))}) ORDER BY r.row",
        rows,
    ).fetchall()
    return [_version(family, row) for row in found]


def _version(family: Family, row: Sequence[Any]) -> StoredVersion:
    (position, rid, revision, live, key, text, kind, tags, said, thread, title, abstract,
     overview, body, embedding) = row  # fmt: skip
    vector = None
    if live and embedding is not None:
        vector = np.frombuffer(embedding, dtype=np.float32).copy()
    return StoredVersion(
        family=family, record_id=rid, version=int(revision), live=bool(live),
        position=int(position), key=key, text=text, kind=kind,
        tags=decode_tags(tags), created_at=datetime.fromisoformat(said) if said else None,
        thread=thread, title=title, abstract=abstract, overview=overview, body=body,
        vector=vector,
    )  # fmt: skip


def held_versions(
    conn: sqlite3.Connection, scope_key: int, family: Family, record_ids: Sequence[str]
) -> dict[tuple[str, int], bool]:
    """Every version of these records, with whether it is searchable (index ranges)."""
    held: dict[tuple[str, int], bool] = {}
    for start in range(0, len(record_ids), IDS_PER_STATEMENT):
        some = record_ids[start : start + IDS_PER_STATEMENT]
        for rid, revision, live in conn.execute(
            "SELECT rid, revision, live FROM records WHERE family = ? AND scope_key = ?"
            f" AND rid IN ({','.join('?' * len(some))})",
            (family, scope_key, *some),
        ):
            held[(rid, int(revision))] = bool(live)
    return held


def write_versions(
    conn: sqlite3.Connection,
    write: rows.Write,
    versions: Sequence[StoredVersion],
    fingerprint: str | None,
) -> int:
    """Insert ``versions`` in order, but those the scope holds already (an earlier write
    of the same page committed) and those of an entry the store keeps the tombstone of
    (an erase here is never undone by a copy); returns how many it inserted. The searchable ones'
    rows go to ``write.added_rows``, and the place among the searchable ones of each it
    skipped to ``write.unwritten`` (their vectors follow the committed write into loaded
    matrices)."""
    ids = sorted({version.record_id for version in versions})
    held = held_versions(conn, write.scope_key, write.record_family, ids)
    erased = erased_records(conn, write.scope_id, write.record_family, ids)
    searchable = -1
    for version in versions:
        searchable += version.live
        if (version.record_id, version.version) in held or version.record_id in erased:
            if version.live:
                write.unwritten.append(searchable)
            continue
        row = _insert(conn, write, version)
        if version.live:
            write.added_rows.append(row)
        else:  # readable by its reference, out of search: as a forget leaves it
            rows.retire(conn, write.record_family, row)
    if fingerprint is not None and write.added_rows and any(v.vector is not None for v in versions):
        rows.record_embedder(conn, fingerprint)
    return sum(
        1 for v in versions if (v.record_id, v.version) not in held and v.record_id not in erased
    )


def _insert(conn: sqlite3.Connection, write: rows.Write, version: StoredVersion) -> int:
    """One version's row, as a write inserts it (``_rows.insert_version``)."""
    cited = (version.record_id, version.version)
    return rows.insert_version(conn, write, cited, version.columns(), version.vector)


def retire_versions(
    conn: sqlite3.Connection, write: rows.Write, versions: Sequence[tuple[str, int]]
) -> None:
    """Take the named versions out of search (those still in it): ``write.removed_rows``."""
    for rid, revision in versions:
        found = conn.execute(
            "SELECT row FROM records WHERE family = ? AND scope_key = ? AND rid = ?"
            " AND revision = ? AND live = 1",
            (write.record_family, write.scope_key, rid, revision),
        ).fetchone()
        if found is not None:
            rows.retire(conn, write.record_family, found[0])
            write.removed_rows.append(found[0])


def read_tombstones(conn: sqlite3.Connection) -> list[str]:
    return [tombstone for (tombstone,) in conn.execute("SELECT tombstone FROM erased ORDER BY 1")]


def erased_records(
    conn: sqlite3.Connection, scope_id: str, family: Family, record_ids: Sequence[str]
) -> set[str]:
    """Those of the records whose tombstone the store keeps."""
    named = _rules.tombstones_of(scope_id, family, record_ids)
    kept: set[str] = set()
    given = sorted(named)
    for start in range(0, len(given), IDS_PER_STATEMENT):
        some = given[start : start + IDS_PER_STATEMENT]
        kept.update(
            tombstone
            for (tombstone,) in conn.execute(
                f"SELECT tombstone FROM erased WHERE tombstone IN ({','.join('?' * len(some))})",
                some,
            )
        )
    return {named[tombstone] for tombstone in kept}


def tombstoned_entries(conn: sqlite3.Connection) -> list[tuple[str, str]]:
    """Every memory entry ``(scope, entry id)`` the store holds and keeps the tombstone
    of: what a copy of an erase brought, to erase here too."""
    kept = {tombstone for (tombstone,) in conn.execute("SELECT tombstone FROM erased")}
    if not kept:  # nothing erased: no entry to read
        return []
    entries = conn.execute(
        "SELECT DISTINCT s.scope, r.rid FROM records r JOIN scopes s USING (scope_key)"
        " WHERE r.family = 'memory'"
    ).fetchall()
    return [(scope, rid) for scope, rid in entries if _rules.tombstone(scope, rid) in kept]


def keep_tombstones(conn: sqlite3.Connection, tombstones: Sequence[str]) -> int:
    """Keep the tombstones; how many were new."""
    before = conn.total_changes
    conn.executemany("INSERT OR IGNORE INTO erased VALUES (?)", ((t,) for t in tombstones))
    return conn.total_changes - before


def vectors_built_by(conn: sqlite3.Connection) -> VectorOrigin:
    """The recorded embedder and the vectors' dimension (from any stored vector)."""
    found = conn.execute(
        "SELECT length(embedding) FROM records WHERE embedding IS NOT NULL LIMIT 1"
    ).fetchone()
    return VectorOrigin(sql.embedder_of(conn), None if found is None else int(found[0]) // 4)
