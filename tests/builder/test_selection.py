"""Selection: interleave order, item limits and assembly sections."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from satchel.builder._selection import select
from satchel.vocabulary._limits import Limits
from satchel.vocabulary._requests import Section

from .factories import (
    Candidates,
    body_lines,
    build,
    entry_ids,
    experience,
    memory,
    profile,
    resource,
    topic,
)

if TYPE_CHECKING:
    from satchel.builder import BuildResult


def offered(candidates: Candidates, limits: Limits | None = None) -> list[str]:
    """The identities selection offers to fitting, in the order they compete."""
    chosen = select(candidates, None, Limits() if limits is None else limits)
    return [evidence.identity for evidence in chosen]


def groups(result: BuildResult) -> list[str]:
    """The family of each group line of a pack, in render order."""
    return [json.loads(line)["family"] for line in body_lines(result) if line.startswith("{")]


def test_families_interleave_by_rank_in_interleave_order() -> None:
    """Rank 0 of memory, experience, topic memory, resource, profile comes before rank 1."""
    candidates: Candidates = {
        "profile": [profile()],
        "resource": [resource("r0"), resource("r1")],
        "topic-memory": [topic("t0"), topic("t1")],
        "experience": [experience("x0"), experience("x1")],
        "memory": [memory("m0"), memory("m1"), memory("m2")],
    }
    assert offered(candidates) == [
        "m0:1",
        "x0:2",
        "t0:3",
        "file:///docs/r0.md",
        "project:demo",
        "m1:1",
        "x1:2",
        "t1:3",
        "file:///docs/r1.md",
        "m2:1",
    ]


def test_default_limits_cap_experience_at_two_and_the_pack_at_max_items() -> None:
    """Limits(): experience stops at 2, topic memory at 16, and the pack at 64 items."""
    candidates: Candidates = {
        "memory": [memory(f"m{i}", f"m{i}") for i in range(64)],
        "experience": [experience(f"x{i}", f"x{i}") for i in range(8)],
        "topic-memory": [topic(f"t{i}", f"t{i}") for i in range(20)],
    }
    delivered = build(candidates, max_bytes=32768).delivered
    families = [item.evidence.family for item in delivered]
    assert len(delivered) == 64
    assert families.count("experience") == 2
    assert families.count("topic-memory") == 16
    assert families.count("memory") == 46


def test_classic_limits_deliver_at_most_eight_items() -> None:
    """Limits.classic(): at most 8 items, experience at most 2, in interleave order."""
    candidates: Candidates = {
        "memory": [memory(f"m{i}", f"fact {i}") for i in range(16)],
        "experience": [experience(f"x{i}", f"lesson {i}") for i in range(8)],
        "topic-memory": [topic(f"t{i}", f"topic {i}") for i in range(8)],
    }
    assert offered(candidates, Limits.classic()) == [
        "m0:1", "x0:2", "t0:3", "m1:1", "x1:2", "t1:3", "m2:1", "t2:3"
    ]  # fmt: skip
    result = build(candidates, max_bytes=32768, limits=Limits.classic())
    assert entry_ids(result) == ["m0:1", "m1:1", "m2:1", "x0:2", "x1:2", "t0:3", "t1:3", "t2:3"]


def test_item_limit_is_per_family_not_per_rank() -> None:
    """A family below its limit keeps contributing after a capped family stops."""
    limits = Limits(max_items=5, experience_items=1)
    candidates: Candidates = {
        "memory": [memory(f"m{i}") for i in range(4)],
        "experience": [experience(f"x{i}") for i in range(4)],
    }
    assert offered(candidates, limits) == ["m0:1", "x0:2", "m1:1", "m2:1", "m3:1"]


def test_assembly_follows_section_order_and_limits() -> None:
    """Sections render in the caller's order, each with at most its limit of items."""
    candidates: Candidates = {
        "memory": [memory(f"m{i}", f"fact {i}") for i in range(5)],
        "resource": [resource(f"r{i}", abstract=f"summary {i}") for i in range(3)],
        "experience": [experience("x0")],
    }
    sections = [Section("resource", 2), Section("memory", 3)]
    result = build(candidates, sections=sections)
    assert entry_ids(result) == [
        "file:///docs/r0.md",
        "file:///docs/r1.md",
        "m0:1",
        "m1:1",
        "m2:1",
    ]
    assert groups(result) == ["resource", "memory"]


def test_assembly_ignores_families_without_a_section() -> None:
    """Candidates of a family the assembly does not name are never delivered."""
    candidates: Candidates = {"memory": [memory("m0")], "experience": [experience("x0")]}
    result = build(candidates, sections=[Section("experience", 1)])
    assert entry_ids(result) == ["x0:2"]


def test_assembly_without_sections_is_empty() -> None:
    """``sections=()`` is the normal empty result."""
    result = build({"memory": [memory("m0")]}, sections=())
    assert result.render().status == "empty"
    assert result.delivered == ()


def test_assembly_skips_the_group_line_of_a_section_with_nothing_delivered() -> None:
    """A section whose family has no candidates renders no group line."""
    candidates: Candidates = {"memory": [memory("m0")]}
    result = build(candidates, sections=[Section("profile", 1), Section("memory", 1)])
    assert groups(result) == ["memory"]
