"""A tool call's JSON arguments, held against the tool's schema and turned into satchel's values.

Every call passes two checks before a tool reads it: each string in it, name or value, is
Unicode text (a lone surrogate cannot be stored, and the answer must be writable as
UTF-8), and the arguments fit the tool's published input schema (``jsonschema``, which
the MCP SDK itself depends on). Only arguments that fit reach a tool, so a tool never
meets a shape its schema rules out (a number for an entry id, a string for a version).

When the schema refuses a call, the tool's own reading of the arguments (pure: it reads
and validates, stores nothing) is asked for satchel's words, so a refusal says what
satchel and ``satchel serve`` say (``max_bytes must be in 512..32768``); when satchel
has none, the schema's refusal is worded here. Either way the message names the argument
as the tool's schema spells it, and is a :class:`satchel.InvalidRequestError`.
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING, Any, Final, TypeVar

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError, best_match

import satchel

from .. import _wire as wire
from .._contract import NOT_BLANK

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping

    from ._schemas import Schema

T = TypeVar("T")

#: The prefixes satchel's messages give a field, and the argument the tool calls it.
_RENAMED: Final = (("ref.", ""), ("assembly.sections", "sections"))
#: How a refusal names a JSON type.
_TYPE_WORDS: Final = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "true or false",
    "array": "a list",
    "object": "an object",
    "null": "null",
}


def validator(schema: Schema) -> Draft202012Validator:
    """The validator of a tool's input schema (the schemas are JSON Schema 2020-12)."""
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def read(
    given: Mapping[str, Any] | None,
    schema: Draft202012Validator,
    reading: Callable[[dict[str, Any]], T],
) -> T:
    """``reading`` of the arguments, once they are Unicode text and fit ``schema``.

    Raises:
        satchel.InvalidRequestError: naming the first argument that does not.
    """
    arguments = dict(given or {})
    surrogate = lone_surrogate(arguments)
    if surrogate is not None:
        raise satchel.InvalidRequestError(
            f"{surrogate} must be valid Unicode text (it holds a lone surrogate)"
        )
    error = best_match(schema.iter_errors(arguments))
    if error is None:
        return reading(arguments)
    try:
        reading(arguments)
    except satchel.InvalidRequestError:
        raise  # satchel refuses it too, in its own words
    except Exception:  # refused already: a reading that trips over it has no words for it
        pass
    raise satchel.InvalidRequestError(refusal(error))


def renamed(error: satchel.InvalidRequestError) -> str:
    """satchel's message, naming the field as the tool's schema does (``ref.version`` is the
    ``version`` argument; ``assembly.sections[0]`` is ``sections[0]``)."""
    message = str(error)
    for prefix, argument in _RENAMED:
        if message.startswith(prefix):
            return argument + message.removeprefix(prefix)
    return message


# ------------------------------------------------------------------------ unicode text


def lone_surrogate(value: object) -> str | None:
    """Where a string of ``value`` (a JSON value) holding a lone surrogate is, as a field
    (``entries[0].text``; the shallowest first), or None when every name and string is
    Unicode text.

    Walks without recursion and keeps one step per value, not a path: the nesting of a
    hostile value is the client's choice.
    """
    steps: list[tuple[int, str | int]] = []  # each value's parent (an index here) and step
    pending: deque[tuple[int, object]] = deque([(-1, value)])
    while pending:
        at, item = pending.popleft()
        if isinstance(item, str) and not _is_text(item):
            return field(_path(steps, at))
        inner: Iterable[tuple[str | int, object]] = ()
        if isinstance(item, dict):
            inner = item.items()
        elif isinstance(item, list):
            inner = enumerate(item)
        for step, child in inner:
            steps.append((at, step))
            if isinstance(step, str) and not _is_text(step):
                return field(_path(steps, len(steps) - 1))
            pending.append((len(steps) - 1, child))
    return None


