"""``satchel serve``: serve a database's memory over HTTP (:mod:`satchel.http`, on Hypercorn).

This module parses the command line, refuses an unauthenticated service beyond the
loopback interface, opens the store and the runtime with the shared CLI helpers, binds
the socket, says where it listens (one line on stderr, never a store password) and
serves until SIGINT or SIGTERM, then exits 0 after a graceful shutdown.

``satchel.http`` (Starlette, Hypercorn: the ``service`` extra) is imported only when the
command runs, so the rest of the CLI works without it.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import signal
import socket
import stat
import sys
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Final

import anyio

import satchel

from .._otlp import telemetry_from_env
from . import _options as options
from . import _workers
from ._running import (
    CommandError,
    make_embedder,
    open_command_runtime,
    refuse_missing_store,
    run_async,
    store_label,
)

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Awaitable, Callable, Mapping

    from starlette.types import ASGIApp

    from satchel.http import TokenGrant

    from .._otlp import Telemetry

DEFAULT_HOST: Final = "127.0.0.1"
DEFAULT_PORT: Final = 8765
#: Seconds a client may take to send a request's headers, and then its body
#: (``satchel.http.DEFAULT_READ_TIMEOUT``, spelled here: the CLI imports the service late).
DEFAULT_READ_TIMEOUT: Final = 10.0
#: The Host header names a loopback service without tokens answers (DNS rebinding).
LOOPBACK_HOST_NAMES: Final = ("127.0.0.1", "localhost", "::1")

_DESCRIPTION = """\
Serve the memory in --db (or --store) over HTTP, as JSON:

  POST   /v1/context/prepare                  a bounded, cited context pack for a query
  POST   /v1/context/explain                  the pack with its receipts and omissions
  POST   /v1/context/deadline                 the seconds a prepare of a request may take
  POST   /v1/memories                         write memory entries to a scope, all or nothing
  GET    /v1/memories/SCOPE/ENTRY?version=N   read exactly the version a citation names
  PUT    /v1/memories/SCOPE/ENTRY?version=N   write a new version of an entry
  DELETE /v1/memories/SCOPE/ENTRY?version=N   take an entry out of search
  DELETE /v1/memories/SCOPE/ENTRY?erase=true  erase an entry: no version stays readable
  POST   /v1/experiences                      write experiences to a scope
  POST   /v1/topic-memories                   write topic memories to a scope
  POST   /v1/resources                        write resources to a scope
  PUT    /v1/profiles/SCOPE                   replace the scope's profile
  POST   /v1/erase                            erase any record by its citation
  GET    /v1/scopes                           the scopes the token may read
  GET    /v1/scopes/SCOPE/records             a scope's records, newest first, paged
  DELETE /v1/scopes/SCOPE                     erase every record of a scope
  GET    /healthz                             liveness (no token needed)
  GET    /openapi.json                        the OpenAPI 3.1 document (no token needed)
  GET    /ui/                                 the inspector: a web page to browse scopes and
                                              records, try prepares, forget and erase
                                              (--no-ui: not served)

Percent-encode SCOPE in a URL (it may hold ':' and '/'). The store at --db or
--store must exist (a mistyped path is refused) unless --create is given; then the
start line says it was created. One line on stderr says where the service listens;
SIGINT (Ctrl-C) or SIGTERM stops it gracefully and it exits 0.

Authentication: with --token-file, every API request needs 'Authorization: Bearer
TOKEN', and each token reads (and, with "write": true, writes) only its scopes:
  {"tokens": [
    {"name": "agent", "token": "a-long-random-secret", "scopes": ["project:*"],
     "write": true},
    {"name": "viewer", "token": "another-long-secret", "scopes": ["chat-1", "chat-2"]}
  ]}
