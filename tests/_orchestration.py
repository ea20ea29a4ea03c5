"""Test helpers for the recall orchestrator: a seeded store, wrappers and a runner."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

import satchel
from satchel.stores import PoolRequest, SqliteStore
from satchel.vocabulary._analysis import analyse_query

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

QUERY = "alpha beta gamma delta"  # four terms: round 0 needs two of them per candidate


def _at(cosine: float) -> tuple[float, float]:
    return (cosine, math.sqrt(1 - cosine * cosine))


#: Cosine similarity to the query of the texts that have one; every other text is
#: orthogonal to it. 0.25 clears round 1's floor (0.2), 0.15 only round 2's (0.1).
SIMILARITY = {"alpha beta strong match": 0.25, "omega faint note": 0.15}


class ScriptedEmbedder:
    """Two-dimensional vectors with scripted cosines to ``QUERY``."""

    dimension = 2

    async def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        rows = [_at(1.0) if t == QUERY else _at(self._cosine(t)) for t in texts]
        return np.asarray(rows, dtype=np.float32)

    @staticmethod
    def _cosine(text: str) -> float:
        return next((c for prefix, c in SIMILARITY.items() if text.startswith(prefix)), 0.0)


def policy(**overrides: Any) -> satchel.RecallSufficiencyPolicy:
    """A policy whose only thinness signal is the candidate count, unless overridden."""
    fields: dict[str, Any] = {
        "min_candidates": 3,
        "min_top_similarity": 0.0,
        "min_lexical_overlap": 0.0,
        "min_unused_bytes": 0,
        "sufficient_overlap": 1.0,
        "admission": satchel.AdmissionFloor(required_matches=1, min_similarity=0.2),
        "policy_floor": satchel.AdmissionFloor(required_matches=1, min_similarity=0.1),
    }
    fields.update(overrides)
    return satchel.RecallSufficiencyPolicy(**fields)


async def seed(
    path: Path, scopes: Sequence[str] = ("a",), *, thin: int = 5, faint: bool = True
) -> None:
    """Per scope: one entry round 0 admits (two query terms; cosine 0.25), ``thin`` that
    only round 1's floor admits (one term), and a ``faint`` one only round 2's admits
    (no term; cosine 0.15)."""
    async with satchel.open_runtime(str(path), embedder=ScriptedEmbedder()) as rt:
        for scope in scopes:
            entries = [satchel.MemoryEntry(text=f"alpha beta strong match in {scope}")]
            entries += [
                satchel.MemoryEntry(text=f"alpha weak note {n} in {scope}") for n in range(thin)
            ]
            if faint:
                entries.append(satchel.MemoryEntry(text=f"omega faint note in {scope}"))
            await rt.add_memories(scope, entries)


class StoreWrapper:
    """Delegates to a real store; subclasses intercept calls."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.calls: list[tuple[str, str, str]] = []

    async def retrieve(self, family: Any, scope_id: str, *args: Any) -> Any:
        self.calls.append(("retrieve", family, scope_id))
        return await self.inner.retrieve(family, scope_id, *args)

    async def evidence(self, family: Any, scope_id: str, keys: Any) -> Any:
        self.calls.append(("evidence", family, scope_id))
        await self.on_evidence(family, scope_id, self.count("evidence", family, scope_id))
        return await self.inner.evidence(family, scope_id, keys)

    async def on_evidence(self, family: str, scope_id: str, call: int) -> None:
        """Called before the ``call``-th evidence read of (family, scope); 1 is round 0."""

    def count(self, kind: str, family: str, scope_id: str) -> int:
        return self.calls.count((kind, family, scope_id))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


async def run(
    path: Path,
    request: satchel.PrepareContextRequest,
    *,
    wrapper: type[StoreWrapper] | None = None,
    recall_policy: satchel.RecallSufficiencyPolicy | None = None,
    preload: bool = False,
    **options: Any,
) -> tuple[satchel.PreparedContext, satchel.RecallEffort, Any]:
    """One prepare on a fresh runtime over the store at ``path``; its effort and store.

    ``preload`` loads the request scope's vector matrix first, so the prepare itself
    never waits on a worker thread (a mock clock would jump over that wait).
    """
    efforts: list[satchel.RecallEffort] = []

    async def sink(effort: satchel.RecallEffort) -> None:
        efforts.append(effort)

    store: Any = await SqliteStore.open(str(path))
    if preload:
        vector = (await ScriptedEmbedder().embed([QUERY]))[0]
        await store.retrieve(
            "memory", request.scope_id, PoolRequest(analyse_query(QUERY), vector, 8)
        )
    if wrapper is not None:
        store = wrapper(store)
    async with satchel.open_runtime(
        store=store,
        embedder=ScriptedEmbedder(),
        recall_policy=recall_policy,
        recall_effort_sink=sink,
        **options,
    ) as rt:
        context = await rt.prepare_context(request)
    (effort,) = efforts
    return context, effort, store


def request(scope: str = "a", **fields: Any) -> satchel.PrepareContextRequest:
    return satchel.PrepareContextRequest(scope_id=scope, query=QUERY, **fields)
