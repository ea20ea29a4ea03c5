"""The tools' JSON Schemas: what tools/list shows, bounds equal to satchel's validation, and
a schema and satchel that agree on which arguments are acceptable."""

from __future__ import annotations

from typing import Any

import pytest
from jsonschema import Draft202012Validator
from mcp import Client

import satchel
from satchel import _wire
from satchel.mcp import _schemas, create_server
from satchel.vocabulary import _families, _requests

from ._client import TOOLS, S, connected, listed_types, text

pytestmark = pytest.mark.anyio


def properties(schema: dict[str, Any]) -> dict[str, Any]:
    props: dict[str, Any] = schema["properties"]
    return props


def bare(schema: dict[str, Any]) -> dict[str, Any]:
    """The non-null branch of a nullable schema."""
    if "anyOf" in schema and {"type": "null"} in schema["anyOf"]:
        [branch] = [s for s in schema["anyOf"] if s != {"type": "null"}]
        return dict(branch)
    return schema


async def test_tools_list_shows_five_tools_with_their_schemas() -> None:
    """tools/list names the five tools, in order, each with its input and output schema,
    the required arguments, descriptions and hints."""
    async with connected() as (client, _):
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert tuple(listed) == TOOLS
    required = {name: tool.input_schema["required"] for name, tool in listed.items()}
    assert required == {
        "prepare_context": ["scope_id", "query"],
        "add_memories": ["scope_id", "entries"],
        "get_memory": ["scope_id", "entry_id", "version"],
        "forget_memory": ["scope_id", "entry_id", "version"],
        "list_memories": ["scope_id"],
    }
    for tool in listed.values():
        assert tool.description
        assert tool.title
        assert tool.input_schema["type"] == "object"
        assert tool.input_schema["additionalProperties"] is False
        assert tool.output_schema is not None
        assert tool.output_schema["type"] == "object"
        for name, prop in properties(tool.input_schema).items():
            assert bare(prop).get("description") or prop.get("description"), name
    assert listed["prepare_context"].annotations is not None
    assert listed["prepare_context"].annotations.read_only_hint is True
    assert listed["get_memory"].annotations is not None
    assert listed["get_memory"].annotations.read_only_hint is True
    assert listed["forget_memory"].annotations is not None
    assert listed["forget_memory"].annotations.destructive_hint is True
    assert listed["list_memories"].annotations is not None
    assert listed["list_memories"].annotations.read_only_hint is True
    listing = properties(listed["list_memories"].input_schema)
    assert (listing["limit"]["minimum"], listing["limit"]["maximum"]) == (1, 1000)
    assert listing["limit"]["default"] == 100
    prepare = properties(listed["prepare_context"].input_schema)
    assert prepare["query"]["minLength"] == 1
    assert prepare["query"]["maxLength"] == 8192
    assert (prepare["max_bytes"]["minimum"], prepare["max_bytes"]["maximum"]) == (512, 32768)
    assert prepare["max_bytes"]["default"] == 8000
    assert prepare["scope_id"]["maxLength"] == 256
    assert prepare["references"]["maxItems"] == 32
    output = listed["prepare_context"].output_schema
    assert output is not None
    assert output["required"] == ["schema", "status", "content", "content_bytes"]


def test_bounds_are_satchel_validation_bounds() -> None:
    """Every bound a schema states is the constant satchel's validation applies."""
    prepare = properties(_schemas.PREPARE_CONTEXT_INPUT)
    assert prepare["max_bytes"]["minimum"] == _requests.MIN_MAX_BYTES
    assert prepare["max_bytes"]["maximum"] == _requests.MAX_MAX_BYTES
    assert prepare["max_bytes"]["default"] == _requests.DEFAULT_MAX_BYTES
    assert prepare["query"]["maxLength"] == _requests.MAX_QUERY_CHARS
    assert prepare["scope_id"]["maxLength"] == _requests.MAX_SCOPE_CHARS
    assert prepare["references"]["maxItems"] == _requests.MAX_REFERENCES
    sections = bare(prepare["sections"])
    assert sections["maxItems"] == len(_families.FAMILIES)
    assert str(_requests.MAX_SECTION_LIMIT) in sections["description"]
    section = properties(sections["items"])
    assert section["family"]["enum"] == list(_families.FAMILIES)
    limits = {family: _families.rules(family).max_section_limit for family in _families.FAMILIES}
    assert section["limit"]["maximum"] == max(limits.values())
    for family, limit in limits.items():
        if limit < max(limits.values()):
            assert f"{family}: 1..{limit}" in section["limit"]["description"]
    detail = bare(prepare["detail"])["anyOf"]
    assert detail[0]["enum"] == list(_families.TIERS)
    assert tuple(properties(detail[1])) == _families.FAMILIES
    output = properties(_schemas.PREPARE_CONTEXT_OUTPUT)
    assert output["schema"]["const"] == _requests.SCHEMA
    key = bare(properties(_schemas.ENTRY)["key"])
    assert key["maxLength"] == _requests.MAX_KEY_CHARS
    assert properties(_schemas.MEMORY_REF_INPUT)["version"]["maximum"] == _requests.MAX_VERSION


