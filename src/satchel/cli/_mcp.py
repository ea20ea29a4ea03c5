"""``satchel mcp``: serve a database's memory to an MCP host, over stdio or streamable HTTP.

The server itself is :mod:`satchel.mcp` (imported only when the command runs, so the rest
of the CLI works without the MCP SDK); this module parses the command line, opens the
store and the runtime with the shared CLI helpers, and serves until the host hangs up
or a signal stops it. Signals are caught here from the start, for both transports, so
what a stop prints and exits with never depends on where the signal lands.
"""

from __future__ import annotations

import argparse
import importlib.util
import logging
import signal
import sys
from functools import partial
from typing import TYPE_CHECKING, Final

import anyio
import attrs

from .._otlp import telemetry_from_env
from . import _options as options
from ._running import (
    CommandError,
    make_embedder,
    open_command_runtime,
    refuse_missing_store,
    run_async,
    store_label,
)

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Awaitable, Callable

    import satchel

    from .._otlp import Telemetry

#: Beside ``satchel serve``'s 8765, so both can run on one machine.
DEFAULT_PORT: Final = 8766

_DESCRIPTION = """\
Serve the memory in --db (or --store) to an MCP host (Claude Code, Claude Desktop,
Cursor, or any Model Context Protocol client) as five tools:

  prepare_context  a bounded, cited context pack for a query (as 'satchel prepare')
  add_memories     write memory entries, all or nothing; returns their refs
  get_memory       read exactly the version a citation names
  forget_memory    take an entry out of search (its versions stay readable)
  list_memories    a page of a scope's records, newest first (as 'satchel list')

--allow-erase adds a sixth, erase_memory, which erases every version of an entry so
that nothing of it stays readable ('satchel erase --help'). It is off by default: an
agent should not be able to erase by accident.

By default it speaks MCP over stdin and stdout, as a host launches it: stdout carries
nothing but the protocol and every log line goes to stderr. It serves until the host
closes stdin, or until SIGTERM (exit 0) or Ctrl-C (SIGINT, exit 130) stops it; it then
closes the store and says 'satchel mcp: stopped' on stderr. The database at --db is
created only with --create (a mistyped path is refused; the start line says when
it created one). A bad tool argument is answered with a tool error naming
the field; the server keeps serving.

--http serves the same tools as a streamable-HTTP endpoint at
http://127.0.0.1:PORT/mcp instead (loopback only, no authentication; on asyncio only).
--gate turns on the recall-sufficiency gate for every prepare ('satchel prepare --help');
--dedup-turns N makes a prepare with a session_id hold back what that session's last
N packs delivered.
docs/mcp.md lists every tool's arguments and results."""

_EPILOG = """\
examples:
  satchel mcp --db ~/.satchel/agent.db --create     # a new agent's memory
  satchel mcp --db team.db --gate --dedup-turns 3 --backend trio
  satchel mcp --db team.db --http --port 8766

register it with Claude Code (stdio; use absolute paths):
  claude mcp add satchel -- satchel mcp --db /home/me/.satchel/agent.db --create
or commit a project's .mcp.json:
  {"mcpServers": {"satchel": {"command": "satchel",
                            "args": ["mcp", "--db", "/home/me/.satchel/agent.db", "--create"]}}}
or, with 'satchel mcp --http' running:
  claude mcp add --transport http satchel http://127.0.0.1:8766/mcp
"""


def _arguments(parser: argparse.ArgumentParser) -> None:
    options.serving_options(parser)
    parser.add_argument(
        "--http",
        action="store_true",
        help="serve streamable HTTP on 127.0.0.1 instead of stdio (asyncio only)",
    )
    parser.add_argument(
        "--port",
        type=_mcp_port,
        default=None,
        metavar="N",
        help=f"the --http port, 1..65535 (default: {DEFAULT_PORT})",
    )
    parser.add_argument(
        "--allow-erase",
        action="store_true",
        help="add the erase_memory tool, which erases every version of an entry (default: off)",
    )


