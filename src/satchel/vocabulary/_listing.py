"""Listing what a store holds: ``satchel.ScopeSummary``, ``satchel.StoredRecord`` and
``satchel.RecordPage``, the page cursor, and :class:`ListedRecord`, what a store hands
the runtime for one listed record.

A listing shows each record once, as its newest version: a memory entry by its latest
version (forgotten when no version of it is searchable), an experience or topic memory
by its latest revision, a resource by its current revision, the profile as itself.
Records come newest first by their *place*: the store's key of the record's first
version. A place never changes (a new version, a forget or an erase of another record
leaves it where it was) and a new record takes a place above every one a walk has seen,
so a cursor, which is the place of the last record listed, resumes exactly after it:
no record is skipped nor listed twice, however the scope changes between pages. The
profile has no place in the write order; it comes last (place 0).

Pure values and validation: no I/O.
"""

from __future__ import annotations

import base64
import binascii
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final

import attrs

from ._citations import Citation
from ._errors import InvalidRequestError
from ._families import FAMILIES, FAMILY_RULES

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence
    from datetime import datetime

    from ._families import Family
    from ._records import Columns

#: Records per page when the caller names no limit, and the most a page may hold.
DEFAULT_PAGE: Final = 100
MAX_PAGE: Final = 1000
#: The place of the profile: below every record key (keys start at 1).
PROFILE_PLACE: Final = 0
#: What every cursor starts with: a cursor is opaque, but one from another format (or
#: mangled on its way) is refused rather than misread.
_CURSOR_PREFIX: Final = "p1."


def _read_only(value: Mapping[Any, int]) -> Mapping[str, int]:
    """A read-only copy (a family name maps to a count)."""
    return MappingProxyType(dict(value))


def _records(value: Iterable[StoredRecord]) -> tuple[StoredRecord, ...]:
    return tuple(value)


@attrs.frozen
class ScopeSummary:
    """One scope as :meth:`satchel.Runtime.list_scopes` lists it.

    Attributes:
        scope_id: the scope.
        records: its searchable records per family (a profile counts 1); a family with
            none is absent, so a scope whose every entry was forgotten maps nothing.
        updated_at: when anything in the scope was last written, updated or forgotten
            (UTC); None when the store recorded no time (a database written by a satchel
            before listing).
    """

    scope_id: str
    records: Mapping[str, int] = attrs.field(converter=_read_only)
    updated_at: datetime | None


@attrs.frozen
class StoredRecord:
    """One record as a listing shows it: its newest version.

    Attributes:
        citation: that version's exact citation, as a pack cites it (what
            :meth:`satchel.Runtime.erase` takes, and ``get_memory`` for a memory entry).
        text: what it reads as: a memory entry's text; an experience as a pack renders
            it (``Situation: ...``); a topic memory's title and text; a resource's
            abstract and overview (its URI when it has neither; never its body); the
            profile's text.
        created_at: when the remembered thing was said or observed, as the record says
            (a memory entry's ``created_at``); None when it says nothing.
        key: the caller's idempotency key, if the record was written with one.
        forgotten: the entry was forgotten: it stays readable but is never served.
    """

    citation: Citation
    text: str
    created_at: datetime | None
    key: str | None
    forgotten: bool


@attrs.frozen
class RecordPage:
    """One page of :meth:`satchel.Runtime.list_records`.

    Attributes:
        records: the page's records, newest first.
        cursor: what to pass as ``cursor`` for the next page; None on the last one.
    """

    records: tuple[StoredRecord, ...] = attrs.field(converter=_records)
    cursor: str | None


@attrs.frozen
class ListedRecord:
    """One record as a store lists it (``satchel.stores.RecordStore.list_records``).

    Attributes:
        place: the store's key of the record's first version (0 for the profile): the
            order of a listing, newest (highest) first, and what a cursor holds.
        family: its family.
        record_id: the entry id, record id or URI; None for the profile.
        version: its newest version or revision (None for the profile).
        columns: what that version keeps.
        forgotten: no version of it is searchable (a forgotten memory entry).
    """

    place: int
    family: Family
    record_id: str | None
    version: int | None
    columns: Columns
    forgotten: bool = False

    def stored_record(self, scope_id: str) -> StoredRecord:
        """The record as the public listing shows it."""
        family_rules = FAMILY_RULES[self.family]
        version = self.version if family_rules.version_field else None
        kept = self.columns
        return StoredRecord(
            citation=Citation(self.family, scope_id, self.record_id, version),
            text=readable_text(kept),
            created_at=kept.created_at,
            key=kept.key,
            forgotten=self.forgotten,
        )


def readable_text(columns: Columns) -> str:
    """A version's text as a listing shows it: its ``text`` column where its family
    keeps one, else (a resource) its abstract and overview, else its URI."""
    if columns.text is not None:
        return columns.text
    summaries = "\n\n".join(filter(None, (columns.abstract, columns.overview)))
    return summaries or columns.uri or ""


def listed_families(family: object) -> tuple[Family, ...]:
    """The families a listing of ``family`` covers (None: every family).

    Raises:
        InvalidRequestError: ``family`` is no family's name.
    """
    if family is None:
        return FAMILIES
    if not isinstance(family, str) or family not in FAMILY_RULES:
        raise InvalidRequestError(f"family must be one of {', '.join(FAMILIES)} (got {family!r})")
    return (family,)


def validate_limit(value: object) -> int:
    """A page size: an integer 1..:data:`MAX_PAGE`."""
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_PAGE:
        raise InvalidRequestError(f"limit must be an integer 1..{MAX_PAGE} (got {value!r})")
    return value


def validate_flag(value: object, field: str) -> bool:
    if not isinstance(value, bool):
        raise InvalidRequestError(f"{field} must be true or false (got {value!r})")
    return value


def cursor_of(place: int) -> str:
    """The opaque cursor that resumes a listing after the record at ``place``."""
    return base64.urlsafe_b64encode(f"{_CURSOR_PREFIX}{place}".encode()).decode().rstrip("=")


def place_of(cursor: object) -> int | None:
    """The place a cursor resumes after (None: no cursor, the first page).

    Raises:
        InvalidRequestError: ``cursor`` is not a cursor a listing returned.
    """
    if cursor is None:
        return None
    if not isinstance(cursor, str) or not cursor or len(cursor) > 64:
        raise InvalidRequestError("cursor is malformed: pass the cursor a page returned")
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        decoded = base64.urlsafe_b64decode(padded.encode("ascii")).decode("ascii")
    except (binascii.Error, UnicodeError, ValueError):
        decoded = ""
    digits = decoded.removeprefix(_CURSOR_PREFIX)
    if decoded == digits or not digits.isdigit() or not digits.isascii() or int(digits) < 1:
        raise InvalidRequestError("cursor is malformed: pass the cursor a page returned")
    return int(digits)


def page_of(scope_id: str, listed: Sequence[ListedRecord], limit: int) -> RecordPage:
    """The page of at most ``limit`` records from what a store listed (asked for one
    more than ``limit``, so a further record says another page follows)."""
    shown = listed[:limit]
    more = len(listed) > limit and shown[-1].place > PROFILE_PLACE
    return RecordPage(
        records=tuple(record.stored_record(scope_id) for record in shown),
        cursor=cursor_of(shown[-1].place) if more else None,
    )
