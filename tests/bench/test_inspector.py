"""``bench/inspector.py`` on a small store: every page answers 200 and is timed, and
the table names each."""

from __future__ import annotations

from typing import TYPE_CHECKING

import anyio

from bench import inspector, listing

if TYPE_CHECKING:
    from pathlib import Path


def test_a_small_run_times_every_page_and_tabulates(tmp_path: Path) -> None:
    path = tmp_path / "listing-300.db"
    anyio.run(listing.build_store, path, 300)
    pages = anyio.run(inspector.measure, path, 2, 1, 3)
    assert list(pages) == [
        "scopes", "scope page 1", "scope page 3", "scope, family and forgotten",
        "text filter, rare", "record",
    ]  # fmt: skip
    for figures in pages.values():
        assert figures["calls"] == 2
        assert figures["p50_ms"] > 0
    text = inspector.table({"size": 300, "pages": pages})
    assert "one SQLite scope of 300 entries" in text
    assert "| text filter, rare |" in text