A pattern is a scope's name, or a prefix ending in '*' ('*' alone: every scope). A
token has at least 16 characters (e.g. python -c "import secrets;
print(secrets.token_urlsafe(32))"); keep the file private (chmod 600).

Without --token-file every caller may read and write every scope, so satchel serve
listens on the loopback interface only (127.0.0.1, ::1, localhost) and answers
only requests whose Host header names it. To listen elsewhere (--host 0.0.0.0),
give a --token-file, or --insecure when something in front of it (a proxy, a
private network) authenticates callers.

--gate runs the recall-sufficiency gate on every prepare ('satchel prepare --help');
--dedup-turns N makes a prepare with a session_id hold back what that session's
last N packs delivered; with --shared-sessions the sessions live in the store, so
several satchel serve processes over one store (replicas) share them;
--timeout bounds each prepare (504 past it);
--read-timeout bounds how long a client may take to send a request's headers
(the connection is closed) and then its body (408). Each request
is an OpenTelemetry SERVER span, exported over OTLP when the standard
OTEL_EXPORTER_OTLP_* variables ask for it. docs/service.md documents every
endpoint, error and field."""

_EPILOG = """\
examples:
  satchel serve --db team.db
  satchel serve --db team.db --port 9000 --gate --backend trio
  satchel serve --db team.db --host 0.0.0.0 --token-file tokens.json
  satchel serve --db team.db --dedup-turns 3 --shared-sessions --port 8766
  satchel serve --store "oceanbase://satchel:secret@db.internal:2881/satchel" \\
      --host 0.0.0.0 --token-file /etc/satchel/tokens.json --timeout 2

then, for example:
  curl -s localhost:8765/v1/memories -H 'Content-Type: application/json' \\
      -d '{"scope_id": "project:demo", "entries": [{"text": "Backups run at 02:00"}]}'
  curl -s localhost:8765/v1/context/prepare -H 'Content-Type: application/json' \\
      -d '{"scope_id": "project:demo", "query": "when do backups run?"}'
"""


def _arguments(parser: argparse.ArgumentParser) -> None:
    options.serving_options(parser)
    parser.add_argument(
        "--host",
        default=DEFAULT_HOST,
        metavar="ADDRESS",
        help=(
            f"the address to listen on (default: {DEFAULT_HOST}); anything but loopback"
            " needs --token-file or --insecure"
        ),
    )
    parser.add_argument(
        "--port",
        type=options.port,
        default=DEFAULT_PORT,
        metavar="N",
        help=f"the port, 0..65535; 0 picks a free one (default: {DEFAULT_PORT})",
    )
    parser.add_argument(
        "--token-file",
        metavar="FILE",
        help="JSON file of bearer tokens and the scopes each may read and write (see above)",
    )
    parser.add_argument(
        "--no-ui",
        dest="ui",
        action="store_false",
        help="do not serve the inspector, the web page at /ui/ (default: served)",
    )
    parser.add_argument(
        "--insecure",
        action="store_true",
        help="allow a non-loopback --host without --token-file: every caller may do anything",
    )
    parser.add_argument(
        "--shared-sessions",
        action="store_true",
        help=(
            "keep --dedup-turns sessions in the store, shared by every satchel serve over"
            " it (replicas), instead of in this process (default: off)"
        ),
    )
    parser.add_argument(
        "--workers",
        type=options.positive,
        default=1,
        metavar="N",
        help=(
            "serve from N processes over the one store and address, each new connection"
            " going to one of them: more of a machine's cores for prepares (default: 1);"
            " not with an in-memory store, and with --dedup-turns only with"
            " --shared-sessions, since a session's turns may reach any of them"
        ),
    )
    # A worker's end of the socket the first process listens on (--workers).
    parser.add_argument("--listen-fd", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument(
        "--timeout",
        type=options.seconds,
        default=None,
        metavar="SECONDS",
        help="bound each prepare; past it the request gets 504 (default: no bound)",
    )
    parser.add_argument(
        "--read-timeout",
        type=options.seconds,
        default=DEFAULT_READ_TIMEOUT,
        metavar="SECONDS",
        help=(
            "how long a client may take to send a request's headers (then its connection is"
            " closed) and then its body (then it gets 408); also how long an idle"
            f" connection is kept (default: {DEFAULT_READ_TIMEOUT:g})"
        ),
    )
    parser.add_argument(
        "--max-body-bytes",
        type=options.positive,
        default=1_048_576,
        metavar="N",
        help="the largest request body; a larger one gets 413 (default: 1048576)",
    )


def serve_command(args: argparse.Namespace) -> int:
    """``satchel serve``: serve until SIGINT or SIGTERM, then exit 0."""
    for module in ("starlette", "hypercorn", "jinja2"):
        if importlib.util.find_spec(module) is None:
            raise CommandError("satchel serve needs pip install 'satchel[service]'", code=2)
    from satchel import http

    loopback = http.is_loopback(args.host)
    if not loopback and args.token_file is None and not args.insecure:
        raise CommandError(
            f"refusing to serve on {args.host} without --token-file: anyone who can reach"
            " it could read and write every scope. Give a --token-file, listen on"
            " 127.0.0.1, or pass --insecure if something in front of it authenticates",
            code=2,
        )
    if args.shared_sessions and not args.dedup_turns:
        raise CommandError(
            "--shared-sessions shares --dedup-turns sessions: give --dedup-turns N", code=2
        )
    if args.workers > 1:
        _check_workers(args)
    tokens = None if args.token_file is None else _tokens(args.token_file)
    # Without tokens on loopback, only requests naming the loopback host are answered:
    # a web page cannot reach the service through DNS rebinding.
    hosts = LOOPBACK_HOST_NAMES if tokens is None and loopback else None
    embedder = make_embedder(args.embedder)
    with telemetry_from_env() as telemetry:
        run = partial(_serve, args, embedder, tokens, hosts, telemetry)
        run_async(run, args.backend)
    return 0


COMMAND: Final = options.Command(
    "serve",
    summary="serve the memory over HTTP: prepare, add, get and forget as JSON endpoints",
    description=_DESCRIPTION,
    epilog=_EPILOG,
    arguments=_arguments,
    run=serve_command,
)


def _check_workers(args: argparse.Namespace) -> None:
    """Refuse what N worker processes cannot share: a store in one process's memory, and
    sessions kept in each process."""
    if args.db == ":memory:" or (args.store or "").startswith("memory:"):
        raise CommandError(
            f"--workers {args.workers} needs a store the processes share: an in-memory"
            " store lives in one process (give --db PATH or --store URL)",
            code=2,
        )
    if args.dedup_turns and not args.shared_sessions:
        raise CommandError(
            f"--workers {args.workers} with --dedup-turns needs --shared-sessions: a"
            " session's turns may reach any worker, so its sessions must live in the store",
            code=2,
        )


def _tokens(path: str) -> Mapping[str, TokenGrant]:
    from satchel import http

    try:
        tokens = http.load_tokens(path)
    except (OSError, satchel.InvalidRequestError) as exc:
        raise CommandError(f"--token-file {path}: {exc}", code=2) from exc
    if Path(path).stat().st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        print(
            f"satchel serve: warning: {path} is readable by other users (chmod 600 {path})",
            file=sys.stderr,
        )
    return tokens


async def _serve(
    args: argparse.Namespace,
    embedder: satchel.Embedder,
    tokens: Mapping[str, TokenGrant] | None,
    hosts: tuple[str, ...] | None,
    telemetry: Telemetry,
) -> None:
    from satchel import http

    provider = telemetry.tracer_provider

    # Signals are caught from the start: one that arrives while the store opens stops
    # the service, cleanly, as soon as it serves.
    created = refuse_missing_store(args, "serve")
    with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:

        async def stopped() -> None:
            async for _ in signals:
                return

        async with (
            open_command_runtime(
                args,
                embedder,
                telemetry,
                existing=False,
                gate=args.gate,
                dedup_turns=args.dedup_turns,
                shared_sessions=args.shared_sessions,
                prepare_timeout=args.timeout,
            ) as runtime,
            _playground(args, embedder, telemetry, runtime) as playground,
        ):
            app = http.create_app(
                runtime,
                tokens=tokens,
                max_body_bytes=args.max_body_bytes,
                tracer_provider=provider,
                allowed_hosts=hosts,
                read_timeout=args.read_timeout,
                ui=args.ui,
                playground=playground,
            )
            if args.listen_fd is not None:  # a worker of the first process (--workers)
                await _serve_as_worker(args, app, stopped)
            else:
                label = store_label(args) + ("" if created is None else " (created now)")
                await _serve_first(args, app, stopped, label, _auth_of(tokens))
    print("satchel serve: stopped", file=sys.stderr, flush=True)


@contextlib.asynccontextmanager
async def _playground(
    args: argparse.Namespace,
    embedder: satchel.Embedder,
    telemetry: Telemetry,
    runtime: satchel.Runtime,
) -> AsyncIterator[dict[str, satchel.Runtime] | None]:
    """The runtimes of the inspector playground's gate switch: ``runtime`` and one
    more over the same store with the gate the other way. Only a store that several
    connections share has a second (a database file or a server, not ``:memory:``),
    and only when the inspector is served."""
    in_memory = args.db == ":memory:" or (args.store or "").startswith("memory:")
    if not args.ui or in_memory:
        yield None
        return
    async with open_command_runtime(
        args,
        embedder,
        telemetry,
        existing=False,
        gate=not args.gate,
        dedup_turns=args.dedup_turns,
        shared_sessions=args.shared_sessions,
        prepare_timeout=args.timeout,
    ) as other:
        yield {"on": runtime, "off": other} if args.gate else {"on": other, "off": runtime}


def _auth_of(tokens: Mapping[str, TokenGrant] | None) -> str:
    """How the start line describes who may call."""
    from satchel import http

    return "no authentication" if tokens is None else http.describe(tokens.values())


async def _serve_first(
    args: argparse.Namespace,
    app: ASGIApp,
    stopped: Callable[[], Awaitable[None]],
    label: str,
    auth: str,
) -> None:
    """Listen, start ``--workers`` - 1 more processes on the socket, say where it
    serves, and serve until ``stopped``; then stop the workers."""
    from satchel import http

    sock = _listen(args.host, args.port)
    started = _workers.Workers(())
    if args.workers > 1:
        start = partial(_workers.Workers.start, sock, args.workers - 1, args.argv)
        started = await anyio.to_thread.run_sync(start)
    processes = f", {args.workers} processes" if len(started) else ""
    print(
        f"satchel serve: serving {label} at {http.url_of(sock)} ({auth}{processes})",
        file=sys.stderr,
        flush=True,
    )
    started.watch()
    try:
        await http.serve(app, sock, shutdown_trigger=stopped, read_timeout=args.read_timeout)
    finally:
        with anyio.CancelScope(shield=True):
            await started.astop()


async def _serve_as_worker(
    args: argparse.Namespace, app: ASGIApp, stopped: Callable[[], Awaitable[None]]
) -> None:
    """Serve on the first process's socket (``--listen-fd``) until ``stopped``, which
    the first process's end also triggers."""
    from satchel import http

    sock = socket.socket(fileno=args.listen_fd)
    _workers.stop_with_first_process()
    _workers.say_ready()
    await http.serve(app, sock, shutdown_trigger=stopped, read_timeout=args.read_timeout)


def _listen(host: str, port: int) -> socket.socket:
    from satchel import http

    try:
        return http.listen(host, port)
    except OSError as exc:
        raise CommandError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from exc
