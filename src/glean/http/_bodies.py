"""Request bodies: read within a byte limit, parsed as JSON, turned into glean's values.

Only what JSON can get wrong is checked here: the media type, the size, the syntax, an
unknown or missing field, a string where a list belongs, a date that does not parse.
Every value is then validated by glean itself, whose ``InvalidRequestError`` names the
field; both become a 422 naming it, spelled as the body spells it (``max_bytes``,
``entries[2].created_at``, ``assembly.sections[0].limit``).
"""

from __future__ import annotations

import json
from contextlib import aclosing
from datetime import datetime
from typing import TYPE_CHECKING, Any, Final

import glean

from ._errors import HttpError, invalid

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from starlette.requests import Request

#: The fields of each body and of its nested objects, in the order messages list them.
PREPARE_FIELDS: Final = (
    "scope_id", "query", "max_bytes", "assembly", "references", "session_id", "detail",
    "exclude",
)  # fmt: skip
ADD_FIELDS: Final = ("scope_id", "entries")
ENTRY_FIELDS: Final = ("text", "kind", "tags", "created_at", "thread", "key")
ASSEMBLY_FIELDS: Final = ("sections",)
SECTION_FIELDS: Final = ("family", "limit")
#: A citation as the service's schema spells it, or as a pack spells it (``entry_id`` or
#: ``uri`` for ``id``, ``revision`` for ``version``), so a host can hand back what it read.
CITATION_FIELDS: Final = ("family", "scope", "id", "version", "entry_id", "uri", "revision")
_ID_NAMES: Final = ("id", "entry_id", "uri")
_VERSION_NAMES: Final = ("version", "revision")
DEFAULT_MAX_BYTES: Final = 8000


# ------------------------------------------------------------------------------ reading


async def read_json(request: Request, limit: int) -> dict[str, Any]:
    """The request's body as a JSON object.

    Raises:
        HttpError: 415 unless the body is ``application/json``; 413 when the declared
            length or the bytes actually received pass ``limit``; 400 when the bytes are
            not UTF-8 JSON; 422 when the JSON is not an object or repeats a key.
    """
    media = request.headers.get("content-type", "").partition(";")[0].strip().lower()
    if media != "application/json":
        raise HttpError(
            415, "unsupported_media_type", "the body must be JSON (Content-Type: application/json)"
        )
    raw = await _read_bounded(request, limit)
    try:
        value = json.loads(raw, object_pairs_hook=_unique_keys, parse_constant=_no_constant)
    except _RepeatedKey as exc:
        raise invalid(f"{exc.key} appears twice in one object", exc.key) from None
    except (ValueError, RecursionError) as exc:  # JSONDecodeError and bad UTF-8 are ValueErrors
        raise HttpError(400, "bad_request", f"the body is not valid JSON: {_short(exc)}") from None
    if not isinstance(value, dict):
        raise invalid("the body must be a JSON object", None)
    return value


async def _read_bounded(request: Request, limit: int) -> bytes:
    """The body, refused as soon as it is known to pass ``limit``: from its declared
    ``Content-Length`` before reading, and from the bytes counted as they arrive (a
    chunked body declares nothing, and a declaration is only a claim)."""
    declared = request.headers.get("content-length")
    if declared is not None:
        if not declared.isdigit():
            raise HttpError(400, "bad_request", "Content-Length must be a number of bytes")
        if int(declared) > limit:
            raise _too_large(limit)
    received = bytearray()
    async with aclosing(request.stream()) as chunks:  # closed even when refused midway
        async for chunk in chunks:
            received += chunk
            if len(received) > limit:
                raise _too_large(limit)
    return bytes(received)


def _too_large(limit: int) -> HttpError:
    return HttpError(413, "payload_too_large", f"the body must be at most {limit} bytes")


