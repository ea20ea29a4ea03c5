"""The MCP server under hostile clients: every argument outside a tool's schema is a tool
error naming it, and every line a client writes to ``satchel mcp`` over stdio is answered.

The arguments are sent in process through the SDK's own client, and as raw bytes to a
spawned ``python -m satchel mcp`` (on the test's backend); every wait on the subprocess
is bounded by ``anyio.fail_after``, so a server that stays silent fails the test instead
of hanging it.
"""

from __future__ import annotations

import copy
import itertools
import json
import sys
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, Final

import anyio
import mcp.types as types
import pytest
from anyio.streams.buffered import BufferedByteReceiveStream
from bench._hostile_mcp import CLOSED, INTEGERS, LONE_SURROGATES, NOT_STRINGS, STRINGS, VALID, Spot
from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match
from mcp import MCPError

from satchel.mcp._arguments import refusal
from satchel.mcp._lines import read_line

from ._client import S, connected, text

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterator
    from pathlib import Path

    from anyio.abc import Process

pytestmark = pytest.mark.anyio

BACKUPS = "Backups run nightly at 02:00 UTC on the Kestrel cluster"
#: Seconds a spawned server may take to answer the handshake (a loaded machine is slow
#: to import), to answer one line, and to exit once stdin closes.
START_SECONDS: Final = 120.0
ANSWER_SECONDS: Final = 30.0
STOP_SECONDS: Final = 30.0

NOT_INTEGERS: Final[dict[str, object]] = {"string": "1", "fraction": 1.5, "bool": True}


def field(path: Spot) -> str:
    """A path as the error names it: ``entries[0].tags[0]``."""
    return "".join(f"[{step}]" if isinstance(step, int) else f".{step}" for step in path)[1:]


def put(arguments: dict[str, Any], path: Spot, value: object) -> dict[str, Any]:
    """A deep copy of ``arguments`` with ``value`` at ``path``."""
    changed = copy.deepcopy(arguments)
    *parents, last = path
    inner: Any = changed
    for step in parents:
        inner = inner[step]
    inner[last] = value
    return changed


def bad_calls(tool: str) -> Iterator[tuple[dict[str, Any], str]]:
    """Every hostile call of ``tool`` a client can encode, with the field its refusal
    must name first: a string field of another type or holding a lone surrogate, an
    integer field given ``"1"``, ``1.5`` or ``true``, an unknown field where none may be."""
    base = VALID[tool]
    for path, nullable in STRINGS[tool]:
        for kind, value in NOT_STRINGS.items():
            if not (kind == "null" and nullable):
                yield put(base, path, value), field(path)
        for lone in LONE_SURROGATES:
            yield put(base, path, lone), field(path)
    for path, _ in INTEGERS[tool]:
        for value in NOT_INTEGERS.values():
            yield put(base, path, value), field(path)
    for path in CLOSED[tool]:
        yield put(base, (*path, "colour"), "red"), field((*path, "colour"))


def refused(message: str, where: str) -> bool:
    """A refusal whose message names ``where`` first."""
    return message.startswith(f"invalid argument: {where} ")


# -------------------------------------------------------------------------- in process


async def test_every_argument_outside_the_schema_is_a_tool_error_naming_it() -> None:
    """Every tool: a string field given a number, null, a list, an object, true or a
    lone surrogate, an integer field given "1", 1.5 or true, an unknown field: each a
    tool error whose message names the field, never an internal error; the server
    serves on, and the valid call of each tool is not refused."""
    wrong = []
    async with connected() as (client, _):
        for tool in VALID:
            for arguments, where in bad_calls(tool):
                try:
                    result = await client.call_tool(tool, arguments)
                except MCPError as exc:
                    wrong.append((tool, arguments, f"protocol error: {exc}"))
                    continue
                if not (result.is_error and refused(text(result), where)):
                    wrong.append((tool, arguments, text(result)))
        for tool, arguments in VALID.items():
            result = await client.call_tool(tool, arguments)
            if text(result).startswith("invalid argument"):
                wrong.append((tool, arguments, text(result)))
    assert wrong == []


# ------------------------------------------------------------------------- over stdio


class RawHost:
    """A host that writes raw lines to ``satchel mcp``'s stdin, one at a time, and reads
    the answer to each from its stdout."""

    def __init__(self, process: Process) -> None:
        assert process.stdin is not None
        assert process.stdout is not None
        self.stdin = process.stdin
        self.stdout = BufferedByteReceiveStream(process.stdout)
        self.ids = itertools.count(1)

    async def send(
        self, line: bytes, *, answered: bool = True, seconds: float = ANSWER_SECONDS
    ) -> dict[str, Any]:
        """Write ``line`` and return the answer (the next line the server writes), which
        must come within ``seconds``."""
        await self.stdin.send(line + b"\n")
        if not answered:
            return {}
        with anyio.fail_after(seconds):
            answer: dict[str, Any] = json.loads(
                await self.stdout.receive_until(b"\n", max_bytes=1 << 20)
            )
        return answer

    async def request(
        self, method: str, params: dict[str, Any], *, seconds: float = ANSWER_SECONDS
    ) -> dict[str, Any]:
        """A request with the next id; its answer, which must carry that id."""
        request_id = next(self.ids)
        message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        answer = await self.send(json.dumps(message).encode(), seconds=seconds)
        assert answer["id"] == request_id, answer
        return answer

    async def call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """The result of a ``tools/call`` (a JSON-RPC error fails)."""
        answer = await self.request("tools/call", {"name": tool, "arguments": arguments})
        assert "result" in answer, answer
        result: dict[str, Any] = answer["result"]
        return result


