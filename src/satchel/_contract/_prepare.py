"""The prepare call's requests and answers: a citation, an assembly, a request, a pack
and its explanation.

The service and the ``prepare_context`` tool take the same fields but for two: the
service takes an ``assembly`` object and explains on a route of its own; the tool takes
``sections`` as a list and an ``explain`` flag, and answers both ways with one shape.
"""

from __future__ import annotations

from typing import Final

import attrs

from satchel.vocabulary import (
    CHANNELS,
    DEFAULT_FAMILIES,
    DEFAULT_MAX_BYTES,
    FAMILIES,
    MAX_MAX_BYTES,
    MAX_OMISSIONS,
    MAX_QUERY_CHARS,
    MAX_REFERENCES,
    MAX_SECTION_LIMIT,
    MIN_MAX_BYTES,
    OMISSION_CAUSES,
    TIERS,
)

from ._bounds import (
    ID_SPELLING,
    MAX_ROUND,
    MAX_SECTION_ITEMS,
    SCHEMA_ID,
    SECTION_LIMITS,
    STATUSES,
)
from ._memories import SCOPE, SCOPE_ID
from ._model import STRING, Field, Schema, Shape, described, text

_FAMILY: Final[Schema] = {"enum": list(FAMILIES)}
_TIER: Final[Schema] = {"enum": list(TIERS)}


def _listed(names: tuple[str, ...]) -> str:
    """``a, b and c``."""
    return f"{', '.join(names[:-1])} and {names[-1]}" if len(names) > 1 else names[0]


# ------------------------------------------------------------------------- citations

CITATION: Final = Shape(
    "Citation",
    {
        "family": Field(_FAMILY, "The cited record's family.", required=True),
        "scope": Field(STRING, "The scope the record was read from.", required=True),
        "id": Field(
            STRING,
            "The entry id (memory), record id (experience, topic-memory) or URI (resource);"
            " null for a profile. A pack's own field names (entry_id, uri) are accepted."
            f" {ID_SPELLING}",
            nullable=True,
        ),
        "version": Field(
            {"type": "integer", "minimum": 1},
            "The version (memory) or revision (experience, topic-memory); null for a resource"
            " or profile. A pack's own spelling (revision) is accepted.",
            nullable=True,
        ),
        "entry_id": Field(STRING, "id, as a memory citation spells it."),
        "uri": Field(STRING, "id, as a resource citation spells it."),
        "revision": Field(
            {"type": "integer", "minimum": 1},
            "version, as an experience or topic-memory citation spells it.",
        ),
    },
    "A citation, copied from a pack item's 'citation' object.",
)

#: A citation as an answer spells it: the four fields, always.
CITED_RECORD: Final = Shape(
    "CitedRecord",
    {
        "family": Field(_FAMILY, required=True),
        "scope": Field(STRING, required=True),
        "id": Field(STRING, f"Null for a profile. {ID_SPELLING}", required=True, nullable=True),
        "version": Field({"type": "integer"}, required=True, nullable=True),
    },
    "The record version, as the pack cites it (exclude takes it as it is).",
    answer=True,
)

# ------------------------------------------------------------------- the prepare call

_OTHER_LIMITS: Final = ", ".join(
    f"{family}: 1..{limit}" for family, limit in SECTION_LIMITS.items() if limit < MAX_SECTION_ITEMS
)
SECTION: Final = Shape(
    None,
    {
        "family": Field(_FAMILY, "The family this section delivers.", required=True),
        "limit": Field(
            {"type": "integer", "minimum": 1, "maximum": MAX_SECTION_ITEMS},
            f"The most items it delivers: 1..{MAX_SECTION_ITEMS}"
            + (f" ({_OTHER_LIMITS})." if _OTHER_LIMITS else "."),
            required=True,
        ),
    },
)
#: Each family at most once (satchel refuses a repeated one).
_SECTIONS: Final[Schema] = {"type": "array", "items": SECTION, "maxItems": len(FAMILIES)}
_SECTIONS_DOC: Final = (
    "Deliver each family's items as their own groups of the pack's JSON lines (format v2),"
    " the families in this order, each at most once; the"
    f" limits sum to at most {MAX_SECTION_LIMIT}."
)
ASSEMBLY: Final = Shape("Assembly", {"sections": Field(_SECTIONS, _SECTIONS_DOC, required=True)})
_SEARCHED_BY_DEFAULT: Final = (
    f"Null (the default) searches {_listed(DEFAULT_FAMILIES)} into one list."
)

