"""satchel's wire contract, defined once: the bounds, names and spellings the HTTP service
and the MCP server state in their schemas.

Every value here is read from the constant satchel's own validation applies
(``satchel.vocabulary``), never restated, so a schema a client follows is never refused
and a bound changed in satchel changes every schema with it. The OpenAPI document
(``http/_openapi.py``) and the MCP tools' JSON Schemas (``mcp/_schemas.py``) are built
from these values; their generated copies are committed as ``docs/openapi.json`` and
``docs/mcp-tools.json`` (``python scripts/contract.py`` writes them, and a test
regenerates both and compares, so neither drifts unseen).

It sits above the public facade, beside ``_wire``, and imports only the vocabulary and
the recall policy's bound on expansion rounds.
"""

from __future__ import annotations

import json
from typing import Any, Final

from satchel.recall import MAX_EXPANSIONS
from satchel.vocabulary import (
    CHANNELS,
    DEFAULT_MAX_BYTES,
    FAMILIES,
    FAMILY_RULES,
    MAX_KEY_CHARS,
    MAX_MAX_BYTES,
    MAX_OMISSIONS,
    MAX_QUERY_CHARS,
    MAX_REFERENCES,
    MAX_SCOPE_CHARS,
    MAX_VERSION,
    MIN_MAX_BYTES,
    OMISSION_CAUSES,
    SCHEMA,
    TIERS,
)

__all__ = [
    "CHANNELS",
    "DEFAULT_MAX_BYTES",
    "FAMILIES",
    "MAX_EXPERIENCE_SECTION_LIMIT",
    "MAX_KEY_CHARS",
    "MAX_MAX_BYTES",
    "MAX_OMISSIONS",
    "MAX_QUERY_CHARS",
    "MAX_REFERENCES",
    "MAX_ROUND",
    "MAX_SCOPE_CHARS",
    "MAX_SECTION_LIMIT",
    "MAX_VERSION",
    "MIN_MAX_BYTES",
    "OMISSION_CAUSES",
    "SCHEMA_ID",
    "STATUSES",
    "TIERS",
    "dumped",
]

#: The pack format's id, as a prepared context names it.
SCHEMA_ID: Final = SCHEMA
#: The last round a receipt may name (round 0, then at most this many expansions).
MAX_ROUND: Final = MAX_EXPANSIONS
#: A prepared context's statuses.
STATUSES: Final = ("ready", "empty")
#: The most items any assembly section may ask for, and an experience section.
MAX_SECTION_LIMIT: Final = max(rules.max_section_limit for rules in FAMILY_RULES.values())
MAX_EXPERIENCE_SECTION_LIMIT: Final = FAMILY_RULES["experience"].max_section_limit


def dumped(document: Any) -> str:
    """A generated document as it is committed: JSON, keys sorted, two-space indents,
    one final newline (so a regenerated copy compares byte for byte)."""
    return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
