"""``satchel demo``: a throwaway store from the bundled sample, and four prepared packs.

The README's first command: it must finish in a few seconds on a fresh install and must
not fail. The sample (``sample/entries.jsonl``, ``sample/queries.jsonl``) is a fictional
team's project memory in the workload format, read through ``importlib.resources`` so
the demo works from a wheel as well as from a checkout.
"""

from __future__ import annotations

import sys
import tempfile
from functools import partial
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Final

import attrs

import satchel

from .._workload import (
    IngestReport,
    WorkloadEntry,
    WorkloadQuery,
    ingest,
    read_entries,
    read_queries,
)
from . import _options as options
from ._running import CommandError, run_async

if TYPE_CHECKING:
    import argparse
    from collections.abc import Mapping, Sequence

_DESCRIPTION = """\
Load a small bundled sample (a fictional team's project memory: memories in
two scopes, experiences, topic memories, resources and a profile) into a
throwaway store, prepare four context packs with different queries and byte
budgets, and print each one under a header line. The store is deleted
afterwards; nothing is written outside a temporary directory."""

_EPILOG = """\
examples:
  satchel demo
  satchel demo --backend trio
"""


@attrs.frozen
class DemoPrepare:
    """One prepare of the demo: a sample query, a byte budget and an optional assembly."""

    query_id: str
    max_bytes: int
    assembly: satchel.Assembly | None = None

    def request(self, query: WorkloadQuery) -> satchel.PrepareContextRequest:
        """The request for ``query``: its first scope searched, the rest as references."""
        return satchel.PrepareContextRequest(
            scope_id=query.scopes[0],
            query=query.query,
            max_bytes=self.max_bytes,
            references=query.scopes[1:],
            assembly=self.assembly,
        )


DEMO_PREPARES: Final = (
    DemoPrepare("q1", max_bytes=2000),
    DemoPrepare("q2", max_bytes=1500),
    DemoPrepare(
        "q4",
        max_bytes=3000,
        assembly=satchel.Assembly(
            (
                satchel.Section("profile", 1),
                satchel.Section("memory", 3),
                satchel.Section("experience", 1),
                satchel.Section("resource", 1),
            )
        ),
    ),
    # A tight budget for a question of two facts: memory alone, so the facts' entries
    # are not crowded out by the experience and topic memory that interleave before them.
    DemoPrepare("q3", max_bytes=800, assembly=satchel.Assembly((satchel.Section("memory", 3),))),
)


def demo_command(args: argparse.Namespace) -> int:
    """``satchel demo``: ingest the sample into a temporary store and print four packs."""
    entries, queries = load_sample()
    with tempfile.TemporaryDirectory(prefix="satchel-demo-") as folder:
        database = str(Path(folder) / "demo.db")
        run_async(partial(_demo, database, entries, queries), args.backend)
    print()
    print("Next, your own memory: satchel ingest WORKLOAD_DIR --db my.db")
    print("                       satchel prepare --db my.db --scope SCOPE QUERY")
    return 0


COMMAND: Final = options.Command(
    "demo",
    summary="show satchel on a bundled sample: four context packs in a few seconds",
    description=_DESCRIPTION,
    epilog=_EPILOG,
    run=demo_command,
)


def load_sample() -> tuple[list[WorkloadEntry], dict[str, WorkloadQuery]]:
    """The bundled sample workload.

    Raises:
        CommandError: if a sample file is missing or has a malformed line (a packaging bug).
    """
    sample = resources.files("satchel.cli").joinpath("sample")
    with resources.as_file(sample.joinpath("entries.jsonl")) as path:
        entries, entry_errors = read_entries(path)
    with resources.as_file(sample.joinpath("queries.jsonl")) as path:
        queries, query_errors = read_queries(path)
    if entry_errors or query_errors:
        raise CommandError(f"the bundled sample is broken: {(entry_errors + query_errors)[0]}")
    return entries, {query.id: query for query in queries}


async def _demo(
    database: str, entries: Sequence[WorkloadEntry], queries: Mapping[str, WorkloadQuery]
) -> None:
    async with satchel.open_runtime(database) as runtime:
        report = await ingest(runtime, entries)
        print(_summary(report))
        for number, demo in enumerate(DEMO_PREPARES, start=1):
            request = demo.request(queries[demo.query_id])
            context = await runtime.prepare_context(request)
            print()
            print(_header(number, request, context))
            print(context.content if context.content is not None else "(nothing delivered)")
            sys.stdout.flush()


def _summary(report: IngestReport) -> str:
    counts = ", ".join(f"{count} {family}" for family, count in report.counts.items())
    return f"satchel demo: a throwaway store with the sample team's memory ({counts})"


def _header(
    number: int, request: satchel.PrepareContextRequest, context: satchel.PreparedContext
) -> str:
    scopes = " + ".join((request.scope_id, *request.references))
    shape = ""
    if request.assembly is not None:
        families = ", ".join(section.family for section in request.assembly.sections)
        shape = f" | assembly: {families}"
    return (
        f"=== [{number}/{len(DEMO_PREPARES)}] {request.query!r} | scopes: {scopes}"
        f" | max_bytes {request.max_bytes}{shape}"
        f" | status {context.status} | content_bytes {context.content_bytes} ==="
    )
