"""PowerContext 1.4.1 as a peer: its own virtual environment and its driver process.

:func:`peer_python` creates the environment on first use (``/usr/bin/python3 -m venv``
and ``pip install powercontext[builtin]==1.4.1`` into ``bench/.cache/peers/``, each
command printed), after checking that the system Python can host it: 3.11 or newer, a
``sqlite3`` that can load extensions (PowerContext loads sqlite-vec) and ``venv``.
:func:`open_peer` starts ``bench/peers/powercontext_driver.py`` in that environment and
:class:`Peer` speaks its JSON-lines protocol; :func:`ingest_peer` writes a workload's
turns into it. Nothing here imports PowerContext: only the driver does, in its own
interpreter, through PowerContext's public API.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections import defaultdict
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import anyio
from anyio.streams.buffered import BufferedByteReceiveStream

import satchel
from bench import orchestrator
from satchel._workload import read_entries

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from anyio.abc import Process

VERSION: Final = "1.4.1"
REQUIREMENT: Final = f"powercontext[builtin]=={VERSION}"
PEERS: Final = orchestrator.CACHE / "peers"
VENV: Final = PEERS / f"powercontext-{VERSION}-venv"
DRIVER: Final = Path(__file__).parent / "peers" / "powercontext_driver.py"
BATCH: Final = 200
MAX_LINE: Final = 1 << 28
# Prints the first requirement the system Python misses (or "ok"), for PeerError.
PROBE: Final = """
import sqlite3, sys
if sys.version_info < (3, 11): print("version"); raise SystemExit
connection = sqlite3.connect(":memory:")
try: connection.enable_load_extension(True)
except (AttributeError, sqlite3.Error): print("sqlite"); raise SystemExit
try: import ensurepip, venv
except ImportError: print("venv"); raise SystemExit
print("ok")
"""
MISSING: Final = {
    "version": "is older than Python 3.11, which PowerContext needs",
    "sqlite": "has a sqlite3 that cannot load extensions (PowerContext loads sqlite-vec); "
    "use a Python built with loadable extensions, such as Debian's /usr/bin/python3",
    "venv": "has no venv or ensurepip module: install them (Debian: apt-get install python3-venv)",
}


class PeerError(Exception):
    """The peer could not be set up, or its driver failed a request."""


def peer_python(system: Path) -> Path:
    """The peer environment's interpreter, creating the environment on first use.

    Raises:
        PeerError: naming what to install when ``system`` cannot host PowerContext.
    """
    PEERS.mkdir(parents=True, exist_ok=True)
    python = VENV / "bin" / "python"
    if _installed(python):
        return python
    if not system.exists():
        raise PeerError(
            f"no Python at {system}: install Python 3.11+ with loadable sqlite3 extensions "
            "and venv (Debian: apt-get install python3 python3-venv), or pass --python PATH"
        )
    verdict = _run([str(system), "-c", PROBE], quiet=True).strip()
    if verdict != "ok":
        raise PeerError(f"{system} {MISSING.get(verdict, verdict)}")
    _run([str(system), "-m", "venv", "--clear", str(VENV)])
    _run([str(python), "-m", "pip", "install", "--quiet", REQUIREMENT])
    if not _installed(python):
        raise PeerError(f"{REQUIREMENT} did not install into {VENV}")
    return python


def _installed(python: Path) -> bool:
    if not python.exists():
        return False
    check = "import importlib.metadata as m; print(m.version('powercontext'))"
    done = subprocess.run([str(python), "-c", check], capture_output=True, text=True)
    return done.returncode == 0 and done.stdout.strip() == VERSION


def _run(command: list[str], *, quiet: bool = False) -> str:
    if not quiet:
        print(f"$ {' '.join(command)}", flush=True)
    done = subprocess.run(command, capture_output=quiet, text=True)
    if done.returncode != 0:
        raise PeerError(f"{command[0]} failed ({done.returncode}): {done.stderr or ''}")
    return done.stdout or ""


@dataclass
class Peer:
    """The driver process and the line reader over its stdout."""

    process: Process
    lines: BufferedByteReceiveStream
    #: Texts the driver was asked to embed without a vector from here (set on close).
    embedding_misses: int = 0

    async def call(self, op: str, **fields: Any) -> dict[str, Any]:
        """Send one request and return its response.

        Raises:
            PeerError: if the driver answered with an error or exited.
        """
        assert self.process.stdin is not None
        await self.process.stdin.send((json.dumps({"op": op, **fields}) + "\n").encode())
        try:
            response: dict[str, Any] = json.loads(await self.lines.receive_until(b"\n", MAX_LINE))
        except (anyio.EndOfStream, anyio.IncompleteRead):
            raise PeerError(f"the driver exited during {op!r} (its stderr is above)") from None
        if "error" in response:
            raise PeerError(f"{op}: {response['error']}")
        return response


@asynccontextmanager
async def open_peer(python: Path, db: Path, dimension: int) -> AsyncIterator[Peer]:
    """Start the driver on ``db``, gate on; close it on exit."""
    async with await anyio.open_process([str(python), str(DRIVER)], stderr=None) as process:
        assert process.stdout is not None
        peer = Peer(process, BufferedByteReceiveStream(process.stdout))
        opened = await peer.call("open", db=str(db), dimension=dimension, gate=True)
        if opened["version"] != VERSION:
            raise PeerError(f"the peer runs powercontext {opened['version']}, not {VERSION}")
        try:
            yield peer
        finally:
            with anyio.move_on_after(30, shield=True):
                peer.embedding_misses = (await peer.call("close"))["embedding_misses"]
                await process.wait()


async def ingest_peer(peer: Peer, workload: Path, embedder: satchel.Embedder) -> dict[str, Any]:
    """One atomic memory per turn, in each turn's scope: the scope ids and, per artifact
    id, the turn's workload id."""
    entries, _ = read_entries(workload / "entries.jsonl")
    by_scope: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for entry in entries:
        if isinstance(entry.record, satchel.MemoryEntry):
            by_scope[entry.scope].append((entry.id, entry.record.text))
    ids: dict[str, Any] = {"scopes": {}, "artifacts": {}}
    for scope, turns in by_scope.items():
        scope_id = (await peer.call("scope", name=scope))["scope_id"]
        ids["scopes"][scope] = scope_id
        for start in range(0, len(turns), BATCH):
            batch = turns[start : start + BATCH]
            vectors = await embedder.embed([text for _, text in batch])
            sent = [
                {"text": t, "vector": v.tolist()} for (_, t), v in zip(batch, vectors, strict=True)
            ]
            created = await peer.call("add", scope_id=scope_id, entries=sent)
            ids["artifacts"].update(
                zip(created["artifact_ids"], (i for i, _ in batch), strict=True)
            )
    return ids


def peer_store(name: str) -> tuple[Path, Path]:
    """The peer's SQLite file for the workload ``name`` and its id map. A file without
    its map is an interrupted ingest: it is removed, to be written again."""
    db = PEERS / f"powercontext-{VERSION}-{name}.db"
    ids = db.with_suffix(".ids.json")
    if not ids.exists():
        for path in db.parent.glob(db.name + "*"):
            path.unlink()
    return db, ids


async def load_or_ingest(
    peer: Peer, ids_path: Path, workload: Path, embedder: satchel.Embedder
) -> dict[str, Any]:
    """The id map of the peer's store, ingesting ``workload`` first if it has none."""
    path = anyio.Path(ids_path)
    if not await path.exists():
        started = time.perf_counter()
        await path.write_text(json.dumps(await ingest_peer(peer, workload, embedder)))
        print(f"PowerContext ingest: {time.perf_counter() - started:.1f} s", flush=True)
    ids: dict[str, Any] = json.loads(await path.read_text())
    return ids
