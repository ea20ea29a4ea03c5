"""A chat of turns a minute apart in one thread, asked one question with ``explain``:
what the ranking tests of read turns share."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

import satchel

if TYPE_CHECKING:
    from collections.abc import Sequence

START = datetime(2024, 3, 1, 9, 0, tzinfo=UTC)


async def explained_chat(
    chat: Sequence[str],
    query: str,
    weights: satchel.FusionWeights,
    max_bytes: int = 4000,
    thread: str | None = "chat",
) -> tuple[dict[str | None, float | None], tuple[str | None, ...]]:
    """Each delivered turn's score, and the delivered turns, of ``query`` asked of
    ``chat`` (one scope, one ``thread``, or none, the bundled embedder) with ``weights``."""
    entries = [
        satchel.MemoryEntry(text=text, created_at=START + timedelta(minutes=n), thread=thread)
        for n, text in enumerate(chat)
    ]
    async with satchel.open_runtime(
        ":memory:", embedder=satchel.StaticEmbedder(), fusion=weights
    ) as rt:
        await rt.add_memories("chat", entries)
        request = satchel.PrepareContextRequest(scope_id="chat", query=query, max_bytes=max_bytes)
        explained = await rt.explain_context(request)
    items = satchel.parse_context(explained.context.content)
    scores = {
        item.text: receipt.score for receipt, item in zip(explained.receipts, items, strict=True)
    }
    return scores, tuple(item.text for item in items)
