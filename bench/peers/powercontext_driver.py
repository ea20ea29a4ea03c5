"""Drive PowerContext through its public API, one JSON request per line on stdin.

Runs inside the peer's own virtual environment (``python -m bench peer`` creates it),
so it imports only the standard library and ``powercontext``; satchel is never imported
here. Each request line gets one response line on stdout, ``{"error": "..."}`` if the
request failed:

- ``{"op": "open", "db": PATH, "dimension": D, "gate": true}``: open the built-in
  runtime on a SQLite file, recall-sufficiency gate on or off, with the embedding model
  below; returns the installed version.
- ``{"op": "scope", "name": NAME}``: create (or, idempotently, find) a scope.
- ``{"op": "add", "scope_id": ID, "entries": [{"text": T, "vector": [...]}, ...]}``:
  create one atomic memory per entry in one batch; returns the artifact ids in order.
- ``{"op": "vectors", "items": [[TEXT, [...]], ...]}``: register query vectors.
- ``{"op": "prepare", "scope_id": ID, "query": Q, "max_bytes": N}``: one
  ``prepare``; returns its ``seconds`` (``perf_counter`` around that call only), status,
  ``content_bytes`` and the cited artifact ids in rendered order.
- ``{"op": "close"}``: close the runtime and exit; returns the embedding misses.

The embedding model serves vectors computed by the caller (the ones satchel stores, see
:func:`embedding_input`), so both systems rank with the same vectors and no model runs
inside a timed call. A text without a vector is a miss: it embeds to zeros and is
counted (``close`` reports the count), never guessed.

This module must never do anything but call PowerContext's public API and time it.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.metadata
import json
import sys
import time
from typing import Any, TextIO

from powercontext.builtin.artifacts.atomic_memory import (  # type: ignore[import-not-found]
    AtomicMemoryContent,
)
from powercontext.builtin.artifacts.memory import (  # type: ignore[import-not-found]
    EmbeddingProfile,
)
from powercontext.builtin.inference import EmbeddingResult  # type: ignore[import-not-found]
from powercontext.builtin.runtime import (  # type: ignore[import-not-found]
    BuiltinConfig,
    PrepareContextRequest,
    open_builtin_runtime,
)
from powercontext.builtin.scope import ScopeDraft  # type: ignore[import-not-found]

KIND = "dialog"
BEGIN = "BEGIN_POWERCONTEXT_PREPARED_CONTEXT_V1"
END = "END_POWERCONTEXT_PREPARED_CONTEXT_V1"


class GivenVectors:
    """PowerContext's ``EmbeddingModel`` protocol over vectors the caller sent."""

    def __init__(self, dimension: int) -> None:
        self.dimension = dimension
        self.profile = EmbeddingProfile(
            profile_id=f"given-{dimension}", model="given", dimension=dimension
        )
        self.vectors: dict[str, tuple[float, ...]] = {}
        self.misses = 0

    async def embed(self, texts: tuple[str, ...], /) -> Any:
        return EmbeddingResult(vectors=tuple(self._vector(text) for text in texts))

    def _vector(self, text: str) -> tuple[float, ...]:
        vector = self.vectors.get(text)
        if vector is None:
            self.misses += 1
            return (0.0,) * self.dimension
        return vector


