"""Test helper: read the items of a rendered context pack."""

from __future__ import annotations

import json
from typing import Any

BEGIN = "BEGIN_GLEAN_CONTEXT_V1"
END = "END_GLEAN_CONTEXT_V1"


def items(content: str | None) -> list[dict[str, Any]]:
    """The item objects between the markers, for both the envelope and the Markdown form."""
    if content is None:
        return []
    lines = content.split("\n")
    inner = lines[lines.index(BEGIN) + 1 : lines.index(END)]
    found: list[dict[str, Any]] = []
    for line in inner:
        if not line.startswith("{"):
            continue
        value = json.loads(line)
        found.extend(value.get("items", [value]))
    return found


def contents(content: str | None) -> list[str]:
    """The content strings of the delivered items, in order."""
    return [item.get("content", "") for item in items(content)]


def citations(content: str | None) -> list[dict[str, Any]]:
    return [item["citation"] for item in items(content)]
