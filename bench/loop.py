"""How long satchel holds the host's event loop: heartbeat lag beside prepares and writes.

A heartbeat task shares the loop with the work measured: it sleeps 1 ms, again and
again, and records its lateness (the time it woke minus the time it asked to wake). Any
stretch in which the loop runs satchel code without yielding shows up as lag, so the lag
is what a server sharing the loop with satchel would feel.

Prepares: for each backend (asyncio, trio) and each size N, one scope of N memory
entries, the store of ``bench scale`` (real-word notes of ``_corpus.english_texts``,
ingested through the public API with the bundled static embedder, built once and cached
in ``bench/.cache/scale-{N}.db``). Per gate arm (off: ``recall_policy=None``; on:
``RecallSufficiencyPolicy()``) and concurrency C, one runtime is opened on the store
(none inherits another's caches); its first prepare is timed (cold: it loads the
scope's vectors), then warm-up queries, then C prepare loops share ``--queries`` queries
(3-6 words of a random entry, an 8000-byte budget) while the heartbeat runs. Reported
per cell: prepare p50/p95, lag p50/p99/max and the samples above 2 ms and 5 ms.

Writes: per backend, single ``add_memories`` calls into an empty scope of a new store
(each call its own scope, ``--write-repeats`` times): one note, 64 notes, one entry of
1 MB, 5 MB of notes, 5 MB in 50 entries of 100 KB (a memory entry's text has no size
limit). Reported: each call's duration and the heartbeat's largest lag during it.

Beside the heartbeat (``bench/_heartbeat.py``): a step probe times every step the loop
runs and names the task of the longest (a single stall, where a lag may add up several
tasks' steps between two beats), and says of every step of 2 ms or more why it was long
(running satchel code, waiting for the GIL, waiting for a core, collecting garbage) and
where the loop thread was; garbage collections are timed too, the longest and the
number of full ones reported (a collection stalls the loop from whichever thread runs
it; each measurement starts from a full collection). ``--gc-freeze`` freezes what is
alive before each prepare measurement (``gc.freeze()``, what a host can do after its
start-up), so a full collection walks only what the measurement made. The probe's
watchdog thread wakes every millisecond and takes the GIL, which lengthens the steps it
explains (asyncio's cells had about twice the lags over 2 ms with it), so each cell runs
its prepares twice, each pass on a runtime of its own after the same warm-up: the lag,
latencies and collections reported are the pass without the probe, the steps and
stalls the pass with it (whose own lag max is kept as ``probed_lag_max_ms``).
``--no-steps`` runs only the first pass. The idle heartbeat's lag per backend is the
floor, and the 1-minute load average after each measurement a sign of other work on the
machine. One BLAS thread, as the runtime's default.

Run: ``python -m bench loop [--sizes 2000 20000 100000] [--queries 500]
[--backends asyncio trio] [--concurrency 1 4] [--gate off on] [--out PATH]``. JSON goes
to ``bench/results/loop.json``; progress to stderr.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Final

import anyio
import numpy as np
import threadpoolctl

import satchel
from bench import _corpus, scale
from bench._heartbeat import BEAT, lags_only, watched

RESULTS: Final = Path(__file__).parent / "results"
SCOPE: Final = scale.SCOPE
BUDGET: Final = 8000
WARMUP: Final = scale.WARMUP
IDLE_SECONDS: Final = 2.0
POLICIES: Final = {"off": None, "on": satchel.RecallSufficiencyPolicy()}
MB: Final = 1_000_000


@dataclass(frozen=True)
class Settings:
    """What one run measures, from the command line."""

    queries: int
    concurrency: tuple[int, ...]
    gates: tuple[str, ...]
    write_repeats: int
    steps: bool
    freeze: bool = False


async def idle(settings: Settings) -> dict[str, Any]:
    """The heartbeat alone: the floor every other lag stands on."""
    _, _, watch = await watched(lambda: anyio.sleep(IDLE_SECONDS), steps=settings.steps)
    return {**lags_only(watch.summary()), "load_1min": os.getloadavg()[0]}


# -- prepares ---------------------------------------------------------------------------


async def timed_prepare(rt: satchel.Runtime, query: str) -> float:
    request = satchel.PrepareContextRequest(scope_id=SCOPE, query=query, max_bytes=BUDGET)
    started = time.perf_counter()
    await rt.prepare_context(request)
    return time.perf_counter() - started


async def prepare_loops(rt: satchel.Runtime, queries: list[str], concurrency: int) -> list[float]:
    """``concurrency`` loops share ``queries``, each taking the next one when done."""
    latencies: list[float] = []
    pending = iter(queries)

    async def loop() -> None:
        latencies.extend([await timed_prepare(rt, query) for query in pending])

    async with anyio.create_task_group() as group:
        for _ in range(concurrency):
            group.start_soon(loop)
    return latencies


async def measure_cell(
    path: Path, queries: list[str], gate: str, concurrency: int, settings: Settings
) -> tuple[dict[str, Any], dict[str, Any]]:
    """A runtime of its own on the store: its cold first call, the warm-up, then
    ``concurrency`` prepare loops over the timed queries with the heartbeat beside them.

    Every cell opens its own runtime, so none starts with the evidence and fits an
    earlier cell cached for the same queries.
    """
    warmup, timed = queries[:WARMUP], queries[WARMUP:]
    async with satchel.open_runtime(str(path), recall_policy=POLICIES[gate]) as rt:
        _, first, watch = await watched(lambda: timed_prepare(rt, warmup[0]), steps=settings.steps)
        cold = {"first_call_ms": first * 1e3, **lags_only(watch.summary())}
        for query in warmup[1:]:
            await timed_prepare(rt, query)
        latencies, _, watch = await watched(
            functools.partial(prepare_loops, rt, timed, concurrency),
            steps=False,
            freeze=settings.freeze,
        )
    cell = {"concurrency": concurrency, **_latency(latencies), **watch.summary()}
    if settings.steps:
        # The probe's causes come from a second pass on a runtime of its own (the same
        # warm-up, so the same caches): its watchdog wakes every millisecond and takes
        # the GIL, lengthening the very steps it explains, so the lag is the pass's
        # without it.
        async with satchel.open_runtime(str(path), recall_policy=POLICIES[gate]) as rt:
            for query in warmup:
                await timed_prepare(rt, query)
            _, _, probed = await watched(
                functools.partial(prepare_loops, rt, timed, concurrency),
                steps=True,
                freeze=settings.freeze,
            )
        cell = with_probe(cell, probed.summary())
    return cold, {**cell, "load_1min": os.getloadavg()[0]}


#: What a cell takes from its probed pass: the steps and the stalls, and that pass's
#: own lag max (what the probe adds to the loop, for the record).
PROBED: Final = ("longest_step_ms", "longest_step_task", "stalls", "stall_causes",
                 "stall_places", "longest_stalls", "steps")  # fmt: skip


def with_probe(plain: dict[str, Any], probed: dict[str, Any]) -> dict[str, Any]:
    """A cell's summary: the lag, latencies and collections of the pass without the
    step probe, the steps and stalls of the pass with it."""
    return {
        **plain,
        **{key: probed[key] for key in PROBED},
        "probed_lag_max_ms": probed["lag_max_ms"],
    }


def _latency(seconds: list[float]) -> dict[str, Any]:
    values = np.asarray(seconds) * 1e3
    return {
        "prepares": len(seconds),
        "prepare_p50_ms": float(np.percentile(values, 50)),
        "prepare_p95_ms": float(np.percentile(values, 95)),
    }


async def measure_size(
    path: Path, size: int, queries: list[str], settings: Settings, backend: str
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Every gate and concurrency on one store: (cold rows, cell rows)."""
    colds: list[dict[str, Any]] = []
    cells: list[dict[str, Any]] = []
    for gate in settings.gates:
        where = {"backend": backend, "entries": size, "gate": gate}
        for concurrency in settings.concurrency:
            print(f"{backend}: {size:,} entries, gate {gate}, C={concurrency}", file=sys.stderr)
            cold, cell = await measure_cell(path, queries, gate, concurrency, settings)
            colds.append({**where, "concurrency": concurrency, **cold})
            cells.append({**where, **cell})
    return colds, cells


