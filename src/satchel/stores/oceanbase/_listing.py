"""The OceanBase store's listing (``RecordStore.list_records`` and ``scope_writes``).

A record is listed as its newest version, placed by its first version's key (a scope's
keys only grow: ``satchel_scopes.next_key`` outlives every erase). A page reads, per
family, the primary key ``(scope, family, k)`` downwards from the cursor (a keyset:
page 1,000 costs what page 1 does), keeping the rows that are their record's first
version and joining each to its record's newest version (``by_rid`` probes); the
families' pages are merged by key. A scope's last write time is a ``satchel_meta`` row
named by a digest of the scope, stamped inside every write's transaction.

Reads only, but :func:`stamp` and :func:`unstamp`.
"""

from __future__ import annotations

import hashlib
import heapq
import time
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final

from ...vocabulary._families import FAMILY_RULES
from ...vocabulary._listing import PROFILE_PLACE, ListedRecord
from ...vocabulary._records import Columns
from .._copy_protocol import VERSIONED
from .._rules import decode_tags
from . import _schema as sql

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ...vocabulary._families import Family

#: A record's first version (``f``) joined to its newest (``n``), below a key.
_PAGE: Final = """
SELECT f.k, n.rid, n.revision, n.live, n.text, n.kind, n.tags, n.created_at, n.thread,
       n.title, n.abstract, n.overview, n.caller_key
FROM satchel_records f
JOIN satchel_records n ON n.scope = f.scope AND n.family = f.family AND n.rid = f.rid
 AND n.revision = (SELECT max(m.revision) FROM satchel_records m
                   WHERE m.scope = f.scope AND m.family = f.family AND m.rid = f.rid)
WHERE f.scope = %s AND f.family = %s AND f.k < %s
  AND NOT EXISTS (SELECT 1 FROM satchel_records e
                  WHERE e.scope = f.scope AND e.family = f.family AND e.rid = f.rid
                    AND e.revision < f.revision)
  {live}
ORDER BY f.k DESC LIMIT %s
"""
_WRITTEN: Final = "w:"


def _stamp_name(scope_id: str) -> str:
    """The ``satchel_meta`` name of a scope's stamp (a scope may be longer than a name)."""
    return _WRITTEN + hashlib.sha256(scope_id.encode()).hexdigest()[:60]


async def stamp(cur: Any, scope_id: str) -> None:
    """Date the scope's last change now, inside the write's transaction."""
    await cur.execute(
        "INSERT INTO satchel_meta (name, value) VALUES (%s, %s)"
        " ON DUPLICATE KEY UPDATE value = VALUES(value)",
        (_stamp_name(scope_id), repr(time.time())),
    )


async def unstamp(cur: Any, scope_id: str) -> None:
    await cur.execute("DELETE FROM satchel_meta WHERE name = %s", (_stamp_name(scope_id),))


async def scope_writes(cur: Any) -> dict[str, datetime | None]:
    await cur.execute("SELECT scope FROM satchel_records UNION SELECT scope FROM satchel_profiles")
    scopes = [sql.name(scope) for (scope,) in await cur.fetchall()]
    await cur.execute("SELECT name, value FROM satchel_meta WHERE name LIKE 'w:%%'")
    stamps = {name: float(value) for name, value in await cur.fetchall()}
    return {
        scope: None if (at := stamps.get(_stamp_name(scope))) is None
        else datetime.fromtimestamp(at, UTC)
        for scope in scopes
    }  # fmt: skip


async def list_records(
    cur: Any,
    scope_id: str,
    families: Sequence[Family],
    *,
    include_forgotten: bool,
    before: int | None,
    limit: int,
) -> list[ListedRecord]:
    """At most ``limit`` records of ``families`` placed below ``before``, newest first,
    the profile (place 0) last."""
    statement = _PAGE.format(live="" if include_forgotten else "AND n.live = 1")
    pages: list[list[ListedRecord]] = []
    for family in VERSIONED:
        if family in families:
            await cur.execute(statement, (scope_id, family, before or 2**62, limit))
            pages.append([_listed(family, row) for row in await cur.fetchall()])
    merged = heapq.merge(*pages, key=lambda record: record.place, reverse=True)
    listed = list(merged)[:limit]
    if "profile" in families and len(listed) < limit:
        await cur.execute("SELECT text FROM satchel_profiles WHERE scope = %s", (scope_id,))
        listed.extend(
            ListedRecord(PROFILE_PLACE, "profile", None, None, Columns(text=text))
            for (text,) in await cur.fetchall()
        )
    return listed


def _listed(family: Family, row: Sequence[Any]) -> ListedRecord:
    (place, rid, revision, live, text, kind, tags, said, thread, title, abstract, overview,
     key) = row  # fmt: skip
    columns = Columns(
        text=text, kind=kind, tags=None if tags is None else decode_tags(tags),
        created_at=datetime.fromisoformat(said) if said else None, thread=thread,
        title=title, uri=rid if FAMILY_RULES[family].named_by == "uri" else None,
        abstract=abstract, overview=overview, key=key,
    )  # fmt: skip
    return ListedRecord(int(place), family, rid, int(revision), columns, forgotten=not live)