HANDSHAKE: Final = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "hostile-test", "version": "0"},
}
INITIALIZED: Final = b'{"jsonrpc": "2.0", "method": "notifications/initialized"}'


@asynccontextmanager
async def raw_host(tmp_path: Path, backend: str) -> AsyncIterator[RawHost]:
    """A spawned ``satchel mcp`` past the handshake; on exit, stdin closes and the server
    must exit 0 with no traceback on stderr."""
    command = [
        sys.executable,
        "-m",
        "satchel",
        "mcp",
        "--create",
        "--db",
        str(tmp_path / "agent.db"),
    ]
    command += ["--embedder", "hashing", "--backend", backend]
    log = tmp_path / "stderr.log"
    with log.open("wb") as errlog:
        process = await anyio.open_process(command, stderr=errlog, cwd=tmp_path)
    async with process:
        try:
            host = RawHost(process)
            answer = await host.request("initialize", HANDSHAKE, seconds=START_SECONDS)
            assert "result" in answer
            await host.send(INITIALIZED, answered=False)
            yield host
            assert "result" in await host.request("ping", {})  # alive after it all
            await host.stdin.aclose()
            with anyio.fail_after(STOP_SECONDS):
                assert await process.wait() == 0
        finally:
            if process.returncode is None:  # a failed test: do not wait for the server
                process.kill()
    assert "Traceback" not in log.read_text(encoding="utf-8")


async def test_every_tool_over_stdio_answers_every_bad_argument_by_name(
    tmp_path: Path, anyio_backend_name: str
) -> None:
    """Over stdio, every hostile call of every tool (as in process, and a field name
    holding a lone surrogate) is answered with a tool error naming the field."""
    async with raw_host(tmp_path, anyio_backend_name) as host:
        for tool in VALID:
            for arguments, where in bad_calls(tool):
                result = await host.call(tool, arguments)
                assert result["isError"] is True, (arguments, result)
                [block] = result["content"]
                assert refused(block["text"], where), (arguments, block)
        for tool, base in VALID.items():
            result = await host.call(tool, {**base, "\ud800": 1})
            assert result["content"][0]["text"] == (
                "invalid argument: \\ud800 must be valid Unicode text (it holds a lone surrogate)"
            )
        entries = [{"text": BACKUPS, "x\udc00": 1}]
        result = await host.call("add_memories", {"scope_id": S, "entries": entries})
        assert refused(result["content"][0]["text"], "entries[0].x\\udc00")


#: Lines that are not JSON, or not UTF-8: each answered by a parse error with id null.
NOT_JSON: Final = (
    b"not json",
    b'{"jsonrpc": "2.0", "id": 5, "method": "ping"',  # cut short
    b'{"jsonrpc": "2.0", "id": 5, "method": "ping", }',
    b"{'jsonrpc': '2.0', 'id': 5, 'method': 'ping'}",
    b"\x00\x01\x02",
    b"[" * 100_000,
)
NOT_UTF8: Final = (
    b"\xff\xfe",
    b'{"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "get_memory",'
    b' "arguments": {"scope_id": "\xc3", "entry_id": "e1", "version": 1}}}',
    b'{"jsonrpc": "2.0", "id": 5, "method": "ping", "params": {"x": "\xed\xa0\x80"}}',
    b'{"jsonrpc": "2.0", "id": 5, "method": "ping", "params": {"x": "\xc0\xaf"}}',
)
#: JSON that is not a JSON-RPC request, and the id its invalid-request error carries.
NOT_JSONRPC: Final = (
    (b"[]", None),
    (b"5", None),
    (b'"ping"', None),
    (b'{"id": 6}', 6),
    (b'{"id": "six", "params": {}}', "six"),
    (b'{"jsonrpc": "2.0", "id": 6, "method": 5}', 6),
    (b'{"jsonrpc": "1.0", "id": "six", "method": "ping"}', "six"),
    (b'{"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": 5}', 6),
    (b'{"jsonrpc": "2.0", "id": [6], "method": "ping"}', None),
    (b'{"jsonrpc": "2.0", "id": null, "method": "ping"}', None),
)
#: A lone surrogate outside a tool's arguments, and the id its parse error carries.
SURROGATE_OUTSIDE_ARGUMENTS: Final = (
    (b'{"jsonrpc": "2.0", "id": 7, "method": "\\ud800"}', 7),
    (b'{"jsonrpc": "2.0", "id": "\\ud800", "method": "ping"}', None),
    (b'{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "\\udfff"}}', 7),
    (b'{"jsonrpc": "2.0", "id": 7, "method": "ping", "params": {"_meta": {"a": "\\ud800"}}}', 7),
)


