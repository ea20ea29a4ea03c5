"""A family holding nothing in a scope costs a prepare at most its search's task and the
store's answer: no admission, fusion or turn of the loop, and no read (and no task at
all with a store that tells which families a scope holds nothing of:
``test_settled_searches``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

import satchel
from satchel.orchestration import _search
from satchel.recall import fuse

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.anyio

NOTES = [
    "the kestrel rotation runs every friday",
    "kestrel credentials need a signed ticket",
    "lunch is at noon on the terrace",
]


async def test_a_family_holding_nothing_is_neither_admitted_nor_fused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two scopes holding only memories: of their six searches (memory and experiences
    in each, topic notes in the first) only the two memory searches admit and fuse
    their pools, and the pack is byte for byte the one an explained prepare (which
    takes every search the whole way) gives."""
    fused: list[str] = []

    def counted(admitted: Any, *args: Any, **kwargs: Any) -> Any:
        fused.append(admitted.counts.family)
        return fuse(admitted, *args, **kwargs)

    monkeypatch.setattr(_search, "fuse", counted)
    request = satchel.PrepareContextRequest(
        scope_id="a", references=("b",), query="who signs kestrel credentials", max_bytes=4000
    )
    embedder = satchel.HashingEmbedder()
    async with satchel.open_runtime(str(tmp_path / "e.db"), embedder=embedder) as rt:
        for scope in ("a", "b"):
            await rt.add_memories(scope, [satchel.MemoryEntry(text=text) for text in NOTES])
        prepared = await rt.prepare_context(request)
        assert sorted(fused) == ["memory", "memory"]
        explained = await rt.explain_context(request)
    assert prepared.status == "ready"
    assert prepared == explained.context
    assert sorted(fused[2:]) == ["experience", "experience", "memory", "memory", "topic-memory"]
