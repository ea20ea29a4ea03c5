"""The JSON Schemas of the tools: what a host's model sees and fills in.

The bounds and names come from satchel's one wire contract (``satchel._contract``, read
from the constants its validation applies), so a model that follows a schema is never
refused; ``docs/mcp-tools.json`` is the generated copy a test keeps current. A call outside
its tool's schema is refused before satchel reads it (``_arguments``), naming the argument;
satchel then validates every call that fits. A value that may be null is spelled
``anyOf: [{type: ...}, {type: null}]``, never ``type: [..., "null"]``: hosts convert these
schemas for models that read a subset of JSON Schema, and the list form is the one they
warn about (the MCP Inspector's portability check) or drop.
"""

from __future__ import annotations

from typing import Any, Final

#: satchel's bounds and names, from the one wire contract (``satchel._contract``).
from .._contract import CHANNELS as CHANNELS
from .._contract import DEFAULT_MAX_BYTES as DEFAULT_MAX_BYTES
from .._contract import FAMILIES as FAMILIES
from .._contract import MAX_EXPERIENCE_SECTION_LIMIT as MAX_EXPERIENCE_SECTION_LIMIT
from .._contract import MAX_KEY_CHARS as MAX_KEY_CHARS
from .._contract import MAX_MAX_BYTES as MAX_MAX_BYTES
from .._contract import MAX_OMISSIONS as MAX_OMISSIONS
from .._contract import MAX_QUERY_CHARS as MAX_QUERY_CHARS
from .._contract import MAX_REFERENCES as MAX_REFERENCES
from .._contract import MAX_ROUND as MAX_ROUND
from .._contract import MAX_SCOPE_CHARS as MAX_SCOPE_CHARS
from .._contract import MAX_SECTION_LIMIT as MAX_SECTION_LIMIT
from .._contract import MAX_VERSION as MAX_VERSION
from .._contract import MIN_MAX_BYTES as MIN_MAX_BYTES
from .._contract import OMISSION_CAUSES as OMISSION_CAUSES
from .._contract import SCHEMA_ID as SCHEMA_ID
from .._contract import TIERS as TIERS

Schema = dict[str, Any]

#: A string holding at least one character that is not whitespace.
_NOT_BLANK: Final = r"\S"


def _text(description: str, *, max_length: int | None = None) -> Schema:
    schema: Schema = {"type": "string", "minLength": 1, "pattern": _NOT_BLANK}
    if max_length is not None:
        schema["maxLength"] = max_length
    schema["description"] = description
    return schema


def _nullable(schema: Schema) -> Schema:
    """``schema`` or null (null: the default)."""
    return {"anyOf": [schema, {"type": "null"}], "default": None}


def _or_null(kind: str, description: str = "", **bounds: Any) -> Schema:
    """A value of JSON type ``kind`` (within ``bounds``) or null, spelled as ``anyOf``:
    hosts convert schemas for models that read a subset of JSON Schema, and a list of
    types (``"type": [kind, "null"]``) is the union they do not carry over."""
    schema: Schema = {"anyOf": [{"type": kind, **bounds}, {"type": "null"}]}
    if description:
        schema["description"] = description
    return schema


def _object(properties: dict[str, Schema], required: list[str], description: str = "") -> Schema:
    schema: Schema = {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }
    if description:
        schema["description"] = description
    return schema


def _scope(description: str) -> Schema:
    return _text(description, max_length=MAX_SCOPE_CHARS)


def _version(description: str) -> Schema:
    return {"type": "integer", "minimum": 1, "maximum": MAX_VERSION, "description": description}


_SCOPE_ID: Final = _scope(
    "The scope (namespace) of the memory, any string such as 'project:demo' or 'user:ana';"
    f" 1..{MAX_SCOPE_CHARS} printable characters."
)
_ENTRY_ID: Final = _text("The entry id a citation or an add_memories ref names.")
_REF_PROPERTIES: Final = {
    "scope_id": _SCOPE_ID,
    "entry_id": _ENTRY_ID,
    "version": _version("The exact version of the entry (versions are immutable; 1 is the first)."),
}

CITATION: Final = _object(
    {
        "family": {"enum": list(FAMILIES), "description": "The cited record's family."},
        "scope": {"type": "string", "description": "The scope the record was read from."},
        "id": _or_null(
            "string",
            "The entry id (memory), record id (experience, topic-memory) or URI (resource);"
            " null for a profile. A pack's own spelling (entry_id, uri) is accepted.",
        ),
        "version": _or_null(
            "integer",
            "The version (memory) or revision (experience, topic-memory); null for a resource"
            " or profile. A pack's own spelling (revision) is accepted.",
            minimum=1,
        ),
        "entry_id": {"type": "string", "description": "id, as a memory citation spells it."},
        "uri": {"type": "string", "description": "id, as a resource citation spells it."},
        "revision": {
            "type": "integer",
            "minimum": 1,
            "description": "version, as an experience or topic-memory citation spells it.",
        },
    },
    ["family", "scope"],
    "A citation, copied from a pack item's 'citation' object.",
)

