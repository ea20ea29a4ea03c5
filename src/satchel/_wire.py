"""satchel's values spelled as JSON, for the processes that speak it.

The HTTP service (:mod:`satchel.http`) and the MCP server (:mod:`satchel.mcp`) read request
values and write answers through these functions, so both spell satchel the same way: a
citation, a memory entry, a date, an assembly's sections, a prepare request, a ref, a
record, a pack and its explanation.

Only what JSON can get wrong is checked here: an unknown or missing field, a string
where a list belongs, a date that does not parse. Every value is then validated by
satchel itself. A refusal is a :class:`satchel.InvalidRequestError` whose message starts
with the field as the JSON spells it (``entries[2].created_at``, ``exclude[0].version``),
so a server can name the field in its answer.

It sits above the public facade, beside the workload files, and imports only the
public API.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final, TypeVar, cast

import attrs

import satchel
from satchel.vocabulary import DEFAULT_MAX_BYTES
from satchel.vocabulary._refs import compact_id as compact_id
from satchel.vocabulary._refs import full_id as full_id

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

RecordT = TypeVar("RecordT")

#: The fields of a memory entry, of an assembly's section and of a citation. A citation
#: is read as the servers' schemas spell it (``id``, ``version``) or with its family's
#: field names (``entry_id`` or ``uri`` for ``id``, ``revision`` for ``version``), and an
#: id as satchel minted it or as a pack writes it (``full_id``), so a host can hand
#: back the citations it read off a pack's lines.
ENTRY_FIELDS: Final = ("text", "kind", "tags", "created_at", "thread", "key")
SECTION_FIELDS: Final = ("family", "limit")
CITATION_FIELDS: Final = ("family", "scope", "id", "version", "entry_id", "uri", "revision")
_ID_NAMES: Final = ("id", "entry_id", "uri")
_VERSION_NAMES: Final = ("version", "revision")
_MOMENT: Final = (
    "an ISO 8601 date or date-time (UTC when it carries no offset), e.g. 2024-03-04T09:00:00+00:00"
)


def refuse(message: str) -> satchel.InvalidRequestError:
    return satchel.InvalidRequestError(message)


# ---------------------------------------------------------------------------- shapes


def known(value: Mapping[str, Any], names: Sequence[str], where: str = "") -> None:
    """Refuse a field ``names`` does not list, naming it (``entries[1].colour``)."""
    for name in value:
        if name not in names:
            raise refuse(f"{where}{name} is not a field (expected: {', '.join(names)})")


def required(value: Mapping[str, Any], name: str, where: str = "") -> Any:
    if name not in value:
        raise refuse(f"{where}{name} is required")
    return value[name]


def as_string(value: object, field: str) -> str:
    if not isinstance(value, str):
        raise refuse(f"{field} must be a string")
    return value


def as_list(value: object, field: str, what: str) -> list[Any]:
    if not isinstance(value, list):
        raise refuse(f"{field} must be a list of {what}")
    return value


def as_object(value: object, field: str, names: Sequence[str]) -> dict[str, Any]:
    """``value`` as a JSON object holding no field but ``names``."""
    if not isinstance(value, dict):
        raise refuse(f"{field} must be an object ({', '.join(names)})")
    known(value, names, f"{field}.")
    return value


# ----------------------------------------------------------------------------- values


def prepare_request(
    fields: Mapping[str, Any], assembly: satchel.Assembly | None
) -> satchel.PrepareContextRequest:
    """The prepare request ``fields`` spell (``scope_id``, ``query``, ``max_bytes``,
    ``references``, ``session_id``, ``detail``, ``exclude``), with the ``assembly`` the
    caller read (the servers spell it differently). Scopes are checked to be strings, so
    a token's grant can be matched against them; every other value is left to satchel."""
    scope_id = as_string(required(fields, "scope_id"), "scope_id")
    references = as_list(fields.get("references", []), "references", "scope ids")
    for index, reference in enumerate(references):
        as_string(reference, f"references[{index}]")
    excluded = as_list(fields.get("exclude", []), "exclude", "citation objects")
    return satchel.PrepareContextRequest(
        scope_id=scope_id,
        query=required(fields, "query"),
        max_bytes=fields.get("max_bytes", DEFAULT_MAX_BYTES),
        assembly=assembly,
        references=tuple(references),
        session_id=fields.get("session_id"),
        detail=fields.get("detail"),  # a tier, a {family: tier} object or null: satchel checks
        exclude=tuple(citation(item, f"exclude[{index}]") for index, item in enumerate(excluded)),
    )


