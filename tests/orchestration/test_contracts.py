"""The assembly contracts at runtime level: reads inside their stage, whole-call deadlines,
turns that count only when the pack is returned; on asyncio and trio."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import anyio
import pytest

import glean
from tests._envelope import citations, contents
from tests._orchestration import ScriptedEmbedder, StoreWrapper, policy, request, run, seed

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

pytestmark = pytest.mark.anyio

SECTIONS = glean.Assembly((glean.Section("memory", 4), glean.Section("resource", 4)))


async def seed_resources(path: Path) -> None:
    """Scope "a": memories (see ``seed``), a resource round 0 admits (two query terms) and
    one only round 1 admits (one term), each with a secret body."""
    await seed(path, ("a",))
    async with glean.open_runtime(str(path), embedder=ScriptedEmbedder()) as rt:
        await rt.add_resources(
            "a",
            [
                glean.Resource(uri="docs/strong.md", body="strong body", abstract="alpha beta"),
                glean.Resource(uri="docs/weak.md", body="TOKEN=secret", abstract="alpha notes"),
            ],
        )


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "g.db"
    anyio.run(seed_resources, path)
    return path


class WeakBodyFails(StoreWrapper):
    """Reading the body of docs/weak.md fails (as a damaged disk would)."""

    async def read_resource_bodies(self, scope_id: str, uris: Sequence[str]) -> Any:
        if "docs/weak.md" in uris:
            raise OSError("disk read failed")
        return await self.inner.read_resource_bodies(scope_id, uris)


def uris(content: str | None) -> list[str]:
    return [c["uri"] for c in citations(content) if c["family"] == "resource"]


async def test_a_failed_body_read_discards_its_expansion_round(db: Path) -> None:
    """A pinned body an expansion round needs is read inside that round: when the read
    fails the round is discarded and the committed pack returned, as with the gate off."""
    pinned = request(assembly=SECTIONS, detail={"resource": "full"})
    off, _, _ = await run(db, pinned, wrapper=WeakBodyFails)
    on, effort, _ = await run(db, pinned, wrapper=WeakBodyFails, recall_policy=policy())
    assert effort.assessment == "expansion-failed"
    assert on == off
    assert uris(on.content) == ["docs/strong.md"]
    assert "strong body" in "".join(contents(on.content))


async def test_an_expansion_round_reads_the_bodies_it_adds(db: Path) -> None:
    """A committed expansion round serves the pinned bodies of what it added."""
    pinned = request(assembly=SECTIONS, detail={"resource": "full"})
    on, effort, _ = await run(db, pinned, recall_policy=policy())
    assert effort.expansion_actions[:1] == ("admission",)
    assert uris(on.content) == ["docs/strong.md", "docs/weak.md"]
    assert "TOKEN=secret" in "".join(contents(on.content))


@pytest.mark.parametrize(
    "detail", [None, "abstract", {"resource": "overview"}], ids=["default", "abstract", "overview"]
)
async def test_an_unpinned_body_never_appears_even_after_expansion(
    db: Path, detail: object
) -> None:
    """Without a full pin no round reads or serves a body, however far recall expands."""
    on, effort, _ = await run(db, request(assembly=SECTIONS, detail=detail), recall_policy=policy())
    assert effort.rounds >= 2
    assert "docs/weak.md" in uris(on.content)
    text = "".join(contents(on.content))
    assert "TOKEN=secret" not in text
    assert "strong body" not in text