_DEDUP: Final = (
    "A conversation id: what this session's recent packs delivered is held back instead of"
    " being repeated, for as many turns as the server is configured to (satchel {command}"
    " --dedup-turns; none by default)."
)
#: The fields of a prepare, as the service's body and the prepare_context tool both
#: take them (the service adds ``assembly``, the tool ``sections`` and ``explain``).
_PREPARE: Final = {
    "scope_id": SCOPE_ID,
    "query": Field(
        text(max_length=MAX_QUERY_CHARS),
        "What the agent needs context for, usually the user's message"
        f" (1..{MAX_QUERY_CHARS} characters).",
        required=True,
    ),
    "max_bytes": Field(
        {"type": "integer", "minimum": MIN_MAX_BYTES, "maximum": MAX_MAX_BYTES},
        "Byte budget of the pack (UTF-8); the pack never exceeds it.",
        default=DEFAULT_MAX_BYTES,
    ),
    "references": Field(
        {
            "type": "array",
            "items": described(SCOPE, "Another scope to search as well."),
            "maxItems": MAX_REFERENCES,
        },
        f"Other scopes to search besides scope_id (at most {MAX_REFERENCES}).",
        default=[],
        http_doc=f"Other scopes to search besides scope_id (at most {MAX_REFERENCES}); the"
        " token must read each.",
    ),
    "session_id": Field(
        text(),
        _DEDUP.format(command="mcp"),
        nullable=True,
        default=None,
        http_doc=_DEDUP.format(command="serve"),
    ),
    "detail": Field(
        {
            "anyOf": [
                described(_TIER, "One tier for every family."),
                {
                    "type": "object",
                    "properties": dict.fromkeys(FAMILIES, _TIER),
                    "additionalProperties": False,
                    "description": "A tier per family.",
                },
            ]
        },
        "Pin how deep items are served: uri (a bare citation), abstract, overview or full."
        " A resource's body is served only when pinned at full.",
        nullable=True,
        default=None,
    ),
    "exclude": Field(
        {"type": "array", "items": CITATION},
        "Citations the agent already holds: never delivered again; other candidates take"
        " their places.",
        default=[],
    ),
}


def _inserted(fields: dict[str, Field], after: str, **more: Field) -> dict[str, Field]:
    """``fields`` with ``more`` after the field ``after`` (the order messages list them)."""
    items = list(fields.items())
    at = list(fields).index(after) + 1
    return dict([*items[:at], *more.items(), *items[at:]])


#: ``POST /v1/context/prepare`` (and ``explain``, ``deadline``): the sections in an
#: ``assembly`` object.
PREPARE_REQUEST: Final = Shape(
    "PrepareContextRequest",
    _inserted(
        _PREPARE,
        "max_bytes",
        assembly=Field(
            ASSEMBLY,
            f"The families to deliver, as sections. {_SEARCHED_BY_DEFAULT}",
            nullable=True,
            default=None,
        ),
    ),
)
#: The ``prepare_context`` tool's arguments: the sections as a list, and ``explain``.
PREPARE_ARGUMENTS: Final = Shape(
    None,
    {
        **_inserted(
            _PREPARE,
            "session_id",
            # An empty list is refused: null is how a tool's caller asks for the default.
            sections=Field(
                {**_SECTIONS, "minItems": 1},
                f"{_SECTIONS_DOC} {_SEARCHED_BY_DEFAULT}",
                nullable=True,
                default=None,
            ),
        ),
        "explain": Field(
            {"type": "boolean"},
            "Also say why each item is in the pack (receipts: its rank per search channel,"
            " fused score, round, tier) and why the best candidates left out are not"
            " (omitted, with their cause). The pack, and the session's turn, are the same as"
            " without it.",
            default=False,
        ),
    },
)