def assembly(value: object, field: str) -> satchel.Assembly:
    """The assembly a list of ``{family, limit}`` objects spells (at ``field``)."""
    sections = []
    for index, item in enumerate(as_list(value, field, "{family, limit} objects")):
        where = f"{field}[{index}]"
        section = as_object(item, where, SECTION_FIELDS)
        family = required(section, "family", f"{where}.")
        sections.append(satchel.Section(family, required(section, "limit", f"{where}.")))
    return satchel.Assembly(tuple(sections))


def citation(value: object, field: str) -> satchel.Citation:
    """The citation ``{family, scope, id, version}`` (or a pack's spelling) names."""
    cited = as_object(value, field, CITATION_FIELDS)
    family = required(cited, "family", f"{field}.")
    scope = as_string(required(cited, "scope", f"{field}."), f"{field}.scope")
    record_id = _one_of(cited, field, _ID_NAMES)
    version = _one_of(cited, field, _VERSION_NAMES)
    if record_id is not None and not isinstance(record_id, str):
        raise refuse(f"{field}.id must be a string or null")
    if record_id is not None:
        record_id = full_id(record_id)
    if version is not None and (isinstance(version, bool) or not isinstance(version, int)):
        raise refuse(f"{field}.version must be an integer or null")
    return satchel.Citation(family, scope, record_id, version)


def _one_of(cited: Mapping[str, Any], field: str, names: Sequence[str]) -> Any:
    present = [name for name in names if name in cited]
    if len(present) > 1:
        raise refuse(f"{field}.{present[1]} repeats {field}.{present[0]} (give one of them)")
    return cited[present[0]] if present else None


def memory_entry(value: object, field: str) -> satchel.MemoryEntry:
    """The memory entry ``{text, kind, tags, created_at, thread, key}`` spells."""
    entry = as_object(value, field, ENTRY_FIELDS)
    tags = as_list(entry.get("tags", []), f"{field}.tags", "strings")
    return satchel.MemoryEntry(
        text=required(entry, "text", f"{field}."),
        kind=entry.get("kind", "fact"),
        tags=tuple(tags),
        created_at=moment(entry.get("created_at"), f"{field}.created_at"),
        thread=entry.get("thread"),
        key=entry.get("key"),
    )


#: The record types of the families written in batches besides memory, by the name the
#: Runtime's write method gives its argument (``add_experiences(scope_id, experiences)``).
RECORD_TYPES: Final[
    dict[str, type[satchel.Experience | satchel.TopicMemory | satchel.Resource]]
] = {
    "experiences": satchel.Experience,
    "topics": satchel.TopicMemory,
    "resources": satchel.Resource,
}


def family_record(kind: type[RecordT], value: object, field: str) -> RecordT:
    """The record of type ``kind`` (an experience, topic memory, resource or profile)
    that an object of its fields spells; a field without a default is required."""
    fields = attrs.fields(cast("Any", kind))
    names = tuple(attribute.name for attribute in fields)
    spelled = as_object(value, field, names)
    given = {
        attribute.name: required(spelled, attribute.name, f"{field}.")
        if attribute.default is attrs.NOTHING
        else spelled.get(attribute.name, attribute.default)
        for attribute in fields
    }
    return kind(**given)


def fields_json(
    record: satchel.Experience | satchel.TopicMemory | satchel.Resource | satchel.Profile,
) -> dict[str, Any]:
    """An experience, topic memory, resource or profile as :func:`family_record` reads it."""
    return attrs.asdict(record)


