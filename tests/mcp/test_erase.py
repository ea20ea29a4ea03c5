"""``erase_memory``: absent unless the server allows it (``create_server(...,
allow_erase=True)``, ``satchel mcp --allow-erase``), and then erasing every version of an
entry, through the SDK's own client in process and over stdio."""

from __future__ import annotations

import sys
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import pytest
from jsonschema import Draft202012Validator
from mcp import Client, ClientSession, MCPError, StdioServerParameters, stdio_client

import satchel
from satchel.cli import main
from satchel.mcp import _schemas, create_server

from ._client import TOOLS, S, pack_items, structured, text, tool_error

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from pathlib import Path

pytestmark = pytest.mark.anyio

BACKUPS = "Backups run nightly at 02:00 UTC on the Kestrel cluster"
HOURLY = "Backups run hourly on the Kestrel cluster since March"


@asynccontextmanager
async def connected(*, allow_erase: bool) -> AsyncIterator[tuple[Client, satchel.Runtime]]:
    async with (
        satchel.open_runtime(embedder=satchel.HashingEmbedder()) as runtime,
        Client(create_server(runtime, allow_erase=allow_erase)) as client,
    ):
        yield client, runtime


async def add(client: Client, *texts: str, key: str | None = None) -> list[dict[str, Any]]:
    entries = [{"text": each, "key": key} for each in texts]
    result = await client.call_tool("add_memories", {"scope_id": S, "entries": entries})
    refs: list[dict[str, Any]] = structured(result)["refs"]
    return refs


async def test_erase_memory_is_not_a_tool_by_default() -> None:
    """Without allow_erase, tools/list has the five tools and a call to erase_memory is
    an unknown tool: nothing is erased."""
    async with connected(allow_erase=False) as (client, runtime):
        listed = [tool.name for tool in (await client.list_tools()).tools]
        (ref,) = await add(client, BACKUPS)
        with pytest.raises(MCPError, match="unknown tool 'erase_memory'"):
            await client.call_tool("erase_memory", {"scope_id": S, "entry_id": ref["entry_id"]})
        counts = await runtime.store.scope_counts()
    assert tuple(listed) == TOOLS
    assert counts[S]["memory"] == 1


async def test_with_allow_erase_it_is_listed_as_destructive() -> None:
    """The sixth tool, after the five: scope_id and entry_id (no version), destructive
    and idempotent hints, its schemas valid JSON Schema."""
    async with connected(allow_erase=True) as (client, _):
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert tuple(listed) == (*TOOLS, "erase_memory")
    tool = listed["erase_memory"]
    assert tool.input_schema == _schemas.ERASE_MEMORY_INPUT
    assert tool.input_schema["required"] == ["scope_id", "entry_id"]
    assert tool.output_schema == _schemas.ERASE_MEMORY_OUTPUT
    for schema in (_schemas.ERASE_MEMORY_INPUT, _schemas.ERASE_MEMORY_OUTPUT):
        Draft202012Validator.check_schema(schema)
    assert tool.annotations is not None
    assert tool.annotations.destructive_hint is True
    assert tool.annotations.idempotent_hint is True
    assert tool.annotations.read_only_hint is False
    assert tool.description is not None
    assert "forget_memory" in tool.description


async def test_erase_memory_erases_every_version() -> None:
    """Both versions of a keyed entry go; get_memory of either says it was erased, a
    prepare no longer delivers it, and erasing again is 0 (not an error)."""
    async with connected(allow_erase=True) as (client, _):
        (first,) = await add(client, BACKUPS, key="ops/backups")
        (second,) = await add(client, HOURLY, key="ops/backups")
        assert second == {**first, "version": 2}
        target = {"scope_id": S, "entry_id": first["entry_id"]}
        erased = await client.call_tool("erase_memory", target)
        gone = [await client.call_tool("get_memory", ref) for ref in (first, second)]
        after = await client.call_tool("prepare_context", {"scope_id": S, "query": "backups"})
        again = await client.call_tool("erase_memory", target)
    assert structured(erased) == {**target, "erased_versions": 2}
    assert text(erased) == (
        f"erased 2 versions of memory entry {first['entry_id']!r} of scope {S!r}:"
        " nothing of it stays readable"
    )
    for result in gone:
        message = tool_error(result)
        assert message.startswith("not found: ")
        assert "was erased" in message
    assert structured(after)["status"] == "empty"
    assert structured(again) == {**target, "erased_versions": 0}
    assert text(again).startswith("nothing erased: ")


