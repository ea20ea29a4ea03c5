"""``glean.parse_context``: the exact inverse of a rendered pack.

Pure: no I/O. Reads the items between the wrapper's marker lines, in delivery order,
from either form the renderer writes (one JSON envelope, or Markdown sections of one
item per line), and gives each back as a :class:`glean.ContextItem`. The preamble and
section headings are skipped; stored text only ever sits inside JSON strings, so no
content can be taken for a marker or an item.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from ..vocabulary._citations import Citation, ContextItem
from ..vocabulary._errors import InvalidRequestError
from ..vocabulary._families import TIERS
from ._render import BEGIN_MARKER, END_MARKER


def parse_context(content: str | None) -> tuple[ContextItem, ...]:
    """The items of a prepared pack, in delivery order; none for an empty pack.

    Raises:
        InvalidRequestError: ``content`` is not a pack glean rendered (a line between
            the markers is not an item, or an item lacks a field).
    """
    if content is None:
        return ()
    if not isinstance(content, str):
        raise InvalidRequestError("content must be a prepared pack (a string) or None")
    items: list[ContextItem] = []
    for line in _item_lines(content):
        decoded = _json(line)
        found = decoded.get("items", [decoded]) if isinstance(decoded, dict) else [None]
        items.extend(_item(item) for item in found)
    return tuple(items)


def _item_lines(content: str) -> list[str]:
    lines = content.split("\n")
    try:
        start, end = lines.index(BEGIN_MARKER), lines.index(END_MARKER)
    except ValueError:
        raise InvalidRequestError("content has no BEGIN/END glean context markers") from None
    return [line for line in lines[start + 1 : end] if line.startswith("{")]


def _json(line: str) -> Any:
    try:
        return json.loads(line)
    except json.JSONDecodeError as exc:
        raise InvalidRequestError(f"a pack line is not JSON: {exc.msg}") from None


def _item(item: object) -> ContextItem:
    if not isinstance(item, dict):
        raise InvalidRequestError("a pack item is not a JSON object")
    cited = item.get("citation")
    tier = item.get("detail")
    if not isinstance(cited, dict) or tier not in TIERS:
        raise InvalidRequestError("a pack item lacks its citation or its tier")
    at = item.get("at")
    text = item.get("content")
    truncated = item.get("truncated")
    if not (text is None or isinstance(text, str)) or not isinstance(truncated, bool):
        raise InvalidRequestError("a pack item's content or truncated flag is malformed")
    return ContextItem(
        citation=Citation.from_json(cited),
        text=text,
        at=datetime.fromisoformat(at) if isinstance(at, str) else None,
        tier=tier,
        truncated=truncated,
    )
