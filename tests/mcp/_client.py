"""What the MCP tests share: reading tool results, and an in-process client."""

from __future__ import annotations

import json
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, Final

import mcp.types as types
from mcp import Client

import satchel
from satchel.mcp import create_server

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

S: Final = "project:demo"
TOOLS: Final = ("prepare_context", "add_memories", "get_memory", "forget_memory", "list_memories")


def text(result: types.CallToolResult) -> str:
    """The tool result's one text block."""
    [block] = result.content
    assert isinstance(block, types.TextContent)
    return block.text


def structured(result: types.CallToolResult) -> dict[str, Any]:
    """The tool result's structured content, which must be a JSON object."""
    assert not result.is_error, text(result)
    content = result.structured_content
    assert isinstance(content, dict)
    return content


def tool_error(result: types.CallToolResult) -> str:
    """The message of a tool error (``isError``); fails on a success."""
    assert result.is_error, f"expected a tool error, got {result.structured_content}"
    assert result.structured_content is None
    return text(result)


def listed_types(schema: object, where: str = "") -> list[str]:
    """Where ``schema`` (any JSON value) spells a union as a list of types
    (``"type": ["string", "null"]``), which hosts' schema converters do not carry over."""
    found: list[str] = []
    if isinstance(schema, dict):
        if isinstance(schema.get("type"), list):
            found.append(where or "(root)")
        for name, inner in schema.items():
            found += listed_types(inner, f"{where}.{name}" if where else name)
    elif isinstance(schema, list):
        for index, inner in enumerate(schema):
            found += listed_types(inner, f"{where}[{index}]")
    return found


def pack_items(content: str) -> list[dict[str, Any]]:
    """The memory items of a pack as a host that is not Python reads them off its lines:
    each item's citation is its group line's family and scope, its id as written and
    its version (1 unless written), with its time and text beside."""
    lines = content.split("\n")
    inner = lines[
        lines.index("BEGIN_SATCHEL_CONTEXT_V2") + 1 : lines.index("END_SATCHEL_CONTEXT_V2")
    ]
    items: list[dict[str, Any]] = []
    group: dict[str, Any] = {}
    for line in inner:
        value = json.loads(line)
        if isinstance(value, dict):
            group = value
            continue
        at, text, ref, *rest = value
        version = rest[0] if rest and isinstance(rest[0], int) else 1
        items.append({"citation": {**group, "id": ref, "version": version}, "at": at, "text": text})
    return items


@asynccontextmanager
async def connected(
    mode: str = "auto", **options: Any
) -> AsyncIterator[tuple[Client, satchel.Runtime]]:
    """An in-process client of a server over a fresh in-memory runtime (with ``options``).

    ``mode="auto"`` speaks the modern protocol through the SDK's direct dispatcher;
    ``mode="legacy"`` the initialize handshake and JSON-RPC over memory streams.
    """
    async with (
        satchel.open_runtime(embedder=satchel.HashingEmbedder(), **options) as runtime,
        Client(create_server(runtime), mode=mode) as client,
    ):
        yield client, runtime
