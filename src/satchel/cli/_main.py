"""The ``satchel`` command line: argument parsing and dispatch to the commands.

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

from ._add import add_add
from ._commands import (
    CommandError,
    erase_command,
    forget_command,
    get_command,
    ingest_command,
    prepare_command,
    reembed_command,
    scopes_command,
)
from ._copy import add_copy
from ._demo import demo_command
from ._mcp import add_mcp
from ._options import command as _command
from ._options import embedder_option as _embedder_option
from ._options import positive as _positive
from ._options import seconds as _seconds
from ._options import where_option as _where_option
from ._serve import add_serve

if TYPE_CHECKING:
    from collections.abc import Sequence

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
        print(f"satchel {args.command}: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"satchel {args.command}: interrupted", file=sys.stderr)
        return 130
    return code


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
    _add_demo(commands)
    _add_ingest(commands)
    add_add(commands)
    _add_prepare(commands)
    _add_reembed(commands)
    _add_get(commands)
    _add_scopes(commands)
    _add_forget(commands)
    _add_erase(commands)
    add_copy(commands)
    add_mcp(commands)
    add_serve(commands)
    return parser


def _version() -> str:
    try:
        return metadata.version("satchel")
    except metadata.PackageNotFoundError:  # run from a source tree
        return "(not installed)"


def _add_demo(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    command = _command(
        commands,
        "demo",
        summary="show satchel on a bundled sample: four context packs in a few seconds",
        description=(
            "Load a small bundled sample (a fictional team's project memory: memories in\n"
            "two scopes, experiences, topic memories, resources and a profile) into a\n"
            "throwaway store, prepare four context packs with different queries and byte\n"
            "budgets, and print each one under a header line. The store is deleted\n"
            "afterwards; nothing is written outside a temporary directory."
        ),
        epilog="examples:\n  satchel demo\n  satchel demo --backend trio\n",
    )
    command.set_defaults(run=demo_command)


def _add_ingest(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    command = _command(
        commands,
        "ingest",
        summary="write a workload folder's entries.jsonl into a database",
        description=(
            "Read WORKLOAD/entries.jsonl (or WORKLOAD itself, when it is that file) and\n"
            "write every entry into the database at --db, creating it if needed. Each line\n"
            "is one JSON object, for example\n"
            '  {"id": "c1/3", "scope": "chat-1", "text": "Alice: I moved to Lisbon.",\n'
            '   "kind": "dialog", "created_at": "2023-05-08T13:56:00Z", "session": 1}\n'
            '"family" is memory (the default), experience (situation, action, outcome,\n'
            "lesson), topic-memory (title, text), resource (uri, body, abstract,\n"
            "overview) or profile (text). created_at without a timezone is UTC; thread,\n"
            "or an integer session, groups a conversation's turns; other fields are\n"
            "ignored. Malformed lines are reported on stderr as FILE:LINE: message and\n"
            "skipped. Each workload id's citation key is appended to DB.ids.jsonl as\n"
            "it is written, so delivered citations can be mapped back to workload ids;\n"
            "the map keeps one line per id (the latest).\n"
            "\n"
            "Every workload id is its record's idempotency key, so the report counts\n"
            "each entry against the id map as new, a new version (new content under a\n"
            "known id) or unchanged (nothing written): ingesting the same workload again\n"
            "writes nothing. With --store there is no id map, and the report does not\n"
            "tell them apart.\n"
            "\n"
            "Exits 0 when every line was ingested; 1 when any line was skipped as\n"
            "malformed or refused by the runtime (what was written stays, mapped; with\n"
            "--allow-skips that is a success as long as anything was ingested), when\n"
            "nothing was (missing folder, every line malformed) or when a write failed.\n"
            "Ctrl-C (SIGINT) or SIGTERM stops after the batch being written, which commits\n"
            "and is mapped, and exits 130; running the same ingest again resumes it, since\n"
            "every workload id is its record's idempotency key."
        ),
        epilog=(
            "examples:\n"
            "  satchel ingest ./locomo --db locomo.db\n"
            "  satchel ingest ./locomo --db locomo.db --batch-size 2048 2> ingest.log\n"
            "  satchel ingest ./scraped --db notes.db --allow-skips\n"
        ),
    )
    command.add_argument(
        "workload_dir",
        metavar="WORKLOAD",
        help="folder with entries.jsonl, or the entries file itself",
    )
    _where_option(command, "database file to write (created if needed)")
    _embedder_option(command)
    command.add_argument(
        "--batch-size",
        type=_positive,
        default=512,
        metavar="N",
        help="entries per atomic write (default: 512)",
    )
    command.add_argument(
        "--allow-skips",
        action="store_true",
        help="exit 0 even when some lines were skipped (malformed or refused)",
    )
    command.set_defaults(run=ingest_command)


def _add_prepare(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    command = _command(
        commands,
        "prepare",
        summary="print the context pack satchel prepares for a query",
        description=(
            "Search the memory of --scope (and of every --reference scope) for QUERY, fit\n"
            "the result into --max-bytes and print the rendered, cited context pack. When\n"
            "nothing relevant is found, stdout stays empty and a note goes to stderr; it\n"
            "says so when a searched scope holds no record at all (new, or misspelt:\n"
            "'satchel scopes' lists them). That is still a success (exit 0): an empty\n"
            "scope is a normal answer, as it is over HTTP and MCP.\n"
            "\n"
            "--gate turns on the recall-sufficiency gate. When the first search round looks\n"
            "thin (too few candidates, a weak top hit, weak lexical evidence, or a family\n"
            "that found entries but admitted none), it runs at most two bounded expansion\n"
            "rounds that only lower the admission floor on the pool already retrieved:\n"
            "never more families, higher limits or a larger byte budget. A query that is\n"
            "well served prints the same pack with or without it.\n"
            "\n"
            "--effort prints what the prepare spent on recall as one JSON object on one\n"
            'line of stderr, after the pack (stdout is unchanged): policy ("disabled"\n'
            "without --gate), assessment (the gate's final reason), rounds (1..3),\n"
            "expansion_actions, candidates_by_round, admission_by_family (retrieved and\n"
            "admitted per family and scope), added_embeddings, added_generation_calls,\n"
            "truncated_items, dropped_items, dropped_below_min_bytes,\n"
            "dropped_no_fitting_truncation and stages (the host planner's and digest's\n"
            "outcomes: off, ok, failed, timeout, no_relevant). It carries counts only: no\n"
            "query text and no entry ids or content.\n"
            "\n"
            "--explain prints, on stdout after the pack (which is unchanged), why each item\n"
            "is in it: one row per item in pack order with its citation, the rank it had in\n"
            "each search channel that ranked it (lexical, vector, time, neighbour), its\n"
            "fused score, the round that committed it (0..2), its tier and whether it was\n"
            "truncated; then the best candidates left out (at most 8) with their cause:\n"
            "budget, held-back, excluded, duplicate or floor. With --json the receipts and\n"
            "omitted lists join the pack's four fields in one JSON object.\n"
            "\n"
            "Exits 2 for bad input (e.g. --max-bytes outside 512..32768, no database at\n"
            "--db or --store, or a file that is not one: prepare never creates one)."
        ),
        epilog=(
            "examples:\n"
            '  satchel prepare --db team.db --scope project:demo "Why was the deploy slow?"\n'
            "  satchel prepare --db team.db --scope chat-1 --reference chat-2 \\\n"
            '      --max-bytes 2000 --json "Where does Alice live?"\n'
            "  satchel prepare --db team.db --scope project:demo --section profile=1 \\\n"
            '      --section memory=4 --section resource=2 "How do I deploy?"\n'
            "  satchel prepare --db team.db --scope project:demo --gate --effort \\\n"
            '      "Why was the deploy slow?" 2> effort.log\n'
            "  satchel prepare --db team.db --scope project:demo --explain \\\n"
            '      "Why was the deploy slow?"\n'
        ),
    )
    command.add_argument("query", metavar="QUERY", help="what the agent needs context for")
    _where_option(command, "an existing database file")
    command.add_argument("--scope", required=True, metavar="S", help="the scope to search")
    command.add_argument(
        "--reference",
        action="append",
        default=[],
        metavar="R",
        help="another scope to search as well (repeatable)",
    )
    command.add_argument(
        "--max-bytes",
        type=int,
        default=8000,
        metavar="N",
        help="byte budget of the pack, 512..32768 (default: 8000)",
    )
    command.add_argument(
        "--section",
        action="append",
        default=[],
        type=_section,
        metavar="FAMILY=LIMIT",
        help=(
            "deliver an assembly: one Markdown section per family, in the order given "
            "(memory, experience, topic-memory, profile, resource; repeatable; limits "
            "1..8, experience at most 2, at most 8 in all)"
        ),
    )
    command.add_argument(
        "--json",
        action="store_true",
        help="print the result's four fields (schema, status, content, content_bytes) as JSON",
    )
    command.add_argument(
        "--gate",
        action="store_true",
        help=(
            "run the recall-sufficiency gate: up to two bounded expansion rounds when the "
            "first round looks thin (default: off)"
        ),
    )
    command.add_argument(
        "--timeout",
        type=_seconds,
        default=None,
        metavar="SECONDS",
        help="bound the whole prepare; past it the command fails (default: no bound)",
    )
    command.add_argument(
        "--effort",
        action="store_true",
        help="print the prepare's recall effort on stderr as one JSON object (no query text)",
    )
    command.add_argument(
        "--explain",
        action="store_true",
        help=(
            "after the pack, print why each item is in it (channel ranks, fused score, "
            "round, tier, truncation) and the best candidates left out, with their cause"
        ),
    )
    _embedder_option(command)
    command.set_defaults(run=prepare_command)


def _add_get(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    command = _command(
        commands,
        "get",
        summary="print the memory version a citation names, with its idempotency key",
        description=(
            "Read exactly one version of one memory entry, as a pack's citation names it\n"
            "(scope, entry_id, version), and print it as one JSON object: the citation,\n"
            "its key (the workload id it was ingested under, or the caller's key), text,\n"
            "kind, tags, created_at and thread. A forgotten entry's versions stay readable.\n"
            "--id takes the id as a pack prints it (22 characters) or the full entry id.\n"
            "\n"
            "Exits 1 when no such entry or version exists, 2 for bad input (no database\n"
            "at --db or --store: get never creates one)."
        ),
        epilog=(
            "examples:\n"
            "  satchel get --db team.db --scope chat-1 --id cl8WCM5gQQyj74nwc5mGcQ --version 1\n"
            "  satchel get --db team.db --scope chat-1 --id 3f2a... --version 2 --pretty\n"
        ),
    )
    _where_option(command, "an existing database file")
    command.add_argument("--scope", required=True, metavar="S", help="the citation's scope")
    command.add_argument(
        "--id", required=True, metavar="ENTRY_ID", help="its id, as a pack prints it or in full"
    )
    command.add_argument(
        "--version", required=True, type=_positive, metavar="N", help="its version"
    )
    command.add_argument("--pretty", action="store_true", help="indent the JSON")
    command.set_defaults(run=get_command)


def _add_scopes(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    command = _command(
        commands,
        "scopes",
        summary="list every scope with its searchable records per family",
        description=(
            "List every scope of a database that holds a searchable record or a profile:\n"
            "one line per scope with how many searchable records it holds of each family\n"
            "(memory counts entries, not versions; forgotten entries and replaced versions\n"
            "are not counted) and whether it has a profile. With --json, a JSON array of\n"
            '{"scope": ..., "records": {"memory": N, ...}, "profile": true|false}, one\n'
            "object per scope, sorted by scope. An empty database prints nothing on stdout\n"
            "and a note on stderr.\n"
            "\n"
            "Exits 2 for bad input (e.g. no database at --db or --store: scopes never\n"
            "creates one)."
        ),
        epilog=(
            "examples:\n"
            "  satchel scopes --db team.db\n"
            "  satchel scopes --db team.db --json\n"
            '  satchel scopes --store "oceanbase://reader@db.internal:2881/satchel"\n'
        ),
    )
    _where_option(command, "an existing database file")
    command.add_argument("--json", action="store_true", help="print the scopes as a JSON array")
    command.set_defaults(run=scopes_command)


def _add_forget(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    command = _command(
        commands,
        "forget",
        summary="take the memory entry a citation names out of search",
        description=(
            "Forget one memory entry, named as a pack's citation names it (scope,\n"
            "entry_id, version): every version of the entry leaves search, so no later\n"
            "pack delivers it, and every version stays readable with 'satchel get'. The\n"
            "version must exist; forgetting an entry already forgotten changes nothing,\n"
            "and says so. --id takes the id as a pack prints it (22 characters) or the\n"
            "full entry id. What was done is printed on stderr.\n"
            "\n"
            "Exits 1 when no such scope, entry or version exists, 2 for bad input (no\n"
            "database at --db or --store: forget never creates one)."
        ),
        epilog=(
            "examples:\n"
            "  satchel forget --db team.db --scope chat-1 --id 3f2a... --version 1\n"
            '  satchel forget --store "sqlite:///srv/team.db" --scope chat-1 --id 3f2a... \\\n'
            "      --version 2\n"
        ),
    )
    _where_option(command, "an existing database file")
    command.add_argument(
        "--scope", required=True, type=_nonblank, metavar="S", help="the citation's scope"
    )
    command.add_argument(
        "--id",
        required=True,
        type=_nonblank,
        metavar="ENTRY_ID",
        help="its id, as a pack prints it or in full",
    )
    command.add_argument(
        "--version", required=True, type=_positive, metavar="N", help="its version"
    )
    command.set_defaults(run=forget_command)


def _add_erase(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    command = _command(
        commands,
        "erase",
        summary="erase a memory entry, or every record of a scope, so nothing stays readable",
        description=(
            "Erase every version of one memory entry (--id), or every record of every\n"
            "family in a scope, its profile included (--all). Unlike 'satchel forget',\n"
            "nothing stays readable: the text, analysed terms, vectors, idempotency key and\n"
            "dates leave every place the store keeps them (a SQLite database zeroes what it\n"
            "deletes, rewrites its full-text index, empties its write-ahead log and deletes\n"
            "the scope's vector index files). Afterwards 'satchel get' of any erased\n"
            "version says it was erased, no pack delivers it, and its key is free again.\n"
            "\n"
            "What no erase reaches: backups and copies of the database (a copied file,\n"
            "another store it was copied into, a replica, a snapshot), the disk under it,\n"
            "swap, and for a while an OceanBase engine's own log and data files. The\n"
            "'Erasing' section of docs/stores.md says what each store guarantees.\n"
            "\n"
            "It asks for confirmation on the terminal; --yes answers for you, and is needed\n"
            "when stdin is not a terminal. --id takes the id as a pack prints it (22\n"
            "characters) or the full entry id. What was erased is printed on stderr.\n"
            "\n"
            "Exits 1 when nothing was erased (no such entry or scope, erased already, or\n"
            "not confirmed), 2 for bad input (no --yes when stdin is not a terminal, or no\n"
            "database at --db or --store: erase never creates one)."
        ),
        epilog=(
            "examples:\n"
            "  satchel erase --db team.db --scope chat-1 --id s4nK0m7LQb2mF1u3c9TzAw\n"
            "  satchel erase --db team.db --scope chat-1 --all --yes\n"
            '  satchel erase --store "sqlite:///srv/team.db" --scope user:ana --all --yes\n'
        ),
    )
    _where_option(command, "an existing database file")
    command.add_argument(
        "--scope", required=True, type=_nonblank, metavar="S", help="the scope to erase in"
    )
    what = command.add_mutually_exclusive_group(required=True)
    what.add_argument(
        "--id",
        type=_nonblank,
        metavar="ENTRY_ID",
        help="erase every version of this memory entry (its id as a pack prints it, or in full)",
    )
    what.add_argument(
        "--all",
        action="store_true",
        help="erase every record of every family in the scope, its profile included",
    )
    command.add_argument(
        "--yes",
        action="store_true",
        help="erase without asking (needed when stdin is not a terminal)",
    )
    command.set_defaults(run=erase_command)


def _add_reembed(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    command = _command(
        commands,
        "reembed",
        summary="rebuild a database's vectors with another embedder",
        description=(
            "Re-embed every searchable record of the database at --db with --embedder and\n"
            "record that embedder as the one that built the vectors, in one transaction:\n"
            "an interrupted run changes nothing. A database refuses to be opened with an\n"
            "embedder other than the one that built its vectors; this is how to switch.\n"
            "Run it while nothing else uses the database."
        ),
        epilog="examples:\n  satchel reembed --db team.db --embedder static\n",
    )
    command.add_argument("--db", required=True, metavar="PATH", help="database file to rewrite")
    _embedder_option(command, required=True)
    command.set_defaults(run=reembed_command)


def _nonblank(text: str) -> str:
    if not text.strip() or not text.isprintable():
        raise argparse.ArgumentTypeError(f"must be printable and not blank, not {text!r}")
    return text


def _section(text: str) -> satchel.Section:
    family, sep, limit = text.partition("=")
    if not sep or not limit.strip().isdigit():
        raise argparse.ArgumentTypeError(f"expected FAMILY=LIMIT, e.g. memory=4, not {text!r}")
    return satchel.Section(family.strip(), int(limit))
