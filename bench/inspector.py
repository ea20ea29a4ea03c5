"""The inspector's pages at scale: the server's time for a page of a scope of 100k entries.

On the store ``bench listing`` builds (``bench/.cache/listing-{N}.db``: ``--size``
searchable memory entries in one scope, 1% updated, 1% more forgotten; built here too
when missing), the app ``satchel serve`` runs (``satchel.http.create_app``, no tokens)
is called directly as an ASGI app, with no network and no client in the way: each
figure is the time from the request's start to the last byte of its answer, all of it
the server's (the list reads, Jinja2 rendering on a worker thread, the headers).

Measured after ``--warmup`` unmeasured calls, ``--repeat`` times each, interleaved:

- ``scopes``: ``/ui/`` (``list_scopes``);
- ``scope page 1``: ``/ui/scope?scope=bench``, 50 records, the newest;
- ``scope page 1000``: the same 1,000 pages deep (by the cursor a walk found);
- ``scope, family and forgotten``: page 1 with ``family=memory&forgotten=on``;
- ``text filter, rare``: page 1 with a text filter that matches 1 in 100 records, so
  the page reads up to 2,000 records (the filter's bound) to fill itself;
- ``record``: one entry's page (``get_memory`` of each version).

The goal is at most 100 ms p50 for a scope page. JSON goes to
``bench/results/inspector.json``, a Markdown table to stdout.

Run: ``python -m bench inspector [--size 100000] [--repeat 50] [--warmup 5]``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

import anyio

import satchel
from bench import listing
from satchel.http import create_app

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Message

RESULTS = Path(__file__).parent / "results"


async def timed_get(app: ASGIApp, path: str, query: str) -> float:
    """Milliseconds from the request's start to the end of its answer's body."""
    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "GET",
        "scheme": "http", "path": path, "raw_path": path.encode(), "root_path": "",
        "query_string": query.encode(), "headers": [(b"host", b"127.0.0.1:8765")],
        "client": ("127.0.0.1", 50000), "server": ("127.0.0.1", 8765),
    }  # fmt: skip
    status: list[int] = []

    async def receive() -> Message:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: Message) -> None:
        if message["type"] == "http.response.start":
            status.append(message["status"])

    started = time.perf_counter()
    await app(scope, receive, send)
    elapsed = (time.perf_counter() - started) * 1000
    if status != [200]:
        raise SystemExit(f"GET {path}?{query} answered {status}")
    return elapsed


async def pages(rt: satchel.Runtime, deep: int) -> dict[str, tuple[str, str]]:
    """Each measured page (the deep one ``deep`` pages in): its path and query string."""
    cursor = None
    for _ in range(deep - 1):  # the inspector's pages are of 50 records
        cursor = (await rt.list_records(listing.SCOPE, cursor=cursor, limit=50)).cursor
        if cursor is None:
            raise SystemExit(f"the scope has fewer than {deep} pages of 50")
    newest = (await rt.list_records(listing.SCOPE, limit=1)).records[0].citation
    assert newest.id is not None
    scope = {"scope": listing.SCOPE}
    return {
        "scopes": ("/ui/", ""),
        "scope page 1": ("/ui/scope", urlencode(scope)),
        f"scope page {deep}": ("/ui/scope", urlencode({**scope, "cursor": cursor})),
        "scope, family and forgotten": (
            "/ui/scope",
            urlencode({**scope, "family": "memory", "forgotten": "on"}),
        ),
        "text filter, rare": ("/ui/scope", urlencode({**scope, "q": "updated:"})),
        "record": ("/ui/record", urlencode({**scope, "id": newest.id})),
    }


async def measure(path: Path, repeat: int, warmup: int, deep: int = 1000) -> dict[str, Any]:
    """Each page's summary (``listing.summary``), timed interleaved."""
    async with satchel.open_runtime(str(path), embedder=listing.embedder()) as rt:
        app = create_app(rt)
        measured = await pages(rt, deep)
        samples: dict[str, list[float]] = {name: [] for name in measured}
        for round_ in range(warmup + repeat):
            for name, (page, query) in measured.items():
                elapsed = await timed_get(app, page, query)
                if round_ >= warmup:
                    samples[name].append(elapsed)
    return {name: listing.summary(values) for name, values in samples.items()}


def table(results: dict[str, Any]) -> str:
    lines = [
        f"inspector pages, one SQLite scope of {results['size']:,} entries (server time)",
        "",
        "| page | p50 ms | p95 ms | max ms |",
        "|---|---:|---:|---:|",
    ]
    for name, figures in results["pages"].items():
        lines.append(
            f"| {name} | {figures['p50_ms']} | {figures['p95_ms']} | {figures['max_ms']} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=50)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--out", type=Path, default=RESULTS / "inspector.json")
    args = parser.parse_args()
    path = listing.store_path(args.size)
    if not path.exists():
        listing.CACHE.mkdir(exist_ok=True)
        print(f"building {path.name} ({args.size:,} entries)", file=sys.stderr)
        anyio.run(listing.build_store, path, args.size)
    results = {"size": args.size, "pages": anyio.run(measure, path, args.repeat, args.warmup)}
    args.out.parent.mkdir(exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    print(table(results))


if __name__ == "__main__":
    main()