def _mcp_port(text: str) -> int:
    value = options.port(text)
    if value == 0:
        raise argparse.ArgumentTypeError("must be in 1..65535, not 0")
    return value


def mcp_command(args: argparse.Namespace) -> int:
    """``satchel mcp``: serve until the host hangs up (stdio) or the process is interrupted."""
    if importlib.util.find_spec("mcp") is None:
        raise CommandError("satchel mcp needs the MCP SDK: pip install 'satchel[mcp]'", code=2)
    if args.port is not None and not args.http:
        raise CommandError("--port needs --http (stdio has no port)", code=2)
    if args.http and args.backend != "asyncio":
        raise CommandError("--http runs on asyncio only; use stdio for --backend trio", code=2)
    _log_to_stderr()
    embedder = make_embedder(args.embedder)
    with telemetry_from_env() as telemetry:
        stopped_by = run_async(partial(_serve_stopping, args, embedder, telemetry), args.backend)
    print("satchel mcp: stopped", file=sys.stderr, flush=True)
    # Ctrl-C is an interruption, as a shell counts it; SIGTERM, like a host closing
    # stdin, asks for the normal end of a server ('satchel serve' exits 0 on both).
    return 130 if stopped_by == signal.SIGINT else 0


COMMAND: Final = options.Command(
    "mcp",
    summary="serve the memory to an MCP host (Claude Code, Cursor, ...) over stdio or HTTP",
    description=_DESCRIPTION,
    epilog=_EPILOG,
    arguments=_arguments,
    run=mcp_command,
)


@attrs.define
class _Stopping:
    """The signals that stop the server: the first SIGINT or SIGTERM ends serving (a
    second one over HTTP ends it at once, with connections still open); the first is
    kept for the exit code."""

    signals: AsyncIterator[signal.Signals]
    first: int | None = None

    async def next_signal(self) -> None:
        async for number in self.signals:
            self.first = number if self.first is None else self.first
            return

    async def run(self, serving: Callable[[], Awaitable[None]]) -> None:
        """``serving`` until it ends or the first signal cancels it."""
        async with anyio.create_task_group() as group:

            async def stop() -> None:
                await self.next_signal()
                group.cancel_scope.cancel()

            group.start_soon(stop)
            await serving()
            group.cancel_scope.cancel()


async def _serve_stopping(
    args: argparse.Namespace, embedder: satchel.Embedder, telemetry: Telemetry
) -> int | None:
    """Serve until the host hangs up or a signal stops it; the signal, if one did. One
    that arrives while the store opens stops the server as soon as it serves."""
    with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        stopping = _Stopping(signals)
        await _serve(args, embedder, telemetry, stopping)
    return stopping.first


def _log_to_stderr() -> None:
    # stdout is the protocol's: every log record goes to stderr, warnings and worse.
    logging.basicConfig(
        stream=sys.stderr, level=logging.WARNING, format="satchel mcp: %(levelname)s: %(message)s"
    )


async def _serve(
    args: argparse.Namespace,
    embedder: satchel.Embedder,
    telemetry: Telemetry,
    stopping: _Stopping,
) -> None:
    from satchel.mcp import HTTP_PATH, serve_http, serve_stdio

    created = refuse_missing_store(args, "serve")
    async with open_command_runtime(
        args, embedder, telemetry, existing=False, gate=args.gate, dedup_turns=args.dedup_turns
    ) as runtime:
        where = store_label(args) + ("" if created is None else " (created now)")
        if args.http:
            port = DEFAULT_PORT if args.port is None else args.port
            url = f"http://127.0.0.1:{port}{HTTP_PATH}"
            print(f"satchel mcp: serving {where} at {url}", file=sys.stderr, flush=True)
            await serve_http(
                runtime,
                port=port,
                allow_erase=args.allow_erase,
                shutdown_trigger=stopping.next_signal,
            )
        else:
            print(f"satchel mcp: serving {where} over stdio", file=sys.stderr, flush=True)
            await stopping.run(partial(serve_stdio, runtime, allow_erase=args.allow_erase))
