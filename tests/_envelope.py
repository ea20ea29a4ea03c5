"""Test helper: read the items of a rendered context pack through ``satchel.parse_context``.

Each item comes back as a plain dict (``citation`` spelled with its family's own field
names, ``family``, ``detail``, ``at`` as ISO 8601, ``content``, ``truncated``; ``at`` and
``content`` only when the item has them), which keeps assertions short.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

import satchel
from satchel.vocabulary._families import citation

if TYPE_CHECKING:
    from satchel.vocabulary import Family

BEGIN = "BEGIN_SATCHEL_CONTEXT_V2"
END = "END_SATCHEL_CONTEXT_V2"


def items(content: str | None) -> list[dict[str, Any]]:
    """The delivered items, in delivery order."""
    found: list[dict[str, Any]] = []
    for item in satchel.parse_context(content):
        cited = item.citation
        family = cast("Family", cited.family)
        value: dict[str, Any] = {
            "citation": citation(family, cited.scope, cited.id, cited.version),
            "family": family,
            "detail": item.tier,
            "truncated": item.truncated,
        }
        if item.at is not None:
            value["at"] = item.at.isoformat()
        if item.text is not None:
            value["content"] = item.text
        found.append(value)
    return found


def contents(content: str | None) -> list[str]:
    """The content strings of the delivered items, in order."""
    return [item.get("content", "") for item in items(content)]


def citations(content: str | None) -> list[dict[str, Any]]:
    return [item["citation"] for item in items(content)]
