"""What each inspector page shows, read through the public API: plain dicts for the
templates (which escape every value), no HTML here.

A scope page lists a keyset page of :meth:`satchel.Runtime.list_records`; a text filter
walks further pages, bounded (:data:`FILTER_SCAN`), so a filtered page costs at most
that many records read. A record page reads every version of a memory entry with
:meth:`satchel.Runtime.get_memory`.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urlencode

import satchel

from ..._wire import compact_id

if TYPE_CHECKING:
    from collections.abc import Mapping
    from datetime import datetime

    from .._auth import TokenGrant

#: Records a scope page shows.
PAGE_SIZE: Final = 50
#: The most records one text-filtered page reads before it stops and offers to go on.
FILTER_SCAN: Final = 2000
#: The most versions a record page reads (an entry rewritten more often shows its first).
MAX_VERSIONS: Final = 200
#: Every family, in the order a pack's default puts them; the profile last.
FAMILIES: Final = ("memory", "experience", "topic-memory", "resource", "profile")
#: The longest text a scope page's row shows before it is cut (the record page shows all).
ROW_CHARS: Final = 400


def url(path: str, **params: object) -> str:
    """``/ui/PATH?...`` with the params that are not None or empty, percent-encoded."""
    kept = {name: value for name, value in params.items() if value not in (None, "", False)}
    query = urlencode({name: str(value) for name, value in kept.items()})
    return f"/ui/{path}" + (f"?{query}" if query else "")


def when(moment: datetime | None) -> str:
    return "" if moment is None else moment.isoformat(sep=" ", timespec="seconds")


def pack_group(citation: satchel.Citation) -> str:
    """The group line a pack prints above the items of this citation's family and scope."""
    group = {"family": citation.family, "scope": citation.scope}
    return json.dumps(group, ensure_ascii=False, separators=(",", ":"))


def pack_ref(citation: satchel.Citation) -> str:
    """How a pack's item line cites the record: its id as the pack spells it, and its
    version when that is not 1 (the profile has neither)."""
    if citation.id is None:
        return "(the scope's profile: no id)"
    spelled = json.dumps(compact_id(citation.id), ensure_ascii=False)
    return spelled if citation.version in (None, 1) else f"{spelled},{citation.version}"


def cited(citation: satchel.Citation) -> dict[str, Any]:
    """A citation as the templates show it, with a link to its record page (memory)."""
    shown_id = None if citation.id is None else compact_id(citation.id)
    link = None
    if citation.family == "memory" and shown_id is not None:
        link = url("record", scope=citation.scope, id=shown_id)
    return {
        "family": citation.family,
        "scope": citation.scope,
        "id": shown_id or "",
        "version": "" if citation.version is None else citation.version,
        "pack_ref": pack_ref(citation),
        "link": link,
    }


def write_links(citation: satchel.Citation, grant: TokenGrant) -> dict[str, str]:
    """The confirmation pages of forgetting and erasing a record, for a grant that may
    write its scope (none otherwise)."""
    if not grant.may_write(citation.scope):
        return {}
    target = {
        "scope": citation.scope,
        "family": citation.family,
        "id": None if citation.id is None else compact_id(citation.id),
        "v": citation.version,
    }
    links = {"erase": url("confirm", action="erase", **target)}
    if citation.family == "memory":
        links["forget"] = url("confirm", action="forget", **target)
    return links


async def readable_scopes(
    runtime: satchel.Runtime, grant: TokenGrant
) -> list[satchel.ScopeSummary]:
    """The scopes the grant may read; the others are never shown, nor counted."""
    return [summary for summary in await runtime.list_scopes() if grant.may_read(summary.scope_id)]


def scope_rows(summaries: list[satchel.ScopeSummary]) -> list[dict[str, Any]]:
    return [
        {
            "scope": summary.scope_id,
            "link": url("scope", scope=summary.scope_id),
            "counts": [(family, summary.records.get(family, 0)) for family in FAMILIES],
            "total": sum(summary.records.values()),
            "updated_at": when(summary.updated_at),
        }
        for summary in summaries
    ]


