"""Concurrent prepares take the host's event loop one stretch of work at a time.

Each stretch a prepare runs on the loop (analysing the query, embedding it, a small
scope's search, admitting and fusing, committing and fitting the pack) is logged once
as it starts, and an observer task on the same loop logs each time it gets to run.
Without the loop's turn, four prepares put their stretches back to back in each pass of
the loop (runs of four and more); with it, at most one stretch runs per pass.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

import pytest

import satchel
from satchel.embedders import _hashing
from satchel.orchestration import _packer, _prepare, _search
from satchel.stores import _term_counts
from satchel.stores.sqlite import _connections
from tests.test_loop import longest_run, run_observed

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

pytestmark = pytest.mark.anyio

QUERIES = ["backup restore times", "deploy on friday", "alpha release notes", "pager duty"]


def logged(log: list[str], stage: str, function: Callable[..., Any]) -> Callable[..., Any]:
    def run(*args: Any, **kwargs: Any) -> Any:
        log.append(stage)
        return function(*args, **kwargs)

    return run


@pytest.fixture
def stages(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every stretch of work a prepare runs on the loop, logged by stage as it starts."""
    log: list[str] = []
    patches = {
        (_prepare, "analyse_query"): "analyse",
        (_hashing.HashingEmbedder, "embed_sync"): "embed",
        (_connections.Connections, "read_inline"): "read",
        (_search, "fuse"): "fuse",
        (_packer.Packer, "pack"): "fit",
        (_term_counts, "rarity_terms"): "rate",
    }
    for (owner, name), stage in patches.items():
        monkeypatch.setattr(owner, name, logged(log, stage, getattr(owner, name)))
    return log


async def test_concurrent_prepares_leave_the_loop_between_any_two_stretches(
    anyio_backend: object, tmp_path: Path, stages: list[str]
) -> None:
    embedder = satchel.HashingEmbedder()
    async with satchel.open_runtime(str(tmp_path / "t.db"), embedder=embedder) as rt:
        notes = [f"note {n}: {QUERIES[n % 4]} went fine, see run {n}" for n in range(40)]
        await rt.add_memories("s", [satchel.MemoryEntry(text=text) for text in notes])
        stages.clear()
        log = stages

        async def prepare(query: str) -> None:
            request = satchel.PrepareContextRequest(scope_id="s", query=query, max_bytes=4000)
            assert (await rt.prepare_context(request)).status == "ready"

        await run_observed(log, [functools.partial(prepare, query) for query in QUERIES])

    satchel_stretches = [entry for entry in log if entry != "host"]
    assert set(satchel_stretches) == {"analyse", "embed", "read", "fuse", "fit", "rate"}
    assert all(satchel_stretches.count(stage) >= 4 for stage in ("analyse", "fit"))
    runs = ["satchel" if entry != "host" else entry for entry in log]
    assert longest_run(runs, "satchel") <= 2