ALL_SCHEMAS = [
    _schemas.PREPARE_CONTEXT_INPUT,
    _schemas.PREPARE_CONTEXT_OUTPUT,
    _schemas.ADD_MEMORIES_INPUT,
    _schemas.ADD_MEMORIES_OUTPUT,
    _schemas.MEMORY_REF_INPUT,
    _schemas.GET_MEMORY_OUTPUT,
    _schemas.FORGET_MEMORY_OUTPUT,
]


async def test_every_union_with_null_is_spelled_portably() -> None:
    """No tool schema spells a union as ``type: [T, "null"]`` (the MCP Inspector warns
    of it, and hosts' schema converters drop it): null is an ``anyOf`` branch."""
    async with (
        satchel.open_runtime(embedder=satchel.HashingEmbedder()) as runtime,
        Client(create_server(runtime, allow_erase=True)) as client,
    ):
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    schemas: dict[str, object] = {
        f"{name} input": tool.input_schema for name, tool in tools.items()
    }
    schemas |= {f"{name} output": tool.output_schema for name, tool in tools.items()}
    assert len(tools) == 6
    unions = {name: listed_types(schema) for name, schema in schemas.items()}
    assert {name: where for name, where in unions.items() if where} == {}
    output = tools["prepare_context"].output_schema
    assert output is not None
    assert properties(output)["content"]["anyOf"][1] == {"type": "null"}


@pytest.mark.parametrize("schema", ALL_SCHEMAS)
def test_every_schema_is_valid_json_schema(schema: dict[str, Any]) -> None:
    """Each schema is a valid JSON Schema (2020-12) with an object at the root."""
    Draft202012Validator.check_schema(schema)
    assert schema["type"] == "object"


ENTRY = {"text": "Backups run nightly at 02:00 UTC"}
REF = {"scope_id": S, "entry_id": "e1", "version": 1}