def moment(value: object, field: str) -> datetime | None:
    """An ISO 8601 date-time, or None for null; one without a UTC offset is UTC, as
    ``satchel add --at`` and ``satchel ingest`` read it."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise refuse(f"{field} must be {_MOMENT}")
    try:
        when = datetime.fromisoformat(value)
    except ValueError:
        raise refuse(f"{field} must be {_MOMENT}, not {value!r}") from None
    return when if when.utcoffset() is not None else when.replace(tzinfo=UTC)


# ---------------------------------------------------------------------------- answers


def ref_json(ref: satchel.MemoryRef) -> dict[str, Any]:
    """A ref, its entry id spelled as a pack prints it (:func:`compact_id`)."""
    return {"scope_id": ref.scope_id, "entry_id": compact_id(ref.entry_id), "version": ref.version}


def erased_entry_json(ref: satchel.MemoryRef, erased: int) -> dict[str, Any]:
    """What erasing the memory entry ``ref`` names answers: the entry and the versions
    erased."""
    return {
        "scope_id": ref.scope_id,
        "entry_id": compact_id(ref.entry_id),
        "erased_versions": erased,
    }


def record_json(record: satchel.MemoryRecord) -> dict[str, Any]:
    created = None if record.created_at is None else record.created_at.isoformat()
    return {
        "ref": ref_json(record.ref),
        "text": record.text,
        "kind": record.kind,
        "tags": list(record.tags),
        "created_at": created,
        "thread": record.thread,
        "key": record.key,
    }


def context_json(context: satchel.PreparedContext) -> dict[str, Any]:
    return {
        "schema": context.schema,
        "status": context.status,
        "content": context.content,
        "content_bytes": context.content_bytes,
    }


def citation_json(citation: satchel.Citation) -> dict[str, Any]:
    """A citation as requests spell it (``exclude`` takes it back as it is), its id as
    a pack prints it (:func:`compact_id`)."""
    return {
        "family": citation.family,
        "scope": citation.scope,
        "id": None if citation.id is None else compact_id(citation.id),
        "version": citation.version,
    }


def scope_summary_json(summary: satchel.ScopeSummary) -> dict[str, Any]:
    updated = None if summary.updated_at is None else summary.updated_at.isoformat()
    return {
        "scope_id": summary.scope_id,
        "records": dict(summary.records),
        "updated_at": updated,
    }


def record_page_json(page: satchel.RecordPage) -> dict[str, Any]:
    """A page of records: each record's citation (the four fields), text, time, key and
    whether it is forgotten, then the next page's cursor."""
    return {
        "records": [
            {
                "citation": citation_json(record.citation),
                "text": record.text,
                "created_at": None if record.created_at is None else record.created_at.isoformat(),
                "key": record.key,
                "forgotten": record.forgotten,
            }
            for record in page.records
        ],
        "cursor": page.cursor,
    }


def explanation_json(explanation: satchel.Explanation) -> dict[str, Any]:
    """The pack's four fields, then its ``receipts`` and its ``omitted`` candidates."""
    receipts = [
        {
            "citation": citation_json(receipt.citation),
            "channels": dict(receipt.channels),
            "score": receipt.score,
            "round": receipt.round,
            "tier": receipt.tier,
            "truncated": receipt.truncated,
        }
        for receipt in explanation.receipts
    ]
    omitted = [
        {
            "citation": citation_json(omission.citation),
            "cause": omission.cause,
            "channels": dict(omission.channels),
            "score": omission.score,
        }
        for omission in explanation.omitted
    ]
    return {**context_json(explanation.context), "receipts": receipts, "omitted": omitted}


# ------------------------------------------------------------------ a client's side
#
# The inverses of the readers and answers above, for satchel's own client of the
# service (:mod:`satchel.client`): a value it sends spelled as the service reads it,
# an answer read back into the value the Runtime returns.


def entry_json(entry: satchel.MemoryEntry) -> dict[str, Any]:
    """A memory entry as :func:`memory_entry` reads it back."""
    created = None if entry.created_at is None else entry.created_at.isoformat()
    return {
        "text": entry.text,
        "kind": entry.kind,
        "tags": list(entry.tags),
        "created_at": created,
        "thread": entry.thread,
        "key": entry.key,
    }