def error_of(answer: dict[str, Any], code: int, request_id: object) -> str:
    """The message of a JSON-RPC error with ``code`` and ``request_id``."""
    assert answer["jsonrpc"] == "2.0"
    assert answer["id"] == request_id, answer
    assert answer["error"]["code"] == code, answer
    message: str = answer["error"]["message"]
    return message


async def test_every_line_over_stdio_is_answered(tmp_path: Path, anyio_backend_name: str) -> None:
    """A line that is not JSON or not UTF-8 is a parse error (-32700, id null); JSON that
    is not a JSON-RPC request is an invalid request (-32600, with its id when it has
    one); a lone surrogate outside a tool's arguments is a parse error; a blank line is
    nothing. The server answers each, in order, and serves on."""
    async with raw_host(tmp_path, anyio_backend_name) as host:
        for line in NOT_JSON:
            assert "not JSON" in error_of(await host.send(line), types.PARSE_ERROR, None)
        for line in NOT_UTF8:
            assert "not UTF-8" in error_of(await host.send(line), types.PARSE_ERROR, None)
        for line, request_id in NOT_JSONRPC:
            error_of(await host.send(line), types.INVALID_REQUEST, request_id)
        for line, request_id in SURROGATE_OUTSIDE_ARGUMENTS:
            message = error_of(await host.send(line), types.PARSE_ERROR, request_id)
            assert "lone surrogate" in message
        await host.send(b"   \r", answered=False)
        result = await host.call("add_memories", {"scope_id": S, "entries": [{"text": BACKUPS}]})
        assert result["isError"] is False


# --------------------------------------------------------------------- one line, read


def test_a_line_is_read_as_the_sdk_reads_it_or_answered() -> None:
    """A good line is the message the SDK would read; a tool call whose only flaw is a
    lone surrogate in its arguments goes to the server (which refuses it by name); a
    blank line carries nothing."""
    ping = read_line(b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}\r\n')
    assert ping is not None
    assert not isinstance(ping, types.JSONRPCError)
    assert ping.message == types.JSONRPCRequest(jsonrpc="2.0", id=1, method="ping")
    call = read_line(
        b'{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "get_memory",'
        b' "arguments": {"scope_id": "\\ud800"}}}'
    )
    assert call is not None
    assert not isinstance(call, types.JSONRPCError)
    assert isinstance(call.message, types.JSONRPCRequest)
    assert call.message.params == {"name": "get_memory", "arguments": {"scope_id": "\ud800"}}
    assert read_line(b"\n") is None
    assert read_line(b" \t\r\n") is None


#: (schema of one argument ``a``, its value, what the refusal says) for the refusals no
#: satchel message words (the calls above meet the rest).
REFUSALS: Final = [
    ({"type": "array", "maxItems": 2}, [1, 2, 3], "a must be a list of at most 2 items"),
    ({"type": "array", "minItems": 1}, [], "a must be a list of at least 1 item"),
    ({"type": "integer", "minimum": 1}, 0, "a must be at least 1"),
    (
        {"type": "integer", "minimum": 1, "maximum": 2**63 - 1},
        0,
        "a must be an integer in 1..2**63-1",
    ),
    ({"type": "string", "minLength": 3}, "ab", "a must be at least 3 characters"),
    ({"type": "string", "pattern": "^[a-z]+$"}, "A", "a must be a string matching ^[a-z]+$"),
    ({"anyOf": [{"type": "string"}, {"type": "null"}]}, 5, "a must be a string or null"),
    (
        {"anyOf": [{"type": "string", "pattern": r"\S"}, {"type": "null"}]},
        " ",
        "a must be a non-empty string",
    ),
    ({"enum": ["uri", "full"]}, "deep", "a must be one of uri, full"),
    ({"type": "object", "required": ["b"]}, {}, "a.b is required"),
    (
        {"type": "object", "properties": {"b": {}}, "additionalProperties": False},
        {"c": 1},
        "a.c is not a field (expected: b)",
    ),
    (
        {"type": "string", "format": "email", "multipleOf": 2, "const": "x"},
        "y",
        "a must be valid under its schema (const: 'x')",
    ),
]


@pytest.mark.parametrize(("schema", "value", "expected"), REFUSALS)
def test_a_schema_refusal_names_the_argument(
    schema: dict[str, Any], value: object, expected: str
) -> None:
    """A refusal satchel has no words for is worded from the schema, naming the field."""
    validator = Draft202012Validator({"type": "object", "properties": {"a": schema}})
    error = best_match(validator.iter_errors({"a": value}))
    assert error is not None
    assert refusal(error) == expected
