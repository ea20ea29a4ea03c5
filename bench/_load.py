"""The closed-loop load generator of ``bench service``: clients, targets, what they measured.

:func:`run_load` starts N clients in one task group. Each loops until the deadline,
one request at a time (closed loop: a client's next request waits for the answer, so
by Little's law latency is clients / throughput once the target saturates): a write of
a small batch with probability ``write_share``, else a prepare of a corpus query. A
target is the satchel service over HTTP (:class:`HttpTarget`) or a runtime in this
process (:class:`InProcessTarget`), so both run the same workload. Every non-2xx answer
and every exception is an error, counted by kind; nothing is retried. Requests started
in the warm-up are not timed, but their errors count and their writes must be kept.
"""

from __future__ import annotations

import random
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Protocol

import anyio
import numpy as np

import satchel

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    import httpx

SCOPE: Final = "bench"
BUDGET: Final = 8000
OPS: Final = ("prepare", "write")
PROGRESS_SECONDS: Final = 5.0


@dataclass(frozen=True)
class Written:
    """One acknowledged entry: the ref the target answered and the text it was sent."""

    entry_id: str
    version: int
    text: str


class Target(Protocol):
    """Where requests go: the two operations of the load."""

    async def prepare(self, query: str) -> str | None:
        """The pack's content for ``query`` in the bench scope (None: status empty)."""
        ...

    async def write(self, texts: Sequence[str]) -> list[Written]:
        """Add one memory entry per text, all or nothing; the acknowledged entries."""
        ...


class ServiceError(Exception):
    """A non-2xx answer; its message (status and error type) is its kind."""


class HttpTarget:
    """The satchel service, through an ``httpx.AsyncClient`` with its ``base_url`` set."""

    def __init__(self, client: httpx.AsyncClient) -> None:
        self.client = client

    async def prepare(self, query: str) -> str | None:
        body = {"scope_id": SCOPE, "query": query, "max_bytes": BUDGET}
        content: str | None = (await self._post("/v1/context/prepare", body))["content"]
        return content

    async def write(self, texts: Sequence[str]) -> list[Written]:
        body = {"scope_id": SCOPE, "entries": [{"text": text} for text in texts]}
        refs = (await self._post("/v1/memories", body))["refs"]
        return [Written(r["entry_id"], r["version"], t) for r, t in zip(refs, texts, strict=True)]

    async def read(self, entry: Written) -> str:
        """The text of exactly the acknowledged version (``GET /v1/memories/...``)."""
        path = f"/v1/memories/{SCOPE}/{entry.entry_id}"
        text: str = _checked(await self.client.get(path, params={"version": entry.version}))["text"]
        return text

    async def health(self) -> None:
        """``GET /healthz``: an HTTP round trip with no satchel work behind it."""
        _checked(await self.client.get("/healthz"))

    async def _post(self, path: str, body: Mapping[str, Any]) -> dict[str, Any]:
        return _checked(await self.client.post(path, json=body))


def _checked(response: httpx.Response) -> dict[str, Any]:
    if not response.is_success:
        try:
            kind = response.json()["error"]["type"]
        except (ValueError, KeyError, TypeError):
            kind = "no JSON error"
        raise ServiceError(f"HTTP {response.status_code} {kind}")
    body: dict[str, Any] = response.json()
    return body


class InProcessTarget:
    """A runtime in this process: the same calls the service makes, without HTTP."""

    def __init__(self, runtime: satchel.Runtime) -> None:
        self.runtime = runtime

    async def prepare(self, query: str) -> str | None:
        request = satchel.PrepareContextRequest(scope_id=SCOPE, query=query, max_bytes=BUDGET)
        return (await self.runtime.prepare_context(request)).content

    async def write(self, texts: Sequence[str]) -> list[Written]:
        refs = await self.runtime.add_memories(SCOPE, [satchel.MemoryEntry(text=t) for t in texts])
        return [Written(r.entry_id, r.version, t) for r, t in zip(refs, texts, strict=True)]


def error_kind(exc: Exception) -> str:
    """``HTTP 500 internal`` for a refused request, the exception's type otherwise."""
    return str(exc) if isinstance(exc, ServiceError) else type(exc).__name__


@dataclass(frozen=True)
class Workload:
    """What every client does, for how long."""

    queries: Sequence[str]
    #: Corpus notes: a write's text is a unique term followed by one of them.
    notes: Sequence[str]
    clients: int
    seconds: float
    warmup: float
    write_share: float
    batch: int
    seed: int = 17


@dataclass
class OpRecord:
    """One operation's timed latencies (seconds) and every error, by kind."""

    attempts: int = 0
    latencies: list[float] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)


