"""Reading prepared packs back to workload ids: which entries did a pack deliver?

:func:`delivered_citations` reads the citations out of a rendered pack, and
:func:`citation_key` turns one into the key ``satchel ingest`` mapped its workload id to
(``DB.ids.jsonl``, read by :func:`read_id_map`). Only the benchmarks and the tests
evaluate packs this way; the library itself never reads its packs back.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import satchel
from satchel._workload import key_of
from satchel.vocabulary import FAMILY_RULES
from satchel.vocabulary._families import citation

if TYPE_CHECKING:
    from collections.abc import Mapping

    from satchel._workload import CitationKey
    from satchel.vocabulary import Family


def citation_key(citation: Mapping[str, Any]) -> CitationKey:
    """The key of a rendered citation, equal to the one ingestion mapped its id to:
    family, scope, then the family's record id and version fields (as it has them).

    Raises:
        ValueError: if the citation lacks its family's identity fields.
    """
    family = citation.get("family")
    rules = FAMILY_RULES.get(family) if isinstance(family, str) else None  # type: ignore[call-overload]
    if rules is None:
        raise ValueError(f"unknown citation family {family!r}")
    names = ("scope", *(name for name in (rules.id_field, rules.version_field) if name))
    try:
        return (family, *(citation[name] for name in names))
    except KeyError as exc:
        raise ValueError(f"{family} citation lacks field {exc.args[0]!r}") from None


def delivered_citations(content: str | None) -> list[dict[str, Any]]:
    """The citations a prepared context delivers, in rendered order, each spelled with
    its family's own field names (``{"family", "scope", "entry_id", "version"}`` for a
    memory), as :func:`citation_key` reads them. The pack is read only through
    :func:`satchel.parse_context`.

    Raises:
        ValueError: if ``content`` is not a pack satchel rendered.
    """
    try:
        items = satchel.parse_context(content)
    except satchel.InvalidRequestError as exc:
        raise ValueError(str(exc)) from None
    return [
        citation(
            cast("Family", item.citation.family),
            item.citation.scope,
            item.citation.id,
            item.citation.version,
        )
        for item in items
    ]


def read_id_map(path: str | Path) -> dict[CitationKey, list[str]]:
    """Read an id map written by :func:`append_id_map`: citation key -> workload ids.

    Several ids share one key when they name one thing (a scope's profiles); a later
    line for the same id replaces the earlier one, as a re-ingest would.

    Raises:
        ValueError: naming the line that is not an id-map record.
    """
    latest: dict[str, CitationKey] = {}
    with Path(path).open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            if line.strip():
                workload_id, key = _id_map_line(line, number)
                latest.pop(workload_id, None)  # keep file order of the latest line
                latest[workload_id] = key
    by_key: dict[CitationKey, list[str]] = {}
    for workload_id, key in latest.items():
        by_key.setdefault(key, []).append(workload_id)
    return by_key


def _id_map_line(line: str, number: int) -> tuple[str, CitationKey]:
    try:
        obj = json.loads(line)
        workload_id, key = obj["id"], obj["key"]
    except (json.JSONDecodeError, KeyError, TypeError):
        raise ValueError(f"id map line {number} is not an id-map record") from None
    if not isinstance(workload_id, str) or not isinstance(key, list):
        raise ValueError(f"id map line {number} is not an id-map record")
    return workload_id, key_of(key)
