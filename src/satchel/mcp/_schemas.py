"""The JSON Schemas of the tools: what a host's model sees and fills in.

Every shape, bound and description comes from satchel's one wire contract
(``satchel._contract``, read from the constants its validation applies), so a model that
follows a schema is never refused; this module only spells the contract's shapes the MCP
way, and ``docs/mcp-tools.json`` is the generated copy a test keeps current. A call outside
its tool's schema is refused before satchel reads it (``_arguments``), naming the argument;
satchel then validates every call that fits.

The MCP spelling: every object is written inline and closed (``additionalProperties:
false``, answers included: a host validates a tool's structured answer against its output
schema), and a value that may be null is spelled ``anyOf: [{type: ...}, {type: null}]``,
never ``type: [..., "null"]``: hosts convert these schemas for models that read a subset of
JSON Schema, and the list form is the one they warn about (the MCP Inspector's portability
check) or drop. A nullable argument whose default is null carries its description inside
its non-null branch, which is what a model reads when it fills the argument in.
"""

from __future__ import annotations

from typing import Any, Final

from .. import _contract as contract
from .._contract import NO_DEFAULT, Field, Schema, Shape

__all__ = [
    "ADD_MEMORIES_INPUT",
    "ADD_MEMORIES_OUTPUT",
    "CITATION",
    "ENTRY",
    "ERASE_MEMORY_INPUT",
    "ERASE_MEMORY_OUTPUT",
    "FORGET_MEMORY_OUTPUT",
    "GET_MEMORY_OUTPUT",
    "LIST_MEMORIES_INPUT",
    "LIST_MEMORIES_OUTPUT",
    "MEMORY_REF_INPUT",
    "PREPARE_CONTEXT_INPUT",
    "PREPARE_CONTEXT_OUTPUT",
    "SECTION",
    "Schema",
    "schema_of",
]

_NULL: Final = {"type": "null"}


def schema_of(shape: Shape) -> Schema:
    """``shape`` as a tool's JSON Schema: an object closed to any other member."""
    schema: Schema = {
        "type": "object",
        "properties": {name: _member(field) for name, field in shape.fields.items()},
        "required": shape.required,
        "additionalProperties": False,
    }
    if shape.doc:
        schema["description"] = shape.doc
    return schema


def _member(field: Field) -> Schema:
    value = _inline(field.value)
    if field.nullable and field.default is None:
        return {"anyOf": [_described(value, field.doc), _NULL], "default": None}
    if field.nullable:
        return _described({"anyOf": [value, _NULL]}, field.doc)
    if field.default is not NO_DEFAULT:
        value = {**value, "default": field.default}
    return _described(value, field.doc)


def _inline(value: Any) -> Any:
    """``value`` with every shape in it written out."""
    if isinstance(value, Shape):
        return schema_of(value)
    if isinstance(value, dict):
        return {key: _inline(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_inline(item) for item in value]
    return value


def _described(schema: Schema, doc: str) -> Schema:
    return {**schema, "description": doc} if doc else schema


CITATION: Final = schema_of(contract.CITATION)
SECTION: Final = schema_of(contract.SECTION)
ENTRY: Final = schema_of(contract.MEMORY_ENTRY)

PREPARE_CONTEXT_INPUT: Final = schema_of(contract.PREPARE_ARGUMENTS)
PREPARE_CONTEXT_OUTPUT: Final = schema_of(contract.PREPARED)
ADD_MEMORIES_INPUT: Final = schema_of(contract.ADD_MEMORIES)
ADD_MEMORIES_OUTPUT: Final = schema_of(contract.ADDED_MEMORIES)
MEMORY_REF_INPUT: Final = schema_of(contract.MEMORY_REF)
GET_MEMORY_OUTPUT: Final = schema_of(contract.MEMORY_RECORD_FLAT)
FORGET_MEMORY_OUTPUT: Final = schema_of(contract.FORGOTTEN)
LIST_MEMORIES_INPUT: Final = schema_of(contract.LIST_RECORDS)
LIST_MEMORIES_OUTPUT: Final = schema_of(contract.RECORD_PAGE)
#: ``erase_memory`` (served with ``satchel mcp --allow-erase`` only): an entry, no version,
#: since an erase takes every version.
ERASE_MEMORY_INPUT: Final = schema_of(contract.ENTRY)
ERASE_MEMORY_OUTPUT: Final = schema_of(contract.ERASED_VERSIONS)
