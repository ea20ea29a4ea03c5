"""``satchel mcp`` under hostile clients, over stdio: the MCP probes of ``bench hostile``.

:func:`run_mcp_probes` starts ``python -m satchel mcp`` on a temporary SQLite database
(the hashing embedder), completes the handshake, and writes each probe as one raw line
on its stdin, then a ``ping``; each answer is waited for ``answer_seconds`` at most:

==========================  =============================================================
non-string-argument         a number, null, a list, an object or true where a tool takes
                            a string (null only where null is not allowed)
non-integer-argument        ``"1"``, ``1.5`` or true where a tool takes an integer
lone-surrogate-argument     a string, or a field name, holding a lone surrogate
unknown-argument            a field where a tool's schema allows none
deep-argument               an argument nested 100, 400 and 5,000 lists deep
not-json                    a line that is not JSON (cut short, a trailing comma, ...)
not-utf8                    a line that is not UTF-8 (a stray byte, an encoded surrogate)
not-jsonrpc                 JSON that is not a JSON-RPC request (``[]``, an id list)
lone-surrogate-elsewhere    a lone surrogate in a method, an id or a tool's name
==========================  =============================================================

A try is *held* when its line got the answer its class expects, well formed (the
argument classes: a tool error whose text names the argument; the line classes: a
JSON-RPC error with the expected code and id; deep-argument: either), and the server
then answered the ping (it stayed alive). It *failed* otherwise: a wrong answer, none in
time, or a server that died (every try after that fails too). Held + failed = tries.
"""

from __future__ import annotations

import copy
import json
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import anyio
from anyio.streams.buffered import BufferedByteReceiveStream

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from anyio.abc import Process

#: One class of probes: its name, tries, tries held, tries failed.
Row = tuple[str, int, int, int]
Answer = dict[str, Any]
#: Where a value sits in a tool's arguments: ``("entries", 0, "text")``.
Spot = tuple[str | int, ...]

#: Seconds the server may take to complete the handshake, and to exit once stdin closes.
START_SECONDS: Final = 120.0
STOP_SECONDS: Final = 30.0
PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600
S: Final = "project:hostile"
#: A call of each tool that its schema takes, with a value at every string and integer.
VALID: Final[dict[str, dict[str, Any]]] = {
    "prepare_context": {
        "scope_id": S,
        "query": "When do backups run?",
        "max_bytes": 4000,
        "references": ["billing"],
        "session_id": "chat-1",
        "sections": [{"family": "memory", "limit": 2}],
        "exclude": [{"family": "memory", "scope": S, "id": "e1", "version": 1}],
    },
    "add_memories": {
        "scope_id": S,
        "entries": [
            {
                "text": "Backups run nightly at 02:00 UTC",
                "kind": "fact",
                "tags": ["ops"],
                "created_at": "2024-03-04T09:00:00Z",
                "thread": "chat-7",
                "key": "chat-7/1",
            }
        ],
    },
    "get_memory": {"scope_id": S, "entry_id": "e1", "version": 1},
    "forget_memory": {"scope_id": S, "entry_id": "e1", "version": 1},
}
#: Each tool's strings and integers: where, and whether null is allowed there.
STRINGS: Final[dict[str, list[tuple[Spot, bool]]]] = {
    "prepare_context": [
        (("scope_id",), False),
        (("query",), False),
        (("references", 0), False),
        (("session_id",), True),
        (("exclude", 0, "scope"), False),
    ],
    "add_memories": [
        (("scope_id",), False),
        *((("entries", 0, name), False) for name in ("text", "kind")),
        (("entries", 0, "tags", 0), False),
        *((("entries", 0, name), True) for name in ("created_at", "thread", "key")),
    ],
    "get_memory": [(("scope_id",), False), (("entry_id",), False)],
    "forget_memory": [(("scope_id",), False), (("entry_id",), False)],
}
INTEGERS: Final[dict[str, list[tuple[Spot, bool]]]] = {
    "prepare_context": [
        (("max_bytes",), False),
        (("sections", 0, "limit"), False),
        (("exclude", 0, "version"), True),
    ],
    "add_memories": [],
    "get_memory": [(("version",), False)],
    "forget_memory": [(("version",), False)],
}
#: Where each tool's schema allows no other field.
CLOSED: Final[dict[str, list[Spot]]] = {
    "prepare_context": [(), ("sections", 0), ("exclude", 0)],
    "add_memories": [(), ("entries", 0)],
    "get_memory": [()],
    "forget_memory": [()],
}
NOT_STRINGS: Final[dict[str, object]] = {
    "number": 7,
    "null": None,
    "list": ["x"],
    "object": {"x": "y"},
    "bool": True,
}
NOT_INTEGERS: Final[tuple[object, ...]] = ("1", 1.5, True)
LONE_SURROGATES: Final = ("\ud800", "x\udfffy")

