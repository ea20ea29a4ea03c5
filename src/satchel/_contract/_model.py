"""How the wire contract writes a shape: an object's fields, each a JSON Schema value.

A :class:`Shape` is a JSON object a request or an answer holds; a :class:`Field` one of
its members: its value when it is not null (a JSON Schema, whose parts may be shapes
again), whether it is required, whether it may be null, its default and what it means.
The servers spell the same shape their own way (the service names shapes as OpenAPI
components and leaves its answers open; the MCP tools inline them, close every object
and spell null as an ``anyOf`` branch): how is theirs, what is here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final, TypeAlias

import attrs

from ._bounds import NOT_BLANK

if TYPE_CHECKING:
    from collections.abc import Mapping

#: A JSON Schema (2020-12), any part of which may be a :class:`Shape`.
Schema: TypeAlias = dict[str, Any]


class _NoDefault:
    def __repr__(self) -> str:
        return "NO_DEFAULT"


#: A field that states no default (a required one, or one whose absence is its own
#: answer).
NO_DEFAULT: Final = _NoDefault()


@attrs.frozen
class Field:
    """One member of a shape.

    Attributes:
        value: its JSON Schema when it is not null.
        doc: what it means, to anyone who fills it in or reads it.
        required: a message must carry it.
        nullable: it may be null (null: nothing given, or nothing to say).
        default: what a request that leaves it out gets.
        http_doc: other words for the HTTP service's reader, where ``doc`` names an MCP
            tool or a command of its own.
    """

    value: Schema | Shape
    doc: str = ""
    required: bool = False
    nullable: bool = False
    default: object = NO_DEFAULT
    http_doc: str | None = None


@attrs.frozen
class Shape:
    """A JSON object: its fields in the order messages list them.

    Attributes:
        name: what the OpenAPI document calls it (None: it is written inline).
        fields: its members by name; no other member is accepted in a request.
        doc: what it is.
        answer: the server writes it (a client must ignore a member it does not know:
            the service may add one), rather than reads it.
    """

    name: str | None
    fields: Mapping[str, Field]
    doc: str = ""
    answer: bool = False

    @property
    def required(self) -> list[str]:
        return [name for name, field in self.fields.items() if field.required]


#: Any string (an answer's text, which satchel checked when it was written).
STRING: Final[Schema] = {"type": "string"}


def text(*, max_length: int | None = None) -> Schema:
    """A string of at least one character that is not whitespace (at most ``max_length``
    characters)."""
    schema: Schema = {"type": "string", "minLength": 1, "pattern": NOT_BLANK}
    if max_length is not None:
        schema["maxLength"] = max_length
    return schema


def described(schema: Schema, doc: str) -> Schema:
    """``schema`` saying what it means (an item of a list, a branch of a union)."""
    return {**schema, "description": doc}
