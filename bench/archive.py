"""Archives against ``satchel copy``: time and memory of moving N records.

A SQLite store of N memory entries (real-word notes from ``_corpus.english_texts``, ten
scopes, every tenth entry updated once so replaced versions travel too, vectors of the
hashing embedder at 256 dimensions) is built once under ``bench/.cache``. Then, each into
a fresh SQLite file: ``copy_store`` (what ``satchel copy`` runs), ``export_archive`` to a
file, and ``import_archive`` of that file. Each step is timed on its own, then run again
under ``tracemalloc`` for its peak of Python-allocated memory (numpy's arrays included;
SQLite's own page cache is not Python's). Reported per N: seconds of each step, export +
import against copy (the goal: within 2x), the archive's size, and each step's peak; a
peak that stays flat from the smallest N to the largest shows memory does not grow with
the number of records. JSON goes to ``bench/results/archive.json``.

Run: ``python -m bench archive [--sizes 10000 100000]``.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

import satchel
from bench import _corpus
from satchel.stores import SqliteStore, copy_store, export_archive, import_archive

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

CACHE = Path(__file__).parent / ".cache"
RESULTS = Path(__file__).parent / "results"
EMBEDDER = satchel.HashingEmbedder(256)
SCOPES = 10
BATCH = 2000


async def build(path: Path, size: int) -> None:
    """N entries over ten scopes, every tenth updated once; written under a temporary
    name and renamed when whole."""
    partial = path.with_suffix(".partial")
    partial.unlink(missing_ok=True)
    texts = _corpus.english_texts(size, function_head=True)
    async with satchel.open_runtime(str(partial), embedder=EMBEDDER) as rt:
        for start in range(0, size, BATCH):
            scope = f"bench:{start * SCOPES // size}"
            chunk = [satchel.MemoryEntry(text=t) for t in texts[start : start + BATCH]]
            refs = await rt.add_memories(scope, chunk)
            for ref in refs[::10]:
                await rt.update_memory(ref, satchel.MemoryEntry(text=f"revised: {ref.entry_id}"))
    partial.rename(path)


async def _copy(source: Path, folder: Path) -> None:
    reading, writing = (
        await SqliteStore.open(str(source)),
        await SqliteStore.open(str(folder / "copy.db")),
    )
    try:
        await copy_store(reading, writing)
    finally:
        await reading.aclose()
        await writing.aclose()


async def _export(source: Path, folder: Path) -> None:
    reading = await SqliteStore.open(str(source))
    try:
        await export_archive(reading, folder / "store.satchel")
    finally:
        await reading.aclose()


async def _import(source: Path, folder: Path) -> None:
    writing = await SqliteStore.open(str(folder / "import.db"))
    try:
        await import_archive(folder / "store.satchel", writing)
    finally:
        await writing.aclose()


STEPS: dict[str, Callable[[Path, Path], Awaitable[None]]] = {
    "copy": _copy, "export": _export, "import": _import,
}  # fmt: skip


def measure(source: Path, *, traced: bool) -> dict[str, float]:
    """Each step into a fresh folder: seconds, or (``traced``) peak MiB under tracemalloc."""
    found: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as directory:
        for name, step in STEPS.items():
            if traced:
                tracemalloc.start()
            started = time.perf_counter()
            anyio.run(step, source, Path(directory))
            elapsed = time.perf_counter() - started
            if traced:
                found[name] = round(tracemalloc.get_traced_memory()[1] / 2**20, 1)
                tracemalloc.stop()
            else:
                found[name] = round(elapsed, 2)
            if name == "export":
                found["archive_mib"] = round(
                    (Path(directory) / "store.satchel").stat().st_size / 2**20, 1
                )
        for stale in ("copy.db", "import.db"):
            for file in Path(directory).glob(stale + "*"):
                file.unlink()
    return found


def run_size(size: int) -> dict[str, Any]:
    CACHE.mkdir(exist_ok=True)
    source = CACHE / f"archive-{size}.db"
    if not source.exists():
        print(f"building {source.name}", file=sys.stderr)
        anyio.run(build, source, size)
    seconds, peaks = measure(source, traced=False), measure(source, traced=True)
    archive_mib = seconds.pop("archive_mib")
    peaks.pop("archive_mib")
    ratio = (seconds["export"] + seconds["import"]) / seconds["copy"]
    return {
        "entries": size, "seconds": seconds, "export_plus_import_over_copy": round(ratio, 2),
        "archive_mib": archive_mib, "peak_traced_mib": peaks,
    }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench archive", description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    args = parser.parse_args()
    results = []
    for size in args.sizes:
        result = run_size(size)
        results.append(result)
        print(json.dumps(result))
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "archive.json").write_text(json.dumps(results, indent=2) + "\n")
