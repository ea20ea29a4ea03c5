"""How a ``satchel`` subcommand is declared, and the options the subcommands share.

Every command is a :class:`Command` value that its own module declares (named
``COMMAND``, or after the command when a module holds a small group of them), and
``_main.COMMANDS`` lists them in the order ``satchel --help`` shows: its name, its help
texts, the function that adds its arguments and the handler that runs it. Here too:
``--db PATH`` or ``--store URL``, ``--embedder``, the serving commands' ``--gate`` and
``--dedup-turns``, and the argument types that check what a user typed. Nothing here
opens a store or runs a command (``_running`` does).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

import attrs

import satchel
from satchel.embedders import SPEC_HELP, check_spec

if TYPE_CHECKING:
    from collections.abc import Callable

    SubParsers = argparse._SubParsersAction[argparse.ArgumentParser]


def _no_arguments(command: argparse.ArgumentParser) -> None:
    """A command that takes nothing but ``--backend``."""


@attrs.frozen
class Command:
    """One ``satchel`` subcommand: what ``--help`` says of it, its arguments and its handler.

    Attributes:
        name: the word after ``satchel``.
        summary: its line in ``satchel --help``.
        description: the text of ``satchel NAME --help`` (line breaks kept as written).
        epilog: the examples after the options.
        arguments: adds the command's own arguments, after ``--backend``, in the order
            ``--help`` lists them.
        run: the handler: takes the parsed arguments and returns the exit code (0 done,
            1 could not do its work, 2 bad input), raising ``_running.CommandError`` to
            stop with a message.
    """

    name: str
    summary: str
    description: str
    epilog: str
    run: Callable[[argparse.Namespace], int]
    arguments: Callable[[argparse.ArgumentParser], None] = _no_arguments

    def add_to(self, commands: SubParsers) -> None:
        """Add the command's parser to ``satchel``'s subcommands."""
        parser = commands.add_parser(
            self.name,
            help=self.summary,
            description=self.description,
            epilog=self.epilog,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        parser.add_argument(
            "--backend",
            choices=("asyncio", "trio"),
            default="asyncio",
            help="the async library to run on (default: asyncio; trio needs satchel[trio])",
        )
        self.arguments(parser)
        parser.set_defaults(run=self.run)


def embedder_option(command: argparse.ArgumentParser, *, required: bool = False) -> None:
    command.add_argument(
        "--embedder",
        type=embedder_spec,
        default=None if required else "static",
        required=required,
        metavar=SPEC_HELP,
        help=(
            "embedder for vectors: static (the bundled semantic model), hashing (spelling"
            " only, no model) or st:PATH (the sentence-transformers model in folder PATH;"
            ' needs pip install "satchel[sentence-transformers]"); a database keeps the'
            " embedder that built it" + ("" if required else " (default: static)")
        ),
    )


def where_option(command: argparse.ArgumentParser, db_help: str) -> None:
    """``--db PATH`` (the embedded store) or ``--store URL`` (any store), exactly one."""
    where = command.add_mutually_exclusive_group(required=True)
    where.add_argument("--db", metavar="PATH", help=db_help)
    where.add_argument(
        "--store",
        metavar="URL",
        help=(
            "a store by URL instead of --db: sqlite:///path, seekdb:///abs/dir (an embedded"
            " seekdb engine), oceanbase://user:pass@host:port/db (?unix_socket=PATH for a"
            " local socket); the password is never printed"
        ),
    )


def embedder_spec(text: str) -> str:
    """An ``--embedder`` choice: static, hashing or ``st:PATH``."""
    try:
        return check_spec(text)
    except satchel.InvalidRequestError:
        raise argparse.ArgumentTypeError(f"expected {SPEC_HELP}, not {text!r}") from None


def serving_options(command: argparse.ArgumentParser) -> None:
    """What a server opens and runs: ``--db`` or ``--store`` (made only with ``--create``),
    ``--embedder``, and ``--gate`` and ``--dedup-turns N`` for every prepare it answers."""
    where_option(command, "database file to serve (it must exist, unless --create)")
    command.add_argument(
        "--create",
        action="store_true",
        help=(
            "create the store if it does not exist (without it a missing --db file or"
            " --store is refused: a mistyped path would serve an empty store)"
        ),
    )
    embedder_option(command)
    command.add_argument(
        "--gate",
        action="store_true",
        help="run the recall-sufficiency gate on every prepare (default: off)",
    )
    command.add_argument(
        "--dedup-turns",
        type=count,
        default=0,
        metavar="N",
        help=(
            "hold back what a session_id's packs delivered for its next N prepares instead"
            " of repeating it (default: 0, off)"
        ),
    )


def integer(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None


def count(text: str) -> int:
    """An integer of at least 0."""
    value = integer(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be at least 0, not {value}")
    return value


def positive(text: str) -> int:
    """An integer of at least 1."""
    value = integer(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def port(text: str) -> int:
    """A TCP port, 0..65535 (0: the system picks a free one)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"must be in 0..65535, not {value}")
    return value


def seconds(text: str) -> float:
    """A positive, finite number of seconds."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, not {text}")
    return value


def nonblank(text: str) -> str:
    """Printable text that is not blank (a scope or an id)."""
    if not text.strip() or not text.isprintable():
        raise argparse.ArgumentTypeError(f"must be printable and not blank, not {text!r}")
    return text