# ------------------------------------------------------------------------ the answers

_RANKS: Final = Field(
    {
        "type": "object",
        "properties": {channel: {"type": "integer", "minimum": 1} for channel in CHANNELS},
        "additionalProperties": False,
    },
    "Each search channel that ranked it, and its rank there from 1 (in the round that"
    " committed it; below the floor: its rank in what the channel retrieved).",
    required=True,
)

RECEIPT: Final = Shape(
    "Receipt",
    {
        "citation": Field(CITED_RECORD, required=True),
        "channels": _RANKS,
        "score": Field(
            {"type": "number"},
            "The fused score its search ranked it by (null: a profile).",
            required=True,
            nullable=True,
        ),
        "round": Field(
            {"type": "integer", "minimum": 0, "maximum": MAX_ROUND},
            "The search round that committed it.",
            required=True,
        ),
        "tier": Field(_TIER, required=True),
        "truncated": Field({"type": "boolean"}, required=True),
    },
    "Why one delivered item is in the pack.",
    answer=True,
)

OMISSION: Final = Shape(
    "Omission",
    {
        "citation": Field(CITED_RECORD, required=True),
        "cause": Field(
            {"enum": list(OMISSION_CAUSES)},
            "budget: no room left in the pack's bytes, item limits or candidate ceiling;"
            " held-back: this session was given it lately; excluded: exclude names it;"
            " duplicate: its text repeats a candidate offered before it; floor: below the"
            " admission floor, or nothing found was relevant (the prepare abstained).",
            required=True,
        ),
        "channels": _RANKS,
        "score": Field(
            {"type": "number"}, "Its fused score (null: unfused).", required=True, nullable=True
        ),
    },
    "A candidate the pack does not deliver, and why.",
    answer=True,
)

_PACK: Final = {
    "schema": Field({"type": "string", "const": SCHEMA_ID}, required=True),
    "status": Field({"enum": list(STATUSES)}, "empty: nothing relevant fits.", required=True),
    "content": Field(
        STRING,
        "The rendered pack (null when empty): untrusted data between the"
        " BEGIN_SATCHEL_CONTEXT_V2 and END_SATCHEL_CONTEXT_V2 markers, each item cited.",
        required=True,
        nullable=True,
    ),
    "content_bytes": Field(
        {"type": "integer", "minimum": 0, "maximum": MAX_MAX_BYTES},
        "The pack's size in UTF-8 bytes, at most max_bytes.",
        required=True,
    ),
}
_RECEIPTS: Final = Field(
    {"type": "array", "items": RECEIPT},
    "One per delivered item, in pack order.",
    required=True,
)
_OMITTED: Final = Field(
    {"type": "array", "items": OMISSION, "maxItems": MAX_OMISSIONS},
    "The best candidates left out, best first.",
    required=True,
)

#: ``POST /v1/context/prepare``'s answer.
PREPARED_CONTEXT: Final = Shape("PreparedContext", _PACK, answer=True)
#: ``POST /v1/context/explain``'s answer.
EXPLAINED_CONTEXT: Final = Shape(
    "ExplainedContext",
    {**_PACK, "receipts": _RECEIPTS, "omitted": _OMITTED},
    "The pack's four fields (as PreparedContext), then its receipts and omissions.",
    answer=True,
)


def _with_explain_only(field: Field) -> Field:
    doc = f"With explain only: {field.doc[0].lower()}{field.doc[1:]}"
    return attrs.evolve(field, doc=doc, required=False)


#: The ``prepare_context`` tool's answer: the pack, and with ``explain`` its receipts and
#: omissions.
PREPARED: Final = Shape(
    None,
    {**_PACK, "receipts": _with_explain_only(_RECEIPTS), "omitted": _with_explain_only(_OMITTED)},
    answer=True,
)

#: ``POST /v1/context/deadline``'s answer.
DEADLINE: Final = Shape(
    "Deadline",
    {
        "deadline_seconds": Field(
            {"type": "number", "minimum": 0},
            "Seconds; null when the prepare is unbounded.",
            required=True,
            nullable=True,
        )
    },
    answer=True,
)
