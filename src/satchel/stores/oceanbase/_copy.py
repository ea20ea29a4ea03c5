"""The OceanBase store's side of a copy (``satchel.stores.CopySource`` and
``CopyTarget``): a scope's versions in key order, read with their exact vectors, and
versions written verbatim inside the store's write transaction.

**Exact vectors.** The engine returns a ``VECTOR`` column as text with six significant
digits, which is not the float32 it holds (a copy that kept those would move every
cosine by up to 1e-6, enough to reorder near ties). So a page's vectors are read twice:
as text, then as the difference between the stored vector and that text, which the
engine computes exactly in float32 and which six digits describe far below a float32's
precision; their sum, rounded to float32, is the stored vector bit for bit.

A version is written as every write writes one (``_rows.insert_version``: its row, terms,
counts, vector, the days it names), under the next key of its scope; one that is not
searchable is written with ``live = 0``, no vector and nothing counted, as a forget or a
newer version leaves it.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from ...vocabulary._families import FAMILY_RULES
from .. import _rules
from .._copy_protocol import StoredVersion, VectorOrigin
from .._rules import decode_tags
from . import _rows as rows
from . import _schema as sql

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ...vocabulary._families import Family

#: Every column of a version a copy moves, its key first (the position).
COLUMNS: Final = (
    "k, rid, revision, live, caller_key, text, kind, tags, created_at, thread, title,"
    " abstract, overview, body"
)
#: Vectors whose exact values one statement reads (each is sent back once, as text).
VECTOR_BATCH: Final = 128
#: Tombstones, or record ids, looked up per statement.
TOMBSTONE_BATCH: Final = 1024
IDS_PER_STATEMENT: Final = 512


async def copy_scopes(cur: Any) -> list[str]:
    await cur.execute(
        "SELECT scope FROM satchel_records UNION SELECT scope FROM satchel_profiles ORDER BY 1"
    )
    return [sql.name(scope) for (scope,) in await cur.fetchall()]


async def count_versions(cur: Any, scope_id: str) -> dict[Family, int]:
    await cur.execute(
        "SELECT family, COUNT(*) FROM satchel_records WHERE scope = %s GROUP BY family",
        (scope_id,),
    )
    counts: dict[Family, int] = {family: int(count) for family, count in await cur.fetchall()}
    await cur.execute("SELECT 1 FROM satchel_profiles WHERE scope = %s", (scope_id,))
    if await cur.fetchone() is not None:
        counts["profile"] = 1
    return counts


async def read_versions(
    cur: Any, scope_id: str, family: Family, after: int, limit: int, *, vectors: bool
) -> list[StoredVersion]:
    """A page of the family's versions in the scope past key ``after``, in key order;
    the searchable ones' exact vectors when the store holds ``vectors``."""
    await cur.execute(
        f"SELECT {COLUMNS} FROM satchel_records WHERE scope = %s AND family = %s AND k > %s"
        " ORDER BY k LIMIT %s",
        (scope_id, family, after, limit),
    )
    found = await cur.fetchall()
    live = [int(row[0]) for row in found if row[3]]
    exact: dict[int, Any] = {}
    if vectors and live and FAMILY_RULES[family].vector_channel:
        for start in range(0, len(live), VECTOR_BATCH):
            exact.update(
                await read_vectors(cur, scope_id, family, live[start : start + VECTOR_BATCH])
            )
    return [_version(family, row, exact.get(int(row[0]))) for row in found]


async def read_vectors(
    cur: Any, scope_id: str, family: Family, keys: Sequence[int]
) -> dict[int, Any]:
    """The exact float32 vectors of ``keys`` (see the module): as text, then the
    difference between each stored vector and its text."""
    marks = ",".join(["%s"] * len(keys))
    await cur.execute(
        f"SELECT k, embedding FROM satchel_vectors WHERE scope = %s AND family = %s"
        f" AND k IN ({marks})",
        (scope_id, family, *keys),
    )
    shown = {int(key): text for key, text in await cur.fetchall()}
    if not shown:
        return {}
    sent = " UNION ALL ".join(["SELECT %s AS k, %s AS shown"] * len(shown))
    await cur.execute(
        f"SELECT v.k, v.embedding - t.shown FROM satchel_vectors v JOIN ({sent}) t"
        " ON t.k = v.k WHERE v.scope = %s AND v.family = %s",
        (*[value for pair in shown.items() for value in pair], scope_id, family),
    )
    left = {int(key): text for key, text in await cur.fetchall()}
    return {
        key: (_floats(text) + _floats(left[key])).astype(np.float32) for key, text in shown.items()
    }


def _floats(text: str) -> Any:
    """A vector as the engine shows it (``[x,y,...]``), in float64."""
    return np.array(text.strip("[]").split(","), dtype=np.float64)


def _version(family: Family, row: Sequence[Any], vector: Any) -> StoredVersion:
    (key, rid, revision, live, caller_key, text, kind, tags, said, thread, title, abstract,
     overview, body) = row  # fmt: skip
    return StoredVersion(
        family=family, record_id=str(rid), version=int(revision), live=bool(live),
        position=int(key), key=caller_key, text=text, kind=kind, tags=decode_tags(tags),
        created_at=datetime.fromisoformat(said) if said else None, thread=thread,
        title=title, abstract=abstract, overview=overview, body=body, vector=vector,
    )  # fmt: skip