SECTION: Final = _object(
    {
        "family": {"enum": list(FAMILIES), "description": "The family this section delivers."},
        "limit": {
            "type": "integer",
            "minimum": 1,
            "maximum": MAX_SECTION_LIMIT,
            "description": f"The most items it delivers: 1..{MAX_SECTION_LIMIT}"
            f" (experience: 1..{MAX_EXPERIENCE_SECTION_LIMIT}).",
        },
    },
    ["family", "limit"],
)

_TIER: Final = {"enum": list(TIERS)}

PREPARE_CONTEXT_INPUT: Final = _object(
    {
        "scope_id": _SCOPE_ID,
        "query": {
            "type": "string",
            "minLength": 1,
            "maxLength": MAX_QUERY_CHARS,
            "pattern": _NOT_BLANK,
            "description": "What the agent needs context for, usually the user's message"
            f" (1..{MAX_QUERY_CHARS} characters).",
        },
        "max_bytes": {
            "type": "integer",
            "minimum": MIN_MAX_BYTES,
            "maximum": MAX_MAX_BYTES,
            "default": DEFAULT_MAX_BYTES,
            "description": "Byte budget of the pack (UTF-8); the pack never exceeds it.",
        },
        "references": {
            "type": "array",
            "items": _scope("Another scope to search as well."),
            "maxItems": MAX_REFERENCES,
            "default": [],
            "description": f"Other scopes to search besides scope_id (at most {MAX_REFERENCES}).",
        },
        "session_id": _nullable(
            _text(
                "A conversation id: what this session's recent packs delivered is held back"
                " instead of being repeated, for as many turns as the server is configured"
                " to (satchel mcp --dedup-turns; none by default)."
            )
        ),
        "sections": _nullable(
            {
                "type": "array",
                "items": SECTION,
                "minItems": 1,
                "maxItems": len(FAMILIES),
                "description": "Deliver one Markdown section per family, in this order, each"
                f" family at most once; the limits sum to at most {MAX_SECTION_LIMIT}. Null"
                " (the default) searches memory, experience and topic-memory into one list.",
            }
        ),
        "detail": _nullable(
            {
                "anyOf": [
                    {**_TIER, "description": "One tier for every family."},
                    {
                        "type": "object",
                        "properties": dict.fromkeys(FAMILIES, _TIER),
                        "additionalProperties": False,
                        "description": "A tier per family.",
                    },
                ],
                "description": "Pin how deep items are served: uri (a bare citation), abstract,"
                " overview or full. A resource's body is served only when pinned at full.",
            }
        ),
        "exclude": {
            "type": "array",
            "items": CITATION,
            "default": [],
            "description": "Citations the agent already holds: never delivered again; other"
            " candidates take their places.",
        },
        "explain": {
            "type": "boolean",
            "default": False,
            "description": "Also say why each item is in the pack (receipts: its rank per"
            " search channel, fused score, round, tier) and why the best candidates left out"
            " are not (omitted, with their cause). The pack, and the session's turn, are the"
            " same as without it.",
        },
    },
    ["scope_id", "query"],
)

#: A citation as an answer spells it: the four fields, always.
CITED: Final = _object(
    {
        "family": {"enum": list(FAMILIES)},
        "scope": {"type": "string"},
        "id": _or_null("string"),
        "version": _or_null("integer"),
    },
    ["family", "scope", "id", "version"],
    "The record version, as the pack cites it (exclude takes it as it is).",
)

_CHANNEL_RANKS: Final = {
    "type": "object",
    "properties": {channel: {"type": "integer", "minimum": 1} for channel in CHANNELS},
    "additionalProperties": False,
    "description": "Each search channel that ranked it, and its rank there from 1 (below the"
    " floor: its rank in what the channel retrieved).",
}

RECEIPT: Final = _object(
    {
        "citation": CITED,
        "channels": _CHANNEL_RANKS,
        "score": _or_null("number", "The fused score its search ranked it by (null: a profile)."),
        "round": {
            "type": "integer",
            "minimum": 0,
            "maximum": MAX_ROUND,
            "description": "The search round that committed it.",
        },
        "tier": {"enum": list(TIERS)},
        "truncated": {"type": "boolean"},
    },
    ["citation", "channels", "score", "round", "tier", "truncated"],
    "Why one delivered item is in the pack.",
)

