"""A tool call's JSON arguments, turned into satchel's values.

The top-level arguments are checked against the tool's schema here; every value inside
them is read as the HTTP service reads it (``satchel._wire``), then validated by satchel
itself, whose :class:`satchel.InvalidRequestError` names the field. Errors raised here
are the same error, naming the argument as the tool's schema spells it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import satchel

from .. import _wire as wire

if TYPE_CHECKING:
    from collections.abc import Mapping

    from ._schemas import Schema

#: The prefixes satchel's messages give a field, and the argument the tool calls it.
_RENAMED = (("ref.", ""), ("assembly.sections", "sections"))


def renamed(error: satchel.InvalidRequestError) -> str:
    """satchel's message, naming the field as the tool's schema does (``ref.version`` is the
    ``version`` argument; ``assembly.sections[0]`` is ``sections[0]``)."""
    message = str(error)
    for prefix, argument in _RENAMED:
        if message.startswith(prefix):
            return argument + message.removeprefix(prefix)
    return message


def checked(arguments: Mapping[str, Any] | None, schema: Schema) -> dict[str, Any]:
    """The arguments, refused when one is unknown to ``schema`` or a required one is absent."""
    given = dict(arguments or {})
    known = schema["properties"]
    for name in given:
        if name not in known:
            raise satchel.InvalidRequestError(
                f"{name} is not an argument (expected: {', '.join(known)})"
            )
    for name in schema["required"]:
        if name not in given:
            raise satchel.InvalidRequestError(f"{name} is required")
    return given


# ------------------------------------------------------------------------------ values


def prepare_request(args: Mapping[str, Any]) -> satchel.PrepareContextRequest:
    """The prepare request the ``prepare_context`` arguments spell (``sections`` is the
    assembly's list, at the top level)."""
    sections = args.get("sections")
    if sections == []:
        raise satchel.InvalidRequestError("sections must name at least one family, or be null")
    assembly = None if sections is None else wire.assembly(sections, "sections")
    return wire.prepare_request(args, assembly)


def memory_entries(value: object) -> list[satchel.MemoryEntry]:
    """The entries of an ``add_memories`` call."""
    items = wire.as_list(value, "entries", "entry objects")
    return [wire.memory_entry(item, f"entries[{index}]") for index, item in enumerate(items)]


def memory_ref(args: Mapping[str, Any]) -> satchel.MemoryRef:
    """The exact memory version a ``get_memory`` or ``forget_memory`` call names."""
    return satchel.MemoryRef(args["scope_id"], wire.full_id(args["entry_id"]), args["version"])
