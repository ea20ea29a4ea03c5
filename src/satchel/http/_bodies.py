"""Request bodies: read within a byte limit, parsed as JSON, turned into satchel's values.

Here: the media type, the size, the syntax and the top-level fields. The values inside
are read as the MCP server reads them (``satchel._wire``: an unknown or missing field, a
string where a list belongs, a date that does not parse), then validated by satchel
itself. Every refusal names the field as the body spells it (``max_bytes``,
``entries[2].created_at``, ``assembly.sections[0].limit``) and becomes a 422.
"""

from __future__ import annotations

import json
from contextlib import aclosing
from typing import TYPE_CHECKING, Any, Final

import satchel

from .. import _contract as contract
from .. import _wire as wire
from ._errors import HttpError, invalid

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from starlette.requests import Request

#: The fields of each body, in the order messages list them (the wire contract's).
PREPARE_FIELDS: Final = tuple(contract.PREPARE_REQUEST.fields)
ADD_FIELDS: Final = tuple(contract.ADD_MEMORIES.fields)
UPDATE_FIELDS: Final = tuple(contract.UPDATE_MEMORY.fields)
PROFILE_FIELDS: Final = tuple(contract.SET_PROFILE.fields)
ERASE_FIELDS: Final = tuple(contract.ERASE.fields)
#: Each batch route's fields, by the Runtime argument it carries.
BATCH_FIELDS: Final = {
    "experiences": tuple(contract.ADD_EXPERIENCES.fields),
    "topics": tuple(contract.ADD_TOPIC_MEMORIES.fields),
    "resources": tuple(contract.ADD_RESOURCES.fields),
}


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
        # Decoded here, not by json.loads: given bytes, it would also read UTF-16 and
        # UTF-32, and the service takes UTF-8 only (a leading BOM is allowed, as before).
        text = raw.decode("utf-8-sig")
        value = json.loads(text, object_pairs_hook=_unique_keys, parse_constant=_no_constant)
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


# ---------------------------------------------------------------------------- bodies


def known(value: Mapping[str, Any], names: Sequence[str]) -> None:
    """Refuse a top-level field ``names`` does not list, naming it."""
    for name in value:
        if name not in names:
            raise invalid(f"{name} is not a field (expected: {', '.join(names)})", name)


def prepare_request(body: Mapping[str, Any]) -> satchel.PrepareContextRequest:
    """The prepare request a ``POST /v1/context/prepare`` body spells."""
    known(body, PREPARE_FIELDS)
    value = body.get("assembly")
    if value is None:
        return wire.prepare_request(body, None)
    assembly = wire.as_object(value, "assembly", ("sections",))
    sections = wire.required(assembly, "sections", "assembly.")
    return wire.prepare_request(body, wire.assembly(sections, "assembly.sections"))


def memory_batch(body: Mapping[str, Any]) -> tuple[str, list[satchel.MemoryEntry]]:
    """The scope and the entries a ``POST /v1/memories`` body spells, every entry
    checked before any is written."""
    known(body, ADD_FIELDS)
    scope_id = wire.as_string(wire.required(body, "scope_id"), "scope_id")
    items = wire.as_list(wire.required(body, "entries"), "entries", "entry objects")
    return scope_id, [
        wire.memory_entry(item, f"entries[{index}]") for index, item in enumerate(items)
    ]


def updated_entry(body: Mapping[str, Any]) -> satchel.MemoryEntry:
    """The entry a ``PUT /v1/memories/{scope}/{entry_id}`` body spells."""
    known(body, UPDATE_FIELDS)
    return wire.memory_entry(wire.required(body, "entry"), "entry")


def record_batch(argument: str, body: Mapping[str, Any]) -> tuple[str, list[Any]]:
    """The scope and the records a ``POST /v1/experiences`` (``topic-memories``,
    ``resources``) body spells, under the Runtime argument's name ``argument``."""
    known(body, BATCH_FIELDS[argument])
    scope_id = wire.as_string(wire.required(body, "scope_id"), "scope_id")
    items = wire.as_list(wire.required(body, argument), argument, "record objects")
    kind = wire.RECORD_TYPES[argument]
    return scope_id, [
        wire.family_record(kind, item, f"{argument}[{index}]") for index, item in enumerate(items)
    ]


def profile(body: Mapping[str, Any]) -> satchel.Profile:
    """The profile a ``PUT /v1/profiles/{scope}`` body spells."""
    known(body, PROFILE_FIELDS)
    return wire.family_record(satchel.Profile, wire.required(body, "profile"), "profile")


def erase_target(body: Mapping[str, Any]) -> satchel.Citation:
    """The citation a ``POST /v1/erase`` body names."""
    known(body, ERASE_FIELDS)
    return wire.citation(wire.required(body, "target"), "target")
