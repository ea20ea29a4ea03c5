"""The memory families, and every rule that differs between them, in one table.

Code that treats families differently reads :data:`FAMILY_RULES` (``rules(family).x``)
rather than comparing family names, so adding a family or changing how one is written,
searched, scored, served or cited is an edit of one row here (and its record type, in
``_records``). The write side is data too: what a version keeps of a record
(``columns_of``, as :class:`~._records.Columns`), which of those its key compares
(``content``), how a record its key did not place finds its record (``named_by``), and
the text it is indexed and embedded on. Stores read these; none compares family names
to write.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any, Final, Literal, TypeAlias, cast

import attrs

from ._records import (
    Columns,
    Experience,
    MemoryEntry,
    MemoryRef,
    Profile,
    RecordRef,
    Resource,
    TopicMemory,
    experience_text,
    topic_text,
)
from ._records import Family as Family
from ._speakers import without_phone_label

if TYPE_CHECKING:
    from collections.abc import Callable

    from ._records import Ref

Tier: TypeAlias = Literal["uri", "abstract", "overview", "full"]

#: How a record its caller's key did not place finds the record it revises (the
#: procedure is ``satchel.stores._placing``): ``key`` (by its key alone, else it is
#: new), ``title`` (the searchable record with its title, else new), ``uri`` (its name
#: is its id: the searchable record there is replaced), ``scope`` (one per scope, and
#: every write replaces it, unversioned: the profile).
NameRule: TypeAlias = Literal["key", "title", "uri", "scope"]

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
        record_type: the record class a write of the family takes.
        write_name: the name its write goes by: the runtime's method, and the
            operation a store's span names.
        columns_of: what a version keeps of a record (its :class:`Columns`).
        content: the columns it fills, in the order a caller's key compares them (their
            hash is the version's content hash).
        named_by: how a record its key did not place finds its record (:data:`NameRule`).
        indexed: the columns its full-text index holds, joined.
        embedded: the columns its vector embeds, joined (its name when they are empty:
            a resource without summaries is embedded on its URI); none without a vector
            channel.
        ref: the reference a write returns per record, from the scope, record id and
            version (None: a write returns none, the profile).
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
    record_type: type[Any]
    write_name: str
    columns_of: Callable[[Any], Columns]
    content: tuple[str, ...]
    named_by: NameRule
    indexed: tuple[str, ...]
    embedded: tuple[str, ...]
    ref: Callable[[str, str, int], Ref] | None

    def name_of(self, columns: Columns) -> str | None:
        """The name a record is placed by when its key does not place it: its title or
        URI (None: a family placed by key, or by scope)."""
        if self.named_by not in ("title", "uri"):
            return None
        return cast("str | None", getattr(columns, self.named_by))

    def indexed_text(self, columns: Columns) -> str:
        """The text its full-text index holds (before analysis)."""
        return _joined(columns, self.indexed)

    def embedded_text(self, columns: Columns) -> str:
        """The text its vector embeds, as the runtime embeds it: a conversation turn
        whose speaker is a phone number without the number (``without_phone_label``)."""
        text = _joined(columns, self.embedded) or self.name_of(columns) or ""
        return without_phone_label(text) if self.speakers else text


def _joined(columns: Columns, fields: tuple[str, ...]) -> str:
    return " ".join(filter(None, (cast("str | None", getattr(columns, f)) for f in fields)))


def _entry_columns(entry: MemoryEntry) -> Columns:
    return Columns(
        text=entry.text, kind=entry.kind, tags=entry.tags, created_at=entry.created_at,
        thread=entry.thread, key=entry.key,
    )  # fmt: skip


def _experience_columns(experience: Experience) -> Columns:
    return Columns(text=experience_text(experience), key=experience.key)


def _topic_columns(topic: TopicMemory) -> Columns:
    return Columns(text=topic_text(topic), title=topic.title, key=topic.key)


def _resource_columns(resource: Resource) -> Columns:
    return Columns(
        uri=resource.uri, abstract=resource.abstract, overview=resource.overview,
        body=resource.body, key=resource.key,
    )  # fmt: skip


def _profile_columns(profile: Profile) -> Columns:
    return Columns(text=profile.text)


_MEMORY: Final = FamilyRules(
    family="memory", searchable=True, vector_channel=True, own_scope_only=False,
    scored=True, time_channel=True, neighbour_channel=True, speakers=True,
    default_tier="full",
    body_on_demand=False, bare_citation=False,
    id_field="entry_id", version_field="version",
    default_selected=True, max_section_limit=8, interleave_rank=0,
    candidates_limit="memory_candidates", items_limit=None,
    record_type=MemoryEntry, write_name="add_memories", columns_of=_entry_columns,
    content=("text", "kind", "tags", "created_at", "thread"), named_by="key",
    indexed=("text",), embedded=("text",), ref=MemoryRef,
)  # fmt: skip
_EXPERIENCE: Final = FamilyRules(
    family="experience", searchable=True, vector_channel=False, own_scope_only=False,
    scored=False, time_channel=False, neighbour_channel=False, speakers=False,
    default_tier="full",
    body_on_demand=False, bare_citation=False,
    id_field="id", version_field="revision",
    default_selected=True, max_section_limit=2, interleave_rank=1,
    candidates_limit="experience_candidates", items_limit="experience_items",
    record_type=Experience, write_name="add_experiences", columns_of=_experience_columns,
    content=("text",), named_by="key",
    indexed=("text",), embedded=(), ref=functools.partial(RecordRef, "experience"),
)  # fmt: skip
_TOPIC_MEMORY: Final = FamilyRules(
    family="topic-memory", searchable=True, vector_channel=True, own_scope_only=True,
    scored=True, time_channel=False, neighbour_channel=False, speakers=False,
    default_tier="full",
    body_on_demand=False, bare_citation=False,
    id_field="id", version_field="revision",
    default_selected=True, max_section_limit=8, interleave_rank=2,
    candidates_limit="topic_memory_candidates", items_limit="topic_memory_items",
    record_type=TopicMemory, write_name="add_topic_memories", columns_of=_topic_columns,
    content=("title", "text"), named_by="title",
    indexed=("text",), embedded=("text",), ref=functools.partial(RecordRef, "topic-memory"),
)  # fmt: skip
_PROFILE: Final = FamilyRules(
    family="profile", searchable=False, vector_channel=False, own_scope_only=True,
    scored=False, time_channel=False, neighbour_channel=False, speakers=False,
    default_tier="full",
    body_on_demand=False, bare_citation=False,
    id_field=None, version_field=None,
    default_selected=False, max_section_limit=8, interleave_rank=4,
    candidates_limit=None, items_limit=None,
    record_type=Profile, write_name="set_profile", columns_of=_profile_columns,
    content=("text",), named_by="scope",
    indexed=(), embedded=(), ref=None,
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
    record_type=Resource, write_name="add_resources", columns_of=_resource_columns,
    content=("uri", "abstract", "overview", "body"), named_by="uri",
    indexed=("abstract", "overview"), embedded=("abstract", "overview"),
    ref=functools.partial(RecordRef, "resource"),
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
