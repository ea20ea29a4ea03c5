"""A tool call's JSON arguments, turned into glean's values.

Only the shape JSON can get wrong is checked here (an unknown or missing argument, a
string where a list belongs, a date that does not parse); every value is then validated
by glean itself, whose :class:`glean.InvalidRequestError` names the field. Errors raised
here are the same error, naming the argument as the tool's schema spells it.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

import glean

from ._schemas import CITATION, DEFAULT_MAX_BYTES, ENTRY, SECTION

if TYPE_CHECKING:
    from collections.abc import Mapping

    from ._schemas import Schema

#: The prefixes glean's messages give a field, and the argument the tool calls it.
_RENAMED = (("ref.", ""), ("assembly.sections", "sections"))


def renamed(error: glean.InvalidRequestError) -> str:
    """glean's message, naming the field as the tool's schema does (``ref.version`` is the
    ``version`` argument; ``assembly.sections[0]`` is ``sections[0]``)."""
    message = str(error)
    for prefix, argument in _RENAMED:
        if message.startswith(prefix):
            return argument + message.removeprefix(prefix)
    return message


def checked(arguments: Mapping[str, Any] | None, schema: Schema) -> dict[str, Any]:
    """The arguments, refused when one is unknown to ``schema`` or a required one is absent."""
    given = dict(arguments or {})
    _known_fields(given, schema, "")
    return given


def _known_fields(value: Mapping[str, Any], schema: Schema, where: str) -> None:
    known = schema["properties"]
    for name in value:
        if name not in known:
            what = "a field" if where else "an argument"
            raise glean.InvalidRequestError(
                f"{where}{name} is not {what} (expected: {', '.join(known)})"
            )
    for name in schema["required"]:
        if name not in value:
            raise glean.InvalidRequestError(f"{where}{name} is required")


def _list(value: object, field: str, what: str) -> list[Any]:
    if not isinstance(value, list):
        raise glean.InvalidRequestError(f"{field} must be a list of {what}")
    return value


def _record(value: object, field: str, schema: Schema, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise glean.InvalidRequestError(f"{field} must be an object ({what})")
    _known_fields(value, schema, f"{field}.")
    return value


# ------------------------------------------------------------------------------ prepare


def prepare_request(args: Mapping[str, Any]) -> glean.PrepareContextRequest:
    """The prepare request the ``prepare_context`` arguments spell."""
    sections = args.get("sections")
    return glean.PrepareContextRequest(
        scope_id=args["scope_id"],
        query=args["query"],
        max_bytes=args.get("max_bytes", DEFAULT_MAX_BYTES),
        references=tuple(_list(args.get("references", []), "references", "scope ids")),
        session_id=args.get("session_id"),
        assembly=None if sections is None else _assembly(sections),
        detail=args.get("detail"),  # a tier, a {family: tier} object or null: glean checks
        exclude=tuple(
            _citation(item, f"exclude[{index}]")
            for index, item in enumerate(
                _list(args.get("exclude", []), "exclude", "citation objects")
            )
        ),
    )


def _assembly(value: object) -> glean.Assembly:
    items = _list(value, "sections", "{family, limit} objects")
    if not items:
        raise glean.InvalidRequestError("sections must name at least one family, or be null")
    sections = []
    for index, item in enumerate(items):
        section = _record(item, f"sections[{index}]", SECTION, "{family, limit}")
        sections.append(glean.Section(section["family"], section["limit"]))
    return glean.Assembly(tuple(sections))


def _citation(value: object, field: str) -> glean.Citation:
    """A citation as the schema spells it ({family, scope, id, version}) or as a pack
    does (``entry_id``, ``uri``, ``revision`` instead of ``id`` and ``version``)."""
    cited = _record(value, field, CITATION, "a citation: family, scope, id, version")
    record_id = _one_of(cited, field, ("id", "entry_id", "uri"))
    version = _one_of(cited, field, ("version", "revision"))
    scope = cited["scope"]
    if not isinstance(scope, str):
        raise glean.InvalidRequestError(f"{field}.scope must be a string")
    if record_id is not None and not isinstance(record_id, str):
        raise glean.InvalidRequestError(f"{field}.id must be a string or null")
    if version is not None and (isinstance(version, bool) or not isinstance(version, int)):
        raise glean.InvalidRequestError(f"{field}.version must be an integer or null")
    return glean.Citation(cited["family"], scope, record_id, version)


def _one_of(cited: Mapping[str, Any], field: str, names: tuple[str, ...]) -> Any:
    present = [name for name in names if name in cited]
    if len(present) > 1:
        raise glean.InvalidRequestError(f"{field} gives both {present[0]} and {present[1]}")
    return cited[present[0]] if present else None


# ------------------------------------------------------------------------------- writes


def memory_entries(value: object) -> list[glean.MemoryEntry]:
    """The entries of an ``add_memories`` call."""
    entries = []
    for index, item in enumerate(_list(value, "entries", "entry objects")):
        field = f"entries[{index}]"
        entry = _record(item, field, ENTRY, "text, kind, tags, created_at, thread, key")
        tags = _list(entry.get("tags", []), f"{field}.tags", "strings")
        entries.append(
            glean.MemoryEntry(
                text=entry["text"],
                kind=entry.get("kind", "fact"),
                tags=tuple(tags),
                created_at=_moment(entry.get("created_at"), f"{field}.created_at"),
                thread=entry.get("thread"),
                key=entry.get("key"),
            )
        )
    return entries


def _moment(value: object, field: str) -> datetime | None:
    if value is None:
        return None
    expected = "an ISO-8601 date-time with a UTC offset, e.g. 2024-03-04T09:00:00+00:00"
    if not isinstance(value, str):
        raise glean.InvalidRequestError(f"{field} must be {expected}")
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise glean.InvalidRequestError(f"{field} must be {expected}, not {value!r}") from None
    if moment.utcoffset() is None:
        raise glean.InvalidRequestError(f"{field} must carry a UTC offset (e.g. +00:00 or Z)")
    return moment


def memory_ref(args: Mapping[str, Any]) -> glean.MemoryRef:
    """The exact memory version a ``get_memory`` or ``forget_memory`` call names."""
    return glean.MemoryRef(args["scope_id"], args["entry_id"], args["version"])