async def held_versions(
    cur: Any, scope_id: str, family: Family, record_ids: Sequence[str]
) -> dict[tuple[str, int], bool]:
    """Every version of these records, with whether it is searchable."""
    held: dict[tuple[str, int], bool] = {}
    for start in range(0, len(record_ids), IDS_PER_STATEMENT):
        some = record_ids[start : start + IDS_PER_STATEMENT]
        marks = ",".join([sql.EXACT] * len(some))
        await cur.execute(
            "SELECT rid, revision, live FROM satchel_records WHERE scope = %s AND family = %s"
            f" AND rid IN ({marks})",
            (scope_id, family, *some),
        )
        for rid, revision, live in await cur.fetchall():
            held[(str(rid), int(revision))] = bool(live)
    return held


async def write_versions(
    cur: Any, write: rows.Write, versions: Sequence[StoredVersion], fingerprint: str | None
) -> int:
    """Queue ``versions`` in order under the write's keys (sent with the write), but
    those the scope holds already (under the scope's lock, so an earlier write of the
    same page that committed late, its caller cancelled, is never written twice) and
    those of an entry the store keeps the tombstone of (an erase here is never undone
    by a copy). Returns how many it queued."""
    ids = sorted({version.record_id for version in versions})
    held = await held_versions(cur, write.scope_id, write.record_family, ids)
    erased = await erased_records(cur, write.scope_id, write.record_family, ids)
    versions = [
        v for v in versions if (v.record_id, v.version) not in held and v.record_id not in erased
    ]
    for version in versions:
        cited = (version.record_id, version.version)
        columns, vector = version.columns(), version.vector
        await rows.insert_version(cur, write, cited, columns, vector, live=version.live)
    if fingerprint is not None and write.vectors:
        await cur.execute(
            "INSERT IGNORE INTO satchel_meta (name, value) VALUES ('embedder', %s)",
            (fingerprint,),
        )
    return len(versions)


async def retire_versions(cur: Any, write: rows.Write, versions: Sequence[tuple[str, int]]) -> int:
    """Take the named versions out of search (those still in it); how many."""
    retired = 0
    for rid, revision in versions:
        await cur.execute(
            "SELECT k FROM satchel_records WHERE scope = %s AND family = %s"
            " AND rid = CAST(%s AS BINARY) AND revision = %s AND live = 1",
            (write.scope_id, write.record_family, rid, revision),
        )
        found = await cur.fetchone()
        if found is not None:
            await rows.retire(cur, write, int(found[0]))
            retired += 1
    return retired


async def read_tombstones(cur: Any) -> list[str]:
    await cur.execute("SELECT tombstone FROM satchel_erased ORDER BY tombstone")
    return [str(tombstone) for (tombstone,) in await cur.fetchall()]


async def _kept(cur: Any, tombstones: Sequence[str]) -> set[str]:
    """Those of the tombstones the store keeps."""
    kept: set[str] = set()
    given = sorted(set(tombstones))
    for start in range(0, len(given), TOMBSTONE_BATCH):
        batch = given[start : start + TOMBSTONE_BATCH]
        marks = ",".join(["%s"] * len(batch))
        await cur.execute(
            f"SELECT tombstone FROM satchel_erased WHERE tombstone IN ({marks})", batch
        )
        kept.update(str(tombstone) for (tombstone,) in await cur.fetchall())
    return kept


async def erased_records(
    cur: Any, scope_id: str, family: Family, record_ids: Sequence[str]
) -> set[str]:
    """Those of the records whose tombstone the store keeps."""
    named = _rules.tombstones_of(scope_id, family, record_ids)
    return {named[tombstone] for tombstone in await _kept(cur, list(named))}


async def tombstoned_entries(cur: Any) -> list[tuple[str, str]]:
    """Every memory entry ``(scope, entry id)`` the store holds and keeps the tombstone
    of: what a copy of an erase brought, to erase here too."""
    await cur.execute("SELECT 1 FROM satchel_erased LIMIT 1")
    if await cur.fetchone() is None:  # nothing erased: no entry to read
        return []
    await cur.execute("SELECT DISTINCT scope, rid FROM satchel_records WHERE family = 'memory'")
    entries = [(sql.name(scope), str(rid)) for scope, rid in await cur.fetchall()]
    named = {_rules.tombstone(scope, rid): (scope, rid) for scope, rid in entries}
    return sorted(named[tombstone] for tombstone in await _kept(cur, list(named)))


async def keep_tombstones(cur: Any, tombstones: Sequence[str]) -> int:
    """Keep the tombstones the table lacks; how many."""
    held = await _kept(cur, tombstones)
    missing = [(tombstone,) for tombstone in sorted(set(tombstones) - held)]
    for start in range(0, len(missing), TOMBSTONE_BATCH):
        await cur.executemany(
            "INSERT IGNORE INTO satchel_erased (tombstone) VALUES (%s)",
            missing[start : start + TOMBSTONE_BATCH],
        )
    return len(missing)


async def vectors_built_by(cur: Any) -> VectorOrigin:
    await cur.execute(
        "SELECT name, value FROM satchel_meta WHERE name IN ('embedder', 'dimension')"
    )
    found = {str(name): str(value) for name, value in await cur.fetchall()}
    dimension = found.get("dimension")
    return VectorOrigin(found.get("embedder"), None if dimension is None else int(dimension))