#: (tool, arguments, whether the schema and satchel both accept them). get_memory names
#: an absent entry: "not found" is an accepted call.
AGREEMENT = [
    ("prepare_context", {"scope_id": S, "query": "q" * 8192}, True),
    ("prepare_context", {"scope_id": S, "query": "q" * 8193}, False),
    ("prepare_context", {"scope_id": S, "query": ""}, False),
    ("prepare_context", {"scope_id": S, "query": "   "}, False),
    ("prepare_context", {"scope_id": S, "query": "q", "max_bytes": 512}, True),
    ("prepare_context", {"scope_id": S, "query": "q", "max_bytes": 32768}, True),
    ("prepare_context", {"scope_id": S, "query": "q", "max_bytes": 511}, False),
    ("prepare_context", {"scope_id": S, "query": "q", "max_bytes": 32769}, False),
    ("prepare_context", {"scope_id": S, "query": "q", "max_bytes": 800.5}, False),
    ("prepare_context", {"scope_id": "s" * 256, "query": "q"}, True),
    ("prepare_context", {"scope_id": "s" * 257, "query": "q"}, False),
    ("prepare_context", {"scope_id": S, "query": "q", "references": ["r"] * 32}, True),
    ("prepare_context", {"scope_id": S, "query": "q", "references": ["r"] * 33}, False),
    ("prepare_context", {"scope_id": S, "query": "q", "references": "r"}, False),
    ("prepare_context", {"scope_id": S, "query": "q", "session_id": None}, True),
    ("prepare_context", {"scope_id": S, "query": "q", "session_id": ""}, False),
    ("prepare_context", {"scope_id": S, "query": "q", "detail": "uri"}, True),
    ("prepare_context", {"scope_id": S, "query": "q", "detail": {"resource": "full"}}, True),
    ("prepare_context", {"scope_id": S, "query": "q", "detail": "deep"}, False),
    ("prepare_context", {"scope_id": S, "query": "q", "detail": {"memo": "full"}}, False),
    (
        "prepare_context",
        {"scope_id": S, "query": "q", "sections": [{"family": "experience", "limit": 2}]},
        True,
    ),
    (
        "prepare_context",
        {"scope_id": S, "query": "q", "sections": [{"family": "memory", "limit": 9}]},
        False,
    ),
    ("prepare_context", {"scope_id": S, "query": "q", "sections": []}, False),
    ("prepare_context", {"scope_id": S, "query": "q", "sections": None}, True),
    (
        "prepare_context",
        {"scope_id": S, "query": "q", "exclude": [{"family": "profile", "scope": S}]},
        True,
    ),
    (
        "prepare_context",
        {"scope_id": S, "query": "q", "exclude": [{"family": "note", "scope": S}]},
        False,
    ),
    ("prepare_context", {"scope_id": S, "query": "q", "maxBytes": 600}, False),
    ("prepare_context", {"query": "q"}, False),
    ("add_memories", {"scope_id": S, "entries": [ENTRY]}, True),
    ("add_memories", {"scope_id": S, "entries": []}, True),
    ("add_memories", {"scope_id": S, "entries": [{"text": ""}]}, False),
    ("add_memories", {"scope_id": S, "entries": [{"kind": "fact"}]}, False),
    ("add_memories", {"scope_id": S, "entries": [{**ENTRY, "tags": ["a", "b"]}]}, True),
    ("add_memories", {"scope_id": S, "entries": [{**ENTRY, "tags": "a"}]}, False),
    ("add_memories", {"scope_id": S, "entries": [{**ENTRY, "key": "k" * 512}]}, True),
    ("add_memories", {"scope_id": S, "entries": [{**ENTRY, "key": "k" * 513}]}, False),
    ("add_memories", {"scope_id": S, "entries": [{**ENTRY, "thread": None}]}, True),
    ("add_memories", {"scope_id": S, "entries": [{**ENTRY, "colour": "red"}]}, False),
    (
        "add_memories",
        {"scope_id": S, "entries": [{**ENTRY, "created_at": "2024-03-04T09:00:00Z"}]},
        True,
    ),
    ("get_memory", REF, True),
    ("get_memory", {**REF, "version": 0}, False),
    ("get_memory", {**REF, "version": 2**63 - 1}, True),
    ("get_memory", {**REF, "version": 2**63}, False),
    ("get_memory", {**REF, "version": "1"}, False),
    ("get_memory", {**REF, "entry_id": ""}, False),
    ("forget_memory", {**REF, "scope_id": ""}, False),
]


@pytest.mark.parametrize(("tool", "arguments", "accepted"), AGREEMENT)
async def test_the_schema_and_satchel_agree(
    tool: str, arguments: dict[str, Any], accepted: bool
) -> None:
    """An argument the schema accepts, satchel accepts; one the schema refuses, satchel refuses
    with a tool error naming it (checked call by call at each bound)."""
    async with connected() as (client, _):
        listed = {t.name: t for t in (await client.list_tools()).tools}
        valid = Draft202012Validator(listed[tool].input_schema).is_valid(arguments)
        result = await client.call_tool(tool, arguments)
    assert valid is accepted
    refused = result.is_error and text(result).startswith("invalid argument:")
    assert refused is not accepted, text(result)


def test_nested_objects_have_the_fields_the_shared_reader_accepts() -> None:
    """An entry, a section and a citation list in their schemas exactly the fields
    ``satchel._wire`` reads (the HTTP service reads the same ones), so no field is
    advertised and refused, or accepted unadvertised."""
    assert tuple(properties(_schemas.ENTRY)) == _wire.ENTRY_FIELDS
    assert tuple(properties(_schemas.SECTION)) == _wire.SECTION_FIELDS
    assert tuple(properties(_schemas.CITATION)) == _wire.CITATION_FIELDS
