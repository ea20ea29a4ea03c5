"""``bench/listing.py`` on a small store: the summary, the table, and a run whose walk
lists every remaining record once."""

from __future__ import annotations

from typing import TYPE_CHECKING

import anyio
import pytest

import satchel
from bench import listing

if TYPE_CHECKING:
    from pathlib import Path


def test_summary_gives_p50_p95_and_max() -> None:
    """Percentiles interpolate between samples; max is the largest; calls are counted."""
    figures = listing.summary([4.0, 1.0, 3.0, 2.0])
    assert figures == {"p50_ms": 2.5, "p95_ms": 3.85, "max_ms": 4.0, "calls": 4}


def test_a_small_run_walks_every_record_once_and_tabulates(tmp_path: Path) -> None:
    """300 entries (3 updated, 3 forgotten) in pages of 10: the walk lists the 297
    searchable records once each over 30 pages; every arm has page 1 and page 20 with its
    ratio, and the table names them."""
    path = tmp_path / "listing-300.db"
    anyio.run(listing.build_store, path, 300)
    results = anyio.run(listing.measure, path, 10, [20], 3, 1)
    assert results["records"] == {"memory": 297}
    walked = results["walk"]
    assert (walked["pages"], walked["records"], walked["distinct"]) == (30, 297, 297)
    for arm in ("default", "family=memory", "include_forgotten"):
        assert set(results[arm]) == {"page 1", "page 20"}
        assert results[arm]["page 20"]["over_page_1"] > 0
        assert results[arm]["page 1"]["calls"] == 3
    text = listing.table(results)
    assert "| include_forgotten | 20 |" in text
    assert "Whole walk: 30 pages, 297 records (297 distinct)" in text


def test_a_page_past_the_last_is_refused() -> None:
    """Asking for a page the scope does not have stops the benchmark with a message."""

    async def run() -> None:
        async with satchel.open_runtime(embedder=listing.embedder()) as rt:
            await rt.add_memories(listing.SCOPE, [satchel.MemoryEntry("one")])
            await listing.cursor_of_page(rt, 3, limit=1)

    with pytest.raises(SystemExit, match="fewer than 3 pages"):
        anyio.run(run)
