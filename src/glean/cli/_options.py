"""Options every store-opening subcommand shares: the subcommand with ``--backend``,
``--db PATH`` or ``--store URL``, and ``--embedder``. ``_main``, ``_serve`` and ``_mcp``
build their parsers with them."""

from __future__ import annotations

import argparse

import glean
from glean.embedders import SPEC_HELP, check_spec


def command(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
    name: str,
    *,
    summary: str,
    description: str,
    epilog: str,
) -> argparse.ArgumentParser:
    command = commands.add_parser(
        name,
        help=summary,
        description=description,
        epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    command.add_argument(
        "--backend",
        choices=("asyncio", "trio"),
        default="asyncio",
        help="the async library to run on (default: asyncio; trio needs glean[trio])",
    )
    return command


def embedder_option(command: argparse.ArgumentParser, *, required: bool = False) -> None:
    command.add_argument(
        "--embedder",
        type=_embedder,
        default=None if required else "static",
        required=required,
        metavar=SPEC_HELP,
        help=(
            "embedder for vectors: static (the bundled semantic model), hashing (spelling"
            " only, no model) or st:PATH (the sentence-transformers model in folder PATH;"
            ' needs pip install "glean[sentence-transformers]"); a database keeps the'
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


def _embedder(text: str) -> str:
    try:
        return check_spec(text)
    except glean.InvalidRequestError:
        raise argparse.ArgumentTypeError(f"expected {SPEC_HELP}, not {text!r}") from None
