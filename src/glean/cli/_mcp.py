"""``glean mcp``: serve a database's memory to an MCP host, over stdio or streamable HTTP.

The server itself is :mod:`glean.mcp` (imported only when the command runs, so the rest
of the CLI works without the MCP SDK); this module parses the command line, opens the
store and the runtime with the shared CLI helpers, and serves until the host hangs up.

``add_mcp`` is handed ``_main``'s option helpers rather than importing them: ``_main``
imports this module, and an import back would be a cycle (``tests/test_layers.py``).
"""

from __future__ import annotations

import argparse
import importlib.util
import logging
import sys
from functools import partial
from typing import TYPE_CHECKING, Final

import glean

from . import _options as options
from ._commands import CommandError, make_embedder, open_store, run_async, store_label

if TYPE_CHECKING:
    SubParsers = argparse._SubParsersAction[argparse.ArgumentParser]

DEFAULT_PORT: Final = 8765

_DESCRIPTION = """\
Serve the memory in --db (or --store) to an MCP host (Claude Code, Claude Desktop,
Cursor, or any Model Context Protocol client) as four tools:

  prepare_context  a bounded, cited context pack for a query (as 'glean prepare')
  add_memories     write memory entries, all or nothing; returns their refs
  get_memory       read exactly the version a citation names
  forget_memory    take an entry out of search (its versions stay readable)

By default it speaks MCP over stdin and stdout, as a host launches it: stdout carries
nothing but the protocol and every log line goes to stderr. It serves until the host
closes stdin. The database at --db is created if it does not exist. A bad tool argument
is answered with a tool error naming the field; the server keeps serving.

--http serves the same tools as a streamable-HTTP endpoint at
http://127.0.0.1:PORT/mcp instead (loopback only, no authentication; on asyncio only).
--gate turns on the recall-sufficiency gate for every prepare ('glean prepare --help');
--dedup-turns N makes a prepare with a session_id hold back what that session's last
N packs delivered.
docs/mcp.md lists every tool's arguments and results."""

_EPILOG = """\
examples:
  glean mcp --db ~/.glean/agent.db
  glean mcp --db team.db --gate --dedup-turns 3 --backend trio
  glean mcp --db team.db --http --port 8765

register it with Claude Code (stdio; use absolute paths):
  claude mcp add glean -- glean mcp --db /home/me/.glean/agent.db
or commit a project's .mcp.json:
  {"mcpServers": {"glean": {"command": "glean",
                            "args": ["mcp", "--db", "/home/me/.glean/agent.db"]}}}
or, with 'glean mcp --http' running:
  claude mcp add --transport http glean http://127.0.0.1:8765/mcp
"""


def add_mcp(commands: SubParsers) -> None:
    """Add ``glean mcp`` to the subcommands."""
    parser = options.command(
        commands,
        "mcp",
        summary="serve the memory to an MCP host (Claude Code, Cursor, ...) over stdio or HTTP",
        description=_DESCRIPTION,
        epilog=_EPILOG,
    )
    options.where_option(parser, "database file to serve (created if needed)")
    options.embedder_option(parser)
    parser.add_argument(
        "--gate",
        action="store_true",
        help="run the recall-sufficiency gate on every prepare (default: off)",
    )
    parser.add_argument(
        "--dedup-turns",
        type=_count,
        default=0,
        metavar="N",
        help=(
            "hold back what a session_id's packs delivered for its next N prepares instead"
            " of repeating it (default: 0, off)"
        ),
    )
    parser.add_argument(
        "--http",
        action="store_true",
        help="serve streamable HTTP on 127.0.0.1 instead of stdio (asyncio only)",
    )
    parser.add_argument(
        "--port",
        type=_port,
        default=None,
        metavar="N",
        help=f"the --http port, 1..65535 (default: {DEFAULT_PORT})",
    )
    parser.set_defaults(run=mcp_command)


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be at least 0, not {value}")
    return value


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not 1 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"must be in 1..65535, not {value}")
    return value


def mcp_command(args: argparse.Namespace) -> int:
    """``glean mcp``: serve until the host hangs up (stdio) or the process is interrupted."""
    if importlib.util.find_spec("mcp") is None:
        raise CommandError("glean mcp needs the MCP SDK: pip install 'glean[mcp]'", code=2)
    if args.port is not None and not args.http:
        raise CommandError("--port needs --http (stdio has no port)", code=2)
    if args.http and args.backend != "asyncio":
        raise CommandError("--http runs on asyncio only; use stdio for --backend trio", code=2)
    _log_to_stderr()
    embedder = make_embedder(args.embedder)
    run_async(partial(_serve, args, embedder), args.backend)
    return 0


def _log_to_stderr() -> None:
    # stdout is the protocol's: every log record goes to stderr, warnings and worse.
    logging.basicConfig(
        stream=sys.stderr, level=logging.WARNING, format="glean mcp: %(levelname)s: %(message)s"
    )


async def _serve(args: argparse.Namespace, embedder: glean.Embedder) -> None:
    from glean.mcp import HTTP_PATH, serve_http, serve_stdio

    store = await open_store(args, existing=False)
    async with glean.open_runtime(
        store=store,
        embedder=embedder,
        recall_policy=glean.RecallSufficiencyPolicy() if args.gate else None,
        dedup_turns=args.dedup_turns,
    ) as runtime:
        where = store_label(args)
        if args.http:
            port = DEFAULT_PORT if args.port is None else args.port
            url = f"http://127.0.0.1:{port}{HTTP_PATH}"
            print(f"glean mcp: serving {where} at {url}", file=sys.stderr, flush=True)
            await serve_http(runtime, port=port)
        else:
            print(f"glean mcp: serving {where} over stdio", file=sys.stderr, flush=True)
            await serve_stdio(runtime)