class Driver:
    """One open runtime and the requests that use it."""

    def __init__(self, stack: contextlib.AsyncExitStack) -> None:
        self.stack = stack
        self.runtime: Any = None
        self.embedder: GivenVectors | None = None

    async def open(self, db: str, dimension: int, gate: bool) -> dict[str, Any]:
        config = BuiltinConfig.model_validate(
            {
                "database": {"kind": "sqlite", "url": f"sqlite+aiosqlite:///{db}"},
                "runtime": {"recall_gate_enabled": gate},
            }
        )
        self.embedder = GivenVectors(dimension)
        self.runtime = await self.stack.enter_async_context(
            open_builtin_runtime(
                config, scheduler_path=f"{db}.scheduler", embedding_model=self.embedder
            )
        )
        return {"version": importlib.metadata.version("powercontext")}

    async def scope(self, name: str) -> dict[str, Any]:
        draft = ScopeDraft(title=name, summary=f"conversation {name}", idempotency_key=name)
        return {"scope_id": (await self.runtime.scopes.create(draft)).scope_id}

    async def add(self, scope_id: str, entries: list[dict[str, Any]]) -> dict[str, Any]:
        assert self.embedder is not None
        for entry in entries:
            self.embedder.vectors[embedding_input(KIND, entry["text"])] = tuple(entry["vector"])
        contents = [AtomicMemoryContent(kind=KIND, text=e["text"]) for e in entries]
        created = await self.runtime.atomic_memory.for_scope(scope_id).create(contents)
        return {"artifact_ids": [record.artifact.artifact_id for record in created.records]}

    def vectors(self, items: list[list[Any]]) -> dict[str, Any]:
        assert self.embedder is not None
        self.embedder.vectors.update((text, tuple(vector)) for text, vector in items)
        return {"count": len(items)}

    async def prepare(self, scope_id: str, query: str, max_bytes: int) -> dict[str, Any]:
        scoped = self.runtime.context.for_scope(scope_id)
        request = PrepareContextRequest(query=query, max_bytes=max_bytes)
        started = time.perf_counter()
        context = await scoped.prepare(request)
        seconds = time.perf_counter() - started
        return {
            "seconds": seconds,
            "status": context.status,
            "content_bytes": context.content_bytes,
            "artifact_ids": cited_artifacts(context.content),
        }


def embedding_input(kind: str, text: str) -> str:
    """What PowerContext 1.4.1 asks its embedding model to embed for an atomic memory
    (its ``atomic_memory_embedding_input``: the kind, a newline, the text).
    The vector served for it is the caller's vector of ``text`` alone, the one satchel
    stores, so both systems index identical vectors."""
    return f"{kind}\n{text}"


def cited_artifacts(content: str | None) -> list[str]:
    """The artifact ids cited between the prepared context's marker lines, in order."""
    ids: list[str] = []
    inside = False
    for line in (content or "").splitlines():
        if line.strip() in (BEGIN, END):
            inside = line.strip() == BEGIN
        elif inside and line.startswith("{"):
            for item in json.loads(line).get("items", []):
                ref = item.get("citation", {}).get("artifact_ref", {})
                ids.append(ref.get("artifact_id", "?"))
    return ids


async def handle(driver: Driver, request: dict[str, Any]) -> dict[str, Any]:
    op = request.get("op")
    if op == "open":
        return await driver.open(request["db"], request["dimension"], request["gate"])
    if op == "scope":
        return await driver.scope(request["name"])
    if op == "add":
        return await driver.add(request["scope_id"], request["entries"])
    if op == "vectors":
        return driver.vectors(request["items"])
    if op == "prepare":
        return await driver.prepare(request["scope_id"], request["query"], request["max_bytes"])
    raise ValueError(f"unknown op {op!r}")


async def serve() -> None:
    # Responses own stdout: anything else PowerContext might print goes to stderr.
    channel, sys.stdout = sys.stdout, sys.stderr
    loop = asyncio.get_running_loop()
    async with contextlib.AsyncExitStack() as stack:
        driver = Driver(stack)
        while line := await loop.run_in_executor(None, sys.stdin.readline):
            request = json.loads(line)
            if request.get("op") == "close":
                misses = driver.embedder.misses if driver.embedder else 0
                respond(channel, {"embedding_misses": misses})
                return
            try:
                response = await handle(driver, request)
            except Exception as exc:  # reported to the bench, which stops the run
                response = {"error": f"{type(exc).__name__}: {exc}"}
            respond(channel, response)


def respond(channel: TextIO, response: dict[str, Any]) -> None:
    channel.write(json.dumps(response) + "\n")
    channel.flush()


if __name__ == "__main__":
    asyncio.run(serve())