OMISSION: Final = _object(
    {
        "citation": CITED,
        "cause": {
            "enum": list(OMISSION_CAUSES),
            "description": "budget: no room left; held-back: this session was given it"
            " lately; excluded: exclude names it; duplicate: its text repeats a candidate"
            " offered before it; floor: below the admission floor, or nothing found was"
            " relevant.",
        },
        "channels": _CHANNEL_RANKS,
        "score": _or_null("number", "Its fused score (null: unfused)."),
    },
    ["citation", "cause", "channels", "score"],
    "A candidate the pack does not deliver, and why.",
)

PREPARE_CONTEXT_OUTPUT: Final = _object(
    {
        "schema": {"type": "string", "const": SCHEMA_ID},
        "status": {"enum": ["ready", "empty"], "description": "empty: nothing relevant fits."},
        "content": _or_null(
            "string",
            "The rendered pack (null when empty): untrusted data between the"
            " BEGIN_SATCHEL_CONTEXT_V2 and END_SATCHEL_CONTEXT_V2 markers, each item cited.",
        ),
        "content_bytes": {
            "type": "integer",
            "minimum": 0,
            "maximum": MAX_MAX_BYTES,
            "description": "The pack's size in UTF-8 bytes, at most max_bytes.",
        },
        "receipts": {
            "type": "array",
            "items": RECEIPT,
            "description": "With explain only: one per delivered item, in pack order.",
        },
        "omitted": {
            "type": "array",
            "items": OMISSION,
            "maxItems": MAX_OMISSIONS,
            "description": "With explain only: the best candidates left out, best first.",
        },
    },
    ["schema", "status", "content", "content_bytes"],
)

ENTRY: Final = _object(
    {
        "text": _text("What to remember."),
        "kind": {**_text("What sort of thing it is: fact, dialog, decision..."), "default": "fact"},
        "tags": {
            "type": "array",
            "items": _text("A tag."),
            "default": [],
            "description": "Labels kept with the entry.",
        },
        "created_at": _nullable(
            {
                "type": "string",
                "format": "date-time",
                "description": "When it was said or observed: ISO-8601 with a UTC offset, e.g."
                " 2024-03-04T09:00:00+00:00 or 2024-03-04T09:00:00Z. Lets queries that name a"
                " date find it.",
            }
        ),
        "thread": _nullable(
            _text(
                "The conversation it belongs to: the turns just before and after a hit in the"
                " same thread join the candidates."
            )
        ),
        "key": _nullable(
            _text(
                "An idempotency key, unique per scope: the same key with the same content"
                " writes nothing and returns the existing ref (a forgotten entry stays"
                " forgotten); with new content, a new live version.",
                max_length=MAX_KEY_CHARS,
            )
        ),
    },
    ["text"],
)

_REF: Final = _object(_REF_PROPERTIES, ["scope_id", "entry_id", "version"])

ADD_MEMORIES_INPUT: Final = _object(
    {
        "scope_id": _SCOPE_ID,
        "entries": {
            "type": "array",
            "items": ENTRY,
            "description": "The entries to write, all or nothing: one bad entry writes none.",
        },
    },
    ["scope_id", "entries"],
)

ADD_MEMORIES_OUTPUT: Final = _object(
    {
        "refs": {
            "type": "array",
            "items": _REF,
            "description": "One ref per entry, in input order: the exact version written.",
        }
    },
    ["refs"],
)

MEMORY_REF_INPUT: Final = _object(_REF_PROPERTIES, ["scope_id", "entry_id", "version"])

GET_MEMORY_OUTPUT: Final = _object(
    {
        **_REF_PROPERTIES,
        "text": {"type": "string"},
        "kind": {"type": "string"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "created_at": _or_null("string", "ISO-8601, or null."),
        "thread": _or_null("string"),
        "key": _or_null("string", "The idempotency key, or null."),
    },
    ["scope_id", "entry_id", "version", "text", "kind", "tags", "created_at", "thread", "key"],
)

FORGET_MEMORY_OUTPUT: Final = _object(
    {**_REF_PROPERTIES, "forgotten": {"type": "boolean", "const": True}},
    ["scope_id", "entry_id", "version", "forgotten"],
)

#: ``erase_memory`` (served with ``satchel mcp --allow-erase`` only): an entry, no version,
#: since an erase takes every version.
ERASE_MEMORY_INPUT: Final = _object(
    {"scope_id": _SCOPE_ID, "entry_id": _ENTRY_ID}, ["scope_id", "entry_id"]
)

ERASE_MEMORY_OUTPUT: Final = _object(
    {
        "scope_id": _SCOPE_ID,
        "entry_id": _ENTRY_ID,
        "erased_versions": {
            "type": "integer",
            "minimum": 0,
            "description": "How many versions were erased: 0 when none was held (never"
            " written, or erased already).",
        },
    },
    ["scope_id", "entry_id", "erased_versions"],
)
