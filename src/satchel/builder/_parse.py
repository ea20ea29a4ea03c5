"""``satchel.parse_context``: the exact inverse of a rendered pack.

Pure: no I/O. Reads the lines between the wrapper's marker lines, in delivery order,
and gives each item back as a :class:`satchel.ContextItem` with its exact citation (the
format: :mod:`._render`). Stored text only ever sits inside JSON strings, so no content
can be taken for a marker, a group or an item.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from ..vocabulary._citations import Citation, ContextItem
from ..vocabulary._errors import InvalidRequestError
from ..vocabulary._families import FAMILY_RULES, TIERS
from ..vocabulary._refs import full_id, full_time
from ._render import BEGIN_MARKER, END_MARKER

if TYPE_CHECKING:
    from datetime import datetime

    from ..vocabulary._families import FamilyRules


def parse_context(content: str | None) -> tuple[ContextItem, ...]:
    """The items of a prepared pack, in delivery order; none for an empty pack.

    Raises:
        InvalidRequestError: ``content`` is not a pack satchel rendered (a line between
            the markers is not a group or an item, or an item is malformed).
    """
    if content is None:
        return ()
    if not isinstance(content, str):
        raise InvalidRequestError("content must be a prepared pack (a string) or None")
    lines = content.split("\n")
    inner = _between(lines, BEGIN_MARKER, END_MARKER)
    if inner is not None:
        return _items(inner)
    raise InvalidRequestError("content has no BEGIN/END satchel context markers")


def _between(lines: list[str], begin: str, end: str) -> list[str] | None:
    try:
        start = lines.index(begin)
        return lines[start + 1 : lines.index(end, start)]
    except ValueError:
        return None


def _items(lines: list[str]) -> tuple[ContextItem, ...]:
    items: list[ContextItem] = []
    group: tuple[FamilyRules, str] | None = None
    for line in lines:
        value = _json(line)
        if isinstance(value, dict):
            group = _group(value)
        elif isinstance(value, list):
            if group is None:
                raise InvalidRequestError("a pack item comes before any group line")
            items.append(_item(value, *group))
        else:
            raise InvalidRequestError("a pack line is neither a group nor an item")
    return tuple(items)


def _json(line: str) -> Any:
    try:
        return json.loads(line)
    except json.JSONDecodeError as exc:
        raise InvalidRequestError(f"a pack line is not JSON: {exc.msg}") from None


def _group(value: dict[str, Any]) -> tuple[FamilyRules, str]:
    family, scope = value.get("family"), value.get("scope")
    if not isinstance(family, str) or family not in FAMILY_RULES or not isinstance(scope, str):
        raise InvalidRequestError("a pack group line lacks a known family or its scope")
    return FAMILY_RULES[family], scope


def _item(fields: list[Any], rules: FamilyRules, scope: str) -> ContextItem:
    family = rules.family
    if len(fields) < 2:
        raise InvalidRequestError(f"a {family} item lacks its time or its text")
    at, text, rest = fields[0], fields[1], fields[2:]
    record_id = version = None
    if rules.id_field is not None:
        if not rest or not isinstance(rest[0], str):
            raise InvalidRequestError(f"a {family} item lacks its {rules.id_field}")
        record_id, rest = full_id(rest[0]), rest[1:]
    if rules.version_field is not None:
        version = 1
        if rest and isinstance(rest[0], int) and not isinstance(rest[0], bool):
            version, rest = rest[0], rest[1:]
    flags = rest[0] if len(rest) == 1 else {} if not rest else None
    if not isinstance(flags, dict):
        raise InvalidRequestError(f"a {family} item has unknown fields")
    tier, truncated = flags.get("tier", rules.default_tier), flags.get("truncated", False)
    if tier not in TIERS or not isinstance(truncated, bool):
        raise InvalidRequestError(f"a {family} item's tier or truncated flag is malformed")
    if not (text is None or isinstance(text, str)) or (text is None) != (tier == "uri"):
        raise InvalidRequestError(f"a {family} item's text does not match its tier")
    return ContextItem(
        citation=Citation(family, scope, record_id, version),
        text=text,
        at=_time(at),
        tier=tier,
        truncated=truncated,
    )


def _time(at: object) -> datetime | None:
    if at is None:
        return None
    try:
        if isinstance(at, str):
            return full_time(at)
    except ValueError:
        pass
    raise InvalidRequestError(f"a pack item's time is malformed: {at!r:.40}")