async def record_page(
    runtime: satchel.Runtime,
    scope: str,
    family: str | None,
    *,
    forgotten: bool,
    text: str,
    cursor: str | None,
) -> tuple[list[satchel.StoredRecord], str | None, int]:
    """One page of the scope's records as the filters ask: its records, the cursor of
    the next page (None on the last) and how many records were read for it."""
    if not text:
        page = await runtime.list_records(
            scope, family, include_forgotten=forgotten, cursor=cursor, limit=PAGE_SIZE
        )
        return list(page.records), page.cursor, len(page.records)
    needle = text.casefold()
    matched: list[satchel.StoredRecord] = []
    read = 0
    while True:
        page = await runtime.list_records(
            scope, family, include_forgotten=forgotten, cursor=cursor,
            limit=_next_read(read, len(matched)),
        )  # fmt: skip
        read += len(page.records)
        matched += [record for record in page.records if _matches(record, needle)]
        cursor = page.cursor
        if cursor is None or len(matched) >= PAGE_SIZE or read >= FILTER_SCAN:
            return matched, cursor, read


def _next_read(read: int, matched: int) -> int:
    """How many records a filtered page reads next: a page's worth first, then as many
    as the matches seen so far say the page still needs (half again, for luck), at most
    1,000 a call. A rare filter reads in few large calls; a page may show a few more
    than :data:`PAGE_SIZE` matches, since a cursor resumes only after a whole read."""
    if read == 0:
        return PAGE_SIZE
    wanted = (PAGE_SIZE - matched) * read * 3 // (2 * max(matched, 1))
    return max(PAGE_SIZE, min(wanted, 1000, FILTER_SCAN - read))


def _matches(record: satchel.StoredRecord, needle: str) -> bool:
    citation = record.citation
    haystack = [record.text, record.key or ""]
    if citation.id is not None:
        haystack += [citation.id, compact_id(citation.id)]
    return any(needle in value.casefold() for value in haystack)


def record_rows(records: list[satchel.StoredRecord], grant: TokenGrant) -> list[dict[str, Any]]:
    rows = []
    for record in records:
        text = record.text
        rows.append(
            {
                "citation": cited(record.citation),
                "text": text if len(text) <= ROW_CHARS else text[:ROW_CHARS] + "…",
                "cut": len(text) > ROW_CHARS,
                "key": record.key or "",
                "created_at": when(record.created_at),
                "forgotten": record.forgotten,
                "actions": write_links(record.citation, grant),
            }
        )
    return rows


async def versions(runtime: satchel.Runtime, scope: str, entry_id: str) -> list[Any]:
    """Every version of a memory entry, oldest first (empty when it has none: never
    written, or erased)."""
    found: list[satchel.MemoryRecord] = []
    for version in range(1, MAX_VERSIONS + 1):
        try:
            found.append(await runtime.get_memory(satchel.MemoryRef(scope, entry_id, version)))
        except satchel.NotFoundError:
            break
    return found


def version_rows(records: list[satchel.MemoryRecord]) -> list[dict[str, Any]]:
    rows = []
    for record in records:
        ref = record.ref
        citation = satchel.Citation("memory", ref.scope_id, ref.entry_id, ref.version)
        rows.append(
            {
                "version": ref.version,
                "text": record.text,
                "kind": record.kind,
                "tags": ", ".join(record.tags),
                "created_at": when(record.created_at),
                "thread": record.thread or "",
                "key": record.key or "",
                "pack_ref": pack_ref(citation),
            }
        )
    return rows


def channels(ranks: Mapping[str, int]) -> str:
    return ", ".join(f"{name} #{rank}" for name, rank in ranks.items())


def score(value: float | None) -> str:
    return "" if value is None else f"{value:.4f}"


def explanation_view(explanation: satchel.Explanation) -> dict[str, Any]:
    context = explanation.context
    return {
        "status": context.status,
        "content": context.content or "",
        "content_bytes": context.content_bytes,
        "receipts": [
            {
                "citation": cited(receipt.citation),
                "channels": channels(receipt.channels),
                "score": score(receipt.score),
                "round": receipt.round,
                "tier": receipt.tier,
                "truncated": receipt.truncated,
            }
            for receipt in explanation.receipts
        ],
        "omitted": [
            {
                "citation": cited(omission.citation),
                "cause": omission.cause,
                "channels": channels(omission.channels),
                "score": score(omission.score),
            }
            for omission in explanation.omitted
        ],
    }
