"""A large budget is filled: the default limits are set for 8,000 bytes and scale with a
request for more (``Limits.for_bytes``), where a fixed 64-item cap left a 32 KB pack of
short notes a quarter empty."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

import satchel

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.anyio

#: Notes of about 170 bytes a line: 263 of them (the memory ceiling at 32 KB) overfill it.
NOTES = [
    satchel.MemoryEntry(
        text=f"Maya: the kestrel rotation note number {n} says the north gate opens late"
        " on market days, so the vans wait by the old mill until the bell"
    )
    for n in range(400)
]


async def packed(path: Path, limits: satchel.Limits, max_bytes: int) -> satchel.PreparedContext:
    async with satchel.open_runtime(
        str(path), embedder=satchel.HashingEmbedder(), limits=limits
    ) as rt:
        request = satchel.PrepareContextRequest(
            scope_id="chat", query="kestrel rotation note", max_bytes=max_bytes
        )
        return await rt.prepare_context(request)


async def test_a_large_budget_is_filled_past_the_fixed_counts(tmp_path: Path) -> None:
    """32 KB of matching notes: the default limits deliver more than 64 items and fill
    the budget; the same counts held fixed stop at 64 items."""
    path = tmp_path / "s.db"
    async with satchel.open_runtime(str(path), embedder=satchel.HashingEmbedder()) as rt:
        await rt.add_memories("chat", NOTES)
    scaled = await packed(path, satchel.Limits(), 32768)
    fixed = await packed(path, satchel.Limits(scale_with_budget=False), 32768)
    assert len(satchel.parse_context(fixed.content)) == 64
    assert fixed.content_bytes < 0.4 * 32768
    delivered = satchel.parse_context(scaled.content)
    assert len(delivered) > 150
    assert scaled.content_bytes > 0.95 * 32768
    assert {item.citation for item in satchel.parse_context(fixed.content)} < {
        item.citation for item in delivered
    }


async def test_a_pack_of_8000_bytes_or_fewer_is_unchanged(tmp_path: Path) -> None:
    """Up to 8,000 bytes the default limits are the fixed counts: the same packs."""
    path = tmp_path / "s.db"
    async with satchel.open_runtime(str(path), embedder=satchel.HashingEmbedder()) as rt:
        await rt.add_memories("chat", NOTES)
    for max_bytes in (2000, 8000):
        scaled = await packed(path, satchel.Limits(), max_bytes)
        fixed = await packed(path, satchel.Limits(scale_with_budget=False), max_bytes)
        assert scaled.content == fixed.content