# -- writes -----------------------------------------------------------------------------


def write_cases() -> dict[str, list[satchel.MemoryEntry]]:
    """One ``add_memories`` batch per case, by name (texts are ASCII: bytes = chars)."""
    notes = _corpus.english_texts(60_000, seed=17)
    stream = " ".join(notes)
    five_mb, total = [], 0
    for note in notes:
        if total >= 5 * MB:
            break
        five_mb.append(note)
        total += len(note)
    texts = {
        "1 note": notes[:1],
        "64 notes": notes[:64],
        "1 entry of 1 MB": [stream[:MB]],
        f"5 MB in {len(five_mb):,} notes": five_mb,
        "5 MB in 50 entries of 100 KB": [
            stream[i * 100_000 : (i + 1) * 100_000] for i in range(50)
        ],
    }
    return {name: [satchel.MemoryEntry(text=t) for t in batch] for name, batch in texts.items()}


async def measure_writes(
    cases: dict[str, list[satchel.MemoryEntry]], settings: Settings, backend: str, directory: Path
) -> list[dict[str, Any]]:
    """Each case ``write_repeats`` times, each call into an empty scope of one new store."""
    rows = []
    async with satchel.open_runtime(str(directory / f"writes-{backend}.db")) as rt:
        for number, (name, entries) in enumerate(cases.items()):
            print(f"{backend}: write {name}", file=sys.stderr)
            runs = []
            for repeat in range(settings.write_repeats):
                _, seconds, watch = await watched(
                    functools.partial(rt.add_memories, f"write-{number}-{repeat}", entries),
                    steps=settings.steps,
                )
                load = os.getloadavg()[0]
                runs.append(
                    {"duration_ms": seconds * 1e3, **lags_only(watch.summary()), "load_1min": load}
                )
            rows.append(_write_row(backend, name, entries, runs))
    return rows


