"""``list_memories``: one page of a scope's records through the SDK's own client in
process, its cursor, its filters, its schema and its refusals."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from jsonschema import Draft202012Validator
from mcp import Client

import satchel
from satchel._wire import compact_id
from satchel.mcp import _schemas, create_server

from ._client import S, structured, text, tool_error

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

pytestmark = pytest.mark.anyio


@pytest.fixture
async def connected() -> AsyncIterator[tuple[Client, satchel.Runtime]]:
    async with (
        satchel.open_runtime(embedder=satchel.HashingEmbedder()) as runtime,
        Client(create_server(runtime)) as client,
    ):
        yield client, runtime


async def listing(client: Client, **arguments: Any) -> dict[str, Any]:
    """One page, checked against the tool's output schema."""
    result = await client.call_tool("list_memories", {"scope_id": S, **arguments})
    page = structured(result)
    Draft202012Validator(_schemas.LIST_MEMORIES_OUTPUT).validate(page)
    return page


async def test_pages_follow_the_cursor_newest_first(
    connected: tuple[Client, satchel.Runtime],
) -> None:
    """Three entries in pages of two: the newest two, then the oldest with no cursor;
    each record carries the citation get_memory takes."""
    client, runtime = connected
    refs = await runtime.add_memories(S, [satchel.MemoryEntry(f"entry {n}") for n in range(3)])
    first = await listing(client, limit=2)
    second = await listing(client, limit=2, cursor=first["cursor"])
    assert [r["text"] for r in first["records"]] == ["entry 2", "entry 1"]
    assert [r["text"] for r in second["records"]] == ["entry 0"]
    assert second["cursor"] is None
    cited = second["records"][0]["citation"]
    assert cited == {
        "family": "memory",
        "scope": S,
        "id": compact_id(refs[0].entry_id),
        "version": 1,
    }
    got = await client.call_tool(
        "get_memory", {"scope_id": S, "entry_id": cited["id"], "version": cited["version"]}
    )
    assert structured(got)["text"] == "entry 0"


async def test_forgotten_only_when_asked_and_one_family(
    connected: tuple[Client, satchel.Runtime],
) -> None:
    """A forgotten entry is listed, marked, only with include_forgotten; family narrows
    the page to one family."""
    client, runtime = connected
    _, gone = await runtime.add_memories(
        S, [satchel.MemoryEntry("kept"), satchel.MemoryEntry("gone")]
    )
    await runtime.add_experiences(S, [satchel.Experience("a", "b", "c", "d")])
    await runtime.forget_memory(gone)
    assert [r["text"] for r in (await listing(client, family="memory"))["records"]] == ["kept"]
    shown = (await listing(client, family="memory", include_forgotten=True))["records"]
    assert [(r["text"], r["forgotten"]) for r in shown] == [("gone", True), ("kept", False)]
    assert [r["citation"]["family"] for r in (await listing(client))["records"]] == [
        "experience", "memory",
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("arguments", "named"),
    [
        ({"limit": 0}, "limit"),
        ({"limit": 1001}, "limit"),
        ({"family": "memories"}, "family"),
        ({"cursor": "nope"}, "cursor"),
        ({"offset": 3}, "offset"),
    ],
)
async def test_a_bad_argument_is_a_tool_error_naming_it(
    connected: tuple[Client, satchel.Runtime], arguments: dict[str, Any], named: str
) -> None:
    """Each malformed or unknown argument is refused as a tool error naming it."""
    client, _ = connected
    result = await client.call_tool("list_memories", {"scope_id": S, **arguments})
    assert named in tool_error(result)


async def test_it_is_read_only_and_writes_nothing(
    connected: tuple[Client, satchel.Runtime],
) -> None:
    """The tool is annotated read-only, and a call moves no write version."""
    client, runtime = connected
    await runtime.add_memories(S, [satchel.MemoryEntry("kept")])
    version = runtime.store.scope_version(S)
    (tool,) = [t for t in (await client.list_tools()).tools if t.name == "list_memories"]
    result = await client.call_tool("list_memories", {"scope_id": S})
    assert tool.annotations is not None
    assert tool.annotations.read_only_hint is True
    assert '"text": "kept"' in text(result)
    assert runtime.store.scope_version(S) == version
