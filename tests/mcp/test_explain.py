"""prepare_context's ``explain`` option: the same pack, with its receipts and omissions in
the structured result (within the published output schema) and after the pack in the text."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import attrs
import pytest
from jsonschema import Draft202012Validator

import satchel
from satchel._wire import compact_id
from satchel.mcp import _schemas
from satchel.vocabulary import _receipts

from ._client import S, connected, pack_items, structured, text

if TYPE_CHECKING:
    import mcp.types as types
    from mcp import Client

pytestmark = pytest.mark.anyio

NOTES = [{"text": f"Kestrel dispatcher note {n}: restart it on port 74{n:02d}"} for n in range(6)]


async def prepare(client: Client, **arguments: Any) -> types.CallToolResult:
    return await client.call_tool(
        "prepare_context", {"scope_id": S, "query": "kestrel dispatcher", **arguments}
    )


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_explain_adds_receipts_and_omissions_to_the_same_pack(mode: str) -> None:
    """With explain, the pack's four fields are those without it; receipts cite the pack's
    items in order; the text is the pack, then the receipts and omissions as one JSON
    line; the structured result fits the published output schema."""
    async with connected(mode) as (client, _):
        await client.call_tool("add_memories", {"scope_id": S, "entries": NOTES})
        plain = structured(await prepare(client, max_bytes=600))
        result = await prepare(client, max_bytes=600, explain=True)
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
    explained = structured(result)
    assert {name: explained[name] for name in plain} == plain
    items = satchel.parse_context(explained["content"])
    receipts = explained["receipts"]
    # a receipt's id is the one the pack's line writes
    written = [item["citation"] for item in pack_items(explained["content"])]
    assert [r["citation"]["id"] for r in receipts] == [cited["id"] for cited in written]
    assert [satchel.Citation(**r["citation"]) for r in receipts] == [
        attrs.evolve(i.citation, id=compact_id(i.citation.id or "")) for i in items
    ]
    assert explained["omitted"]
    assert {omission["cause"] for omission in explained["omitted"]} == {"budget"}
    pack, why = text(result).rsplit("\n", 1)
    assert pack == plain["content"]
    assert json.loads(why) == {"receipts": receipts, "omitted": explained["omitted"]}
    output = listed["prepare_context"].output_schema
    assert output is not None
    Draft202012Validator(output).validate(explained)


async def test_explain_false_is_the_plain_prepare() -> None:
    """explain=false (the default) answers exactly the four fields and the pack as text."""
    async with connected() as (client, _):
        await client.call_tool("add_memories", {"scope_id": S, "entries": NOTES})
        plain = await prepare(client)
        off = await prepare(client, explain=False)
    assert structured(off) == structured(plain)
    assert list(structured(off)) == ["schema", "status", "content", "content_bytes"]
    assert text(off) == text(plain) == structured(plain)["content"]


async def test_explain_must_be_a_boolean() -> None:
    """The schema takes true or false only; anything else is a tool error naming it."""
    async with connected() as (client, _):
        result = await prepare(client, explain="yes")
    assert result.is_error
    assert text(result) == "invalid argument: explain must be true or false"


def test_the_schema_spells_satchels_channels_causes_and_bound() -> None:
    """The output schema's channel names, causes and omission bound are satchel's."""
    output = _schemas.PREPARE_CONTEXT_OUTPUT["properties"]
    omission = output["omitted"]["items"]["properties"]
    assert tuple(omission["channels"]["properties"]) == _receipts.CHANNELS
    assert tuple(omission["cause"]["enum"]) == _receipts.OMISSION_CAUSES
    assert output["omitted"]["maxItems"] == _receipts.MAX_OMISSIONS
    receipt = output["receipts"]["items"]["properties"]
    assert tuple(receipt["channels"]["properties"]) == _receipts.CHANNELS
    Draft202012Validator.check_schema(_schemas.PREPARE_CONTEXT_INPUT)
    Draft202012Validator.check_schema(_schemas.PREPARE_CONTEXT_OUTPUT)
