"""The ``satchel`` command line: the list of commands, argument parsing and dispatch.

``main`` never lets an exception or ``SystemExit`` escape for an expected failure: it
returns the exit code, so the CLI can be driven in-process (tests, notebooks).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import sys
from importlib import metadata
from typing import TYPE_CHECKING, Final

import satchel

from . import (
    _add,
    _copy,
    _demo,
    _erase,
    _export,
    _forget,
    _get,
    _import,
    _ingest,
    _list,
    _mcp,
    _prepare,
    _reembed,
    _scopes,
    _serve,
)
from ._running import CommandError

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ._options import Command

_DESCRIPTION = """\
satchel prepares bounded, cited context packs for AI agents from the memory they keep.

Start with 'satchel demo'. Then load your own workload folder (an entries.jsonl
with one record per line, see 'satchel ingest --help') with 'satchel ingest', and
ask for a pack with 'satchel prepare'.
"""

_EPILOG = """\
examples:
  satchel demo
  satchel ingest ./my-workload --db team.db
  satchel add --db team.db --scope project:demo "Deploys happen on Thursdays"
  satchel prepare --db team.db --scope project:demo "Why was the deploy slow?"

'satchel COMMAND --help' explains each command.
"""


#: Every command, in the order ``satchel --help`` lists them: the one list a new
#: command joins (docs/architecture.md, "Adding a command").
COMMANDS: Final[tuple[Command, ...]] = (
    _demo.COMMAND,
    _ingest.COMMAND,
    _add.COMMAND,
    _prepare.COMMAND,
    _reembed.COMMAND,
    _get.COMMAND,
    _scopes.COMMAND,
    _list.COMMAND,
    _forget.COMMAND,
    _erase.COMMAND,
    _copy.COMMAND,
    _export.COMMAND,
    _import.COMMAND,
    _mcp.COMMAND,
    _serve.COMMAND,
)

#: An id as a pack prints it: 22 URL-safe base64 characters. One in 64 begins with "-".
PRINTED_ID: Final = re.compile(r"[A-Za-z0-9_-]{22}")


def _ids_attached(arguments: list[str]) -> list[str]:
    """``--id X`` as ``--id=X`` where X is a printed id: one beginning with "-" argparse
    would otherwise take for an option (and fail: "expected one argument"). Not after
    a bare ``--``, where every argument is a positional one, as written."""
    attached: list[str] = []
    for n, argument in enumerate(arguments):
        if argument == "--":
            return attached + arguments[n:]
        if attached and attached[-1] == "--id" and PRINTED_ID.fullmatch(argument):
            attached[-1] = f"--id={argument}"
        else:
            attached.append(argument)
    return attached


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``satchel`` command line and return its exit code.

    Args:
        argv: the arguments after the program name; ``sys.argv[1:]`` when None.

    Returns:
        0 on success, 1 when the command could not do its work, 2 for bad input,
        130 when interrupted.
    """
    parser = build_parser()
    arguments = list(sys.argv[1:] if argv is None else argv)
    try:
        args = parser.parse_args(_ids_attached(arguments))
    except SystemExit as exc:  # --help, --version, or a usage error argparse has printed
        return exc.code if isinstance(exc.code, int) else 2
    args.argv = arguments  # what a command that starts itself again passes on
    try:
        code: int = args.run(args)
    except CommandError as exc:
        print(f"satchel {args.command}: error: {exc}", file=sys.stderr)
        return exc.code
    except BrokenPipeError:  # stdout closed early (`satchel prepare ... | head`): not an error
        _silence_stdout()
        return 1
    except (satchel.SatchelError, OSError) as exc:
        print(f"satchel {args.command}: error: {_said(exc)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"satchel {args.command}: interrupted", file=sys.stderr)
        return 130
    return code


def _said(exc: BaseException) -> str:
    """An error's message; one raised without any (``TimeoutError()``) is named by its
    kind, so no error prints an empty line."""
    return str(exc) or (exc.__doc__ or type(exc).__name__).strip().splitlines()[0]


def _silence_stdout() -> None:
    # Python would report the broken pipe again when it flushes stdout at exit.
    with contextlib.suppress(OSError, ValueError):  # stdout may be no real file
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def build_parser() -> argparse.ArgumentParser:
    """The parser of ``satchel`` and its subcommands."""
    parser = argparse.ArgumentParser(
        prog="satchel",
        description=_DESCRIPTION,
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for command in COMMANDS:
        command.add_to(commands)
    return parser


def _version() -> str:
    try:
        return metadata.version("satchel")
    except metadata.PackageNotFoundError:  # run from a source tree
        return "(not installed)"
