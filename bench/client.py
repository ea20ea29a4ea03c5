"""What ``satchel.Client`` adds to a call, and what ``SatchelStore`` costs a LangGraph node.

One SQLite store of ``--size`` memory entries in one scope (real-word notes from
``_corpus.english_texts``, hashing embedder) is served by ``satchel serve`` on loopback.
On asyncio and on trio, the same queries are asked, interleaved, of a Runtime over the
same file in the benchmark's process and of a Client of the service:

- ``prepare``: ``prepare_context`` (8,000 bytes), each pack compared byte for byte;
- ``get``: ``get_memory`` of a cited version;
- ``add (keyed)``: ``add_memories`` of one keyed entry already held (a write of nothing);
- ``store get`` / ``store search``: ``SatchelStore.aget`` of a key in a namespace of
  ``--items`` items and ``asearch`` with a query, over the Runtime and over the Client.

Reported: p50/p95 in milliseconds per call and side, and the Client's p50 over the
Runtime's. JSON goes to ``bench/results/client.json``, a Markdown table to stdout.

Run: ``python -m bench client [--size 10000] [--items 500] [--repeat 200]``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import numpy as np

import satchel
from bench import _corpus
from bench._serve_process import running_server
from satchel.integrations.langgraph import SatchelStore

RESULTS = Path(__file__).parent / "results"
SCOPE = "bench"
NAMESPACE = ("bench", "items")


async def build(path: Path, size: int, items: int) -> list[str]:
    """The store, and the queries (texts' opening words) asked of it."""
    texts = _corpus.english_texts(size)
    async with satchel.open_runtime(str(path), embedder=satchel.HashingEmbedder()) as rt:
        for start in range(0, size, 2000):
            batch = texts[start : start + 2000]
            await rt.add_memories(SCOPE, [satchel.MemoryEntry(text=t) for t in batch])
        store = SatchelStore(rt)
        for index in range(items):
            await store.aput(NAMESPACE, f"k{index}", {"text": texts[index], "n": index})
    return [" ".join(text.split()[:5]) for text in texts[1 : size : max(size // 400, 1)]]


async def calls(
    api: Any, store: SatchelStore, request: satchel.PrepareContextRequest,
    held: satchel.MemoryRef, key: str,
) -> tuple[satchel.PreparedContext, dict[str, float]]:  # fmt: skip
    """One round of every measured call on one side: its pack, and each call's ms."""
    spent: dict[str, float] = {}
    started = time.perf_counter()
    pack = await api.prepare_context(request)
    spent["prepare"], started = (time.perf_counter() - started) * 1000, time.perf_counter()
    await api.get_memory(held)
    spent["get"], started = (time.perf_counter() - started) * 1000, time.perf_counter()
    await api.add_memories(SCOPE, [satchel.MemoryEntry(text="x", key="held")])
    spent["add (keyed)"], started = (time.perf_counter() - started) * 1000, time.perf_counter()
    await store.aget(NAMESPACE, key)
    spent["store get"], started = (time.perf_counter() - started) * 1000, time.perf_counter()
    await store.asearch(NAMESPACE, query=request.query)
    spent["store search"] = (time.perf_counter() - started) * 1000
    return pack, spent


async def measure(url: str, path: Path, queries: list[str], repeat: int, items: int) -> Any:
    samples: dict[str, dict[str, list[float]]] = {}
    async with (
        satchel.open_runtime(str(path), embedder=satchel.HashingEmbedder()) as rt,
        satchel.Client(url) as client,
    ):
        sides: dict[str, Any] = {"runtime": rt, "client": client}
        stores = {side: SatchelStore(api) for side, api in sides.items()}
        held = (await rt.add_memories(SCOPE, [satchel.MemoryEntry(text="x", key="held")]))[0]
        for index in range(repeat):
            query = queries[index % len(queries)]
            request = satchel.PrepareContextRequest(scope_id=SCOPE, query=query)
            packs = []
            for side, api in sides.items():
                pack, spent = await calls(api, stores[side], request, held, f"k{index % items}")
                packs.append(pack)
                for name, ms in spent.items():
                    samples.setdefault(name, {}).setdefault(side, []).append(ms)
            assert packs[0] == packs[1], "the Client's pack differs from the Runtime's"
    return {
        name: {
            side: {"p50_ms": float(np.percentile(v, 50)), "p95_ms": float(np.percentile(v, 95))}
            for side, v in by_side.items()
        }
        for name, by_side in samples.items()
    }


def table(results: dict[str, Any]) -> str:
    lines = [
        "| backend | call | Runtime p50 / p95 ms | Client p50 / p95 ms | Client / Runtime p50 |",
        "|---|---|---|---|---|",
    ]
    for backend, measured in results["backends"].items():
        for name, sides in measured.items():
            rt, cl = sides["runtime"], sides["client"]
            lines.append(
                f"| {backend} | {name} | {rt['p50_ms']:.2f} / {rt['p95_ms']:.2f} | "
                f"{cl['p50_ms']:.2f} / {cl['p95_ms']:.2f} | x{cl['p50_ms'] / rt['p50_ms']:.2f} |"
            )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--items", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=200)
    parser.add_argument("--out", type=Path, default=RESULTS / "client.json")
    parser.add_argument("--work", type=Path, default=Path(__file__).parent / ".cache")
    args = parser.parse_args()
    args.work.mkdir(exist_ok=True)
    path = args.work / f"client-{args.size}-{args.items}.db"
    path.unlink(missing_ok=True)
    print(f"building {path.name}", file=sys.stderr)
    queries = anyio.run(build, path, args.size, args.items)
    backends = {}
    for backend in ("asyncio", "trio"):
        log = args.work / f"client-serve-{backend}.log"
        with running_server(path, backend, log, options=("--embedder", "hashing")) as server:
            backends[backend] = anyio.run(
                measure, server.url, path, queries, args.repeat, args.items, backend=backend
            )
    results = {"size": args.size, "items": args.items, "repeat": args.repeat, "backends": backends}
    args.out.parent.mkdir(exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    print(table(results))


if __name__ == "__main__":
    main()
