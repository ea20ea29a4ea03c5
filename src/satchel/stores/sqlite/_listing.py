"""The embedded store's listing (``RecordStore.list_records`` and ``scope_writes``).

A record is listed as its newest version, placed by its first version's row (rows only
grow, and an erase never frees one for reuse: ``_schema.INSERT_RECORD``). A page walks
the index ``records_place`` (``_schema.INDEXES``; ``records_family_place`` for one
family) downwards from the cursor: a keyset, so page 1,000 costs what page 1 does.
Each row the walk meets is kept when it is its record's first version (one probe of
the unique ``(family, scope_key, rid, revision)`` index), and joined to its record's
newest version (another probe). A scope's last write time is a ``meta`` row
(``written:`` and its key), stamped in every transaction that changes the scope.

Runs on a connection a worker thread holds; reads only, but :func:`stamp`.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final

from ...vocabulary._families import FAMILY_RULES
from ...vocabulary._listing import PROFILE_PLACE, ListedRecord
from ...vocabulary._records import Columns
from .._copy_protocol import VERSIONED
from .._rules import decode_tags

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Sequence

    from ...vocabulary._families import Family

_WRITTEN: Final = "written:"

#: A record's first version (``f``) joined to its newest (``n``), below a row.
_PAGE: Final = """
SELECT f.row, f.family, f.rid, n.revision, n.live, n.text, n.kind, n.tags, n.created_at,
       n.thread, n.title, n.abstract, n.overview, n.caller_key
FROM records f INDEXED BY {index}
JOIN records n ON n.family = f.family AND n.scope_key = f.scope_key AND n.rid = f.rid
 AND n.revision = (SELECT max(m.revision) FROM records m
                   WHERE m.family = f.family AND m.scope_key = f.scope_key AND m.rid = f.rid)
WHERE {families} f.scope_key = :scope AND f.row < :before
  AND NOT EXISTS (SELECT 1 FROM records e
                  WHERE e.family = f.family AND e.scope_key = f.scope_key AND e.rid = f.rid
                    AND e.revision < f.revision)
  {live}
ORDER BY f.row DESC LIMIT :limit
"""

#: Every scope holding a record version or a profile, with its ``written:`` stamp.
_SCOPE_WRITES: Final = f"""
SELECT s.scope, m.value FROM scopes s LEFT JOIN meta m ON m.key = '{_WRITTEN}' || s.scope_key
WHERE EXISTS (SELECT 1 FROM records r WHERE r.scope_key = s.scope_key)
   OR EXISTS (SELECT 1 FROM profiles p WHERE p.scope_key = s.scope_key)
"""


def stamp(conn: sqlite3.Connection, scope_key: int) -> None:
    """Date the scope's last change now, inside the transaction making it."""
    conn.execute(
        "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
        (f"{_WRITTEN}{scope_key}", repr(time.time())),
    )


def unstamp(conn: sqlite3.Connection, scope_key: int) -> None:
    """Forget the scope's date (it holds nothing any more)."""
    conn.execute("DELETE FROM meta WHERE key = ?", (f"{_WRITTEN}{scope_key}",))


def scope_writes(conn: sqlite3.Connection) -> dict[str, datetime | None]:
    return {
        scope: None if value is None else datetime.fromtimestamp(float(value), UTC)
        for scope, value in conn.execute(_SCOPE_WRITES)
    }


def list_records(
    conn: sqlite3.Connection,
    scope_key: int,
    families: Sequence[Family],
    *,
    include_forgotten: bool,
    before: int | None,
    limit: int,
) -> list[ListedRecord]:
    """At most ``limit`` records of ``families`` placed below ``before``, newest first,
    the profile (place 0) last."""
    versioned = [family for family in VERSIONED if family in families]
    listed: list[ListedRecord] = []
    if versioned:
        statement, values = _page(versioned, include_forgotten)
        values.update(scope=scope_key, before=before or 2**62, limit=limit)
        listed = [_listed(row) for row in conn.execute(statement, values)]
    if "profile" in families and len(listed) < limit:
        found = conn.execute("SELECT text FROM profiles WHERE scope_key = ?", (scope_key,))
        listed.extend(
            ListedRecord(PROFILE_PLACE, "profile", None, None, Columns(text=text))
            for (text,) in found.fetchall()
        )
    return listed


def _page(versioned: list[Family], include_forgotten: bool) -> tuple[str, dict[str, Any]]:
    """The page statement for these families (one: its own index; all: the scope's)."""
    live = "" if include_forgotten else "AND n.live = 1"
    if len(versioned) == 1:
        statement = _PAGE.format(
            index="records_family_place", families="f.family = :family AND", live=live
        )
        return statement, {"family": versioned[0]}
    if len(versioned) == len(VERSIONED):
        return _PAGE.format(index="records_place", families="", live=live), {}
    marks = ", ".join(f":f{n}" for n in range(len(versioned)))
    statement = _PAGE.format(
        index="records_place", families=f"f.family IN ({marks}) AND", live=live
    )
    return statement, {f"f{n}": family for n, family in enumerate(versioned)}


def _listed(row: Sequence[Any]) -> ListedRecord:
    (place, family, rid, revision, live, text, kind, tags, said, thread, title, abstract,
     overview, key) = row  # fmt: skip
    named_by_uri = FAMILY_RULES[family].named_by == "uri"
    columns = Columns(
        text=text, kind=kind, tags=None if tags is None else decode_tags(tags),
        created_at=datetime.fromisoformat(said) if said else None, thread=thread,
        title=title, uri=rid if named_by_uri else None, abstract=abstract,
        overview=overview, key=key,
    )  # fmt: skip
    return ListedRecord(int(place), family, rid, int(revision), columns, forgotten=not live)
