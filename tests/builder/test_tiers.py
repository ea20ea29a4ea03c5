"""Tiers: ceilings, pins, when a body is needed, and what each tier serves."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from satchel.builder import needs_body, tier_ceiling
from satchel.vocabulary._families import FAMILIES

from .factories import build, contents, experience, items, memory, resource

if TYPE_CHECKING:
    from satchel.vocabulary._families import Family, Tier


@pytest.mark.parametrize(
    ("family", "ceiling"),
    [
        ("memory", "full"),
        ("experience", "full"),
        ("topic-memory", "full"),
        ("profile", "full"),
        ("resource", "abstract"),
    ],
)
def test_ceiling_defaults_per_family(family: Family, ceiling: Tier) -> None:
    """Without a pin every family is served whole but resources stop at their abstract."""
    assert tier_ceiling(family, {}) == ceiling


def test_a_pin_sets_the_ceiling_of_its_family_only() -> None:
    """A pinned family takes the pinned tier; the others keep their defaults."""
    detail: dict[Family, Tier] = {"resource": "full", "memory": "uri"}
    assert tier_ceiling("resource", detail) == "full"
    assert tier_ceiling("memory", detail) == "uri"
    assert tier_ceiling("experience", detail) == "full"


@pytest.mark.parametrize(
    ("detail", "expected"),
    [({}, False), ({"resource": "abstract"}, False), ({"resource": "overview"}, False)],
)
def test_a_resource_body_is_not_needed_below_full(
    detail: dict[Family, Tier], expected: bool
) -> None:
    """Only a resource pinned at ``full`` needs its body read."""
    assert needs_body(resource("r"), detail) is expected
    assert needs_body(resource("r"), {"resource": "full"}) is True


@pytest.mark.parametrize("family", [f for f in FAMILIES if f != "resource"])
def test_no_other_family_ever_needs_a_body(family: Family) -> None:
    """Memory-like evidence carries its text already, even when pinned at ``full``."""
    evidence = memory("m") if family == "memory" else experience("x")
    assert not needs_body(evidence, dict.fromkeys(FAMILIES, "full"))


@pytest.mark.parametrize("abstract", [None, "", "a" * 2001])
def test_resource_without_a_usable_abstract_is_a_bare_uri(abstract: str | None) -> None:
    """No abstract, or one over the item cap, falls to a bare citation; no body is read."""
    evidence = resource("r", abstract=abstract, overview="an overview", body="TOKEN=secret")
    result = build({"resource": [evidence]})
    assert [(item.tier, item.truncated) for item in result.delivered] == [("uri", False)]
    assert "content" not in items(result)[0]
    assert "secret" not in (result.render().content or "")
    assert not needs_body(evidence, {})


def test_resource_body_is_served_only_when_pinned_full() -> None:
    """Default serves the abstract, an overview pin the overview, a full pin the body."""
    evidence = resource("r", abstract="ABSTRACT", overview="OVERVIEW", body="BODY TEXT")
    pins: dict[str, dict[Family, Tier]] = {
        "default": {},
        "overview": {"resource": "overview"},
        "full": {"resource": "full"},
    }
    served = {pin: contents(build({"resource": [evidence]}, detail=d)) for pin, d in pins.items()}
    assert served == {"default": ["ABSTRACT"], "overview": ["OVERVIEW"], "full": ["BODY TEXT"]}


def test_resource_missing_a_tier_steps_down_never_up() -> None:
    """A pinned overview that is missing serves the abstract, never the body."""
    evidence = resource("r", abstract="ABSTRACT", overview=None, body="BODY")
    result = build({"resource": [evidence]}, detail={"resource": "overview"})
    assert [item.tier for item in result.delivered] == ["abstract"]
    assert contents(result) == ["ABSTRACT"]


def test_resource_pinned_full_without_abstract_still_serves_its_body() -> None:
    """A full pin serves the body; the bare-uri fallback only governs the abstract tier."""
    evidence = resource("r", abstract=None, body="BODY")
    result = build({"resource": [evidence]}, detail={"resource": "full"})
    assert [item.tier for item in result.delivered] == ["full"]
    assert contents(result) == ["BODY"]


def test_memory_pinned_at_uri_is_a_bare_citation() -> None:
    """``detail={"memory": "uri"}`` serves memory as citations and leaves others whole."""
    result = build(
        {"memory": [memory("m", "TEXT")], "experience": [experience("x", "LESSON")]},
        detail={"memory": "uri"},
    )
    assert [(i.evidence.family, i.tier) for i in result.delivered] == [
        ("memory", "uri"),
        ("experience", "full"),
    ]
    assert contents(result) == ["LESSON"]


@pytest.mark.parametrize("pin", ["abstract", "overview"])
def test_memory_pinned_shallow_serves_its_whole_text(pin: Tier) -> None:
    """A memory's abstract is its whole body, so shallow pins still serve all of it."""
    result = build({"memory": [memory("m", "THE WHOLE TEXT")]}, detail={"memory": pin})
    assert [item.tier for item in result.delivered] == [pin]
    assert contents(result) == ["THE WHOLE TEXT"]
    assert items(result)[0]["detail"] == pin
