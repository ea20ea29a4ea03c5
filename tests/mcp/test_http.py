"""``satchel mcp --http``: the same tools as a streamable-HTTP endpoint on the loopback
interface, driven by the SDK's own client (``mcp.Client`` with the endpoint's URL).

The server runs on asyncio (uvicorn); the client runs on asyncio and on trio.
"""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
from typing import TYPE_CHECKING

import httpx
import pytest
from mcp import Client

import satchel
from satchel._wire import compact_id

from ._client import TOOLS, S, structured, tool_error

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def wait_for(port: int, server: subprocess.Popen[str], seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        assert server.poll() is None, server.communicate()[1]
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    raise AssertionError(f"satchel mcp --http did not listen on {port} in {seconds} s")


@pytest.fixture(scope="module")
def endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The URL of a ``satchel mcp --http`` serving a fresh database; SIGINT stops it."""
    folder: Path = tmp_path_factory.mktemp("http")
    port = free_port()
    args = ["--create", "--db", str(folder / "agent.db"), "--embedder", "hashing", "--http"]
    server = subprocess.Popen(
        [sys.executable, "-m", "satchel", "mcp", *args, "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=folder,
    )
    try:
        wait_for(port, server)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        server.send_signal(signal.SIGINT)
        out, errors = server.communicate(timeout=60)
    assert server.returncode == 130, errors  # interrupted: the usual exit of a served server
    created = f"{folder / 'agent.db'} (created now)"
    assert f"satchel mcp: serving {created} at http://127.0.0.1:{port}/mcp" in errors
    assert out == ""


@pytest.mark.anyio
async def test_the_tools_over_streamable_http(endpoint: str, anyio_backend_name: str) -> None:
    """List the tools, write, prepare and read back over HTTP; a bad argument is a tool
    error naming the field."""
    scope = f"{S}/{anyio_backend_name}"  # one server serves both backends' tests
    async with Client(endpoint) as client:
        tools = [tool.name for tool in (await client.list_tools()).tools]
        assert tuple(tools) == TOOLS
        added = await client.call_tool(
            "add_memories", {"scope_id": scope, "entries": [{"text": "Backups run at 02:00"}]}
        )
        [ref] = structured(added)["refs"]
        ready = await client.call_tool("prepare_context", {"scope_id": scope, "query": "backups"})
        (item,) = satchel.parse_context(structured(ready)["content"])
        assert item.citation.id is not None
        assert compact_id(item.citation.id) == ref["entry_id"]  # as the pack writes it
        bad = await client.call_tool("prepare_context", {"scope_id": scope, "max_bytes": 1})
        assert "query is required" in tool_error(bad)
        record = structured(await client.call_tool("get_memory", ref))
        assert record["text"] == "Backups run at 02:00"


def test_a_foreign_host_header_is_refused(endpoint: str) -> None:
    """DNS-rebinding protection: a request naming another host is refused before MCP."""
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "raw-test", "version": "0"},
        },
    }
    headers = {"Host": "evil.example", "Accept": "application/json, text/event-stream"}
    response = httpx.post(endpoint, json=initialize, headers=headers, timeout=30)
    assert response.status_code in (403, 421)
