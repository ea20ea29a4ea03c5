"""The record rules every store keeps, decided once: the stores below them only move rows.

- **The write's door** (:func:`check_write`): the records are of the family's type, the
  vectors are there exactly when the family has a vector channel, a profile comes alone.
  A store writes every family through one path driven by the family table
  (``satchel.vocabulary.FamilyRules``): a record is kept as its
  :class:`~satchel.vocabulary.Columns` (``columns_of``).
- **Idempotency.** A store looks up the latest version its caller's key names, live or
  forgotten (a :class:`Live`), and :func:`decide` says what the write is: ``unchanged``
  (nothing to write, the existing reference returned, even a forgotten one: forget is
  forever, for the content of every version the forgotten record ever had),
  ``new-version`` (retire that version if it is live, write the next) or ``new``.
  Content is compared by :func:`content_hash`, one hash of the columns the family's
  content names (:func:`content_of`; a time as its instant), whatever the store keeps.
- **Names.** Without a key's version, a topic memory's title names the record
  (:func:`by_title`) and a resource's URI always does (:func:`by_uri`): a live holder of
  the name is replaced by its next version. ``_placing`` asks a store for each and
  applies these, once for all three stores.
- **What a write returns** (:func:`ref_of`: the family's reference), a stored
  version's columns read back (:func:`columns_from`), the embedder and vector checks
  (:func:`check_vectors`, :func:`check_query_vector`, :func:`check_embedder`), the
  decoding of a stored memory version (:func:`memory_record`) and the messages stores
  raise with.
- **Erasure.** What a store keeps of an erased memory entry (:func:`tombstone`: a hash,
  no content) so that :func:`erased` can say so, and that a copy never writes back
  (:func:`tombstones_of`), and how many records an erased scope held
  (:func:`records_in`).

It is pure: it never does I/O, awaits, reads a clock or keeps state, and knows nothing of
a store's tables; each store finds what the rules ask for and writes what they decide.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Generic, Literal, TypeAlias, TypeVar, cast

import attrs

from ..vocabulary._errors import NotFoundError, StoreError
from ..vocabulary._families import FAMILY_RULES, FamilyRules, rules
from ..vocabulary._records import Columns, MemoryRecord
from ..vocabulary._refs import compact_id

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

    import numpy as np
    import numpy.typing as npt

    from ..vocabulary._families import Family
    from ..vocabulary._records import MemoryRef, Record, Ref

    Vectors = npt.NDArray[np.float32]

#: The store's own handle on a stored version (a SQLite row, an OceanBase key, ...).
H = TypeVar("H")

#: What a write does: nothing, the next version of a record, or a new record.
WriteKind: TypeAlias = Literal["unchanged", "new-version", "new"]

#: What an idempotency key compares of a record, in order (hashed by
#: :func:`content_hash`).
Content: TypeAlias = tuple[str | tuple[str, ...] | None, ...]


@attrs.frozen
class Live(Generic[H]):
    """A version a store found by its caller's key, title or URI: a searchable one, or
    (by key only) a forgotten record's last version."""

    handle: H  # the store's own name for it, for the retirement a decision asks for
    record_id: str  # entry id, record id, or URI
    version: int  # its version (memory) or revision (the other families)
    content_hash: str | None = None  # None when not looked up by key
    live: bool = True  # False: its record was forgotten (it left search with no successor)
    #: A forgotten record's every version: content hash -> the version that held it.
    earlier: Mapping[str, int] = attrs.field(factory=dict)


@attrs.frozen
class WriteDecision(Generic[H]):
    """What one record of a write does: its id and version, and the searchable version
    it replaces (which leaves search first), if any."""

    kind: WriteKind
    record_id: str
    version: int
    retire: H | None = None

    @property
    def writes(self) -> bool:
        """Whether a new version is written (everything but ``unchanged``)."""
        return self.kind != "unchanged"


def decide(found: Live[H] | None, content_hash: str) -> WriteDecision[H]:
    """What a caller's key makes of a write, given the latest version that holds the
    key (live, or its forgotten record's last one): ``new`` (a fresh id, version 1) when
    none does; ``unchanged`` when it holds exactly this content, live or forgotten, or
    is forgotten and any earlier version of it held this content (forget is forever:
    that version's reference, nothing written, nothing served); else ``new-version``,
    the record's next version, live, replacing the found one if it is live (a forgotten
    one has left search already)."""
    if found is None:
        return WriteDecision("new", new_record_id(), 1)
    if found.content_hash == content_hash:
        return WriteDecision("unchanged", found.record_id, found.version)
    if not found.live and content_hash in found.earlier:
        return WriteDecision("unchanged", found.record_id, found.earlier[content_hash])
    retire = found.handle if found.live else None
    return WriteDecision("new-version", found.record_id, found.version + 1, retire)


def by_title(holder: Live[H] | None) -> WriteDecision[H]:
    """A topic memory no key decided: the live one with its title gets its next
    revision, else it is new."""
    if holder is None:
        return WriteDecision("new", new_record_id(), 1)
    return WriteDecision("new-version", holder.record_id, holder.version + 1, holder.handle)


