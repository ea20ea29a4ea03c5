"""The Packer: pinned resource bodies are read once per prepare, and only when pinned."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

import glean
from glean.builder import FitMemo
from glean.orchestration import Packer, ScopeGuards
from glean.vocabulary import Evidence, validate_request

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

pytestmark = pytest.mark.anyio

SCOPE = "project:demo"


class BodyStore:
    """Serves resource bodies and counts how often it is asked."""

    def __init__(self) -> None:
        self.reads: list[tuple[str, tuple[str, ...]]] = []

    async def read_resource_bodies(self, scope_id: str, uris: Sequence[str]) -> Mapping[str, str]:
        self.reads.append((scope_id, tuple(uris)))
        return {uri: f"the whole body of {uri}" for uri in uris}


def packer(store: BodyStore, detail: object = None) -> Packer:
    request = validate_request(
        glean.PrepareContextRequest(scope_id=SCOPE, query="runbook", detail=detail)  # type: ignore[arg-type]
    )
    limits = glean.Limits()
    return Packer(request, store, ScopeGuards(), limits, FitMemo(limits))  # type: ignore[arg-type]


def resource(uri: str) -> Evidence:
    return Evidence.from_record("resource", SCOPE, uri, 1, abstract=f"abstract of {uri}")


async def test_a_pinned_body_is_read_once_per_prepare() -> None:
    """Two fits of one prepare read each pinned body once, and serve it."""
    store = BodyStore()
    pack = packer(store, {"resource": "full"})
    first = await pack.pack({"resource": (resource("a.md"),)})
    second = await pack.pack({"resource": (resource("a.md"), resource("b.md"))})
    assert store.reads == [(SCOPE, ("a.md",)), (SCOPE, ("b.md",))]
    assert "the whole body of a.md" in (first.context.content or "")
    assert "the whole body of b.md" in (second.context.content or "")


async def test_an_unpinned_body_is_never_read() -> None:
    """Without a pin a resource is served at its abstract and its body is not read."""
    store = BodyStore()
    built = await packer(store).pack({"resource": (resource("a.md"),)})
    assert store.reads == []
    assert "abstract of a.md" in (built.context.content or "")
    assert "whole body" not in (built.context.content or "")


async def test_held_back_items_and_the_profile_are_applied_to_every_fit() -> None:
    """The profile read for the prepare joins every fit; held-back identities never do."""
    store = BodyStore()
    pack = packer(store)
    kept = Evidence.from_record("memory", SCOPE, "e1", 1, text="kept fact")
    held = Evidence.from_record("memory", SCOPE, "e2", 1, text="held fact")
    pack.unsearched = {"profile": (Evidence.from_record("profile", SCOPE, text="the profile"),)}
    pack.held = frozenset({held.identity})
    content = (await pack.pack({"memory": (kept, held)})).context.content or ""
    assert "kept fact" in content
    assert "the profile" in content
    assert "held fact" not in content