class _RepeatedKey(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object, refused when it repeats a key (which value counts is ambiguous)."""
    found: dict[str, Any] = {}
    for key, value in pairs:
        if key in found:
            raise _RepeatedKey(key)
        found[key] = value
    return found


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")


def _short(error: BaseException) -> str:
    if isinstance(error, RecursionError):
        return "nested too deeply"
    return str(error).splitlines()[0][:200]


# ---------------------------------------------------------------------------- checking


def known(value: Mapping[str, Any], names: Sequence[str], where: str = "") -> None:
    """Refuse a field ``names`` does not list, naming it (``entries[1].colour``)."""
    for name in value:
        if name not in names:
            field = f"{where}{name}"
            raise invalid(f"{field} is not a field (expected: {', '.join(names)})", field)


def required(value: Mapping[str, Any], name: str, where: str = "") -> Any:
    if name not in value:
        raise invalid(f"{where}{name} is required", f"{where}{name}")
    return value[name]


def _string(value: object, field: str) -> str:
    if not isinstance(value, str):
        raise invalid(f"{field} must be a string", field)
    return value


def _list(value: object, field: str, what: str) -> list[Any]:
    if not isinstance(value, list):
        raise invalid(f"{field} must be a list of {what}", field)
    return value


def _object(value: object, field: str, names: Sequence[str]) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise invalid(f"{field} must be an object ({', '.join(names)})", field)
    known(value, names, f"{field}.")
    return value


# ------------------------------------------------------------------------------ prepare


def prepare_request(body: Mapping[str, Any]) -> glean.PrepareContextRequest:
    """The prepare request a ``POST /v1/context/prepare`` body spells. Scopes are
    checked to be strings (the token's grant is matched against them); every other
    value is left for glean to validate."""
    known(body, PREPARE_FIELDS)
    scope_id = _string(required(body, "scope_id"), "scope_id")
    references = _list(body.get("references", []), "references", "scope ids")
    for index, reference in enumerate(references):
        _string(reference, f"references[{index}]")
    assembly = body.get("assembly")
    excluded = _list(body.get("exclude", []), "exclude", "citation objects")
    return glean.PrepareContextRequest(
        scope_id=scope_id,
        query=required(body, "query"),
        max_bytes=body.get("max_bytes", DEFAULT_MAX_BYTES),
        assembly=None if assembly is None else _assembly(assembly),
        references=tuple(references),
        session_id=body.get("session_id"),
        detail=body.get("detail"),  # a tier, a {family: tier} object or null: glean checks
        exclude=tuple(_citation(item, f"exclude[{index}]") for index, item in enumerate(excluded)),
    )


def _assembly(value: object) -> glean.Assembly:
    assembly = _object(value, "assembly", ASSEMBLY_FIELDS)
    items = _list(required(assembly, "sections", "assembly."), "assembly.sections", "sections")
    sections = []
    for index, item in enumerate(items):
        field = f"assembly.sections[{index}]"
        section = _object(item, field, SECTION_FIELDS)
        family = required(section, "family", f"{field}.")
        sections.append(glean.Section(family, required(section, "limit", f"{field}.")))
    return glean.Assembly(tuple(sections))


def _citation(value: object, field: str) -> glean.Citation:
    cited = _object(value, field, CITATION_FIELDS)
    family = required(cited, "family", f"{field}.")
    scope = _string(required(cited, "scope", f"{field}."), f"{field}.scope")
    record_id = _one_of(cited, field, _ID_NAMES)
    version = _one_of(cited, field, _VERSION_NAMES)
    if record_id is not None:
        _string(record_id, f"{field}.id")
    if version is not None and (isinstance(version, bool) or not isinstance(version, int)):
        raise invalid(f"{field}.version must be an integer or null", f"{field}.version")
    return glean.Citation(family, scope, record_id, version)


def _one_of(cited: Mapping[str, Any], field: str, names: Sequence[str]) -> Any:
    present = [name for name in names if name in cited]
    if len(present) > 1:
        second = f"{field}.{present[1]}"
        raise invalid(f"{second} repeats {field}.{present[0]} (give one of them)", second)
    return cited[present[0]] if present else None


# ------------------------------------------------------------------------------- writes


def memory_batch(body: Mapping[str, Any]) -> tuple[str, list[glean.MemoryEntry]]:
    """The scope and the entries a ``POST /v1/memories`` body spells, every entry
    checked before any is written."""
    known(body, ADD_FIELDS)
    scope_id = _string(required(body, "scope_id"), "scope_id")
    items = _list(required(body, "entries"), "entries", "entry objects")
    return scope_id, [_entry(item, f"entries[{index}]") for index, item in enumerate(items)]


def _entry(value: object, field: str) -> glean.MemoryEntry:
    entry = _object(value, field, ENTRY_FIELDS)
    tags = _list(entry.get("tags", []), f"{field}.tags", "strings")
    return glean.MemoryEntry(
        text=required(entry, "text", f"{field}."),
        kind=entry.get("kind", "fact"),
        tags=tuple(tags),
        created_at=_moment(entry.get("created_at"), f"{field}.created_at"),
        thread=entry.get("thread"),
        key=entry.get("key"),
    )


def _moment(value: object, field: str) -> datetime | None:
    if value is None:
        return None
    expected = "an ISO 8601 date-time with a UTC offset, e.g. 2024-03-04T09:00:00+00:00"
    if not isinstance(value, str):
        raise invalid(f"{field} must be {expected}", field)
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise invalid(f"{field} must be {expected}, not {value!r}", field) from None
    if moment.utcoffset() is None:
        raise invalid(f"{field} must carry a UTC offset (e.g. +00:00 or Z)", field)
    return moment


# ---------------------------------------------------------------------------- responses


def ref_json(ref: glean.MemoryRef) -> dict[str, Any]:
    return {"scope_id": ref.scope_id, "entry_id": ref.entry_id, "version": ref.version}


def record_json(record: glean.MemoryRecord) -> dict[str, Any]:
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


def context_json(context: glean.PreparedContext) -> dict[str, Any]:
    return {
        "schema": context.schema,
        "status": context.status,
        "content": context.content,
        "content_bytes": context.content_bytes,
    }
