"""The memory families, and every rule that differs between them, in one table.

Code that treats families differently reads :data:`FAMILY_RULES` (``rules(family).x``)
rather than comparing family names, so adding a family or changing how one is searched,
scored, served or cited is an edit of one row here.
"""

from __future__ import annotations

from typing import Final, Literal, TypeAlias

import attrs

Family: TypeAlias = Literal["memory", "experience", "topic-memory", "profile", "resource"]
Tier: TypeAlias = Literal["uri", "abstract", "overview", "full"]

#: Tiers from the shallowest to the deepest: a bare citation, a summary, a longer
#: summary, the whole text.
TIERS: Final[tuple[Tier, ...]] = ("uri", "abstract", "overview", "full")


@attrs.frozen
class FamilyRules:
    """How every layer treats one family.

    Attributes:
        family: the family's name, as requests, citations and stores spell it.
        searchable: searched by every prepare that selects it; a family that is not
            (the profile) is read whole, once per prepare, and never expanded.
        vector_channel: its search ranks by embedding similarity beside full text
            (experience is lexical only).
        own_scope_only: searched in the request's own scope, never in its references.
        scored: the sufficiency gate reads its best similarity and lexical overlap;
            an unscored family contributes only counts and coverage.
        time_channel: its search also finds records said in the window a query's date
            names (dated conversation turns).
        neighbour_channel: a hit's thread neighbours (the records just before and after
            it in its conversation) may join its candidates.
        speakers: its records may be conversation turns opening with their speaker's
            name; the turns said by a person the query names rank higher
            (``FusionWeights.named_speaker``).
        default_tier: the deepest tier served when the request pins none; fitting
            starts there and never goes deeper.
        body_on_demand: its full text is not in the pool's evidence; it is read only for
            a request that pins the family at ``full`` (a resource's body).
        bare_citation: fitting may serve a record as a bare ``uri`` citation, with no
            content, when its content does not fit: the citation points at something the
            host can fetch (a resource's URI). Any other record is its content, so a
            bare citation would carry nothing; fitting drops it instead.
        id_field: the citation field that names the record (None: the scope alone).
        version_field: the citation field that names the version (None: unversioned).
        default_selected: searched when a request names no assembly.
        max_section_limit: the most items an assembly section of this family may ask for.
        interleave_rank: the family's place when a pack interleaves families by rank.
        candidates_limit: the :class:`satchel.Limits` field that caps its candidates
            (None: at most one, the profile).
        items_limit: the :class:`satchel.Limits` field that caps its delivered items
            without an assembly (None: only ``max_items``).
    """

    family: Family
    searchable: bool
    vector_channel: bool
    own_scope_only: bool
    scored: bool
    time_channel: bool
    neighbour_channel: bool
    speakers: bool
    default_tier: Tier
    body_on_demand: bool
    bare_citation: bool
    id_field: str | None
    version_field: str | None
    default_selected: bool
    max_section_limit: int
    interleave_rank: int
    candidates_limit: str | None
    items_limit: str | None


_MEMORY: Final = FamilyRules(
    family="memory", searchable=True, vector_channel=True, own_scope_only=False,
    scored=True, time_channel=True, neighbour_channel=True, speakers=True,
    default_tier="full",
    body_on_demand=False, bare_citation=False,
    id_field="entry_id", version_field="version",
    default_selected=True, max_section_limit=8, interleave_rank=0,
    candidates_limit="memory_candidates", items_limit=None,
)  # fmt: skip
_EXPERIENCE: Final = FamilyRules(
    family="experience", searchable=True, vector_channel=False, own_scope_only=False,
    scored=False, time_channel=False, neighbour_channel=False, speakers=False,
    default_tier="full",
    body_on_demand=False, bare_citation=False,
    id_field="id", version_field="revision",
    default_selected=True, max_section_limit=2, interleave_rank=1,
    candidates_limit="experience_candidates", items_limit="experience_items",
)  # fmt: skip
_TOPIC_MEMORY: Final = FamilyRules(
    family="topic-memory", searchable=True, vector_channel=True, own_scope_only=True,
    scored=True, time_channel=False, neighbour_channel=False, speakers=False,
    default_tier="full",
    body_on_demand=False, bare_citation=False,
    id_field="id", version_field="revision",
    default_selected=True, max_section_limit=8, interleave_rank=2,
    candidates_limit="topic_memory_candidates", items_limit="topic_memory_items",
)  # fmt: skip
_PROFILE: Final = FamilyRules(
    family="profile", searchable=False, vector_channel=False, own_scope_only=True,
    scored=False, time_channel=False, neighbour_channel=False, speakers=False,
    default_tier="full",
    body_on_demand=False, bare_citation=False,
    id_field=None, version_field=None,
    default_selected=False, max_section_limit=8, interleave_rank=4,
    candidates_limit=None, items_limit=None,
)  # fmt: skip
# A resource's body may be large or sensitive: it is served no deeper than its abstract
# unless the request pins it, and it is never searched (its abstract and overview are).
_RESOURCE: Final = FamilyRules(
    family="resource", searchable=True, vector_channel=True, own_scope_only=False,
    scored=True, time_channel=False, neighbour_channel=False, speakers=False,
    default_tier="abstract",
    body_on_demand=True, bare_citation=True,
    id_field="uri", version_field=None,
    default_selected=False, max_section_limit=8, interleave_rank=3,
    candidates_limit="resource_candidates", items_limit=None,
)  # fmt: skip

#: Every family's rules, in the order requests and messages list families.
FAMILY_RULES: Final[dict[Family, FamilyRules]] = {
    rules.family: rules for rules in (_MEMORY, _EXPERIENCE, _TOPIC_MEMORY, _PROFILE, _RESOURCE)
}
FAMILIES: Final[tuple[Family, ...]] = tuple(FAMILY_RULES)
DEFAULT_FAMILIES: Final[tuple[Family, ...]] = tuple(
    family for family, rules in FAMILY_RULES.items() if rules.default_selected
)
#: Rank order of the interleave: memory first.
INTERLEAVE_ORDER: Final[tuple[Family, ...]] = tuple(
    sorted(FAMILY_RULES, key=lambda family: FAMILY_RULES[family].interleave_rank)
)


def rules(family: Family) -> FamilyRules:
    """The rules of ``family`` (a validated family name)."""
    return FAMILY_RULES[family]


def citation(
    family: Family, scope_id: str, record_id: str | None = None, version: int | None = None
) -> dict[str, str | int]:
    """The exact citation of one record version, with the family's own field names."""
    family_rules = FAMILY_RULES[family]
    cited: dict[str, str | int] = {"family": family, "scope": scope_id}
    if family_rules.id_field is not None and record_id is not None:
        cited[family_rules.id_field] = record_id
    if family_rules.version_field is not None and version is not None:
        cited[family_rules.version_field] = version
    return cited
