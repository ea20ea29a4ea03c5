"""The memory calls' requests and answers: an entry, a ref, a record, an erase.

The service and the tools share these shapes and differ only in how a record is laid
out: the service nests its ref, ``get_memory`` lists the ref's fields flat.
"""

from __future__ import annotations

from typing import Final

from satchel.vocabulary import MAX_KEY_CHARS, MAX_SCOPE_CHARS, MAX_VERSION

from ._bounds import DEFAULT_KIND, ID_SPELLING
from ._model import STRING, Field, Schema, Shape, described, text

#: A scope id, wherever one is named.
SCOPE: Final = text(max_length=MAX_SCOPE_CHARS)
_VERSION: Final[Schema] = {"type": "integer", "minimum": 1, "maximum": MAX_VERSION}
_COUNT: Final[Schema] = {"type": "integer", "minimum": 0}

SCOPE_ID: Final = Field(
    SCOPE,
    "The scope (namespace) of the memory, any string such as 'project:demo' or 'user:ana';"
    f" 1..{MAX_SCOPE_CHARS} printable characters.",
    required=True,
)
ENTRY_ID: Final = Field(
    text(),
    f"The entry id a citation or an add_memories ref names. {ID_SPELLING}",
    required=True,
    http_doc=f"The entry id a citation or a ref names. {ID_SPELLING}",
)

MEMORY_REF: Final = Shape(
    "MemoryRef",
    {
        "scope_id": SCOPE_ID,
        "entry_id": ENTRY_ID,
        "version": Field(
            _VERSION,
            "The exact version of the entry (versions are immutable; 1 is the first).",
            required=True,
        ),
    },
    answer=True,
)

# ------------------------------------------------------------------------- memories

MEMORY_ENTRY: Final = Shape(
    "MemoryEntry",
    {
        "text": Field(text(), "What to remember.", required=True),
        "kind": Field(
            text(), "What sort of thing it is: fact, dialog, decision...", default=DEFAULT_KIND
        ),
        "tags": Field(
            {"type": "array", "items": described(text(), "A tag.")},
            "Labels kept with the entry.",
            default=[],
        ),
        "created_at": Field(
            {"type": "string", "format": "date-time"},
            "When it was said or observed: ISO-8601, e.g. 2024-03-04T09:00:00+00:00 or"
            " 2024-03-04T09:00:00Z; without an offset (2024-03-04, 2024-03-04T09:00) it is UTC."
            " Lets queries that name a date find it.",
            nullable=True,
            default=None,
        ),
        "thread": Field(
            text(),
            "The conversation it belongs to: the turns just before and after a hit in the"
            " same thread join the candidates.",
            nullable=True,
            default=None,
        ),
        "key": Field(
            text(max_length=MAX_KEY_CHARS),
            "An idempotency key, unique per scope: the same key with the same content writes"
            " nothing and returns the existing ref (a forgotten entry stays forgotten); with"
            " new content, a new live version.",
            nullable=True,
            default=None,
        ),
    },
)

#: ``POST /v1/memories``, and the ``add_memories`` tool's arguments.
ADD_MEMORIES: Final = Shape(
    "AddMemoriesRequest",
    {
        "scope_id": SCOPE_ID,
        "entries": Field(
            {"type": "array", "items": MEMORY_ENTRY},
            "The entries to write, all or nothing: one bad entry writes none.",
            required=True,
        ),
    },
)
ADDED_MEMORIES: Final = Shape(
    "AddMemoriesResponse",
    {
        "refs": Field(
            {"type": "array", "items": MEMORY_REF},
            "One ref per entry, in input order: the exact version written.",
            required=True,
        )
    },
    answer=True,
)

#: ``PUT /v1/memories/{scope}/{entry_id}?version=N``: a new version of the entry.
UPDATE_MEMORY: Final = Shape(
    "UpdateMemoryRequest",
    {
        "entry": Field(
            MEMORY_ENTRY,
            "The new version's content: the entry keeps its id, the version the URL names"
            " stays readable by its ref, and the new version is the one served.",
            required=True,
        )
    },
)

_RECORD: Final = {
    "text": Field(STRING, required=True),
    "kind": Field(STRING, required=True),
    "tags": Field({"type": "array", "items": STRING}, required=True),
    "created_at": Field(
        {"type": "string", "format": "date-time"},
        "ISO-8601, or null.",
        required=True,
        nullable=True,
    ),
    "thread": Field(STRING, required=True, nullable=True),
    "key": Field(STRING, "The idempotency key, or null.", required=True, nullable=True),
}
#: ``GET /v1/memories/{scope}/{entry_id}``'s answer: the ref, then the entry.
MEMORY_RECORD: Final = Shape(
    "MemoryRecord", {"ref": Field(MEMORY_REF, required=True), **_RECORD}, answer=True
)
#: The ``get_memory`` tool's answer: the ref's fields, then the entry's, flat.
MEMORY_RECORD_FLAT: Final = Shape(None, {**MEMORY_REF.fields, **_RECORD}, answer=True)
#: The ``forget_memory`` tool's answer.
FORGOTTEN: Final = Shape(
    None,
    {**MEMORY_REF.fields, "forgotten": Field({"type": "boolean", "const": True}, required=True)},
    answer=True,
)
#: The ``erase_memory`` tool's arguments: an entry, no version (an erase takes them all).
ENTRY: Final = Shape(None, {"scope_id": SCOPE_ID, "entry_id": ENTRY_ID})
#: ``DELETE /v1/memories/{scope}/{entry_id}?erase=true``'s answer, and ``erase_memory``'s.
ERASED_VERSIONS: Final = Shape(
    "ErasedVersions",
    {
        "scope_id": SCOPE_ID,
        "entry_id": ENTRY_ID,
        "erased_versions": Field(
            _COUNT,
            "How many versions were erased: 0 when none was held (never written, or erased"
            " already).",
            required=True,
        ),
    },
    answer=True,
)

#: ``DELETE /v1/scopes/{scope}``'s answer.
ERASED_RECORDS: Final = Shape(
    "ErasedRecords",
    {
        "scope_id": SCOPE_ID,
        "erased_records": Field(
            _COUNT,
            "How many records were erased, of every family (a record counts once whatever"
            " its versions; a profile is one).",
            required=True,
        ),
    },
    answer=True,
)
