"""The other families' writes and the erase of any record: an experience, a topic
memory, a resource, a profile, their refs, and an erase by citation.

Only the service speaks these (``POST /v1/experiences``, ``/v1/topic-memories``,
``/v1/resources``, ``PUT /v1/profiles/{scope}``, ``POST /v1/erase``); each body is the
Runtime method's arguments, named as the method names them, so a refusal names the
same field (``experiences[0].lesson``, ``profile.text``, ``target.scope``).
"""

from __future__ import annotations

from typing import Final

from satchel.vocabulary import FAMILIES, MAX_KEY_CHARS

from ._bounds import ID_SPELLING
from ._memories import SCOPE_ID
from ._model import STRING, Field, Shape, text
from ._prepare import CITATION

_KEY: Final = Field(
    text(max_length=MAX_KEY_CHARS),
    "An idempotency key, unique per scope and family: the same key with the same content"
    " writes nothing and returns the existing ref; with new content, a new revision.",
    nullable=True,
    default=None,
)

EXPERIENCE: Final = Shape(
    "Experience",
    {
        "situation": Field(text(), "What the agent faced.", required=True),
        "action": Field(text(), "What it did.", required=True),
        "outcome": Field(text(), "What came of it.", required=True),
        "lesson": Field(text(), "What to do next time.", required=True),
        "key": _KEY,
    },
)
TOPIC_MEMORY: Final = Shape(
    "TopicMemory",
    {
        "title": Field(
            text(), "The topic; the same title again makes a new revision.", required=True
        ),
        "text": Field(text(), "The note.", required=True),
        "key": _KEY,
    },
)
RESOURCE: Final = Shape(
    "Resource",
    {
        "uri": Field(
            text(), "The document's name, its id; the same URI again is a new revision.",
            required=True,
        ),
        "body": Field(STRING, "The document, read only when a request pins detail full.",
                      required=True),
        "abstract": Field(text(), "A line on it (searched).", nullable=True, default=None),
        "overview": Field(text(), "A paragraph on it (searched).", nullable=True, default=None),
        "key": _KEY,
    },
)  # fmt: skip
PROFILE: Final = Shape(
    "Profile", {"text": Field(text(), "The scope's profile, read whole.", required=True)}
)


def _batch(name: str, argument: str, record: Shape, doc: str) -> Shape:
    return Shape(
        name,
        {
            "scope_id": SCOPE_ID,
            argument: Field({"type": "array", "items": record}, doc, required=True),
        },
    )


#: ``POST /v1/experiences``, ``/v1/topic-memories``, ``/v1/resources``.
ADD_EXPERIENCES: Final = _batch(
    "AddExperiencesRequest", "experiences", EXPERIENCE, "The experiences, all or nothing."
)
ADD_TOPIC_MEMORIES: Final = _batch(
    "AddTopicMemoriesRequest", "topics", TOPIC_MEMORY, "The topic memories, all or nothing."
)
ADD_RESOURCES: Final = _batch(
    "AddResourcesRequest", "resources", RESOURCE, "The resources, all or nothing."
)

RECORD_REF: Final = Shape(
    "RecordRef",
    {
        "family": Field({"enum": list(FAMILIES)}, required=True),
        "scope_id": Field(STRING, required=True),
        "id": Field(STRING, f"The record id (a resource's: its URI). {ID_SPELLING}", required=True),
        "revision": Field({"type": "integer", "minimum": 1}, required=True),
    },
    answer=True,
)
ADDED_RECORDS: Final = Shape(
    "AddRecordsResponse",
    {
        "refs": Field(
            {"type": "array", "items": RECORD_REF},
            "One ref per record, in input order: the exact revision written.",
            required=True,
        )
    },
    answer=True,
)

#: ``PUT /v1/profiles/{scope}``.
SET_PROFILE: Final = Shape(
    "SetProfileRequest",
    {"profile": Field(PROFILE, "The scope's profile; it replaces the one held.", required=True)},
)

#: ``POST /v1/erase``: any record by its citation.
ERASE: Final = Shape(
    "EraseRequest",
    {
        "target": Field(
            CITATION,
            "The record to erase, every version of it (the version named does not narrow"
            " it); a profile's id is null.",
            required=True,
        )
    },
)
ERASED: Final = Shape(
    "Erased",
    {
        "erased_versions": Field(
            {"type": "integer", "minimum": 0},
            "How many versions were erased (a profile is one): 0 when none was held.",
            required=True,
        )
    },
    answer=True,
)
