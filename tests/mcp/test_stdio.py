"""``satchel mcp`` over stdio, as a host runs it: ``python -m satchel mcp --db FILE`` spawned
by the SDK's own client (``stdio_client`` with ``StdioServerParameters``, then
``ClientSession``).

The client runs on asyncio and on trio (the SDK's stdio client is built on anyio), and
the server runs on the same backend as the client (``--backend``).
"""

from __future__ import annotations

import json
import subprocess
import sys
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client

import satchel
from satchel._wire import full_id

from ._client import TOOLS, S, pack_items, structured, text, tool_error

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from pathlib import Path

pytestmark = pytest.mark.anyio

BACKUPS = "Backups run nightly at 02:00 UTC on the Kestrel cluster"


def command(database: Path, *options: str) -> list[str]:
    """The arguments after the interpreter: the hashing embedder keeps start-up quick."""
    return [
        "-m",
        "satchel",
        "mcp",
        "--create",
        "--db",
        str(database),
        "--embedder",
        "hashing",
        *options,
    ]


@asynccontextmanager
async def session(database: Path, stderr: Path, *options: str) -> AsyncIterator[ClientSession]:
    """A session with a spawned ``satchel mcp`` whose stderr goes to the file ``stderr``."""
    params = StdioServerParameters(
        command=sys.executable, args=command(database, *options), cwd=str(database.parent)
    )
    with stderr.open("w", encoding="utf-8") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as client,
        ):
            await client.initialize()
            yield client


async def test_a_host_session_end_to_end(tmp_path: Path, anyio_backend_name: str) -> None:
    """List the tools, add -> prepare (cited) -> get -> forget -> prepare (gone); a bad
    argument is a tool error naming the field, and the server keeps serving after it."""
    database = tmp_path / "agent.db"  # does not exist yet: satchel mcp creates it
    log = tmp_path / "stderr.log"
    async with session(database, log, "--backend", anyio_backend_name) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert tuple(tools) == TOOLS
        assert tools["prepare_context"].input_schema["required"] == ["scope_id", "query"]
        query = tools["prepare_context"].input_schema["properties"]["query"]
        assert (query["minLength"], query["maxLength"]) == (1, 8192)

        added = await client.call_tool(
            "add_memories",
            {
                "scope_id": S,
                "entries": [{"text": BACKUPS, "created_at": "2024-03-04T09:00:00Z"}],
            },
        )
        [ref] = structured(added)["refs"]

        ready = await client.call_tool("prepare_context", {"scope_id": S, "query": "backups?"})
        assert structured(ready)["status"] == "ready"
        [item] = satchel.parse_context(text(ready))
        assert item.citation == satchel.Citation(
            "memory", S, full_id(ref["entry_id"]), ref["version"]
        )
        assert pack_items(text(ready))[0]["citation"]["id"] == ref["entry_id"]  # as written

        bad = await client.call_tool("prepare_context", {"scope_id": S, "query": "x" * 8193})
        assert "query must be 1..8192 characters" in tool_error(bad)
        bad = await client.call_tool("get_memory", {**ref, "version": 0})
        assert "version must be an integer" in tool_error(bad)

        record = structured(await client.call_tool("get_memory", ref))
        assert record["text"] == BACKUPS
        assert record["created_at"] == "2024-03-04T09:00:00+00:00"
        assert structured(await client.call_tool("forget_memory", ref))["forgotten"] is True
        gone = await client.call_tool("prepare_context", {"scope_id": S, "query": "backups?"})
        assert structured(gone)["status"] == "empty"
    assert database.is_file()
    errors = log.read_text(encoding="utf-8")
    assert f"satchel mcp: serving {database} (created now) over stdio" in errors
    assert "Traceback" not in errors


def jsonrpc(message_id: int | None, method: str, params: dict[str, Any]) -> str:
    """One JSON-RPC message on one line (a notification without an id)."""
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
    if message_id is not None:
        message["id"] = message_id
    return json.dumps(message) + "\n"


def test_stdout_carries_nothing_but_the_protocol(tmp_path: Path) -> None:
    """Every line the server writes to stdout is a JSON-RPC message answering a request;
    its log lines go to stderr, and closing stdin stops it (exit 0)."""
    handshake = {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "raw-test", "version": "0"},
    }
    call = {"name": "add_memories", "arguments": {"scope_id": S, "entries": [{"text": BACKUPS}]}}
    bad = {"name": "prepare_context", "arguments": {"scope_id": S, "query": ""}}
    exchange = [
        (1, "initialize", handshake),
        (None, "notifications/initialized", {}),
        (2, "tools/list", {}),
        (3, "tools/call", bad),
        (4, "tools/call", call),
    ]
    server = subprocess.Popen(
        [sys.executable, *command(tmp_path / "agent.db")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
    )
    assert server.stdin is not None
    assert server.stdout is not None
    replies = []
    try:
        for message_id, method, params in exchange:
            server.stdin.write(jsonrpc(message_id, method, params))
            server.stdin.flush()
            if message_id is not None:  # a request: wait for its reply before going on
                replies.append(json.loads(server.stdout.readline()))
        rest, errors = server.communicate(timeout=60)  # closes stdin: the host hangs up
    finally:
        if server.poll() is None:
            server.kill()
            server.communicate()
    assert server.returncode == 0, errors
    assert rest == ""
    assert [reply["id"] for reply in replies] == [1, 2, 3, 4]
    assert all(reply["jsonrpc"] == "2.0" and "result" in reply for reply in replies)
    assert replies[2]["result"]["isError"] is True
    assert replies[3]["result"]["isError"] is False
    assert "satchel mcp: serving" in errors
