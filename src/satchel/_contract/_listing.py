"""The listing calls' requests and answers: the scopes, and a page of records.

``GET /v1/scopes`` answers a list of scope summaries; ``GET
/v1/scopes/{scope}/records`` and the ``list_memories`` tool answer one page of records
(the service takes its arguments as a query string, the tool as this object).
"""

from __future__ import annotations

from typing import Final

from satchel.vocabulary import DEFAULT_PAGE, FAMILIES, MAX_PAGE

from ._memories import SCOPE_ID
from ._model import STRING, Field, Schema, Shape
from ._prepare import CITED_RECORD

_FAMILY: Final[Schema] = {"enum": list(FAMILIES)}
_COUNT: Final[Schema] = {"type": "integer", "minimum": 0}
_WHEN: Final[Schema] = {"type": "string", "format": "date-time"}

#: The docs of the listing's arguments, shared by the service's query string.
FAMILY_DOC: Final = "Only this family's records; null or absent: every family (the profile last)."
FORGOTTEN_DOC: Final = "Also list forgotten memory entries (marked forgotten); default false."
CURSOR_DOC: Final = (
    "The cursor the previous page returned, as it is (opaque); absent for the first page."
    " A walk by cursors lists every record that stays once, however the scope changes."
)
LIMIT_DOC: Final = f"The most records on the page: 1..{MAX_PAGE} (default {DEFAULT_PAGE})."

SCOPE_SUMMARY: Final = Shape(
    "ScopeSummary",
    {
        "scope_id": Field(STRING, required=True),
        "records": Field(
            {"type": "object", "propertyNames": _FAMILY, "additionalProperties": _COUNT},
            "Searchable records per family (a profile counts 1); a family with none is"
            " absent, so a scope whose every entry was forgotten maps nothing.",
            required=True,
        ),
        "updated_at": Field(
            _WHEN,
            "When the scope was last written, updated, forgotten in or erased from (UTC);"
            " null when the store recorded no time.",
            required=True,
            nullable=True,
        ),
    },
    answer=True,
)
#: ``GET /v1/scopes``'s answer.
SCOPES: Final = Shape(
    "ScopeList",
    {
        "scopes": Field(
            {"type": "array", "items": SCOPE_SUMMARY},
            "Every scope the token may read that holds anything, sorted by id.",
            required=True,
        )
    },
    answer=True,
)

STORED_RECORD: Final = Shape(
    "StoredRecord",
    {
        "citation": Field(
            CITED_RECORD,
            "The record's newest version, as a pack cites it (erase and exclude take it).",
            required=True,
        ),
        "text": Field(
            STRING,
            "What it reads as: a memory entry's text; an experience or topic memory as a"
            " pack renders it; a resource's abstract and overview (its URI without them,"
            " never its body); the profile's text.",
            required=True,
        ),
        "created_at": Field(
            _WHEN,
            "When it was said or observed, if the record says.",
            required=True,
            nullable=True,
        ),
        "key": Field(STRING, "The idempotency key, or null.", required=True, nullable=True),
        "forgotten": Field(
            {"type": "boolean"}, "Forgotten: readable, never served.", required=True
        ),
    },
    answer=True,
)
#: ``GET /v1/scopes/{scope}/records``'s answer, and the ``list_memories`` tool's.
RECORD_PAGE: Final = Shape(
    "RecordPage",
    {
        "records": Field(
            {"type": "array", "items": STORED_RECORD},
            "The page's records, newest first, each once as its newest version.",
            required=True,
        ),
        "cursor": Field(
            STRING,
            "Pass it as cursor for the next page; null on the last page.",
            required=True,
            nullable=True,
        ),
    },
    answer=True,
)

#: The ``list_memories`` tool's arguments.
LIST_RECORDS: Final = Shape(
    None,
    {
        "scope_id": SCOPE_ID,
        "family": Field(_FAMILY, FAMILY_DOC, nullable=True, default=None),
        "include_forgotten": Field({"type": "boolean"}, FORGOTTEN_DOC, default=False),
        "cursor": Field(STRING, CURSOR_DOC, nullable=True, default=None),
        "limit": Field(
            {"type": "integer", "minimum": 1, "maximum": MAX_PAGE}, LIMIT_DOC, default=DEFAULT_PAGE
        ),
    },
)
