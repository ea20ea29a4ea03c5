"""The satchel service under load: concurrent clients over loopback HTTP, with writes.

One scope of ``--entries`` memory entries (the real-word notes ``bench scale`` uses, its
cached store ``bench/.cache/scale-{N}.db``, ingested through the public API with the
bundled static embedder) is copied into a temporary directory for each backend, and
``satchel serve --db COPY --port 0 --backend B`` serves it in a subprocess. This process
is the client, in three phases:

1. sequential: one client, ``--sequential`` prepares (3-6 words of a random entry, an
   8000-byte budget) each sent to the service and to a runtime opened in this process
   on the same file, interleaved (the first alternating), both on backend B: p50 of
   each, their ratio, the p50 of a ``GET /healthz`` after each pair (the bare HTTP
   round trip), and the share of packs that are byte for byte the same;
2. load: ``--clients`` closed-loop clients for ``--seconds`` after ``--warmup`` untimed
   seconds, on asyncio whatever the server's backend (one generator for both), each
   client on a keep-alive connection of its own; a ``--write-share`` of requests add a
   batch of ``--batch`` entries, each with a unique term, the rest prepare
   (bench/_load.py);
3. nothing lost: every acknowledged entry is read back (``GET``, exact version, same
   text), ``--verify-prepares`` of them are searched with their whole text and must be
   cited, the server is stopped (SIGTERM: exit 0) and the store then holds exactly
   ``--entries`` plus the acknowledged entries.

The same load then runs in this process on a fresh copy (``InProcessTarget``, backend
B), giving the service's latency and throughput over the in-process call at load.
Reported per backend: requests, errors (non-2xx and transport errors, warm-up
included), req/s and p50/p95/p99 per operation; CPU of the server and of the client in
cores, and what the rest of the machine used meanwhile (on a 2-core machine the
client's share says whether it, not the server, was the bottleneck); and the kernel's
listen-queue overflows during the load (connects beyond the server's accept backlog,
which a client sees as resets). JSON goes to ``bench/results/service.json``.

Run: ``python -m bench service [--clients 200] [--seconds 30] [--entries 10000]
[--backends asyncio trio]``; about 90 s per backend once the store is cached.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import ssl
import sys
import tempfile
import time
from contextlib import AsyncExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import anyio
import httpx
import threadpoolctl

import satchel
from bench import _corpus, _load, scale
from bench._load import HttpTarget, InProcessTarget, Target, Workload, ms_text
from bench._serve_process import (
    Server,
    listen_overflows,
    machine_cpu_seconds,
    own_cpu_seconds,
    running_server,
    tree_cpu_seconds,
)
from satchel._wire import compact_id

if TYPE_CHECKING:
    from collections.abc import Sequence

RESULTS = Path(__file__).parent / "results"
BACKENDS: Final = ("asyncio", "trio")
WARMUP_QUERIES: Final = 10
QUERY_POOL: Final = 5000
TIMEOUT: Final = httpx.Timeout(60.0)
VERIFY_CONCURRENCY: Final = 32


def copy_store(source: Path, target: Path) -> Path:
    """A private copy of the cached store (its WAL too, if a build left one)."""
    for suffix in ("", "-wal"):
        if Path(f"{source}{suffix}").exists():
            shutil.copyfile(f"{source}{suffix}", f"{target}{suffix}")
    return target


async def sequential(url: str, db: Path, queries: Sequence[str]) -> dict[str, Any]:
    """One client: every query to the service and in process, interleaved, then one
    ``GET /healthz`` (the HTTP round trip with no work behind it)."""
    latencies: dict[str, list[float]] = {"service": [], "in_process": [], "healthz": []}
    same = 0
    async with (
        httpx.AsyncClient(base_url=url, timeout=TIMEOUT) as client,
        satchel.open_runtime(str(db)) as rt,
    ):
        service = HttpTarget(client)
        targets: dict[str, Target] = {"service": service, "in_process": InProcessTarget(rt)}
        for query in queries[:WARMUP_QUERIES]:
            for target in targets.values():
                await target.prepare(query)
        for number, query in enumerate(queries[WARMUP_QUERIES:]):
            packs: dict[str, str | None] = {}
            for name in list(targets) if number % 2 == 0 else list(targets)[::-1]:
                started = time.perf_counter()
                packs[name] = await targets[name].prepare(query)
                latencies[name].append(time.perf_counter() - started)
            same += packs["service"] == packs["in_process"]
            started = time.perf_counter()
            await service.health()
            latencies["healthz"].append(time.perf_counter() - started)
    return _sequential_summary(latencies, same)


def _sequential_summary(latencies: dict[str, list[float]], same: int) -> dict[str, Any]:
    p50 = {name: _load.percentile_ms(values, 50) or 0.0 for name, values in latencies.items()}
    return {
        "queries": len(latencies["service"]),
        **{
            f"{name}_p{q}_ms": _load.percentile_ms(v, q)
            for name, v in latencies.items()
            for q in (50, 95)
        },
        "ratio": p50["service"] / p50["in_process"],
        "added_ms": p50["service"] - p50["in_process"],
        "identical_packs": same / len(latencies["service"]),
    }


async def load_service(server: Server, workload: Workload) -> _load.LoadRun:
    """The load over HTTP, each client with its own ``httpx.AsyncClient`` (one
    connection): one client shared by all would spend the load's CPU in its pool, whose
    per-request work grows with its connections (~14 ms of client CPU per request at 200
    connections against ~1.6 ms apart, measured on ``/healthz``)."""
    pid = server.process.pid
    tls = ssl.create_default_context()  # never used on http://; built once, not 200 times

    def cpu() -> dict[str, float]:
        return {
            "server": tree_cpu_seconds(pid),
            "client": own_cpu_seconds(),
            "machine": machine_cpu_seconds(),
        }

    async with AsyncExitStack() as stack:
        clients = [
            await stack.enter_async_context(
                httpx.AsyncClient(base_url=server.url, timeout=TIMEOUT, verify=tls)
            )
            for _ in range(workload.clients)
        ]
        targets = [HttpTarget(client) for client in clients]
        return await _load.run_load(targets, workload, "service", cpu)


async def load_in_process(db: Path, workload: Workload) -> _load.LoadRun:
    async with satchel.open_runtime(str(db)) as rt:
        target = InProcessTarget(rt)
        for query in workload.queries[:WARMUP_QUERIES]:
            await target.prepare(query)
        return await _load.run_load(
            [target] * workload.clients,
            workload,
            "in process",
            lambda: {"process": own_cpu_seconds(), "machine": machine_cpu_seconds()},
        )


async def verify(url: str, written: Sequence[_load.Written], sample: int) -> dict[str, Any]:
    """Read back every acknowledged entry; search ``sample`` of them by their text."""
    failures: list[str] = []
    limiter = anyio.CapacityLimiter(VERIFY_CONCURRENCY)
    async with httpx.AsyncClient(base_url=url, timeout=TIMEOUT) as client:
        target = HttpTarget(client)

        async def read_back(entry: _load.Written) -> None:
            async with limiter:
                try:
                    if await target.read(entry) != entry.text:
                        failures.append("text differs")
                except Exception as exc:  # an unreadable entry is a result, not a crash
                    failures.append(_load.error_kind(exc))

        async with anyio.create_task_group() as group:
            for entry in written:
                group.start_soon(read_back, entry)
        picked = random.Random(5).sample(list(written), min(sample, len(written)))
        found = [entry.entry_id in await cited_ids(target, entry.text) for entry in picked]
    return {
        "entries_acknowledged": len(written),
        "readable": len(written) - len(failures),
        "unreadable_kinds": sorted(set(failures)),
        "prepare_sample": len(picked),
        "prepare_found": sum(found),
    }


async def cited_ids(target: Target, query: str) -> set[str | None]:
    """The entry ids the pack for ``query`` cites, spelled as the service's answers spell
    them (``satchel.parse_context`` gives them whole; a ref the service acknowledged
    spells its id as a pack prints it)."""
    content = await target.prepare(query)
    if not content:  # an empty result cites nothing (and has no markers to parse)
        return set()
    return {
        None if item.citation.id is None else compact_id(item.citation.id)
        for item in satchel.parse_context(content)
    }


async def memory_count(db: Path) -> int:
    async with satchel.open_runtime(str(db)) as rt:
        counts = await rt.store.scope_counts()
    return counts.get(_load.SCOPE, {}).get("memory", 0)


def measure_backend(
    backend: str, store: Path, workload: Workload, args: argparse.Namespace
) -> dict[str, Any]:
    """The three phases against ``satchel serve --backend backend``, then the same load
    in process: everything the report shows for one backend."""
    queries = workload.queries[: WARMUP_QUERIES + args.sequential]
    with tempfile.TemporaryDirectory(prefix="satchel-bench-service-") as directory:
        db = copy_store(store, Path(directory) / "service.db")
        print(f"{backend}: satchel serve", file=sys.stderr)
        options = ["--workers", str(args.workers)] if args.workers > 1 else []
        server_log = Path(directory) / "server.log"
        with running_server(db, backend, server_log, options=options) as server:
            print(f"  {backend}: {args.sequential} sequential prepares x 2", file=sys.stderr)
            alone = anyio.run(sequential, server.url, db, queries, backend=backend)
            overflows = listen_overflows()
            load = anyio.run(load_service, server, workload)
            overflows = listen_overflows() - overflows
            print(f"  {backend}: verifying {len(load.written):,} entries", file=sys.stderr)
            lost = anyio.run(verify, server.url, load.written, args.verify_prepares)
        log = server.log.read_text(errors="replace")
        lost["server_exit_code"] = server.process.returncode
        lost["listen_overflows"] = overflows
        lost["entries_after_stop"] = anyio.run(memory_count, db)
        lost["expected_after_stop"] = args.entries + len(load.written)
        fresh = copy_store(store, Path(directory) / "in-process.db")
        print(f"{backend}: the same load in process", file=sys.stderr)
        local = anyio.run(load_in_process, fresh, workload, backend=backend)
    return _backend_row(backend, alone, load, local, lost, log, workload.seconds)


def _backend_row(
    backend: str,
    alone: dict[str, Any],
    load: _load.LoadRun,
    local: _load.LoadRun,
    lost: dict[str, Any],
    log: str,
    seconds: float,
) -> dict[str, Any]:
    service = _load.summarise(load, seconds)
    in_process = _load.summarise(local, seconds)
    served, direct = service["ops"]["prepare"], in_process["ops"]["prepare"]
    at_load = {
        "service_p50_ms": served["p50_ms"],
        "in_process_p50_ms": direct["p50_ms"],
        "ratio": served["p50_ms"] / direct["p50_ms"],
        "throughput_ratio": served["per_s"] / direct["per_s"],
    }
    lines = [line for line in log.splitlines() if "serving" not in line and "stopped" not in line]
    return {
        "backend": backend,
        "sequential": alone,
        "service": service,
        "in_process": in_process,
        "at_load": at_load,
        "nothing_lost": lost,
        "server_log": lines[-20:],
    }


def report(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| backend | path | op | requests | errors | req/s | p50 ms | p95 ms | p99 ms"
        " | CPU (cores) |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for row in rows:
        for path in ("service", "in_process"):
            cpu = ", ".join(f"{k} {v:.2f}" for k, v in row[path]["cpu_cores"].items())
            for op, s in row[path]["ops"].items():
                lines.append(
                    f"| {row['backend']} | {path.replace('_', ' ')} | {op} | {s['requests']:,}"
                    f" | {s['errors']} | {s['per_s']:,.1f} | {ms_text(s['p50_ms'])}"
                    f" | {ms_text(s['p95_ms'])} | {ms_text(s['p99_ms'])} | {cpu} |"
                )
    lines += [
        "",
        "| backend | 1 client: in-process p50 ms | service p50 ms | ratio | /healthz p50 ms"
        " | identical packs | at load: in-process p50 ms | service p50 ms | ratio"
        " | prepares/s service/in-process |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        one, many = row["sequential"], row["at_load"]
        lines.append(
            f"| {row['backend']} | {one['in_process_p50_ms']:.2f} | {one['service_p50_ms']:.2f}"
            f" | {one['ratio']:.2f} | {one['healthz_p50_ms']:.2f} | {one['identical_packs']:.3f}"
            f" | {ms_text(many['in_process_p50_ms'])} | {ms_text(many['service_p50_ms'])}"
            f" | {many['ratio']:.2f} | {many['throughput_ratio']:.2f} |"
        )
    lines += [
        "",
        "| backend | entries acknowledged | read back | found by prepare | in store after stop"
        " (expected) | server exit | listen-queue overflows |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        lost = row["nothing_lost"]
        lines.append(
            f"| {row['backend']} | {lost['entries_acknowledged']:,} | {lost['readable']:,}"
            f" | {lost['prepare_found']}/{lost['prepare_sample']}"
            f" | {lost['entries_after_stop']:,} ({lost['expected_after_stop']:,})"
            f" | {lost['server_exit_code']} | {lost['listen_overflows']} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--entries", type=int, default=10_000)
    parser.add_argument("--clients", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--warmup", type=float, default=2.0)
    parser.add_argument("--write-share", type=float, default=0.1)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--sequential", type=int, default=200)
    parser.add_argument("--verify-prepares", type=int, default=100)
    parser.add_argument("--backends", nargs="+", choices=BACKENDS, default=list(BACKENDS))
    parser.add_argument(
        "--workers", type=int, default=1, help="satchel serve --workers N (default: 1)"
    )
    args = parser.parse_args()
    notes = scale.corpus(args.entries)
    store = scale.ensure_store(args.entries, notes)
    workload = Workload(
        queries=_corpus.queries(notes, QUERY_POOL), notes=notes, clients=args.clients,
        seconds=args.seconds, warmup=args.warmup, write_share=args.write_share,
        batch=args.batch,
    )  # fmt: skip
    started = time.perf_counter()
    # One BLAS thread in this process, as the runtime's default (blas_threads=1).
    with threadpoolctl.threadpool_limits(limits=1, user_api="blas"):
        rows = [measure_backend(backend, store, workload, args) for backend in args.backends]
    parameters = {k: v for k, v in vars(args).items() if k != "backends"}
    result = {"parameters": parameters, "wall_seconds": time.perf_counter() - started}
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "service.json").write_text(json.dumps({**result, "backends": rows}, indent=2) + "\n")
    print(report(rows))
    print(f"\n{result['wall_seconds']:.0f} s in all; written to {RESULTS / 'service.json'}")


if __name__ == "__main__":
    main()