def by_uri(uri: str, holder: Live[H] | None, latest: int) -> WriteDecision[H]:
    """A resource at ``uri``: the live one there is replaced by its next revision;
    with none live, the URI's next revision after ``latest`` (0 if it never held one)."""
    if holder is None:
        return WriteDecision("new" if latest == 0 else "new-version", uri, latest + 1)
    return WriteDecision("new-version", uri, holder.version + 1, holder.handle)


def ref_of(family: Family, scope_id: str, decision: WriteDecision[H]) -> Ref:
    """The reference a write returns for one record of ``family`` (its table row's
    ``ref``: a memory entry's version, another record's revision)."""
    make = rules(family).ref
    assert make is not None, f"a write of {family} returns no reference"
    return make(scope_id, decision.record_id, decision.version)


def new_record_id() -> str:
    """A fresh record id."""
    return uuid.uuid4().hex


# -- content ------------------------------------------------------------------------------


def check_write(family: Family, records: Sequence[Record], vectors: object) -> FamilyRules:
    """Refuse a write no store makes, before it changes anything: records of another
    type than the family's, vectors for a family with no vector channel or none for
    one that has, or a profile write of other than one profile.

    Returns:
        The family's rules, which the write then follows.

    Raises:
        StoreError: naming what is wrong.
    """
    if family not in FAMILY_RULES:
        raise StoreError(f"no family {family!r}: one of {', '.join(FAMILY_RULES)}")
    family_rules = FAMILY_RULES[family]
    # The records' types, collected in C: a Python test of each of 36,187 records held
    # the host's loop 1.7 ms.
    kinds = set(map(type, records))
    other = next((kind for kind in kinds if not issubclass(kind, family_rules.record_type)), None)
    if other is not None:
        raise StoreError(f"a {family} write holds a {other.__name__}")
    if family_rules.vector_channel and vectors is None:
        raise StoreError(f"a {family} write needs one vector per record")
    if not family_rules.vector_channel and vectors is not None:
        raise StoreError(f"{family} records have no vectors; a write of them takes none")
    if family_rules.named_by == "scope" and len(records) != 1:
        raise StoreError(f"a {family} write holds exactly one {family}, not {len(records)}")
    return family_rules


def content_of(family: Family, columns: Columns) -> Content:
    """What an idempotency key compares of a version: the columns its family's content
    names (``FamilyRules.content``), in order: a memory entry's text, kind, tags, time
    as written and thread; an experience's text; a topic memory's title and text; a
    resource's URI, summaries and body. A time is compared as its instant (one moment
    written with two UTC offsets is one content), tags as a tuple."""
    return tuple(_compared(field, getattr(columns, field)) for field in rules(family).content)


def _compared(field: str, value: object) -> str | tuple[str, ...] | None:
    if value is None:
        return None
    if field == "created_at":
        assert isinstance(value, datetime)
        return instant(value.isoformat())
    if field == "tags":
        return tuple(cast("Iterable[str]", value))
    assert isinstance(value, str)
    return value


def instant(said: str | None) -> str | None:
    """A time in ISO format as its instant: in UTC when it has an offset (a naive time
    is kept as written)."""
    if said is None:
        return None
    at = datetime.fromisoformat(said)
    return said if at.tzinfo is None else at.astimezone(UTC).isoformat()


