"""The records an agent keeps, one family each, what a version of one keeps
(:class:`Columns`), and the references that cite them.

Constructors only normalise (tags to a tuple; a value that is not iterable is kept as
given); validation happens when a record is written, so the error can name the field's
position in the batch (``entries[2].text``, ``entries[0].tags``). How each family is
written, searched and served is its row of the family table (``_families``), which reads
this module; this module reads nothing of satchel.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Literal, TypeAlias, cast

import attrs

if TYPE_CHECKING:
    from collections.abc import Mapping
    from datetime import datetime

#: The memory families: one kind of record each (the profile is one per scope).
Family: TypeAlias = Literal["memory", "experience", "topic-memory", "profile", "resource"]


def _tuple_of_str(value: Iterable[str] | str) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    if not isinstance(value, Iterable):
        # Kept as given: the write then names it (``entries[0].tags``).
        return cast("tuple[str, ...]", value)
    return tuple(value)


@attrs.frozen
class MemoryEntry:
    """One remembered thing. Versions are immutable; an update makes a new version."""

    text: str
    kind: str = "fact"
    tags: tuple[str, ...] = attrs.field(default=(), converter=_tuple_of_str)
    created_at: datetime | None = None
    thread: str | None = None
    #: The caller's idempotency key, unique per scope and family: the same key with the
    #: same content writes nothing and returns the existing reference (a forgotten one
    #: stays forgotten); with new content it writes a new, live version of that entry.
    key: str | None = None


@attrs.frozen
class Experience:
    """What happened when the agent acted: searched lexically only."""

    situation: str
    action: str
    outcome: str
    lesson: str
    #: The caller's idempotency key (see :class:`MemoryEntry`): a new revision on change.
    key: str | None = None


@attrs.frozen
class TopicMemory:
    """A note on one topic; writing the same title (or key) again makes a new revision."""

    title: str
    text: str
    #: The caller's idempotency key (see :class:`MemoryEntry`): it, not the title, then
    #: names the note.
    key: str | None = None


@attrs.frozen
class Profile:
    """The scope's profile: read with every request that selects it, never searched."""

    text: str


@attrs.frozen
class Resource:
    """A document cited by URI; searched on its abstract and overview, never its body."""

    uri: str
    body: str
    abstract: str | None = None
    overview: str | None = None
    #: The caller's idempotency key (see :class:`MemoryEntry`).
    key: str | None = None


#: A record of any family, as a write takes it.
Record: TypeAlias = "MemoryEntry | Experience | TopicMemory | Resource | Profile"


@attrs.frozen
class Columns:
    """What one version of a record keeps, in the columns every store has: a family
    fills those its row of the family table names (``FamilyRules.content``) and leaves
    the others None. Stores write and read records as these, whatever their family.

    Attributes:
        text: what it reads as (a memory's text; an experience's or topic memory's
            text as rendered, ``Situation: ...``, ``title\\n\\ntext``; a profile's).
        kind, tags, created_at, thread: a memory entry's (tags None in other families).
        title: a topic memory's.
        uri: a resource's: its name, and its record id.
        abstract, overview, body: a resource's.
        key: the caller's idempotency key: kept, never compared.
    """

    text: str | None = None
    kind: str | None = None
    tags: tuple[str, ...] | None = None
    created_at: datetime | None = None
    thread: str | None = None
    title: str | None = None
    uri: str | None = None
    abstract: str | None = None
    overview: str | None = None
    body: str | None = None
    key: str | None = None

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> Columns:
        """The columns a mapping of column names holds (a name it lacks: None)."""
        return cls(
            text=row.get("text"), kind=row.get("kind"), tags=row.get("tags"),
            created_at=row.get("created_at"), thread=row.get("thread"),
            title=row.get("title"), uri=row.get("uri"), abstract=row.get("abstract"),
            overview=row.get("overview"), body=row.get("body"), key=row.get("key"),
        )  # fmt: skip


@attrs.frozen
class MemoryRef:
    """Exactly one version of one memory entry, as cited in a prepared context."""

    scope_id: str
    entry_id: str
    version: int


@attrs.frozen
class RecordRef:
    """One revision of an experience, topic memory or resource."""

    family: Family
    scope_id: str
    id: str
    revision: int


#: What a write returns per record: a memory entry's version, another record's revision.
Ref: TypeAlias = "MemoryRef | RecordRef"


@attrs.frozen
class MemoryRecord:
    """A memory entry version read back by :meth:`Runtime.get_memory`."""

    ref: MemoryRef
    text: str
    kind: str
    tags: tuple[str, ...]
    created_at: datetime | None
    thread: str | None
    key: str | None = None


def experience_text(experience: Experience) -> str:
    """How an experience reads in a context pack and in the full-text index."""
    return (
        f"Situation: {experience.situation}\nAction: {experience.action}\n"
        f"Outcome: {experience.outcome}\nLesson: {experience.lesson}"
    )


def topic_text(topic: TopicMemory) -> str:
    """How a topic memory reads in a context pack and in the full-text index."""
    return f"{topic.title}\n\n{topic.text}"


def resource_text(abstract: str | None, overview: str | None, uri: str) -> str:
    """What a resource is embedded on: its abstract and overview, else its URI."""
    return " ".join(filter(None, (abstract, overview))) or uri
