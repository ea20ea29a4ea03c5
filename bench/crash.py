"""``python -m bench crash``: ``kill -9`` a ``satchel ingest`` writing into an embedded
seekdb engine at random points; resume each and count the resumes that end with exactly
the workload's entries.

Each kill gets a fresh scope in one database directory (``seekdb://TMP/seekdb``), so the
engine restarts on a database that holds every earlier kill's leftovers. A workload of
``--entries`` memory entries (real-word notes, ``_corpus.english_texts``; the workload's
ids are the idempotency keys) is ingested with ``python -m satchel ingest --store URL
--batch-size N --embedder E`` (static by default, as ``satchel ingest``). The kill point
is drawn (``--seed`` fixes the draws) as a tenth of the workload, 10% to 80%, and a
share: once the run reports that tenth written (it reports each tenth it passes), it is
killed with SIGKILL after that share of the time since its report before, so the kill
lands while it writes the next tenth (or batch), at the run's own pace whatever the
machine's load. The same command
then resumes the ingest; the resume counts when it exits 0 within ``--timeout`` seconds
and the scope then holds exactly ``--entries`` searchable entries. At the end every
scope is counted again and written to once more (a write locks the scope's row, which a
transaction the dead process left behind would still hold).

With the keeper process (``satchel/stores/oceanbase/_engine.py``) taken out, the default
run's first 8 kill points left 2 scopes unwritable for good (docs/stores.md, "A writer
killed mid-write"); with ``--embedder hashing``, none of 6 kills did.

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
#: The tenths of the workload a kill may follow (the run reports each one written).
TENTHS: Final = range(1, 9)
#: Longest wait for a run to report a tenth written.
PROGRESS_WAIT: Final = 600.0
#: A progress report (``ingesting:  10% (300/3,000)``): its percentage.
PROGRESS: Final = re.compile(rb"ingesting: +(\d+)% \(")
#: Draws of a kill point per kill before giving up (a run may end before its kill).
DRAWS: Final = 5


@dataclass
class Cycle:
    """One kill and its resume."""

    scope: str
    #: Where the kill was drawn: a tenth of the workload and a share of the next one.
    kill_point: str
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
    """A ``satchel ingest`` process whose stderr is read as it comes: when it reported
    each percentage written, and its last line."""

    def __init__(self, argv: list[str]) -> None:
        self.started = time.monotonic()
        self.process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        #: Seconds from the start to each percentage's first report.
        self.reported: dict[int, float] = {}
        self._reported = threading.Condition()
        self._said = b""
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stderr is not None
        descriptor = self.process.stderr.fileno()
        for chunk in iter(lambda: os.read(descriptor, 4096), b""):
            self._said += chunk
            with self._reported:
                for found in PROGRESS.finditer(self._said):
                    percent = int(found.group(1))
                    self.reported.setdefault(percent, time.monotonic() - self.started)
                self._reported.notify_all()
        with self._reported:
            self._reported.notify_all()

    def wait_percent(self, percent: int, timeout: float) -> float | None:
        """Once it reports ``percent`` or more written, still running: the seconds since
        its report before (a tenth of the workload, or a batch if larger). None if it
        ended (or ``timeout`` passed) first."""

        def reached() -> bool:
            return max(self.reported, default=-1) >= percent

        with self._reported:
            self._reported.wait_for(lambda: reached() or not self._reader.is_alive(), timeout)
            if not reached() or self.process.poll() is not None:
                return None
            at = min(at for done, at in self.reported.items() if done >= percent)
            before = [at for done, at in self.reported.items() if done < percent]
        return at - max(before, default=0.0)

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


def killed_run(argv: list[str], tenth: int, share: float) -> tuple[float, str] | None:
    """Run ``argv``; once it reports ``tenth`` tenths written, SIGKILL it after ``share``
    of the time since its report before. When it was killed and its last progress line;
    None when it ended first."""
    run = Ingest(argv)
    took = run.wait_percent(10 * tenth, PROGRESS_WAIT)
    if took is None:
        run.kill()
        return None
    try:
        run.process.wait(share * took)
    except subprocess.TimeoutExpired:
        killed_at = time.monotonic() - run.started
        return killed_at, run.kill()
    run.last_line()
    return None


def timed_run(argv: list[str], timeout: float) -> tuple[int, float, str]:
    """Run ``argv`` to its end: exit status (-1: timed out), seconds, last stderr line."""
    run = Ingest(argv)
    try:
        run.process.wait(timeout)
    except subprocess.TimeoutExpired:
        run.kill()
        return -1, timeout, f"no end in {timeout:.0f} s"
    ended = time.monotonic() - run.started
    return run.process.returncode, ended, run.last_line()


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
    """Kill and resume ``kills`` times; the summary and every cycle."""
    url = f"seekdb://{directory / 'seekdb'}"
    texts = _corpus.english_texts(entries)
    draw = random.Random(seed)
    cycles: list[Cycle] = []
    for number in range(kills):
        scope = f"crash-{number}"
        workload = write_workload(directory / scope, scope, texts)
        argv = ingest_argv(workload, url, batch_size, embedder)
        for _ in range(DRAWS):
            tenth, share = draw.choice(TENTHS), draw.random()
            killed = killed_run(argv, tenth, share)
            if killed is not None:
                break
        else:
            raise SystemExit(f"{scope}: every run ended before its kill")
        status, seconds, tail = timed_run(argv, timeout)
        held = anyio.run(held_entries, url, [scope])[scope]["held"]
        at = f"{10 * tenth}% + {share:.2f}"
        cycle = Cycle(scope, at, round(killed[0], 1), killed[1], status, round(seconds, 1), held)
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
        "final": final,
        "cycles": [asdict(c) for c in cycles],
    }


def report(result: dict[str, Any]) -> str:
    lines = [
        f"kills: {result['kills']}, resumed: {result['resumed']}, failed: {result['failed']},"
        f" unwritable at the end: {result['unwritable_at_end']}"
        f" ({result['entries']:,} entries per scope, batches of {result['batch_size']},"
        f" {result['embedder']} embedder, seed {result['seed']})",
        "",
        "| scope | kill point | killed after s | killed run's last progress | resume exit |"
        " resume s | entries held | at the end: held, one more write |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for cycle in result["cycles"]:
        end = result["final"][cycle["scope"]]
        write = "ok" if end["write"] == "" else f"failed: {end['write']}"
        lines.append(
            f"| {cycle['scope']} | {cycle['kill_point']} | {cycle['kill_after_s']} |"
            f" {cycle['progress'] or '-'} |"
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
