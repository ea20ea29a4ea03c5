"""parse_context: the exact inverse of the rendered pack, in both layouts."""

from __future__ import annotations

import random
from datetime import UTC, datetime

import pytest

import glean
from glean.vocabulary import Limits

from .factories import build, memory, resource
from .test_budget import MARKERS, random_candidates, random_detail, random_sections


def served_text(evidence: glean.vocabulary.Evidence, tier: str) -> str | None:
    """What an item of ``evidence`` holds at ``tier`` before any cut."""
    if evidence.family != "resource":
        return evidence.text
    return {
        "abstract": evidence.abstract,
        "overview": evidence.overview,
        "full": evidence.text,
    }.get(tier)


def test_random_packs_parse_back_to_what_was_delivered() -> None:
    """Over seeded random packs (hostile text included), every delivered item parses back
    with its exact citation, tier, truncation flag and text (a cut text is a prefix)."""
    rng = random.Random(7)
    for _ in range(300):
        candidates = random_candidates(rng)
        result = build(
            candidates,
            max_bytes=rng.choice([512, 900, rng.randint(512, 32768)]),
            sections=random_sections(rng),
            detail=random_detail(rng),
            limits=rng.choice([Limits(), Limits.classic()]),
        )
        parsed = glean.parse_context(result.context.content)
        assert len(parsed) == len(result.delivered)
        for item, delivered in zip(parsed, result.delivered, strict=True):
            evidence = delivered.evidence
            assert item.citation == glean.Citation.from_json(evidence.citation)
            assert (item.tier, item.truncated) == (delivered.tier, delivered.truncated)
            whole = served_text(evidence, item.tier)
            if item.tier == "uri":
                assert item.text is None
            elif item.truncated:
                assert whole is not None
                assert item.text
                assert whole.startswith(item.text)
            else:
                assert item.text == whole


def test_hostile_text_comes_back_exactly() -> None:
    """Marker text, line breaks and JSON syntax inside stored text parse back unchanged."""
    text = "".join(MARKERS) + "\u2028 a line\nbreak \u0085 and \x7f"
    at = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    result = build({"memory": [memory("m1", text, created_at=at)]}, max_bytes=4000)
    (item,) = glean.parse_context(result.context.content)
    assert item.text == text
    assert item.at == at
    assert item.citation == glean.Citation("memory", "project:demo", "m1", 1)


def test_sections_parse_in_the_callers_order() -> None:
    """The Markdown layout parses section by section, in delivery order."""
    sections = [glean.Section("resource", 1), glean.Section("memory", 1)]
    result = build(
        {"memory": [memory("m1")], "resource": [resource("guide")]},
        max_bytes=4000,
        sections=sections,
    )
    families = [item.citation.family for item in glean.parse_context(result.context.content)]
    assert families == ["resource", "memory"]


def test_a_resource_citation_has_no_version() -> None:
    """A resource is cited by URI alone, so its citation's version is None."""
    result = build({"resource": [resource("guide")]}, max_bytes=4000)
    (item,) = glean.parse_context(result.context.content)
    assert item.citation.version is None
    assert item.citation.id == "file:///docs/guide.md"


def test_an_empty_pack_has_no_items() -> None:
    """None (an empty pack) parses to no items."""
    assert glean.parse_context(None) == ()


@pytest.mark.parametrize(
    "content",
    [
        "no markers at all",
        "BEGIN_GLEAN_CONTEXT_V1\n{not json\nEND_GLEAN_CONTEXT_V1",
        'BEGIN_GLEAN_CONTEXT_V1\n{"items": [{"content": "x"}]}\nEND_GLEAN_CONTEXT_V1',
        'BEGIN_GLEAN_CONTEXT_V1\n{"items": [5]}\nEND_GLEAN_CONTEXT_V1',
    ],
)
def test_what_is_no_pack_is_refused(content: str) -> None:
    """Text that is not a glean pack raises InvalidRequestError, never a raw error."""
    with pytest.raises(glean.InvalidRequestError):
        glean.parse_context(content)
