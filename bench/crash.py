"""``python -m bench crash``: ``kill -9`` a ``satchel ingest`` writing into an embedded
seekdb engine at random points; resume each and count the resumes that end with exactly
the workload's entries.

Each kill gets a fresh scope in one database directory (``seekdb://TMP/seekdb``), so the
engine restarts on a database that holds every earlier kill's leftovers. A workload of
``--entries`` memory entries (real-word notes, ``_corpus.english_texts``; the workload's
ids are the idempotency keys) is ingested with ``python -m satchel ingest --store URL
--batch-size N --embedder E`` (static by default, as ``satchel ingest``). Once the run
first reports entries written (the engine is up and the ingest writing), it is killed
with SIGKILL after a delay drawn uniformly from the first 90% of the time an
uninterrupted ingest spent writing (measured first, on a scope of its own, after one
more that creates the database; ``--seed`` fixes the draws). A run that ends before its
kill is drawn again. The same command then resumes the ingest; the resume counts when it
exits 0 within ``--timeout`` seconds and the scope then holds exactly ``--entries``
searchable entries. At the end every scope is counted again and written to once more (a
write locks the scope's row, which a transaction the dead process left behind would
still hold).

Without the keeper process (``satchel/stores/oceanbase/_engine.py``), some such kills
left their scope unwritable for good (docs/stores.md, "A writer killed mid-write"): with
the static embedder; with ``--embedder hashing``, none of 6 did.

Run: ``python -m bench crash [--kills 12] [--entries 3000] [--batch-size 100] [--seed 7]
[--timeout 600] [--embedder static|hashing]``. JSON goes to ``bench/results/crash.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Final

import anyio

import satchel
from bench import _corpus
from satchel.embedders import from_spec
from satchel.stores import open_store

RESULTS = Path(__file__).parent / "results"
#: Kill points, counted from the run's first report of entries written, as shares of
#: how long an uninterrupted ingest wrote after its own.
EARLIEST: Final = 0.0
LATEST: Final = 0.9
#: Longest wait for a run to report entries written.
STARTUP: Final = 300.0
#: A progress report with entries written (``ingesting:  10% (300/3,000)``).
WRITTEN: Final = re.compile(rb"ingesting: +\d+% \([1-9][\d,]*/")
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


def ingest_argv(workload: Path, url: str, batch_size: int, embedder: str) -> list[str]:
    return [
        sys.executable, "-m", "satchel", "ingest", str(workload), "--store", url,
        "--batch-size", str(batch_size), "--embedder", embedder,
    ]  # fmt: skip


def last_line(text: str) -> str:
    lines = [line.strip() for line in text.replace("\r", "\n").splitlines() if line.strip()]
    return lines[-1] if lines else ""


class Ingest:
    """A ``satchel ingest`` process whose stderr is read as it comes: when it first
    reports entries written (the engine is up and writing), and its last line."""

    def __init__(self, argv: list[str]) -> None:
        self.started = time.monotonic()
        self.process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self.writing = threading.Event()
        self.writing_at = 0.0
        self._said = b""
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stderr is not None
        descriptor = self.process.stderr.fileno()
        for chunk in iter(lambda: os.read(descriptor, 4096), b""):
            self._said += chunk
            if not self.writing.is_set() and WRITTEN.search(self._said):
                self.writing_at = time.monotonic() - self.started
                self.writing.set()

    def wait_writing(self, timeout: float) -> bool:
        """Whether it reported entries written within ``timeout`` seconds, still running."""
        deadline = time.monotonic() + timeout
        while not self.writing.wait(0.1):
            if self.process.poll() is not None or time.monotonic() > deadline:
                return False
        return self.process.poll() is None

    def last_line(self) -> str:
        """Its last stderr line, once it has ended."""
        self._reader.join()
        assert self.process.stderr is not None
        self.process.stderr.close()
        return last_line(self._said.decode(errors="replace"))

    def kill(self) -> str:
        self.process.kill()
        self.process.wait()
        return self.last_line()


def killed_run(argv: list[str], delay: float) -> str | None:
    """Run ``argv``; once it reports entries written, SIGKILL it ``delay`` seconds later.
    Its last progress line, or None when it ended first (or never wrote)."""
    run = Ingest(argv)
    if not run.wait_writing(STARTUP):
        run.kill()
        return None
    try:
        run.process.wait(delay)
    except subprocess.TimeoutExpired:
        return run.kill()
    run.last_line()
    return None


def timed_run(argv: list[str], timeout: float) -> tuple[int, float, float, str]:
    """Run ``argv`` to its end: exit status (-1: timed out), seconds until it first
    reported entries written and until it ended, last stderr line."""
    run = Ingest(argv)
    try:
        run.process.wait(timeout)
    except subprocess.TimeoutExpired:
        run.kill()
        return -1, run.writing_at, timeout, f"no end in {timeout:.0f} s"
    ended = time.monotonic() - run.started
    return run.process.returncode, run.writing_at, ended, run.last_line()


async def held_entries(
    url: str, scopes: list[str], again: satchel.MemoryEntry | None = None, embedder: str = ""
) -> dict[str, Any]:
    """Each scope's searchable entries; with ``again`` (the workload's first entry), the
    error (or "") of writing it once more with ``embedder`` (the ingest's), unchanged,
    but the write locks the scope."""
    async with open_store(url) as store:
        counts = await store.scope_counts()
        found: dict[str, Any] = {s: {"held": counts.get(s, {}).get("memory", 0)} for s in scopes}
        if again is not None:
            model = from_spec(embedder)
            async with satchel.open_runtime(store=store, embedder=model) as rt:
                for scope in scopes:
                    try:
                        await rt.add_memories(scope, [again])
                        found[scope]["write"] = ""
                    except satchel.StoreError as exc:
                        found[scope]["write"] = str(exc)
    return found


def run(
    directory: Path,
    kills: int,
    entries: int,
    batch_size: int,
    seed: int,
    timeout: float,
    embedder: str = "static",
) -> dict[str, Any]:
    """Calibrate, then kill and resume ``kills`` times; the summary and every cycle."""
    url = f"seekdb://{directory / 'seekdb'}"
    texts = _corpus.english_texts(entries)
    for scope in ("create", "calibrate"):  # the first creates the database: not timed
        calibrate = write_workload(directory / scope, scope, texts)
        argv = ingest_argv(calibrate, url, batch_size, embedder)
        status, writing_at, ended_at, tail = timed_run(argv, timeout)
        if status != 0:
            raise SystemExit(f"the uninterrupted ingest failed: {tail}")
    duration = ended_at - writing_at
    print(f"uninterrupted ingest: {ended_at:.1f} s, writing for {duration:.1f}", file=sys.stderr)
    draw = random.Random(seed)
    cycles: list[Cycle] = []
    for number in range(kills):
        scope = f"crash-{number}"
        workload = write_workload(directory / scope, scope, texts)
        argv = ingest_argv(workload, url, batch_size, embedder)
        for _ in range(DRAWS):
            delay = draw.uniform(EARLIEST, LATEST) * duration
            progress = killed_run(argv, delay)
            if progress is not None:
                break
        else:
            raise SystemExit(f"{scope}: every run ended before its kill; raise --entries")
        status, _, seconds, tail = timed_run(argv, timeout)
        held = anyio.run(held_entries, url, [scope])[scope]["held"]
        cycle = Cycle(scope, round(delay, 1), progress, status, round(seconds, 1), held)
        if status != 0 or held != entries:
            cycle.error = tail
        cycles.append(cycle)
        print(f"kill {number + 1}/{kills}: {cycle}", file=sys.stderr)
    first = satchel.MemoryEntry(text=texts[0], key="e0")
    final = anyio.run(held_entries, url, [c.scope for c in cycles], first, embedder)
    resumed = [c for c in cycles if c.resume_exit == 0 and c.held == entries]
    return {
        "kills": kills,
        "resumed": len(resumed),
        "failed": kills - len(resumed),
        "unwritable_at_end": sum(1 for scope in final.values() if scope["write"]),
        "entries": entries,
        "batch_size": batch_size,
        "embedder": embedder,
        "seed": seed,
        "uninterrupted_writing_s": round(duration, 1),
        "final": final,
        "cycles": [asdict(c) for c in cycles],
    }


def report(result: dict[str, Any]) -> str:
    lines = [
        f"kills: {result['kills']}, resumed: {result['resumed']}, failed: {result['failed']},"
        f" unwritable at the end: {result['unwritable_at_end']}"
        f" ({result['entries']:,} entries per scope, batches of {result['batch_size']},"
        f" {result['embedder']} embedder,"
        f" writing for {result['uninterrupted_writing_s']} s uninterrupted, seed {result['seed']})",
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
    parser.add_argument("--embedder", default="static", help="satchel ingest's --embedder")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="satchel-bench-crash-") as directory:
        result = run(
            Path(directory), args.kills, args.entries, args.batch_size, args.seed,
            args.timeout, args.embedder,
        )  # fmt: skip
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "crash.json").write_text(json.dumps(result, indent=2) + "\n")
    print(report(result))
    raise SystemExit(0 if result["failed"] == result["unwritable_at_end"] == 0 else 1)


if __name__ == "__main__":
    main()
