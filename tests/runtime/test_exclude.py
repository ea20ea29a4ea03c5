"""PrepareContextRequest.exclude: citations the caller holds are never delivered again,
and other candidates take their places within the ceilings."""

from __future__ import annotations

from typing import Any

import pytest

import glean

pytestmark = pytest.mark.anyio

SCOPE = "ops"
FACTS = [
    f"Kestrel runbook note {n}: restart the kestrel dispatcher on port 74{n:02d}" for n in range(6)
]


async def cited(rt: glean.Runtime, **fields: object) -> tuple[glean.ContextItem, ...]:
    request = glean.PrepareContextRequest(scope_id=SCOPE, query="kestrel dispatcher", **fields)  # type: ignore[arg-type]
    return glean.parse_context((await rt.prepare_context(request)).content)


async def test_excluded_citations_are_replaced_by_the_next_candidates() -> None:
    """With a ceiling of 2, excluding the first pack's two items delivers two others."""
    limits = glean.Limits(memory_candidates=2)
    async with glean.open_runtime(embedder=glean.HashingEmbedder(), limits=limits) as rt:
        await rt.add_memories(SCOPE, [glean.MemoryEntry(text=fact) for fact in FACTS])
        first = await cited(rt)
        held = tuple(item.citation for item in first)
        second = await cited(rt, exclude=held)
    assert len(first) == len(second) == 2
    assert {item.citation for item in second}.isdisjoint(held)


async def test_an_excluded_profile_is_not_delivered() -> None:
    """A profile the caller already holds is left out; the rest of the pack stays."""
    assembly = glean.Assembly((glean.Section("profile", 1), glean.Section("memory", 2)))
    async with glean.open_runtime(embedder=glean.HashingEmbedder()) as rt:
        await rt.add_memories(SCOPE, [glean.MemoryEntry(text=FACTS[0])])
        await rt.set_profile(SCOPE, glean.Profile(text="on call this week"))
        families = [item.citation.family for item in await cited(rt, assembly=assembly)]
        profile = glean.Citation("profile", SCOPE)
        again = [
            item.citation.family for item in await cited(rt, assembly=assembly, exclude=(profile,))
        ]
    assert families == ["profile", "memory"]
    assert again == ["memory"]


async def test_excluding_an_old_version_keeps_the_new_one() -> None:
    """A citation names one version: excluding version 1 still delivers version 2."""
    async with glean.open_runtime(embedder=glean.HashingEmbedder()) as rt:
        (ref,) = await rt.add_memories(SCOPE, [glean.MemoryEntry(text=FACTS[0])])
        new = await rt.update_memory(ref, glean.MemoryEntry(text=FACTS[1]))
        old = glean.Citation("memory", SCOPE, ref.entry_id, ref.version)
        items = await cited(rt, exclude=[old])
    assert [item.citation for item in items] == [
        glean.Citation("memory", SCOPE, new.entry_id, new.version)
    ]


@pytest.mark.parametrize(
    ("exclude", "field"),
    [
        (5, "exclude"),
        ([5], r"exclude\[0\]"),
        ([glean.Citation("note", SCOPE)], r"exclude\[0\]\.family"),
    ],
)
async def test_a_malformed_exclude_names_its_field(exclude: object, field: str) -> None:
    """exclude takes glean.Citation values of known families; anything else is named."""
    async with glean.open_runtime(embedder=glean.HashingEmbedder()) as rt:
        with pytest.raises(glean.InvalidRequestError, match=rf"^{field}"):
            await cited(rt, exclude=exclude)


async def test_a_reference_penalty_ranks_reference_scopes_below_the_own_scope() -> None:
    """With reference_penalty=2 and a ceiling of 2, both candidates come from the
    request's own scope; without it the scopes interleave."""
    limits = glean.Limits(memory_candidates=2)

    async def scopes_of(**options: Any) -> list[str]:
        async with glean.open_runtime(
            embedder=glean.HashingEmbedder(), limits=limits, **options
        ) as rt:
            for scope in (SCOPE, "docs"):
                await rt.add_memories(scope, [glean.MemoryEntry(text=fact) for fact in FACTS])
            return [item.citation.scope for item in await cited(rt, references=("docs",))]

    assert sorted(await scopes_of()) == ["docs", SCOPE]
    assert await scopes_of(reference_penalty=2) == [SCOPE, SCOPE]