NOT_JSON: Final = (
    b"not json",
    b'{"jsonrpc": "2.0", "id": 5, "method": "ping"',
    b'{"jsonrpc": "2.0", "id": 5, "method": "ping", }',
    b"{'jsonrpc': '2.0', 'id': 5, 'method': 'ping'}",
    b"\x00\x01\x02",
    b"[" * 100_000,
)
NOT_UTF8: Final = (
    b"\xff\xfe",
    b'{"jsonrpc": "2.0", "id": 5, "method": "ping", "params": {"x": "\xc3"}}',
    b'{"jsonrpc": "2.0", "id": 5, "method": "ping", "params": {"x": "\xed\xa0\x80"}}',
    b'{"jsonrpc": "2.0", "id": 5, "method": "ping", "params": {"x": "\xc0\xaf"}}',
)
#: JSON that is not a JSON-RPC request, and the id its error carries.
NOT_JSONRPC: Final = (
    (b"[]", None),
    (b"5", None),
    (b'{"id": 6}', 6),
    (b'{"id": "six", "params": {}}', "six"),
    (b'{"jsonrpc": "2.0", "id": 6, "method": 5}', 6),
    (b'{"jsonrpc": "1.0", "id": "six", "method": "ping"}', "six"),
    (b'{"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": 5}', 6),
    (b'{"jsonrpc": "2.0", "id": [6], "method": "ping"}', None),
    (b'{"jsonrpc": "2.0", "id": null, "method": "ping"}', None),
)
#: A lone surrogate outside a tool's arguments, and the id its parse error carries.
SURROGATE_ELSEWHERE: Final = (
    (b'{"jsonrpc": "2.0", "id": 7, "method": "\\ud800"}', 7),
    (b'{"jsonrpc": "2.0", "id": "\\ud800", "method": "ping"}', None),
    (b'{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "\\udfff"}}', 7),
)


@dataclass(frozen=True)
class Probe:
    """One try: its class, the line it writes, and whether an answer is the one it needs."""

    kind: str
    line: bytes
    holds: Callable[[Answer], bool]


# --------------------------------------------------------------------------- probes


def probes() -> Iterator[Probe]:
    """Every try, class by class (the classes of the module's table)."""
    yield from _argument_probes()
    for depth in (100, 400, 5000):
        yield Probe("deep-argument", _deep_line(5, depth), _answers(5))
    for line in NOT_JSON:
        yield Probe("not-json", line, _error(PARSE_ERROR, None))
    for line in NOT_UTF8:
        yield Probe("not-utf8", line, _error(PARSE_ERROR, None))
    for line, request_id in NOT_JSONRPC:
        yield Probe("not-jsonrpc", line, _error(INVALID_REQUEST, request_id))
    for line, request_id in SURROGATE_ELSEWHERE:
        yield Probe("lone-surrogate-elsewhere", line, _error(PARSE_ERROR, request_id))


def _argument_probes() -> Iterator[Probe]:
    for tool, base in VALID.items():
        for spot, nullable in STRINGS[tool]:
            for kind, value in NOT_STRINGS.items():
                if not (kind == "null" and nullable):
                    yield _refused("non-string-argument", tool, _put(base, spot, value), spot)
            for lone in LONE_SURROGATES:
                yield _refused("lone-surrogate-argument", tool, _put(base, spot, lone), spot)
        yield _refused("lone-surrogate-argument", tool, {**base, "\ud800": 1}, ("\\ud800",))
        for spot, _ in INTEGERS[tool]:
            for value in NOT_INTEGERS:
                yield _refused("non-integer-argument", tool, _put(base, spot, value), spot)
        for spot in CLOSED[tool]:
            unknown = (*spot, "colour")
            yield _refused("unknown-argument", tool, _put(base, unknown, "red"), unknown)


def _refused(kind: str, tool: str, arguments: dict[str, Any], spot: Spot) -> Probe:
    """A call the tool must refuse with a tool error naming ``spot`` first."""
    where = "".join(f"[{step}]" if isinstance(step, int) else f".{step}" for step in spot)[1:]

    def holds(answer: Answer) -> bool:
        message = _tool_error(answer) if answer.get("id") == 1 else None
        return message is not None and message.startswith(f"invalid argument: {where} ")

    return Probe(kind, _call_line(1, tool, arguments), holds)


def _tool_error(answer: Answer) -> str | None:
    """The text of a tool error (``isError``) in one text block, or None."""
    result = answer.get("result")
    if not isinstance(result, dict) or result.get("isError") is not True:
        return None
    match result.get("content"):
        case [{"type": "text", "text": str(text)}]:
            return text
    return None


def _put(arguments: dict[str, Any], spot: Spot, value: object) -> dict[str, Any]:
    changed = copy.deepcopy(arguments)
    *parents, last = spot
    inner: Any = changed
    for step in parents:
        inner = inner[step]
    inner[last] = value
    return changed


