"""Writing records into the OceanBase store's tables, inside one transaction: inserts
(sent as multi-row statements), retirements, idempotency keys, revisions and the
per-scope counts and term frequencies that follow them."""

from __future__ import annotations

import hashlib
import json
import uuid
from collections import Counter
from datetime import UTC
from typing import TYPE_CHECKING, Any, Final

import attrs
import numpy as np

from ..vocabulary._analysis import index_text
from ..vocabulary._dates import mentioned_days
from ..vocabulary._errors import NotFoundError
from . import _oceanbase_schema as sql

if TYPE_CHECKING:
    from ..vocabulary._families import Family
    from ..vocabulary._records import MemoryEntry, MemoryRef

#: The sortable time of a record without one.
NO_TIME: Final = -1e18


@attrs.define
class Write:
    """One write transaction's bookkeeping: counts and term frequencies to apply."""

    scope_id: str
    family: Family
    #: Whether the database has its vectors table (a retired version leaves it).
    vectors_exist: bool = False
    first_key: int = 0
    used: int = 0
    live_delta: int = 0
    threaded_delta: int = 0
    term_delta: int = 0
    terms: Counter[str] = attrs.Factory(Counter)
    #: Rows, vectors and mentions to insert, sent as one multi-row statement each.
    records: list[tuple[Any, ...]] = attrs.Factory(list)
    vectors: list[tuple[Any, ...]] = attrs.Factory(list)
    mentions: list[tuple[Any, ...]] = attrs.Factory(list)

    def next_key(self) -> int:
        self.used += 1
        return self.first_key + self.used - 1

    async def flush(self, cur: Any) -> None:
        """Send the pending inserts (before any read of the records table, and at the
        end of the transaction)."""
        if self.records:
            await cur.executemany(sql.INSERT_RECORD, self.records)
            self.records.clear()
        if self.vectors:
            await cur.executemany(sql.INSERT_VECTOR, self.vectors)
            self.vectors.clear()
        if self.mentions:
            await cur.executemany(sql.INSERT_MENTION, self.mentions)
            self.mentions.clear()


async def apply_counts(cur: Any, write: Write) -> None:
    if write.family == "profile":
        return
    counts = (write.live_delta, write.threaded_delta, write.term_delta)
    await cur.execute(sql.COUNT_ROWS, (write.scope_id, write.family, *counts))
    changed = [(write.scope_id, write.family, t, n) for t, n in write.terms.items() if n]
    if changed:
        await cur.executemany(sql.COUNT_TERMS, changed)


async def insert(
    cur: Any,
    write: Write,
    rid: str,
    revision: int,
    terms: str,
    content: tuple[Any, ...],
    **columns: Any,
) -> int:
    key = write.next_key()
    embedding = columns.get("embedding")
    analysed = terms.split()
    indexed = " ".join(sql.indexed_term(term) for term in analysed)
    write.records.append(
        (
            write.scope_id, write.family, key, rid, revision, 1, columns.get("caller_key"),
            content_hash(content), columns.get("title"), columns.get("text"),
            columns.get("kind"), columns.get("tags"), columns.get("created_at"),
            columns.get("created_ts", NO_TIME), columns.get("thread"),
            columns.get("abstract"), columns.get("overview"), columns.get("body"), indexed,
        )
    )  # fmt: skip
    if embedding is not None:
        write.vectors.append((write.scope_id, write.family, key, vector_literal(embedding)))
    write.live_delta += 1
    write.threaded_delta += columns.get("thread") is not None
    write.term_delta += len(analysed)
    write.terms.update(set(analysed))
    return key


async def insert_memory(
    cur: Any, write: Write, rid: str, version: int, entry: MemoryEntry, vector: Any
) -> None:
    at = entry.created_at
    key = await insert(
        cur, write, rid, version, index_text(entry.text), memory_content(entry),
        text=entry.text, kind=entry.kind, tags=json.dumps(list(entry.tags)),
        created_at=None if at is None else at.isoformat(),
        created_ts=NO_TIME if at is None else at.timestamp(),
        thread=entry.thread, embedding=vector, caller_key=entry.key,
    )  # fmt: skip
    if at is not None:
        said_on = at.astimezone(UTC).date()
        days = mentioned_days(entry.text, said_on)
        write.mentions += [(write.scope_id, "memory", key, low, high) for low, high in days]