def _path(steps: list[tuple[int, str | int]], at: int) -> list[str | int]:
    path: list[str | int] = []
    while at >= 0:
        at, step = steps[at]
        path.append(step)
    return path[::-1]


def _is_text(value: str) -> bool:
    if value.isascii():
        return True
    try:
        value.encode()
    except UnicodeEncodeError:
        return False
    return True


def field(path: Iterable[str | int]) -> str:
    """A JSON path as satchel names a field: ``entries[0].text``; a name that is not
    Unicode text is written with backslash escapes, so the answer stays writable."""
    where = ""
    for step in path:
        if isinstance(step, int):
            where += f"[{step}]"
        else:
            name = step if _is_text(step) else step.encode("utf-8", "backslashreplace").decode()
            where += f".{name}" if where else name
    return where


# --------------------------------------------------------------------- schema refusals


def refusal(error: ValidationError) -> str:
    """What a schema's refusal says, naming the argument (``entries[1].kind must be a
    non-empty string``)."""
    where = field(error.absolute_path)
    keyword, schema, instance = error.validator, error.schema, error.instance
    if keyword == "anyOf":
        # A branch of the right type that still refused says why; else name the types.
        fitting = [inner for inner in error.context or () if inner.validator != "type"]
        if fitting:
            return refusal(best_match(fitting))
    if keyword in ("type", "enum", "anyOf"):
        return f"{where} must be {_expected(schema)}"
    if keyword == "required":
        missing = next(name for name in error.validator_value if name not in instance)
        return f"{_inside(where)}{missing} is required"
    if keyword == "additionalProperties":
        known = list(schema.get("properties", {}))
        extra = next(name for name in instance if name not in known)
        what = "a field" if where else "an argument"
        return f"{_inside(where)}{extra} is not {what} (expected: {', '.join(known)})"
    return f"{where} must be {_bounds(keyword, schema)}"


def _inside(where: str) -> str:
    return f"{where}." if where else ""


def _expected(schema: Schema) -> str:
    """What ``schema`` accepts, in words: ``a string or null``, ``one of uri, full``."""
    if "enum" in schema:
        return "one of " + ", ".join(str(value) for value in schema["enum"])
    if "anyOf" in schema:
        return " or ".join(_expected(branch) for branch in schema["anyOf"])
    types = schema.get("type", [])
    names = [types] if isinstance(types, str) else types
    return " or ".join(_TYPE_WORDS.get(name, name) for name in names) or "valid"


def _bounds(keyword: str, schema: Schema) -> str:
    """What a bound (``minimum``, ``maxLength``, ``pattern``, ...) asks, in words."""
    bound = schema[keyword]
    if keyword == "pattern":
        return "a non-empty string" if bound == NOT_BLANK else f"a string matching {bound}"
    if keyword == "minLength":
        return "a non-empty string" if bound == 1 else f"at least {bound} characters"
    if keyword == "maxLength":
        return f"at most {bound} characters"
    if keyword in ("minItems", "maxItems"):
        items = "item" if bound == 1 else "items"
        return f"a list of at {'least' if keyword == 'minItems' else 'most'} {bound} {items}"
    if keyword in ("minimum", "maximum") and {"minimum", "maximum"} <= schema.keys():
        kind = "an integer " if schema.get("type") == "integer" else ""
        return f"{kind}in {_number(schema['minimum'])}..{_number(schema['maximum'])}"
    if keyword in ("minimum", "maximum"):
        return f"at {'least' if keyword == 'minimum' else 'most'} {_number(bound)}"
    return f"valid under its schema ({keyword}: {bound!r})"


def _number(value: object) -> str:
    """A bound as satchel writes it: the largest stored version is ``2**63-1``."""
    if isinstance(value, int) and value > 2**32 and (value + 1).bit_count() == 1:
        return f"2**{value.bit_length()}-1"
    return str(value)


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
    entry_id = wire.full_id(wire.as_string(args["entry_id"], "entry_id"))
    return satchel.MemoryRef(args["scope_id"], entry_id, args["version"])