def _write_row(
    backend: str, name: str, entries: list[satchel.MemoryEntry], runs: list[dict[str, Any]]
) -> dict[str, Any]:
    """The median duration, and the worst lag and the longest step of any repeat."""
    stalled = max(runs, key=lambda run: run["longest_step_ms"] or 0.0)
    return {
        "backend": backend,
        "write": name,
        "entries": len(entries),
        "bytes": sum(len(entry.text.encode()) for entry in entries),
        "repeats": len(runs),
        "duration_p50_ms": float(np.median([run["duration_ms"] for run in runs])),
        "lag_max_ms": max(run["lag_max_ms"] for run in runs),
        "gc_max_ms": max(run["gc_max_ms"] for run in runs),
        "longest_step_ms": stalled["longest_step_ms"],
        "longest_step_task": stalled["longest_step_task"],
        "runs": runs,
    }


# -- the run and its report -------------------------------------------------------------


def run(
    inputs: dict[int, list[str]], settings: Settings, backends: list[str], *, writes: bool
) -> dict[str, Any]:
    """Every measurement, backend by backend, each size in its own ``anyio.run``."""
    result: dict[str, Any] = {
        "settings": {**asdict(settings), "beat_ms": BEAT * 1e3, "max_bytes": BUDGET},
        "idle": [],
        "cold": [],
        "prepares": [],
        "writes": [],
    }
    for backend in backends:
        print(f"{backend}: idle heartbeat", file=sys.stderr)
        floor = anyio.run(idle, settings, backend=backend)
        result["idle"].append({"backend": backend, **floor})
        for size, queries in inputs.items():
            path = scale.store_path(size)
            colds, cells = anyio.run(
                measure_size, path, size, queries, settings, backend, backend=backend
            )
            result["cold"] += colds
            result["prepares"] += cells
        if writes:
            # Built here, not held through the prepares: 36k live entries would lengthen
            # every full garbage collection measured there.
            cases = write_cases()
            with tempfile.TemporaryDirectory(prefix="satchel-bench-loop-") as directory:
                rows = anyio.run(
                    measure_writes, cases, settings, backend, Path(directory), backend=backend
                )
            del cases
            result["writes"] += rows
    return result


def report(result: dict[str, Any]) -> str:
    lines = [
        "| backend | idle lag p50 ms | lag p99 ms | lag max ms | load |",
        "|---|---:|---:|---:|---:|",
    ]
    lines += [
        f"| {r['backend']} | {r['lag_p50_ms']:.3f} | {r['lag_p99_ms']:.3f}"
        f" | {r['lag_max_ms']:.2f} | {r['load_1min']:.2f} |"
        for r in result["idle"]
    ]
    lines += [
        "",
        "| backend | entries | gate | C | prepares | p50 ms | p95 ms | lag p50 ms | lag p99 ms"
        " | lag max ms | lags > 2 ms | lags > 5 ms | samples | probed: lag max ms"
        " | longest step ms | its task | longest gc ms (full gcs) | stalls by cause | load |",
        "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---|---:|",
    ]
    lines += [_prepare_line(r) for r in result["prepares"]]
    lines += ["", "The longest stall of each cell (see bench/_heartbeat.py, cause):", ""]
    lines += [_stall_line(r) for r in result["prepares"] if r.get("longest_stalls")]
    lines += [
        "",
        "| backend | entries | gate | C | cold first call ms | lag max ms | longest step ms |",
        "|---|---:|---|---:|---:|---:|---:|",
    ]
    lines += [
        f"| {r['backend']} | {r['entries']:,} | {r['gate']} | {r['concurrency']}"
        f" | {r['first_call_ms']:.1f}"
        f" | {r['lag_max_ms']:.2f} | {_ms(r['longest_step_ms'])} |"
        for r in result["cold"]
    ]
    if result["writes"]:
        lines += [
            "",
            "| backend | write | bytes | duration p50 ms | lag max ms | longest step ms"
            " | its task | longest gc ms |",
            "|---|---|---:|---:|---:|---:|---|---:|",
        ]
        lines += [
            f"| {r['backend']} | {r['write']} | {r['bytes']:,} | {r['duration_p50_ms']:.1f}"
            f" | {r['lag_max_ms']:.2f} | {_ms(r['longest_step_ms'])}"
            f" | {r['longest_step_task'] or '-'} | {r['gc_max_ms']:.1f} |"
            for r in result["writes"]
        ]
    return "\n".join(lines)