def request_json(request: satchel.PrepareContextRequest) -> dict[str, Any]:
    """A prepare request as the service's ``POST /v1/context/prepare`` body spells it."""
    body: dict[str, Any] = {
        "scope_id": request.scope_id,
        "query": request.query,
        "max_bytes": request.max_bytes,
        "references": list(request.references),
        "session_id": request.session_id,
        "detail": dict(request.detail) if isinstance(request.detail, dict) else request.detail,
        "exclude": [citation_json(cited) for cited in request.exclude],
    }
    if request.assembly is not None:
        sections = [
            {"family": section.family, "limit": section.limit}
            for section in request.assembly.sections
        ]
        body["assembly"] = {"sections": sections}
    return body


def ref_of(value: Mapping[str, Any]) -> satchel.MemoryRef:
    """The ref :func:`ref_json` spelled."""
    return satchel.MemoryRef(value["scope_id"], full_id(value["entry_id"]), value["version"])


def record_of(value: Mapping[str, Any]) -> satchel.MemoryRecord:
    """The record :func:`record_json` spelled."""
    created = value["created_at"]
    return satchel.MemoryRecord(
        ref=ref_of(value["ref"]),
        text=value["text"],
        kind=value["kind"],
        tags=tuple(value["tags"]),
        created_at=None if created is None else datetime.fromisoformat(created),
        thread=value["thread"],
        key=value.get("key"),
    )


def context_of(value: Mapping[str, Any]) -> satchel.PreparedContext:
    """The pack :func:`context_json` spelled."""
    return satchel.PreparedContext(
        schema=value["schema"],
        status=value["status"],
        content=value["content"],
        content_bytes=value["content_bytes"],
    )


def citation_of(value: Mapping[str, Any]) -> satchel.Citation:
    """The citation :func:`citation_json` spelled."""
    record_id = value["id"]
    return satchel.Citation(
        value["family"],
        value["scope"],
        None if record_id is None else full_id(record_id),
        value["version"],
    )


def explanation_of(value: Mapping[str, Any]) -> satchel.Explanation:
    """The explanation :func:`explanation_json` spelled."""
    receipts = tuple(
        satchel.Receipt(
            citation=citation_of(receipt["citation"]),
            channels=dict(receipt["channels"]),
            score=receipt["score"],
            round=receipt["round"],
            tier=receipt["tier"],
            truncated=receipt["truncated"],
        )
        for receipt in value["receipts"]
    )
    omitted = tuple(
        satchel.Omission(
            citation=citation_of(omission["citation"]),
            cause=omission["cause"],
            channels=dict(omission["channels"]),
            score=omission["score"],
        )
        for omission in value["omitted"]
    )
    return satchel.Explanation(context_of(value), receipts, omitted)


def record_ref_json(ref: satchel.RecordRef) -> dict[str, Any]:
    """A record's ref, its id spelled as a pack prints it (:func:`compact_id`)."""
    return {
        "family": ref.family,
        "scope_id": ref.scope_id,
        "id": compact_id(ref.id),
        "revision": ref.revision,
    }


def record_ref_of(value: Mapping[str, Any]) -> satchel.RecordRef:
    """The ref :func:`record_ref_json` spelled."""
    return satchel.RecordRef(
        value["family"], value["scope_id"], full_id(value["id"]), value["revision"]
    )


def scope_summary_of(value: Mapping[str, Any]) -> satchel.ScopeSummary:
    """The summary :func:`scope_summary_json` spelled."""
    updated = value["updated_at"]
    return satchel.ScopeSummary(
        value["scope_id"],
        dict(value["records"]),
        None if updated is None else datetime.fromisoformat(updated),
    )


def record_page_of(value: Mapping[str, Any]) -> satchel.RecordPage:
    """The page :func:`record_page_json` spelled."""
    records = tuple(
        satchel.StoredRecord(
            citation=citation_of(record["citation"]),
            text=record["text"],
            created_at=None
            if record["created_at"] is None
            else datetime.fromisoformat(record["created_at"]),
            key=record["key"],
            forgotten=record["forgotten"],
        )
        for record in value["records"]
    )
    return satchel.RecordPage(records, value["cursor"])