def _call_line(request_id: int, tool: str, arguments: dict[str, Any]) -> bytes:
    params = {"name": tool, "arguments": arguments}
    return json.dumps(
        {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}
    ).encode()


def _deep_line(request_id: int, depth: int) -> bytes:
    """A get_memory call whose entry_id nests ``depth`` lists (written as text: Python's
    own encoder stops far short of the deepest)."""
    line = _call_line(request_id, "get_memory", {**VALID["get_memory"], "entry_id": 0})
    return line.replace(b'"entry_id": 0', b'"entry_id": ' + b"[" * depth + b"]" * depth)


def _error(code: int, request_id: object) -> Callable[[Answer], bool]:
    def holds(answer: Answer) -> bool:
        error = answer.get("error")
        return (
            isinstance(error, dict) and error.get("code") == code and answer.get("id") == request_id
        )

    return holds


def _answers(request_id: int) -> Callable[[Answer], bool]:
    """Any well-formed answer: a result or an error, for the request or with id null."""

    def holds(answer: Answer) -> bool:
        return answer.get("id") in (request_id, None) and ("result" in answer or "error" in answer)

    return holds


# -------------------------------------------------------------------------- the host


class StdioHost:
    """A host writing raw lines to a ``satchel mcp`` subprocess and reading its answers."""

    def __init__(self, process: Process, answer_seconds: float) -> None:
        assert process.stdin is not None
        assert process.stdout is not None
        self.stdin = process.stdin
        self.stdout = BufferedByteReceiveStream(process.stdout)
        self.answer_seconds = answer_seconds
        self.alive = True
        self.pings = 0

    async def answer(
        self, line: bytes, *, request_id: object = "any", seconds: float | None = None
    ) -> Answer | None:
        """Write ``line`` and read answers until one with ``request_id`` (``"any"``: the
        first) comes, within ``seconds`` (the host's bound when None); None when none
        does or the server is gone, ``{}`` for an answer that is not a JSON object."""
        if not self.alive:
            return None
        with anyio.move_on_after(self.answer_seconds if seconds is None else seconds):
            try:
                await self.stdin.send(line + b"\n")
                while True:
                    answer = json.loads(await self.stdout.receive_until(b"\n", 1 << 22))
                    if not isinstance(answer, dict):
                        return {}
                    if request_id == "any" or answer.get("id") == request_id:
                        return answer
            except (anyio.EndOfStream, anyio.IncompleteRead, anyio.BrokenResourceError, OSError):
                self.alive = False
            except ValueError:  # not JSON
                return {}
        return None

    async def ping(self) -> bool:
        """Whether the server still answers."""
        self.pings += 1
        ping_id = f"ping-{self.pings}"
        line = json.dumps({"jsonrpc": "2.0", "id": ping_id, "method": "ping"}).encode()
        answer = await self.answer(line, request_id=ping_id)
        return answer is not None and "result" in answer

    async def start(self) -> None:
        """The initialize handshake (a fresh interpreter on a loaded machine is slow)."""
        handshake = {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "bench-hostile", "version": "0"},
        }
        line = json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": handshake})
        answer = await self.answer(line.encode(), request_id=0, seconds=START_SECONDS)
        if answer is None or "result" not in answer:
            raise RuntimeError(f"satchel mcp did not complete the handshake: {answer}")
        await self.stdin.send(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')


async def run_mcp_probes(
    *, rounds: int = 1, answer_seconds: float = 10.0, backend: str = "asyncio"
) -> list[Row]:
    """Every probe (``rounds`` times) against a fresh ``satchel mcp`` over stdio on
    ``backend``; one row per class: (class, tries, held, failed). Each read waits
    ``answer_seconds`` at most."""
    tries: Counter[str] = Counter()
    held: Counter[str] = Counter()
    with tempfile.TemporaryDirectory(prefix="satchel-hostile-mcp-") as directory:
        folder = Path(directory)
        command = [
            sys.executable,
            "-m",
            "satchel",
            "mcp",
            "--create",
            "--db",
            str(folder / "hostile.db"),
        ]
        command += ["--embedder", "hashing", "--backend", backend]
        with (folder / "stderr.log").open("wb") as errlog:
            process = await anyio.open_process(command, stderr=errlog, cwd=folder)
        async with process:
            try:
                host = StdioHost(process, answer_seconds)
                await host.start()
                for _ in range(rounds):
                    for probe in probes():
                        answer = await host.answer(probe.line)
                        tries[probe.kind] += 1
                        held[probe.kind] += bool(
                            answer and probe.holds(answer) and await host.ping()
                        )
                await host.stdin.aclose()  # the host hangs up: the server exits
                with anyio.move_on_after(STOP_SECONDS):
                    await process.wait()
            finally:
                if process.returncode is None:
                    process.kill()
    return [(kind, tries[kind], held[kind], tries[kind] - held[kind]) for kind in tries]