async def test_the_id_a_pack_prints_erases_the_entry() -> None:
    """An agent hands back the 22-character id it read off a pack's item line."""
    async with connected(allow_erase=True) as (client, _):
        (ref,) = await add(client, BACKUPS)
        ready = await client.call_tool("prepare_context", {"scope_id": S, "query": "backups"})
        [item] = pack_items(structured(ready)["content"])
        short = item["citation"]["id"]
        assert len(short) == 22
        erased = await client.call_tool("erase_memory", {"scope_id": S, "entry_id": short})
    assert structured(erased) == {"scope_id": S, "entry_id": ref["entry_id"], "erased_versions": 1}


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"scope_id": S, "entry_id": 7}, "invalid argument: entry_id must be a string"),
        ({"scope_id": S}, "invalid argument: entry_id is required"),
        ({"scope_id": " ", "entry_id": "e1"}, "invalid argument: scope_id must be"),
        (
            {"scope_id": S, "entry_id": "e1", "version": 1},
            "invalid argument: version is not an argument",
        ),
    ],
    ids=["number-id", "no-id", "blank-scope", "a-version"],
)
async def test_a_bad_argument_is_a_tool_error_naming_it(
    arguments: dict[str, Any], message: str
) -> None:
    async with connected(allow_erase=True) as (client, runtime):
        await add(client, BACKUPS)
        result = await client.call_tool("erase_memory", arguments)
        counts = await runtime.store.scope_counts()
    assert tool_error(result).startswith(message)
    assert counts[S]["memory"] == 1


async def test_allow_erase_must_be_a_bool() -> None:
    async with satchel.open_runtime(embedder=satchel.HashingEmbedder()) as runtime:
        with pytest.raises(satchel.InvalidRequestError, match="allow_erase must be"):
            create_server(runtime, allow_erase="yes")  # type: ignore[arg-type]


async def test_satchel_mcp_allow_erase_over_stdio(tmp_path: Path, anyio_backend_name: str) -> None:
    """`satchel mcp --allow-erase`, spawned as a host spawns it, lists erase_memory and
    erases with it."""
    database = tmp_path / "agent.db"
    args = ["-m", "satchel", "mcp", "--create", "--db", str(database), "--embedder", "hashing"]
    args += ["--backend", anyio_backend_name, "--allow-erase"]
    params = StdioServerParameters(command=sys.executable, args=args, cwd=str(tmp_path))
    with (tmp_path / "stderr.log").open("w", encoding="utf-8") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as client,
        ):
            await client.initialize()
            listed = [tool.name for tool in (await client.list_tools()).tools]
            entries = {"scope_id": S, "entries": [{"text": BACKUPS}]}
            [ref] = structured(await client.call_tool("add_memories", entries))["refs"]
            target = {"scope_id": S, "entry_id": ref["entry_id"]}
            erased = await client.call_tool("erase_memory", target)
    assert listed == [*TOOLS, "erase_memory"]
    assert structured(erased) == {**target, "erased_versions": 1}
    assert "Traceback" not in (tmp_path / "stderr.log").read_text(encoding="utf-8")


def test_the_cli_help_names_the_flag(capsys: pytest.CaptureFixture[str]) -> None:
    """'satchel mcp --help' names --allow-erase, its tool, and that it is off by default."""
    assert main(["mcp", "--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "--allow-erase" in out
    assert "erase_memory" in out
    assert "off by default" in out
