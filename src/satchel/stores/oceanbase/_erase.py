"""Erasing records from the OceanBase store's tables, inside the store's write transaction:
every version of a record, or every record of a scope, deleted from every table that
holds anything of it (records, vectors, mentions, term frequencies, counts, profiles),
with the scope's counts kept right and a tombstone (``_rules.tombstone``) for each erased
memory entry.

The scope's row in ``satchel_scopes`` (its write version and next key) stays, so a key
is never given twice. Deleted rows leave the tables at once; the engine's own files keep
their bytes until it compacts them, which docs/stores.md describes.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any, Final

from .._rules import records_in, tombstone
from . import _schema as sql

if TYPE_CHECKING:
    from collections.abc import Iterable

    from ...vocabulary._families import Family
    from ._rows import Write

#: An erase of a large scope deletes many rows in one statement: more than the engine's
#: default limit on one statement (``ob_query_timeout``, 10 s) allows. An hour, in
#: microseconds.
UNHURRIED: Final = "/*+ QUERY_TIMEOUT(3600000000) */"

#: The tables keyed by (scope, family, k) that hold something of a record version.
_BY_KEY: Final = ("satchel_mentions", "satchel_records")


async def holds(cur: Any, scope_id: str, family: Family | None, record_id: str | None) -> bool:
    """Whether the scope holds anything to erase: a version of the family's record
    ``record_id``, its profile (``record_id`` None), or (``family`` None) any record or
    a profile. Read before an erase, so that one finding nothing writes nothing."""
    profile = "SELECT 1 FROM satchel_profiles WHERE scope = %s"
    asked: list[tuple[str, tuple[str, ...]]]
    if family is None:
        asked = [("SELECT 1 FROM satchel_records WHERE scope = %s LIMIT 1", ()), (profile, ())]
    elif record_id is None:
        asked = [(profile, ())]
    else:
        record = " AND family = %s AND rid = CAST(%s AS BINARY) LIMIT 1"
        asked = [(f"SELECT 1 FROM satchel_records WHERE scope = %s{record}", (family, record_id))]
    for statement, more in asked:
        await cur.execute(statement, (scope_id, *more))
        if await cur.fetchone() is not None:
            return True
    return False


async def erase_record(cur: Any, write: Write, record_id: str | None) -> int:
    """Erase every version of ``write``'s family's record ``record_id`` in its scope
    (the profile when ``write.family`` is None); returns how many versions."""
    if write.family is None:
        await cur.execute("DELETE FROM satchel_profiles WHERE scope = %s", (write.scope_id,))
        return int(cur.rowcount)
    await cur.execute(
        "SELECT k, live, terms, thread FROM satchel_records"
        " WHERE scope = %s AND family = %s AND rid = CAST(%s AS BINARY)",
        (write.scope_id, write.family, record_id),
    )
    found = await cur.fetchall()
    if not found:
        return 0
    keys = [int(key) for key, _, _, _ in found]
    held: Counter[str] = Counter()
    for _, live, indexed, thread in found:
        if live:  # a searchable version leaves the counts (applied at the commit)
            analysed = sql.stored_terms(indexed)
            write.live_delta -= 1
            write.threaded_delta -= thread is not None
            write.term_delta -= len(analysed)
            held.update(set(analysed))
    await _uncount_terms(cur, write, held)
    marks = ",".join(["%s"] * len(keys))
    tables = (*_BY_KEY, "satchel_vectors") if write.vectors_exist else _BY_KEY
    write.removed = True
    for table in tables:
        await cur.execute(
            f"DELETE FROM {table} WHERE scope = %s AND family = %s AND k IN ({marks})",
            (write.scope_id, write.family, *keys),
        )
    if write.family == "memory" and record_id is not None:
        await _bury(cur, write.scope_id, [record_id])
    return len(keys)


async def erase_scope(cur: Any, write: Write) -> int:
    """Erase every record of ``write``'s scope and its profile; returns how many records
    (a record with several versions counts once)."""
    scope = write.scope_id
    await cur.execute("SELECT DISTINCT family, rid FROM satchel_records WHERE scope = %s", (scope,))
    records = [(str(family), str(rid)) for family, rid in await cur.fetchall()]
    await cur.execute("SELECT 1 FROM satchel_profiles WHERE scope = %s", (scope,))
    erased = records_in(records, await cur.fetchone() is not None)
    tables = ["satchel_records", "satchel_mentions", "satchel_terms", "satchel_counts"]
    if write.vectors_exist:
        tables.append("satchel_vectors")
    write.removed = True
    for table in (*tables, "satchel_profiles"):
        await cur.execute(f"DELETE {UNHURRIED} FROM {table} WHERE scope = %s", (scope,))
    await _bury(cur, scope, (rid for family, rid in records if family == "memory"))
    return erased


async def _uncount_terms(cur: Any, write: Write, held: Counter[str]) -> None:
    """Take the erased searchable versions' terms out of the scope's frequencies, and
    drop every term no searchable record holds any more (its row would name it)."""
    if held:
        await cur.executemany(
            "UPDATE satchel_terms SET df = df - %s WHERE scope = %s AND family = %s AND term = %s",
            [(count, write.scope_id, write.family, term) for term, count in held.items()],
        )
    await cur.execute(
        "DELETE FROM satchel_terms WHERE scope = %s AND family = %s AND df <= 0",
        (write.scope_id, write.family),
    )


async def _bury(cur: Any, scope_id: str, entry_ids: Iterable[str]) -> None:
    """Keep the tombstones of erased memory entries."""
    buried = [(tombstone(scope_id, entry_id),) for entry_id in entry_ids]
    if buried:
        await cur.executemany("INSERT IGNORE INTO satchel_erased (tombstone) VALUES (%s)", buried)