@dataclass
class LoadRun:
    """What one run measured: per operation, every acknowledged write, CPU seconds."""

    measured_from: float
    until: float
    ops: dict[str, OpRecord] = field(default_factory=lambda: {op: OpRecord() for op in OPS})
    written: list[Written] = field(default_factory=list)
    #: CPU seconds per process over the timed window (what the probe reports).
    cpu_seconds: dict[str, float] = field(default_factory=dict)


async def run_load(
    targets: Sequence[Target], workload: Workload, label: str, cpu: Callable[[], dict[str, float]]
) -> LoadRun:
    """Run ``workload``, client ``i`` sending to ``targets[i]``; ``cpu()`` is sampled as
    the timed window opens and closes. Progress goes to stderr every few seconds."""
    start = time.perf_counter()
    run = LoadRun(start + workload.warmup, start + workload.warmup + workload.seconds)
    async with anyio.create_task_group() as monitor:
        monitor.start_soon(_monitor, run, label, cpu)
        async with anyio.create_task_group() as clients:
            for number, target in enumerate(targets):
                rng = random.Random(workload.seed * 100_003 + number)
                clients.start_soon(_client, target, workload, run, rng, f"ld{number}x")
        monitor.cancel_scope.cancel()
    return run


async def _client(
    target: Target, workload: Workload, run: LoadRun, rng: random.Random, tag: str
) -> None:
    written = 0
    while (began := time.perf_counter()) < run.until:
        op = "write" if rng.random() < workload.write_share else "prepare"
        run.ops[op].attempts += 1
        try:
            if op == "write":
                texts = [
                    _unique_note(rng, workload, f"{tag}{written + i}")
                    for i in range(workload.batch)
                ]
                written += workload.batch
                run.written.extend(await target.write(texts))
            else:
                await target.prepare(rng.choice(workload.queries))
        except Exception as exc:  # every failure is a result to count, not a crash
            run.ops[op].errors[error_kind(exc)] += 1
            continue
        if began >= run.measured_from:
            run.ops[op].latencies.append(time.perf_counter() - began)


def _unique_note(rng: random.Random, workload: Workload, term: str) -> str:
    # The unique term first: a query of the whole text keeps it whatever the term cap.
    return f"{term}{rng.getrandbits(24):06x} {rng.choice(workload.notes)}"


async def _monitor(run: LoadRun, label: str, cpu: Callable[[], dict[str, float]]) -> None:
    await anyio.sleep(max(0.0, run.measured_from - time.perf_counter()))
    opened = cpu()
    while (now := time.perf_counter()) < run.until:
        await anyio.sleep(min(PROGRESS_SECONDS, run.until - now))
        done = {op: len(record.latencies) for op, record in run.ops.items()}
        errors = sum(sum(record.errors.values()) for record in run.ops.values())
        elapsed = time.perf_counter() - run.measured_from
        print(
            f"  {label}: {elapsed:4.0f} s, {done['prepare']:,} prepares, {done['write']:,}"
            f" writes, {errors} errors, {sum(done.values()) / elapsed:,.0f} req/s",
            file=sys.stderr,
        )
    closed = cpu()
    run.cpu_seconds = {name: closed[name] - opened[name] for name in closed}


def ms_text(value: float | None) -> str:
    """Milliseconds as a report prints them: one decimal, ``-`` when there are none."""
    return "-" if value is None else f"{value:.1f}"


def percentile_ms(seconds: Sequence[float], q: float) -> float | None:
    return float(np.percentile(np.asarray(seconds), q)) * 1e3 if seconds else None


def summarise(run: LoadRun, seconds: float) -> dict[str, Any]:
    """Per operation: timed requests, errors (warm-up included), req/s, p50/p95/p99 ms;
    and CPU per process in cores (``others``: the rest of the machine, when the probe
    reports ``machine``)."""
    ops = {
        op: {
            "requests": len(record.latencies),
            "attempts": record.attempts,
            "errors": sum(record.errors.values()),
            "error_kinds": dict(record.errors),
            "per_s": len(record.latencies) / seconds,
            **{f"p{q}_ms": percentile_ms(record.latencies, q) for q in (50, 95, 99)},
        }
        for op, record in run.ops.items()
    }
    cpu = {name: used / seconds for name, used in run.cpu_seconds.items()}
    if "machine" in cpu:  # what processes other than the measured ones used meanwhile
        machine = cpu.pop("machine")
        cpu["others"] = max(0.0, machine - sum(cpu.values()))
    return {"ops": ops, "errors": sum(op["errors"] for op in ops.values()), "cpu_cores": cpu}