def _prepare_line(r: dict[str, Any]) -> str:
    return (
        f"| {r['backend']} | {r['entries']:,} | {r['gate']} | {r['concurrency']}"
        f" | {r['prepares']} | {r['prepare_p50_ms']:.2f} | {r['prepare_p95_ms']:.2f}"
        f" | {r['lag_p50_ms']:.2f} | {r['lag_p99_ms']:.2f} | {r['lag_max_ms']:.2f}"
        f" | {r['lags_over_2ms']} | {r['lags_over_5ms']} | {r['lag_samples']}"
        f" | {_ms(r.get('probed_lag_max_ms'))}"
        f" | {_ms(r['longest_step_ms'])} | {r['longest_step_task'] or '-'}"
        f" | {r['gc_max_ms']:.1f} ({r['gc_collections'].get('2', 0)})"
        f" | {_causes(r.get('stall_causes'))} | {r['load_1min']:.2f} |"
    )


def _causes(counts: dict[str, int] | None) -> str:
    if not counts:
        return "-"
    return ", ".join(f"{n} {label}" for label, n in sorted(counts.items(), key=lambda c: -c[1]))


def _loop_frame(sample: list[str]) -> str:
    """The loop thread's innermost frame in one sample (other threads' come after)."""
    return [frame for frame in sample if not frame.startswith("other thread")][-1]


def _stall_line(r: dict[str, Any]) -> str:
    """The cell's longest stall: its cause, its CPU, and where the loop thread was."""
    stall = r["longest_stalls"][0]
    where = " / ".join(_loop_frame(sample) for sample in stall["samples"]) or "no sample"
    places = "; ".join(f"{n} {place}" for place, n in r["stall_places"].items())
    return (
        f"- {r['backend']}, {r['entries']:,}, gate {r['gate']}, C={r['concurrency']}:"
        f" longest {stall['wall'] * 1e3:.1f} ms {stall['cause']} (thread CPU"
        f" {stall['thread_cpu'] * 1e3:.1f} ms, process {stall['process_cpu'] * 1e3:.1f},"
        f" gc {stall['collecting'] * 1e3:.1f}) in {stall['task']}, running {where},"
        f" ended at {stall['ended_at'][-1] if stall['ended_at'] else '?'}."
        f" Steps over 2 ms by cause and where they gave the loop back: {places}"
    )


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[2_000, 20_000, 100_000])
    parser.add_argument("--queries", type=int, default=500, help="prepares per cell")
    parser.add_argument(
        "--backends", nargs="+", choices=["asyncio", "trio"], default=["asyncio", "trio"]
    )
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 4])
    parser.add_argument("--gate", nargs="+", choices=list(POLICIES), default=list(POLICIES))
    parser.add_argument("--write-repeats", type=int, default=3)
    parser.add_argument("--skip-writes", action="store_true")
    parser.add_argument("--no-steps", action="store_true", help="no step probe on the loop")
    parser.add_argument(
        "--gc-freeze",
        action="store_true",
        help="gc.freeze() before each prepare measurement, as a host may after start-up: "
        "full collections then walk only objects made during the measurement",
    )
    parser.add_argument("--out", type=Path, default=RESULTS / "loop.json")
    args = parser.parse_args()
    settings = Settings(
        queries=args.queries,
        concurrency=tuple(args.concurrency),
        gates=tuple(args.gate),
        write_repeats=args.write_repeats,
        steps=not args.no_steps,
        freeze=args.gc_freeze,
    )
    # One BLAS thread, as the runtime's default (blas_threads=1).
    with threadpoolctl.threadpool_limits(limits=1, user_api="blas"):
        scale.CACHE.mkdir(exist_ok=True)
        inputs = {
            size: json.loads(scale.prepare_inputs(size, args.queries).read_text())
            for size in sorted(args.sizes)
        }
        result = run(inputs, settings, args.backends, writes=not args.skip_writes)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(report(result))
    print(f"\nwritten to {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
