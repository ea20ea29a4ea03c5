"""The in-process store's side of a copy (``satchel.stores.CopySource`` and
``CopyTarget``): its versions as :class:`~satchel.stores.StoredVersion` values, in key
order, and a stored version back from one, verbatim.

It only converts: the store's methods (``_store.py``) read and change the scopes.
"""

from __future__ import annotations

from collections import Counter
from datetime import UTC
from typing import TYPE_CHECKING

from ...vocabulary._analysis import analyse
from ...vocabulary._dates import mentioned_days
from ...vocabulary._evidence import Evidence
from .._copy_protocol import StoredVersion
from ._channels import unit
from ._stored import Stored

if TYPE_CHECKING:
    from ...vocabulary._families import Family
    from ._stored import Scope


def versions_of(scope: Scope, family: Family, after: int, limit: int) -> list[StoredVersion]:
    """At most ``limit`` of the family's versions in ``scope`` past key ``after``, in key
    order (the order they were written)."""
    kept = sorted(
        (stored for (held, _), versions in scope.history.items() if held == family
         for stored in versions if stored.key > after),
        key=lambda stored: stored.key,
    )  # fmt: skip
    live = scope.searchable(family)
    return [as_version(stored, stored.key in live) for stored in kept[:limit]]


def as_version(stored: Stored, live: bool) -> StoredVersion:
    """One stored version as a copy moves it (its vector only while searchable)."""
    record, evidence = stored.record, stored.evidence
    return StoredVersion(
        family=stored.family, record_id=stored.record_id, version=stored.version, live=live,
        position=stored.key, key=stored.caller_key, text=evidence.text,
        kind=None if record is None else record.kind,
        tags=() if record is None else record.tags,
        created_at=None if record is None else record.created_at,
        thread=stored.thread, title=stored.title, abstract=evidence.abstract,
        overview=evidence.overview, body=stored.body,
        vector=stored.vector if live else None,
    )  # fmt: skip


def counted(scope: Scope) -> dict[Family, int]:
    """The scope's versions per family, and its profile as one."""
    counts: Counter[Family] = Counter()
    for (family, _), versions in scope.history.items():
        counts[family] += len(versions)
    if scope.profile is not None:
        counts["profile"] = 1
    return dict(counts)


def holds(scope: Scope, version: StoredVersion) -> bool:
    """Whether ``scope`` holds that version of that record already."""
    kept = scope.history.get((version.family, version.record_id), [])
    return any(stored.version == version.version for stored in kept)


def stored_of(scope_id: str, version: StoredVersion, key: int) -> Stored:
    """The version as this store keeps one, under ``key``: its evidence, analysed terms,
    unit vector, and for a memory its time, thread, days named and exact record."""
    said = version.created_at
    evidence = Evidence.from_record(
        version.family, scope_id, version.record_id, version.version, text=version.text,
        abstract=version.abstract, overview=version.overview, created_at=said,
        thread=version.thread,
    )  # fmt: skip
    terms = analyse(version.searched())
    memory = version.family == "memory"
    return Stored(
        key=key, family=version.family, record_id=version.record_id, version=version.version,
        evidence=evidence, caller_key=version.key,
        content_hash=None if version.key is None else version.content_hash(),
        terms=Counter(terms), length=len(terms),
        vector=None if version.vector is None or not version.live else unit(version.vector),
        title=version.title, said_at=None if said is None else said.timestamp(),
        thread=version.thread,
        mentions=() if said is None else tuple(
            mentioned_days(version.text or "", said.astimezone(UTC).date())
        ),
        record=version.memory_record(scope_id) if memory else None, body=version.body,
    )  # fmt: skip
