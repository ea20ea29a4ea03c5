"""The in-process store's side of a copy (``satchel.stores.CopySource`` and
``CopyTarget``): its versions as :class:`~satchel.stores.StoredVersion` values, in key
order, and a stored version back from one, verbatim.

It only converts: the store's methods (``_store.py``) read and change the scopes.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

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
    kept = stored.columns
    return StoredVersion(
        family=stored.family, record_id=stored.record_id, version=stored.version, live=live,
        position=stored.key, key=kept.key, text=kept.text, kind=kept.kind,
        tags=kept.tags or (), created_at=kept.created_at, thread=kept.thread,
        title=kept.title, abstract=kept.abstract, overview=kept.overview, body=kept.body,
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
    """The version as this store keeps one, under ``key`` (as a write keeps one: its
    evidence, analysed terms, unit vector, time and the days it names)."""
    vector = None if version.vector is None or not version.live else unit(version.vector)
    cited = (version.record_id, version.version)
    return Stored.of(key, version.family, scope_id, cited, version.columns(), vector)
