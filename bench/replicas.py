"""Replicas over one OceanBase engine: ``satchel serve`` processes sharing one seekdb
engine, at 1, 2 and 3 replicas, and what the store costs a prepare.

One seekdb engine (``pylibseekdb``, embedded: a process of its own, reached on a Unix
socket) is started in a temporary directory. ``--tenants`` scopes (``tenant-0``, ...)
of ``--entries`` memory entries in all (the real-word notes of ``bench scale``, dealt
round robin; the bundled static embedder) are written into one database of it through
the public API, in batches of 512. Each scope stays below the store's ``exact_rows``
(10,000), so vectors are searched exactly. Then, on loopback only:

1. in process: ``--in-process`` prepares, then half as many writes of ``--batch``
   entries, one at a time, by a runtime in this process over the same database
   (shared sessions, ``--dedup-turns``, a session per tenant), each timed beside the
   store calls it made (the store's OpenTelemetry CLIENT spans, ``oceanbase
   OPERATION``): the share of its time spent waiting on the store, its store calls by
   operation, and the CPU of this process and of the engine per call;
2. replicas: for each count in ``--replicas``, that many ``satchel serve --store
   oceanbase://...?unix_socket=... --shared-sessions --dedup-turns N`` processes (one
   token per tenant, every replica the same token file) and ``--clients`` closed-loop
   clients for ``--seconds`` after ``--warmup`` untimed seconds (``bench/_load.py``):
   client ``i`` is tenant ``i mod T``'s, with a session of its own, and sends each
   request to the next replica in turn, as a round-robin balancer would, so every
   session's turns alternate over the replicas; a ``--write-share`` of its requests
   add ``--batch`` entries to its scope (by default half, two entries each: an agent's
   turn is a prepare, then its user's message and the reply written back). Reported:
   requests, errors, req/s, p50/p95/p99 per operation, CPU of the replicas, the engine,
   this client and the rest of the machine (in cores), prepares/s per replica core and
   the CPU per prepare (with its share of the writes), each replica's RSS, and a sample
   of acknowledged writes read back from every replica and found by a prepare;
3. size, once the loads are done: a major compaction merges every table into one
   compressed SSTable, and the database's tables are measured as the engine stores
   them (their newest major SSTables in ``V$OB_SSTABLES``), per entry and part (records
   and their B-tree indexes, the full-text index, the vectors, the term statistics),
   with the engine's HNSW index memory (``V$OB_VECTOR_MEMORY``) per vector;
4. tokens: what checking a bearer token costs a request with 8, 1,000 and 10,000
   tokens configured (every one is compared, in constant time).

Before the in-process phase and each load the engine is left to settle: its CPU with no
client is read until it is under a tenth of a core (at most 90 s; after the ingest it
kept 0.8 of a core busy a while), and reported; CPU per call is also given net of it.
The machine is shared: its load average is recorded before and after. JSON goes to
``bench/results/replicas.json``; a Markdown table to stdout.

Run: ``python -m bench replicas [--replicas 1 2 3] [--tenants 8] [--entries 8000]
[--clients 16] [--seconds 20]``; about 3-4 minutes on two cores.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import secrets
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from contextlib import AsyncExitStack, contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import anyio
import httpx
import threadpoolctl

import satchel
from bench import _corpus, _load
from bench._load import Workload, Written, ms_text
from bench._serve_process import (
    STOP_SECONDS,
    Server,
    _start_url,
    _wait_until_healthy,
    machine_cpu_seconds,
    own_cpu_seconds,
    process_cpu_seconds,
)
from satchel.stores import open_store

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Iterator, Sequence

RESULTS = Path(__file__).parent / "results"
DATABASE: Final = "satchel"
BATCH: Final = 512
BUDGET: Final = 8000
QUERY_POOL: Final = 2000
TIMEOUT: Final = httpx.Timeout(60.0)
#: The engine's limit on one statement, in microseconds (the tests' value: a busy
#: machine's schema statements have taken longer than the engine's default 10 s).
QUERY_TIMEOUT_US: Final = 120_000_000
#: Seconds the engine's CPU is read at a time with no client, before the timed phases,
#: until it is under QUIET_CORES (at most SETTLE_SECONDS): after the ingest it kept
#: busy with its own work for a while (0.8 of a core), which a per-call figure would
#: otherwise count.
IDLE_SECONDS: Final = 3.0
QUIET_CORES: Final = 0.1
SETTLE_SECONDS: Final = 90.0
#: Longest wait for a major compaction.
FREEZE_SECONDS: Final = 300.0
#: Acknowledged writes read back from every replica after a load, and found by a prepare.
VERIFY_SAMPLE: Final = 20
#: Token counts whose check is timed, and the checks timed at each.
TOKEN_COUNTS: Final = (8, 1_000, 10_000)
TOKEN_CHECKS: Final = 2_000
#: The parts of the database a size is reported in, by what a table's name holds.
PARTS: Final = {
    "full-text index": ("by_terms", "fts_"),
    "vectors and their HNSW tables": ("satchel_vectors", "by_vector", "rowkey_vid", "vid_rowkey"),
    "records and their B-tree indexes": (
        "satchel_records",
        "_by_rid",
        "_by_key",
        "_by_time",
        "_by_thread",
    ),
    "term statistics": ("satchel_terms",),
}


@dataclass
class Engine:
    """The seekdb engine this process started: where it listens and its process."""

    instance: Any
    socket: str
    pid: int

    def url(self) -> str:
        return f"oceanbase://root@localhost/{DATABASE}?unix_socket={self.socket}"

    def query(self, statement: str) -> list[tuple[Any, ...]]:
        """One statement on a connection of its own (``pylibseekdb``'s, blocking)."""
        conn = self.instance.connect(autocommit=True)
        try:
            cursor = conn.cursor()
            cursor.execute(statement)
            return list(cursor.fetchall() or [])
        finally:
            conn.close()


@contextmanager
def seekdb_engine(directory: Path) -> Iterator[Engine]:
    """A seekdb engine on ``directory``, started here, stopped on exit."""
    import pylibseekdb

    instance = pylibseekdb.open(db_dir=str(directory))
    try:
        engine = Engine(
            instance,
            instance.connection_options()["unix_socket"],
            int((directory / "run" / "seekdb.pid").read_text().strip()),
        )
        engine.query(f"SET GLOBAL ob_query_timeout = {QUERY_TIMEOUT_US}")
        yield engine
    finally:
        instance.close()


def tenant(number: int) -> str:
    return f"tenant-{number}"


async def ingest(url: str, texts: Sequence[str], tenants: int) -> float:
    """Deal ``texts`` over the tenants' scopes, in batches; entries/s."""
    started = time.perf_counter()
    async with satchel.open_runtime(store=await open_store(url)) as rt:
        for number in range(tenants):
            mine = texts[number::tenants]
            for start in range(0, len(mine), BATCH):
                batch = [satchel.MemoryEntry(text=text) for text in mine[start : start + BATCH]]
                await rt.add_memories(tenant(number), batch)
            print(f"  ingest: {tenant(number)}, {len(mine):,} entries", file=sys.stderr)
    return len(texts) / (time.perf_counter() - started)


def store_size(engine: Engine) -> dict[str, Any]:
    """A major compaction (every table merged into one compressed SSTable), awaited;
    then each table's newest major SSTables (older ones linger beside them), per entry
    and part; and the HNSW index memory per vector."""
    started = time.perf_counter()
    state = "SELECT LAST_SCN, STATUS FROM oceanbase.DBA_OB_MAJOR_COMPACTION"
    [(before, _)] = engine.query(state)
    engine.query("ALTER SYSTEM MAJOR FREEZE")
    while time.perf_counter() < started + FREEZE_SECONDS:
        [(last, status)] = engine.query(state)
        if last > before and status == "IDLE":
            break
        time.sleep(1.0)
    rows = engine.query(
        "SELECT u.TABLE_NAME, s.TABLET_ID, s.END_LOG_SCN, s.SIZE"
        " FROM oceanbase.DBA_OB_TABLE_SPACE_USAGE u"
        " JOIN oceanbase.__all_tablet_to_table t ON t.table_id = u.TABLE_ID"
        " JOIN oceanbase.V$OB_SSTABLES s ON s.TABLET_ID = t.tablet_id"
        f" WHERE u.DATABASE_NAME = '{DATABASE}' AND s.TABLE_TYPE = 'MAJOR'"
    )
    latest: dict[int, tuple[int, str, int]] = {}  # each tablet's newest major SSTable
    for name, tablet, scn, size in rows:
        if int(tablet) not in latest or int(scn) > latest[int(tablet)][0]:
            latest[int(tablet)] = (int(scn), str(name), int(size or 0))
    parts: Counter[str] = Counter()
    for _, name, size in latest.values():
        part = next((p for p, marks in PARTS.items() if any(m in name for m in marks)), "other")
        parts[part] += size
    [(entries,)] = engine.query(f"SELECT COUNT(*) FROM {DATABASE}.satchel_records")
    [(vectors,)] = engine.query(f"SELECT COUNT(*) FROM {DATABASE}.satchel_vectors")
    [(vector_memory,)] = engine.query("SELECT VECTOR_MEM_USED FROM oceanbase.V$OB_VECTOR_MEMORY")
    total = sum(parts.values())
    return {
        "entries": int(entries),
        "vectors": int(vectors),
        "compaction_seconds": time.perf_counter() - started,
        "stored_bytes": total,
        "bytes_per_entry": total / int(entries),
        "parts_bytes_per_entry": {part: size / int(entries) for part, size in parts.most_common()},
        "hnsw_memory_bytes": int(vector_memory),
        "hnsw_bytes_per_vector": int(vector_memory) / int(vectors),
        "engine_rss_mib": _rss_mib(engine.pid),
    }


def idle_cores(engine: Engine, seconds: float = IDLE_SECONDS) -> float:
    """The engine's CPU, in cores, with no client: its own background work (compactions,
    index upkeep) after what came before. Read over ``seconds`` at a time until it falls
    under :data:`QUIET_CORES` (for at most :data:`SETTLE_SECONDS`): the last reading."""
    deadline = time.perf_counter() + SETTLE_SECONDS
    while True:
        used = process_cpu_seconds(engine.pid)
        time.sleep(seconds)
        cores = (process_cpu_seconds(engine.pid) - used) / seconds
        if cores < QUIET_CORES or time.perf_counter() > deadline:
            return cores


def _rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


async def in_process(
    engine: Engine, workload: Workload, tenants: int, count: int, dedup_turns: int, idle: float
) -> dict[str, Any]:
    """``count`` prepares, then ``count // 2`` writes of a batch, one at a time, each
    against the store calls it waited on."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    store = await open_store(engine.url(), tracer_provider=provider)
    queries, rng = workload.queries, random.Random(workload.seed)
    async with satchel.open_runtime(
        store=store, tracer_provider=provider, dedup_turns=dedup_turns, shared_sessions=True
    ) as rt:

        async def prepare(number: int) -> object:
            return await rt.prepare_context(
                satchel.PrepareContextRequest(
                    scope_id=tenant(number % tenants), query=queries[number % len(queries)],
                    max_bytes=BUDGET, session_id=f"in-process-{number % tenants}",
                )
            )  # fmt: skip

        async def write(number: int) -> object:
            texts = [f"ip{number}x{n} {rng.choice(workload.notes)}" for n in range(workload.batch)]
            entries = [satchel.MemoryEntry(text=text) for text in texts]
            return await rt.add_memories(tenant(number % tenants), entries)

        for number in range(10):
            await prepare(number)
        return {
            "prepare": await _timed(prepare, count, exporter, engine, idle),
            "write": await _timed(write, count // 2, exporter, engine, idle),
        }


async def _timed(
    call: Callable[[int], Awaitable[object]],
    count: int,
    exporter: Any,
    engine: Engine,
    idle: float,
) -> dict[str, Any]:
    """``count`` calls one at a time: latency, the time spent waiting on the store (its
    CLIENT spans), store calls, and the CPU of this process and of the engine (and the
    engine's less its ``idle`` cores over the time)."""
    walls: list[float] = []
    waits: list[float] = []
    calls: Counter[str] = Counter()
    cpu = (own_cpu_seconds(), process_cpu_seconds(engine.pid))
    began = time.perf_counter()
    for number in range(count):
        exporter.clear()
        opened = time.time_ns()
        await call(number)
        closed = time.time_ns()
        spans = [s for s in exporter.get_finished_spans() if s.name.startswith("oceanbase ")]
        calls.update(str((s.attributes or {}).get("db.operation.name")) for s in spans)
        walls.append((closed - opened) / 1e9)
        waits.append(_covered(spans, opened, closed) / 1e9)
    used = (own_cpu_seconds() - cpu[0], process_cpu_seconds(engine.pid) - cpu[1])
    background = idle * (time.perf_counter() - began)
    return {
        "calls": count,
        "p50_ms": _load.percentile_ms(walls, 50),
        "p99_ms": _load.percentile_ms(walls, 99),
        "store_wait_p50_ms": _load.percentile_ms(waits, 50),
        "store_share": sum(waits) / sum(walls),
        "store_calls": sum(calls.values()) / count,
        "store_calls_by_operation": {op: n / count for op, n in calls.most_common()},
        "process_cpu_ms": used[0] / count * 1e3,
        "engine_cpu_ms": used[1] / count * 1e3,
        "engine_net_cpu_ms": max(0.0, used[1] - background) / count * 1e3,
    }


def _covered(spans: Sequence[Any], opened: int, closed: int) -> int:
    """Nanoseconds of [opened, closed] during which at least one span was open."""
    covered, reached = 0, opened
    for start, end in sorted((max(s.start_time, opened), min(s.end_time, closed)) for s in spans):
        if end > reached:
            covered += end - max(start, reached)
            reached = end
    return covered


@dataclass
class BalancedTarget:
    """One load client behind a round-robin balancer: each request goes to the next
    replica; a tenant's token, scope and a session of its own."""

    clients: Sequence[httpx.AsyncClient]
    scope: str
    token: str
    session: str
    turn: int = 0
    written: list[Written] = field(default_factory=list)

    def _next(self) -> httpx.AsyncClient:
        self.turn += 1
        return self.clients[self.turn % len(self.clients)]

    async def prepare(self, query: str) -> str | None:
        body = {
            "scope_id": self.scope, "query": query, "max_bytes": BUDGET,
            "session_id": self.session,
        }  # fmt: skip
        client = self._next()
        answer = _load._checked(
            await client.post("/v1/context/prepare", json=body, headers=self.headers())
        )
        content: str | None = answer["content"]
        return content

    async def write(self, texts: Sequence[str]) -> list[Written]:
        body = {"scope_id": self.scope, "entries": [{"text": text} for text in texts]}
        answer = _load._checked(
            await self._next().post("/v1/memories", json=body, headers=self.headers())
        )
        refs = [
            Written(ref["entry_id"], ref["version"], text)
            for ref, text in zip(answer["refs"], texts, strict=True)
        ]
        self.written.extend(refs)
        return refs

    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}


@contextmanager
def replicas(
    url: str, count: int, tokens: Path, dedup_turns: int, logs: Path
) -> Iterator[list[Server]]:
    """``count`` ``satchel serve`` processes over ``url``, started at once; SIGTERM on
    exit."""
    command = [
        sys.executable, "-m", "satchel", "serve", "--create", "--store", url, "--port", "0",
        "--token-file", str(tokens), "--dedup-turns", str(dedup_turns), "--shared-sessions",
    ]  # fmt: skip
    processes: list[subprocess.Popen[bytes]] = []
    try:
        for number in range(count):
            log = logs / f"replica-{count}-{number}.log"
            with log.open("wb") as sink:
                processes.append(subprocess.Popen(command, stderr=sink))
        servers = []
        for number, process in enumerate(processes):
            log = logs / f"replica-{count}-{number}.log"
            server = Server(process, _start_url(process, log), log)
            _wait_until_healthy(server)
            servers.append(server)
        yield servers
        for process in processes:
            process.send_signal(signal.SIGTERM)
        for process in processes:
            process.wait(timeout=STOP_SECONDS)
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
                process.wait()


async def load(
    servers: Sequence[Server],
    engine: Engine,
    grants: Sequence[tuple[str, str]],
    workload: Workload,
) -> tuple[_load.LoadRun, dict[str, Any]]:
    """The load through the balancer, then the sample of acknowledged writes checked."""

    def cpu() -> dict[str, float]:
        used = {
            f"replica {n + 1}": process_cpu_seconds(s.process.pid) for n, s in enumerate(servers)
        }
        used["engine"] = process_cpu_seconds(engine.pid)
        used["client"] = own_cpu_seconds()
        used["machine"] = machine_cpu_seconds()
        return used

    async with AsyncExitStack() as stack:
        targets = []
        for number in range(workload.clients):
            clients = [
                await stack.enter_async_context(
                    httpx.AsyncClient(base_url=server.url, timeout=TIMEOUT)
                )
                for server in servers
            ]
            scope, token = grants[number % len(grants)]
            targets.append(BalancedTarget(clients, scope, token, f"s{number}", turn=number))
        run = await _load.run_load(targets, workload, f"{len(servers)} replicas", cpu)
        checked = await verify(targets, len(servers))
    return run, checked


async def verify(targets: Sequence[BalancedTarget], count: int) -> dict[str, Any]:
    """A sample of acknowledged writes: read back from every replica (exact version,
    same text), and cited by a prepare of their text (in no session) on the next one."""
    rng = random.Random(5)
    written = [(target, entry) for target in targets for entry in target.written]
    sample = rng.sample(written, min(VERIFY_SAMPLE, len(written)))
    readable = found = 0
    for target, entry in sample:
        for client in target.clients:
            path = f"/v1/memories/{target.scope}/{entry.entry_id}"
            params = {"version": entry.version}
            got = await client.get(path, params=params, headers=target.headers())
            readable += got.status_code == 200 and got.json()["text"] == entry.text
        body = {"scope_id": target.scope, "query": entry.text, "max_bytes": BUDGET}
        client = target._next()
        answer = await client.post("/v1/context/prepare", json=body, headers=target.headers())
        items = satchel.parse_context(_load._checked(answer)["content"])
        # The pack prints an id in 22 characters; its citation gives it in full.
        found += entry.entry_id in {item.citation.id for item in items}
    return {
        "sample": len(sample),
        "reads": len(sample) * count,
        "read_back": readable,
        "found_by_prepare": found,
    }


def token_check_us() -> dict[str, float]:
    """Microseconds to check one bearer token with N tokens configured."""
    from satchel.http import TokenGrant
    from satchel.http._auth import Tokens

    timed = {}
    for count in TOKEN_COUNTS:
        secrets_ = [secrets.token_urlsafe(24) for _ in range(count)]
        tokens = Tokens(
            {s: TokenGrant(scopes=(f"t{n}",), name=f"t{n}") for n, s in enumerate(secrets_)}
        )
        header = f"Bearer {secrets_[-1]}".encode()
        started = time.perf_counter()
        for _ in range(TOKEN_CHECKS):
            tokens.grant_for(header)
        timed[str(count)] = (time.perf_counter() - started) / TOKEN_CHECKS * 1e6
    return timed


def measure_replicas(
    engine: Engine,
    count: int,
    tokens: Path,
    grants: Sequence[tuple[str, str]],
    workload: Workload,
    args: argparse.Namespace,
    logs: Path,
) -> dict[str, Any]:
    print(f"{count} replica(s): satchel serve", file=sys.stderr)
    # A seed of its own: the same seed would write the texts of an earlier count again,
    # and a pack delivers a repeated text once, so the sample's entries would look lost.
    workload = replace(workload, seed=workload.seed + count)
    idle = idle_cores(engine)
    with replicas(engine.url(), count, tokens, args.dedup_turns, logs) as servers:
        run, checked = anyio.run(load, servers, engine, grants, workload)
        rss = [_rss_mib(server.process.pid) for server in servers]
    summary = _load.summarise(run, workload.seconds)
    cores = summary["cpu_cores"]
    replica_cores = sum(v for k, v in cores.items() if k.startswith("replica"))
    engine_net = max(0.0, cores["engine"] - idle)
    prepares = summary["ops"]["prepare"]["per_s"]
    requests = prepares + summary["ops"]["write"]["per_s"]
    failed = [
        line
        for server in servers
        for line in server.log.read_text(errors="replace").splitlines()
        if "Error" in line or "Traceback" in line
    ]
    return {
        "replicas": count,
        **summary,
        "replica_cores": replica_cores,
        # Each prepare with its share of the writes (the load's mix).
        "prepares_per_replica_core": prepares / replica_cores if replica_cores else None,
        "replica_cpu_ms_per_prepare": replica_cores / prepares * 1e3 if prepares else None,
        "engine_cpu_ms_per_prepare": cores["engine"] / prepares * 1e3 if prepares else None,
        "engine_idle_cores": idle,
        "engine_net_cpu_ms_per_prepare": engine_net / prepares * 1e3 if prepares else None,
        "replica_cpu_ms_per_request": replica_cores / requests * 1e3 if requests else None,
        "engine_cpu_ms_per_request": cores["engine"] / requests * 1e3 if requests else None,
        "replica_rss_mib": rss,
        "verified": checked,
        "exit_codes": [s.process.returncode for s in servers],
        "server_errors": failed[-10:],
    }


def report(result: dict[str, Any]) -> str:
    lines = [
        "| replicas | prepares/s | p50 ms | p95 ms | p99 ms | writes/s | write p50 ms"
        " | errors | CPU cores: replicas / engine / client / others | prepares/s per"
        " replica core | CPU ms per prepare: replicas / engine (net of its idle) | engine idle"
        " cores | replica RSS MiB |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---|---:|---|",
    ]
    for row in result["replicas"]:
        p, w, c = row["ops"]["prepare"], row["ops"]["write"], row["cpu_cores"]
        lines.append(
            f"| {row['replicas']} | {p['per_s']:.1f} | {ms_text(p['p50_ms'])}"
            f" | {ms_text(p['p95_ms'])} | {ms_text(p['p99_ms'])} | {w['per_s']:.1f}"
            f" | {ms_text(w['p50_ms'])} | {row['errors']}"
            f" | {row['replica_cores']:.2f} / {c['engine']:.2f} / {c['client']:.2f}"
            f" / {c.get('others', 0.0):.2f} | {row['prepares_per_replica_core']:.1f}"
            f" | {row['replica_cpu_ms_per_prepare']:.1f} / {row['engine_cpu_ms_per_prepare']:.1f}"
            f" ({row['engine_net_cpu_ms_per_prepare']:.1f}) | {row['engine_idle_cores']:.2f}"
            f" | {', '.join(f'{mib:.0f}' for mib in row['replica_rss_mib'])} |"
        )
    lines += [
        "",
        "| replicas | writes checked | read back (replicas x writes) | found by prepare |",
        "|---:|---:|---:|---:|",
    ]
    for row in result["replicas"]:
        v = row["verified"]
        lines.append(
            f"| {row['replicas']} | {v['sample']} | {v['read_back']}/{v['reads']}"
            f" | {v['found_by_prepare']}/{v['sample']} |"
        )
    lines += [
        "",
        "| in process, one at a time | calls | p50 ms | p99 ms | waiting on the store p50 ms"
        " | share of the time | store calls each | CPU ms each: this process / engine (net of"
        " its idle) |",
        "|---|---:|---:|---:|---:|---:|---|---|",
    ]
    for op, one in result["in_process"].items():
        calls = ", ".join(f"{name} {n:.2f}" for name, n in one["store_calls_by_operation"].items())
        lines.append(
            f"| {op} | {one['calls']} | {one['p50_ms']:.1f} | {one['p99_ms']:.1f}"
            f" | {one['store_wait_p50_ms']:.1f} | {one['store_share']:.0%}"
            f" | {one['store_calls']:.2f} ({calls}) | {one['process_cpu_ms']:.1f}"
            f" / {one['engine_cpu_ms']:.1f} ({one['engine_net_cpu_ms']:.1f}) |"
        )
    lines.append(f"\n(The engine idle before them: {result['engine_idle_cores']:.2f} cores.)")
    size = result["size"]
    parts = ", ".join(f"{p} {b:,.0f}" for p, b in size["parts_bytes_per_entry"].items())
    lines += [
        "",
        f"Size ({size['entries']:,} entries, after a major compaction):"
        f" {size['bytes_per_entry']:,.0f} bytes per entry stored ({parts}); HNSW index memory"
        f" {size['hnsw_bytes_per_vector']:,.0f} bytes per vector; engine RSS"
        f" {size['engine_rss_mib']:,.0f} MiB.",
        "",
        "Token check per request: "
        + ", ".join(f"{int(n):,} tokens {us:.1f} us" for n, us in result["token_check_us"].items())
        + ".",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--replicas", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--tenants", type=int, default=8)
    parser.add_argument("--entries", type=int, default=8000)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--warmup", type=float, default=3.0)
    parser.add_argument("--write-share", type=float, default=0.5)
    parser.add_argument("--batch", type=int, default=2)
    parser.add_argument("--dedup-turns", type=int, default=3)
    parser.add_argument("--in-process", type=int, default=200)
    args = parser.parse_args()
    started = time.perf_counter()
    load_before = os.getloadavg()
    texts = _corpus.english_texts(args.entries, function_head=True)
    workload = Workload(
        queries=_corpus.queries(texts, QUERY_POOL), notes=texts, clients=args.clients,
        seconds=args.seconds, warmup=args.warmup, write_share=args.write_share,
        batch=args.batch,
    )  # fmt: skip
    grants = [(tenant(n), secrets.token_urlsafe(24)) for n in range(args.tenants)]
    result: dict[str, Any] = {"parameters": vars(args)}
    # One BLAS thread in this process, as the runtime's default (blas_threads=1).
    with (
        threadpoolctl.threadpool_limits(limits=1, user_api="blas"),
        tempfile.TemporaryDirectory(prefix="satchel-bench-replicas-") as directory,
    ):
        folder = Path(directory)
        tokens = folder / "tokens.json"
        configured = [
            {"name": scope, "token": token, "scopes": [scope], "write": True}
            for scope, token in grants
        ]
        tokens.write_text(json.dumps({"tokens": configured}))
        tokens.chmod(0o600)
        print("seekdb: starting the engine", file=sys.stderr)
        with seekdb_engine(folder / "seekdb") as engine:
            result["ingest_entries_per_s"] = anyio.run(ingest, engine.url(), texts, args.tenants)
            print(f"in process: {args.in_process} prepares", file=sys.stderr)
            idle = idle_cores(engine)
            result["engine_idle_cores"] = idle
            result["in_process"] = anyio.run(
                in_process, engine, workload, args.tenants, args.in_process, args.dedup_turns,
                idle,
            )  # fmt: skip
            result["replicas"] = [
                measure_replicas(engine, count, tokens, grants, workload, args, folder)
                for count in args.replicas
            ]
            print("size: a major compaction", file=sys.stderr)
            result["size"] = store_size(engine)
    result["token_check_us"] = token_check_us()
    result["load_average"] = {"before": load_before, "after": os.getloadavg()}
    result["wall_seconds"] = time.perf_counter() - started
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "replicas.json").write_text(json.dumps(result, indent=2) + "\n")
    print(report(result))
    print(
        f"\n{result['wall_seconds']:.0f} s in all (load average {load_before[0]:.1f} before,"
        f" {result['load_average']['after'][0]:.1f} after); written to"
        f" {RESULTS / 'replicas.json'}"
    )


if __name__ == "__main__":
    main()
