"""``satchel list``: one page of a scope's records, newest first, each as its newest version.

It calls ``Runtime.list_records`` over the store ``--db`` or ``--store`` names, with no
embedder of its own: listing embeds nothing, so the runtime is opened with one that only
names the embedder the store recorded (and refuses to embed), whatever built the vectors.
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Final

import attrs

import satchel

from .. import _wire as wire
from . import _options as options
from ._running import CommandError, on_store
from ._table import print_table

if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence

    import numpy as np
    import numpy.typing as npt

#: The longest text a table cell shows (``--json`` prints every text whole).
TEXT_CELL: Final = 72

_DESCRIPTION = """\
List one page of a scope's records, newest first: each record once, as its
newest version (a memory entry at its latest version, a topic memory or a
resource at its current revision), the profile last. A table of each record's
family, id (in full), version, key, when it was said and its text (cut to 72
characters); with --json, one JSON object {"records": [...], "cursor": ...}
holding each record's citation, whole text, created_at, key and forgotten flag.

Forgotten memory entries are listed (marked) only with --forgotten; erased
records never are. --family lists one family (memory, experience,
topic-memory, profile, resource). When more records follow, the cursor of the
next page is printed on stderr (in --json, as "cursor"): pass it as --cursor.
Listing writes nothing.

Exits 2 for bad input (a limit outside 1..1000, a malformed cursor, no
database at --db or --store: list never creates one)."""

_EPILOG = """\
examples:
  satchel list --db team.db --scope chat-1
  satchel list --db team.db --scope chat-1 --family memory --forgotten --limit 20
  satchel list --db team.db --scope chat-1 --json --cursor cDEuNDEx
"""


def _arguments(command: argparse.ArgumentParser) -> None:
    options.where_option(command, "an existing database file")
    command.add_argument(
        "--scope", required=True, type=options.nonblank, metavar="S", help="the scope to list"
    )
    command.add_argument(
        "--family", choices=satchel.stores.FAMILY_RULES, help="only this family's records"
    )
    command.add_argument(
        "--forgotten", action="store_true", help="also list forgotten entries (marked)"
    )
    command.add_argument("--json", action="store_true", help="print the page as JSON")
    command.add_argument("--cursor", metavar="C", help="the cursor a previous page printed")
    command.add_argument(
        "--limit", type=options.positive, default=100, metavar="N",
        help="the most records on the page, 1..1000 (default 100)",
    )  # fmt: skip


def list_command(args: argparse.Namespace) -> int:
    """``satchel list``: one page of the scope's records, a table or JSON."""
    try:
        page = on_store(args, lambda store: _page(store, args))
    except satchel.InvalidRequestError as exc:
        raise CommandError(str(exc).replace("include_forgotten", "--forgotten"), code=2) from exc
    if args.json:
        print(json.dumps(wire.record_page_json(page), ensure_ascii=False, indent=2))
        return 0
    if page.records:
        header = ["family", "id", "version", "key", "said", "text"]
        print_table(header, [_cells(record) for record in page.records], numeric=["version"])
    else:
        print(f"satchel list: scope {args.scope!r} holds no record to list", file=sys.stderr)
    if page.cursor is not None:
        print(f"more records follow: --cursor {page.cursor}", file=sys.stderr)
    return 0


async def _page(store: satchel.Store, args: argparse.Namespace) -> satchel.RecordPage:
    embedder = await _NamingEmbedder.of(store)
    async with satchel.open_runtime(store=store, embedder=embedder) as runtime:
        return await runtime.list_records(
            args.scope, args.family, include_forgotten=args.forgotten, cursor=args.cursor,
            limit=args.limit,
        )  # fmt: skip


def _cells(record: satchel.StoredRecord) -> list[str]:
    cited = record.citation
    text = " ".join(record.text.split())
    if len(text) > TEXT_CELL:
        text = text[: TEXT_CELL - 3] + "..."
    if record.forgotten:
        text = f"(forgotten) {text}"
    said = "" if record.created_at is None else record.created_at.isoformat()
    version = "" if cited.version is None else str(cited.version)
    shown_id = "" if cited.id is None else wire.compact_id(cited.id)
    return [cited.family, shown_id, version, record.key or "", said, text]


@attrs.frozen
class _NamingEmbedder:
    """Names the embedder that built a store's vectors, so a runtime over it opens; it
    never embeds (listing needs no vector)."""

    fingerprint: str
    dimension: int

    @classmethod
    async def of(cls, store: satchel.Store) -> _NamingEmbedder:
        origin = satchel.stores.VectorOrigin(None, None)
        if isinstance(store, satchel.stores.CopySource):
            origin = await store.vectors_built_by()
        return cls(origin.fingerprint or "satchel-list/none", origin.dimension or 1)

    async def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        raise satchel.StoreError("satchel list embeds nothing")


COMMAND: Final = options.Command(
    "list",
    summary="list a scope's records, newest first, a page at a time",
    description=_DESCRIPTION,
    epilog=_EPILOG,
    arguments=_arguments,
    run=list_command,
)
