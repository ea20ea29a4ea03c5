"""``python -m bench crash``: ``kill -9`` a ``satchel ingest`` writing into an embedded
seekdb engine at random points; resume each and count the resumes that end with exactly
the workload's entries.

Each kill gets a fresh scope in one database directory (``seekdb://TMP/seekdb``), so the
engine restarts on a database that holds every earlier kill's leftovers. A workload of
``--entries`` memory entries (real-word notes, ``_corpus.english_texts``; the workload's
ids are the idempotency keys) is ingested with ``python -m satchel ingest --store URL
--batch-size N --embedder hashing``, and the process is killed with SIGKILL after a
delay drawn uniformly between 30% and 95% of an uninterrupted ingest's duration
(measured first, on a scope of its own, after one more that creates the database;
``--seed`` fixes the draws). A run that ends before its kill is drawn again. The same
command then resumes the ingest; the resume counts when it exits 0 within ``--timeout``
seconds and the scope then holds exactly ``--entries`` searchable entries. At the end
every scope is counted again and written to once more (a write locks the scope's row,
which a transaction the dead process left behind would still hold).

Without the keeper process (``satchel/stores/oceanbase/_engine.py``) most such kills left
their scope unwritable for good (docs/stores.md, "A writer killed mid-write").

Run: ``python -m bench crash [--kills 12] [--entries 3000] [--batch-size 100] [--seed 7]
[--timeout 600]``. JSON goes to ``bench/results/crash.json``.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Final

import anyio

import satchel
from bench import _corpus
from satchel.stores import open_store

RESULTS = Path(__file__).parent / "results"
#: Kill points, as shares of an uninterrupted ingest's duration (its first third or so
#: starts the interpreter and the engine).
EARLIEST: Final = 0.3
LATEST: Final = 0.95
#: Draws of a kill point per kill before giving up (a run may end before its kill).
DRAWS: Final = 5


@dataclass
class Cycle:
    """One kill and its resume."""

    scope: str
    kill_after_s: float
    #: The killed run's last progress line (what it had reported written).
    progress: str
    resume_exit: int
    resume_s: float
    #: Searchable entries in the scope after the resume.
    held: int
    #: The resume's last stderr line when it failed.
    error: str = ""


def write_workload(folder: Path, scope: str, texts: list[str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps({"id": f"e{n}", "scope": scope, "text": t}) for n, t in enumerate(texts)]
    (folder / "entries.jsonl").write_text("\n".join(lines) + "\n")
    (folder / "queries.jsonl").write_text("")
    return folder


def ingest_argv(workload: Path, url: str, batch_size: int) -> list[str]:
    return [
        sys.executable, "-m", "satchel", "ingest", str(workload), "--store", url,
        "--batch-size", str(batch_size), "--embedder", "hashing",
    ]  # fmt: skip


def last_line(text: str) -> str:
    lines = [line.strip() for line in text.replace("\r", "\n").splitlines() if line.strip()]
    return lines[-1] if lines else ""


def killed_run(argv: list[str], delay: float) -> str | None:
    """Run ``argv``, SIGKILL it after ``delay`` seconds; its last progress line, or None
    when it ended first."""
    with tempfile.TemporaryFile() as errors:
        process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=errors)
        try:
            process.wait(delay)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            errors.seek(0)
            return last_line(errors.read().decode(errors="replace"))
        return None


def timed_run(argv: list[str], timeout: float) -> tuple[int, float, str]:
    """Run ``argv`` to its end: exit status (-1: timed out), seconds, last stderr line."""
    started = time.monotonic()
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return -1, time.monotonic() - started, f"no end in {timeout:.0f} s"
    return done.returncode, time.monotonic() - started, last_line(done.stderr)


async def held_entries(
    url: str, scopes: list[str], again: satchel.MemoryEntry | None
) -> dict[str, Any]:
    """Each scope's searchable entries; with ``again`` (the workload's first entry), the
    error (or "") of writing it once more (unchanged, but the write locks the scope)."""
    async with open_store(url) as store:
        counts = await store.scope_counts()
        found: dict[str, Any] = {s: {"held": counts.get(s, {}).get("memory", 0)} for s in scopes}
        if again is not None:
            async with satchel.open_runtime(store=store, embedder=satchel.HashingEmbedder()) as rt:
                for scope in scopes:
                    try:
                        await rt.add_memories(scope, [again])
                        found[scope]["write"] = ""
                    except satchel.StoreError as exc:
                        found[scope]["write"] = str(exc)
    return found


def run(
    directory: Path, kills: int, entries: int, batch_size: int, seed: int, timeout: float
) -> dict[str, Any]:
    """Calibrate, then kill and resume ``kills`` times; the summary and every cycle."""
    url = f"seekdb://{directory / 'seekdb'}"
    texts = _corpus.english_texts(entries)
    for scope in ("create", "calibrate"):  # the first creates the database: not timed
        calibrate = write_workload(directory / scope, scope, texts)
        status, duration, tail = timed_run(ingest_argv(calibrate, url, batch_size), timeout)
        if status != 0:
            raise SystemExit(f"the uninterrupted ingest failed: {tail}")
    print(f"uninterrupted ingest: {duration:.1f} s", file=sys.stderr)
    draw = random.Random(seed)
    cycles: list[Cycle] = []
    for number in range(kills):
        scope = f"crash-{number}"
        argv = ingest_argv(write_workload(directory / scope, scope, texts), url, batch_size)
        for _ in range(DRAWS):
            delay = draw.uniform(EARLIEST, LATEST) * duration
            progress = killed_run(argv, delay)
            if progress is not None:
                break
        else:
            raise SystemExit(f"{scope}: every run ended before its kill; raise --entries")
        status, seconds, tail = timed_run(argv, timeout)
        held = anyio.run(held_entries, url, [scope], None)[scope]["held"]
        cycle = Cycle(scope, round(delay, 1), progress, status, round(seconds, 1), held)
        if status != 0 or held != entries:
            cycle.error = tail
        cycles.append(cycle)
        print(f"kill {number + 1}/{kills}: {cycle}", file=sys.stderr)
    first = satchel.MemoryEntry(text=texts[0], key="e0")
    final = anyio.run(held_entries, url, [c.scope for c in cycles], first)
    resumed = [c for c in cycles if c.resume_exit == 0 and c.held == entries]
    return {
        "kills": kills,
        "resumed": len(resumed),
        "failed": kills - len(resumed),
        "unwritable_at_end": sum(1 for scope in final.values() if scope["write"]),
        "entries": entries,
        "batch_size": batch_size,
        "seed": seed,
        "uninterrupted_s": round(duration, 1),
        "final": final,
        "cycles": [asdict(c) for c in cycles],
    }


def report(result: dict[str, Any]) -> str:
    lines = [
        f"kills: {result['kills']}, resumed: {result['resumed']}, failed: {result['failed']},"
        f" unwritable at the end: {result['unwritable_at_end']}"
        f" ({result['entries']:,} entries per scope, batches of {result['batch_size']},"
        f" uninterrupted ingest {result['uninterrupted_s']} s, seed {result['seed']})",
        "",
        "| scope | killed after s | killed run's last progress | resume exit | resume s |"
        " entries held | at the end: held, one more write |",
        "|---|---|---|---|---|---|---|",
    ]
    for cycle in result["cycles"]:
        end = result["final"][cycle["scope"]]
        write = "ok" if end["write"] == "" else f"failed: {end['write']}"
        lines.append(
            f"| {cycle['scope']} | {cycle['kill_after_s']} | {cycle['progress'] or '-'} |"
            f" {cycle['resume_exit']} | {cycle['resume_s']} | {cycle['held']:,} |"
            f" {end['held']:,}, {write} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--kills", type=int, default=12)
    parser.add_argument("--entries", type=int, default=3000)
    parser.add_argument("--batch-size", type=int, default=100)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per resume")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="satchel-bench-crash-") as directory:
        result = run(
            Path(directory), args.kills, args.entries, args.batch_size, args.seed, args.timeout
        )
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "crash.json").write_text(json.dumps(result, indent=2) + "\n")
    print(report(result))
    raise SystemExit(0 if result["failed"] == result["unwritable_at_end"] == 0 else 1)


if __name__ == "__main__":
    main()
