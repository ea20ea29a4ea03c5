"""PrepareContextRequest.exclude: citations the caller holds are never delivered again,
and other candidates take their places within the ceilings."""

from __future__ import annotations

from typing import Any

import pytest

import satchel

pytestmark = pytest.mark.anyio

SCOPE = "ops"
FACTS = [
    f"Kestrel runbook note {n}: restart the kestrel dispatcher on port 74{n:02d}" for n in range(6)
]


async def cited(rt: satchel.Runtime, **fields: object) -> tuple[satchel.ContextItem, ...]:
    request = satchel.PrepareContextRequest(scope_id=SCOPE, query="kestrel dispatcher", **fields)  # type: ignore[arg-type]
    return satchel.parse_context((await rt.prepare_context(request)).content)


async def test_excluded_citations_are_replaced_by_the_next_candidates() -> None:
    """With a ceiling of 2, excluding the first pack's two items delivers two others."""
    limits = satchel.Limits(memory_candidates=2)
    async with satchel.open_runtime(embedder=satchel.HashingEmbedder(), limits=limits) as rt:
        await rt.add_memories(SCOPE, [satchel.MemoryEntry(text=fact) for fact in FACTS])
        first = await cited(rt)
        held = tuple(item.citation for item in first)
        second = await cited(rt, exclude=held)
    assert len(first) == len(second) == 2
    assert {item.citation for item in second}.isdisjoint(held)


async def test_an_excluded_profile_is_not_delivered() -> None:
    """A profile the caller already holds is left out; the rest of the pack stays."""
    assembly = satchel.Assembly((satchel.Section("profile", 1), satchel.Section("memory", 2)))
    async with satchel.open_runtime(embedder=satchel.HashingEmbedder()) as rt:
        await rt.add_memories(SCOPE, [satchel.MemoryEntry(text=FACTS[0])])
        await rt.set_profile(SCOPE, satchel.Profile(text="on call this week"))
        families = [item.citation.family for item in await cited(rt, assembly=assembly)]
        profile = satchel.Citation("profile", SCOPE)
        again = [
            item.citation.family for item in await cited(rt, assembly=assembly, exclude=(profile,))
        ]
    assert families == ["profile", "memory"]
    assert again == ["memory"]


async def test_excluding_an_old_version_keeps_the_new_one() -> None:
    """A citation names one version: excluding version 1 still delivers version 2."""
    async with satchel.open_runtime(embedder=satchel.HashingEmbedder()) as rt:
        (ref,) = await rt.add_memories(SCOPE, [satchel.MemoryEntry(text=FACTS[0])])
        new = await rt.update_memory(ref, satchel.MemoryEntry(text=FACTS[1]))
        old = satchel.Citation("memory", SCOPE, ref.entry_id, ref.version)
        items = await cited(rt, exclude=[old])
    assert [item.citation for item in items] == [
        satchel.Citation("memory", SCOPE, new.entry_id, new.version)
    ]


@pytest.mark.parametrize(
    ("exclude", "field"),
    [
        (5, "exclude"),
        ([5], r"exclude\[0\]"),
        ([satchel.Citation("note", SCOPE)], r"exclude\[0\]\.family"),
    ],
)
async def test_a_malformed_exclude_names_its_field(exclude: object, field: str) -> None:
    """exclude takes satchel.Citation values of known families; anything else is named."""
    async with satchel.open_runtime(embedder=satchel.HashingEmbedder()) as rt:
        with pytest.raises(satchel.InvalidRequestError, match=rf"^{field}"):
            await cited(rt, exclude=exclude)


async def test_a_reference_penalty_ranks_reference_scopes_below_the_own_scope() -> None:
    """With reference_penalty=2 and a ceiling of 2, both candidates come from the
    request's own scope; without it the scopes interleave."""
    limits = satchel.Limits(memory_candidates=2)

    async def scopes_of(**options: Any) -> list[str]:
        async with satchel.open_runtime(
            embedder=satchel.HashingEmbedder(), limits=limits, **options
        ) as rt:
            for scope in (SCOPE, "docs"):
                # Each scope's own wording: a text said in both is delivered once.
                facts = [f"{fact} ({scope})" for fact in FACTS]
                await rt.add_memories(scope, [satchel.MemoryEntry(text=fact) for fact in facts])
            return [item.citation.scope for item in await cited(rt, references=("docs",))]

    assert sorted(await scopes_of()) == ["docs", SCOPE]
    assert await scopes_of(reference_penalty=2) == [SCOPE, SCOPE]