def content_hash(content: Content) -> str:
    """The content's hash: a SHA-256 of its compact JSON (the form the OceanBase
    store keeps in ``content_hash``; a tuple of tags hashes as their list)."""
    encoded = json.dumps(content, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(encoded.encode("utf-8", "surrogatepass")).hexdigest()


def content_hash_of(family: Family, columns: Columns) -> str:
    """The content hash of a version of ``family`` (:func:`content_of`, hashed)."""
    return content_hash(content_of(family, columns))


def columns_from(family: Family, stored: Mapping[str, object], key: str | None) -> Columns:
    """A stored version's columns, from what a store read of it by column name (a
    resource's URI as ``uri``): those its family keeps, tags decoded from their JSON
    and a time from its ISO form when a store kept them so."""
    kept: dict[str, object] = {"key": key}
    for field in rules(family).content:
        value = stored.get(field)
        if field == "tags" and not isinstance(value, tuple):
            value = decode_tags(value)
        elif field == "created_at" and isinstance(value, str):
            value = datetime.fromisoformat(value) if value else None
        kept[field] = value
    return Columns.from_row(kept)


def encode_tags(tags: Sequence[str]) -> str:
    """A memory entry's tags as a stored column: a JSON array."""
    return json.dumps(list(tags), ensure_ascii=False)


def decode_tags(value: object) -> tuple[str, ...]:
    """Stored tags back (none for an empty or missing column)."""
    return tuple(json.loads(value)) if isinstance(value, str | bytes) and value else ()


def memory_record(
    ref: MemoryRef,
    text: str,
    kind: str,
    tags: object,
    created_at: str | None,
    thread: str | None,
    caller_key: str | None,
) -> MemoryRecord:
    """A stored memory version, as ``get_memory`` returns it, from its columns."""
    return MemoryRecord(
        ref=ref,
        text=text,
        kind=kind,
        tags=decode_tags(tags),
        created_at=datetime.fromisoformat(created_at) if created_at else None,
        thread=thread,
        key=caller_key,
    )


# -- vectors and embedders ----------------------------------------------------------------


def check_vectors(vectors: Vectors, count: int, held: int | None) -> int | None:
    """Refuse vectors that do not fit a write of ``count`` records, before it changes
    anything; ``held`` is the dimension the store holds (None: none yet).

    Returns:
        The dimension the store holds once the write is done: the first vectors
        written fix it (an empty write fixes nothing).

    Raises:
        StoreError: not one row per record, or another dimension than the store's.
    """
    if vectors.ndim != 2 or vectors.shape[0] != count:
        raise StoreError(f"expected {count} vectors, got an array of shape {vectors.shape}")
    if count == 0:
        return held
    dimension = int(vectors.shape[1])
    if held not in (None, dimension):
        raise StoreError(
            f"this store holds {held}-dimensional vectors; the embedder produced"
            f" {dimension} dimensions"
        )
    return dimension


def check_query_vector(vector: Vectors, held: int | None) -> None:
    """Refuse a query vector of another dimension than the store's vectors.

    Raises:
        StoreError: naming both dimensions.
    """
    if held is not None and len(vector) != held:
        raise StoreError(
            f"this store holds {held}-dimensional vectors; the query vector has"
            f" {len(vector)} dimensions (was the store built with another embedder?)"
        )


def check_embedder(
    recorded: str | None,
    held: int | None,
    fingerprint: str,
    dimension: int,
    remedy: str = "Open it with the same embedder.",
) -> None:
    """Accept the runtime's embedder, or refuse one that did not build the stored
    vectors: another fingerprint than the ``recorded`` one, or (none recorded, or the
    same one) another dimension than the ``held`` one.

    Raises:
        StoreError: naming the embedder that built the vectors, and ``remedy``.
    """
    if recorded == fingerprint and held not in (None, dimension):
        raise StoreError(
            f"this store holds vectors of {held} values, though {fingerprint}, which built"
            f" them, gives {dimension}: written by an embedder whose output went unchecked."
            " Rebuild its vectors with `satchel reembed`."
        )
    if recorded not in (None, fingerprint) or held not in (None, dimension):
        built = recorded or f"a {held}-dimensional embedder"
        raise StoreError(
            f"this store's vectors were built by {built}; the runtime was opened with"
            f" {fingerprint}. {remedy}"
        )


# -- messages -----------------------------------------------------------------------------

CLOSED = "the store is closed"


def no_version(ref: MemoryRef) -> NotFoundError:
    """A memory version that does not exist (or a scope or entry that does not)."""
    return NotFoundError(
        f"no version {ref.version} of memory entry {compact_id(ref.entry_id)!r} in scope"
        f" {ref.scope_id!r}"
    )


def forgotten(ref: MemoryRef) -> NotFoundError:
    """An entry that was forgotten, so it has no next version."""
    return NotFoundError(f"memory entry {compact_id(ref.entry_id)!r} was forgotten")


def no_scope(scope_id: str) -> NotFoundError:
    """A scope that holds nothing, asked for a memory entry."""
    return NotFoundError(f"scope {scope_id!r} holds no memory")


def erased(ref: MemoryRef) -> NotFoundError:
    """A memory entry that was erased: none of its versions exists any more."""
    return NotFoundError(
        f"memory entry {compact_id(ref.entry_id)!r} in scope {ref.scope_id!r} was erased;"
        " none of its"
        " versions exists any more"
    )


# -- erasure ------------------------------------------------------------------------------


def tombstone(scope_id: str, entry_id: str) -> str:
    """What a store keeps of an erased memory entry, so that ``get_memory`` can say it
    was erased (:func:`erased`): a SHA-256 of its scope and entry id. It holds no
    content, no key and no date, and names the scope only to someone who knows the
    entry's random id already."""
    named = f"{scope_id}\x00{entry_id}".encode("utf-8", "surrogatepass")
    return hashlib.sha256(named).hexdigest()


def tombstones_of(scope_id: str, family: Family, record_ids: Iterable[str]) -> dict[str, str]:
    """The tombstone each of these records would leave, to its record id: a memory
    entry's (:func:`tombstone`); none for a record of another family."""
    if family != "memory":
        return {}
    return {tombstone(scope_id, record_id): record_id for record_id in record_ids}


def records_in(records: Iterable[tuple[str, str]], profile: bool) -> int:
    """How many records an erased scope held, as ``erase_scope`` counts them: each
    ``(family, record id)`` once however many versions it had, and a profile as one."""
    return len(set(records)) + int(profile)
