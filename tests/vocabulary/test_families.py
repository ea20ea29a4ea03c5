"""The family table: one row per family, and every per-family rule read from it."""

from __future__ import annotations

import pytest

import satchel
from satchel.builder import needs_body, tier_ceiling
from satchel.vocabulary import (
    DEFAULT_FAMILIES,
    FAMILIES,
    FAMILY_RULES,
    INTERLEAVE_ORDER,
    Evidence,
    citation,
    rules,
)

SCOPE = "project:demo"


def test_the_table_lists_every_family_once_in_request_order() -> None:
    """Families are listed as requests and messages list them; each row names its own."""
    assert FAMILIES == ("memory", "experience", "topic-memory", "profile", "resource")
    assert all(FAMILY_RULES[family].family == family for family in FAMILIES)


def test_derived_orders_come_from_the_table() -> None:
    """The default selection and the interleave order are read off the rows."""
    assert DEFAULT_FAMILIES == ("memory", "experience", "topic-memory")
    assert INTERLEAVE_ORDER == ("memory", "experience", "topic-memory", "resource", "profile")


@pytest.mark.parametrize(
    ("family", "record_id", "version", "expected"),
    [
        ("memory", "e1", 2, {"family": "memory", "scope": SCOPE, "entry_id": "e1", "version": 2}),
        (
            "experience",
            "x1",
            1,
            {"family": "experience", "scope": SCOPE, "id": "x1", "revision": 1},
        ),
        (
            "topic-memory",
            "t1",
            3,
            {"family": "topic-memory", "scope": SCOPE, "id": "t1", "revision": 3},
        ),
        ("resource", "docs/a.md", 4, {"family": "resource", "scope": SCOPE, "uri": "docs/a.md"}),
        ("profile", None, None, {"family": "profile", "scope": SCOPE}),
    ],
)
def test_citations_use_each_familys_field_names(
    family: satchel.vocabulary.Family,
    record_id: str | None,
    version: int | None,
    expected: dict[str, object],
) -> None:
    """A citation names the record and version with the family's own fields; a resource
    is cited by URI alone and a profile by its scope."""
    assert citation(family, SCOPE, record_id, version) == expected


def test_evidence_identity_is_its_citation_joined() -> None:
    """Two versions of one entry are two identities; a resource's revisions are one."""
    first = Evidence.from_record("memory", SCOPE, "e1", 1, text="a")
    second = Evidence.from_record("memory", SCOPE, "e1", 2, text="b")
    assert first.identity != second.identity
    old = Evidence.from_record("resource", SCOPE, "u", 1, abstract="a")
    new = Evidence.from_record("resource", SCOPE, "u", 2, abstract="b")
    assert old.identity == new.identity == f"resource\x1f{SCOPE}\x1fu"


def test_serving_rules_follow_the_table() -> None:
    """Default tiers and on-demand bodies come from the rows: only a pinned resource
    needs its body read."""
    assert tier_ceiling("resource", {}) == rules("resource").default_tier == "abstract"
    assert tier_ceiling("memory", {}) == "full"
    resource = Evidence.from_record("resource", SCOPE, "u", 1, abstract="a")
    memory = Evidence.from_record("memory", SCOPE, "e", 1, text="t")
    assert needs_body(resource, {"resource": "full"})
    assert not needs_body(resource, {})
    assert not needs_body(memory, {"memory": "full"})


def test_limits_read_each_familys_ceiling_from_the_table() -> None:
    """Candidate ceilings and item limits name their Limits field in the row."""
    limits = satchel.Limits(memory_candidates=5, experience_items=1)
    assert limits.ceiling("memory") == 5
    assert limits.ceiling("profile") == 1
    assert limits.item_limit("experience") == 1
    assert limits.item_limit("memory") == limits.max_items


def test_section_limits_come_from_the_table() -> None:
    """An experience section may ask for at most two items, as its row says."""
    assert rules("experience").max_section_limit == 2
    request = satchel.PrepareContextRequest(
        scope_id=SCOPE, query="q", assembly=satchel.Assembly((satchel.Section("experience", 3),))
    )
    with pytest.raises(satchel.InvalidRequestError, match=r"sections\[0\]\.limit"):
        satchel.vocabulary.validate_request(request)


def test_a_citation_names_the_identity_of_its_evidence() -> None:
    """Citation.identity is the evidence identity, a resource's version ignored."""
    memory = Evidence.from_record("memory", SCOPE, "e1", 2, text="a")
    resource = Evidence.from_record("resource", SCOPE, "u", 3, abstract="b")
    assert satchel.Citation.from_json(memory.citation).identity() == memory.identity
    assert satchel.Citation("resource", SCOPE, "u", 7).identity() == resource.identity
    assert (
        satchel.Citation("profile", SCOPE).identity()
        == Evidence.from_record("profile", SCOPE, text="p").identity
    )