async def retire(cur: Any, write: Write, key: int) -> None:
    """Take a record version out of search; it stays readable by its reference."""
    await write.flush(cur)
    await cur.execute(
        "SELECT terms, thread FROM glean_records WHERE scope = %s AND family = %s AND k = %s",
        (write.scope_id, write.family, key),
    )
    indexed, thread = await cur.fetchone()
    where = (write.scope_id, write.family, key)
    await cur.execute(
        "UPDATE glean_records SET live = 0 WHERE scope = %s AND family = %s AND k = %s", where
    )
    if write.vectors_exist:
        await cur.execute(
            "DELETE FROM glean_vectors WHERE scope = %s AND family = %s AND k = %s", where
        )
    analysed = sql.stored_terms(indexed)
    write.live_delta -= 1
    write.threaded_delta -= thread is not None
    write.term_delta -= len(analysed)
    write.terms.subtract(set(analysed))


async def keyed(
    cur: Any, write: Write, caller_key: str | None, content: tuple[Any, ...]
) -> tuple[str, int, bool] | None:
    """What an idempotency key makes of a write: None for a new record, ``(id,
    revision, False)`` when the live record holds exactly ``content``, ``(id, next
    revision, True)`` when it holds other content (retired here)."""
    if caller_key is None:
        return None
    await write.flush(cur)
    await cur.execute(
        "SELECT k, rid, revision, content_hash FROM glean_records WHERE scope = %s"
        " AND family = %s AND caller_key = %s AND live = 1",
        (write.scope_id, write.family, caller_key),
    )
    found = await cur.fetchone()
    if found is None:
        return None
    key, rid, revision, stored = found
    if stored == content_hash(content):
        return rid, int(revision), False
    await retire(cur, write, key)
    return rid, int(revision) + 1, True


async def supersede(cur: Any, write: Write, column: str, value: str) -> tuple[str, int]:
    """Retire the live record whose ``column`` equals ``value``; its id and next revision."""
    await write.flush(cur)
    await cur.execute(
        f"SELECT k, rid, revision FROM glean_records WHERE scope = %s AND family = %s"
        f" AND {column} = %s AND live = 1",
        (write.scope_id, write.family, value),
    )
    found = await cur.fetchone()
    if found is None and column == "rid":  # a URI back after it left: its next revision
        await cur.execute(
            "SELECT MAX(revision) FROM glean_records WHERE scope = %s AND family = %s AND rid = %s",
            (write.scope_id, write.family, value),
        )
        (latest,) = await cur.fetchone()
        return value, int(latest or 0) + 1
    if found is None:
        return uuid.uuid4().hex, 1
    key, rid, revision = found
    await retire(cur, write, key)
    return rid, int(revision) + 1


async def live_memory(
    cur: Any, ref: MemoryRef, *, forgotten_ok: bool
) -> tuple[Any, int, str | None]:
    await cur.execute(
        "SELECT k, revision, live, caller_key FROM glean_records WHERE scope = %s"
        " AND family = 'memory' AND rid = %s ORDER BY revision DESC",
        (ref.scope_id, ref.entry_id),
    )
    versions = await cur.fetchall()
    if not any(revision == ref.version for _, revision, _, _ in versions):
        raise NotFoundError(
            f"no version {ref.version} of memory entry {ref.entry_id!r} in scope {ref.scope_id!r}"
        )
    key, latest, live, caller_key = versions[0]
    if not live:
        if forgotten_ok:
            return None, int(latest), caller_key
        raise NotFoundError(f"memory entry {ref.entry_id!r} was forgotten")
    return key, int(latest), caller_key


def memory_content(entry: MemoryEntry) -> tuple[Any, ...]:
    at = None if entry.created_at is None else entry.created_at.isoformat()
    return (entry.text, entry.kind, list(entry.tags), at, entry.thread)


def content_hash(content: tuple[Any, ...]) -> str:
    """What an idempotency key compares: the record's content, hashed."""
    encoded = json.dumps(content, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(encoded.encode("utf-8", "surrogatepass")).hexdigest()


def vector_literal(vector: Any) -> str:
    """A vector as the engine's text literal: ``[x,y,...]`` with float32 precision."""
    values = np.asarray(vector, dtype=np.float32)
    return "[" + ",".join(map(repr, values.tolist())) + "]"
