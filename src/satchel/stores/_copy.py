"""``copy_store``: every record of one store into another, so every citation resolves after.

For each scope, family by family, the source's versions are read in the order it wrote
them (:meth:`~satchel.stores.CopySource.read_versions`) and the ones the target lacks
are written verbatim, a page per transaction: ids, version numbers, keys, dates,
threads, tags, kinds, resource bodies and summaries, and whether each is searchable (a
forgotten entry stays forgotten, a replaced version readable but not searched). Then the
scope's profile; and, first of all, the tombstones of erased entries, so ``get_memory``
of an erased entry says erased in the target too.

- **Vectors** are copied as they are when the target's vectors come from the same
  embedder as the source's (the fingerprints the stores recorded); otherwise each
  searchable version is embedded again with the ``embedder`` given, which must be the
  target's.
- **Resuming.** What the target holds of each page's records is read first (by scope,
  family, id and version); a rerun writes only what is missing, so a copy stopped
  anywhere (killed, cancelled, a progress callback that raised) finishes without
  duplicates. A version the target
  holds searchable that the source no longer does (forgotten since) leaves search.
- **Order.** A target writes versions under keys in the order given, so the order of
  every family's versions in a scope, which breaks a search's ties, is the source's.

It reads and writes through the copy protocols only; it never searches, runs no task
and knows nothing of the runtime.
"""

from __future__ import annotations

from collections import Counter
from contextlib import aclosing
from typing import TYPE_CHECKING, Final

import attrs

from ..embedders import check_embedder, embed_checked, fingerprint_of
from ..vocabulary._errors import InvalidRequestError, StoreError
from ..vocabulary._families import FAMILY_RULES
from ..vocabulary._records import Profile
from ..vocabulary._refs import compact_id
from ._copy_protocol import VERSIONED, CopySource, CopyTarget, StoredVersion, VectorOrigin

if TYPE_CHECKING:
    from collections.abc import AsyncGenerator, Callable, Mapping, Sequence

    from ..embedders import Embedder
    from ..vocabulary._families import Family

#: Versions read, and written in one transaction, at a time.
PAGE: Final = 512


@attrs.frozen
class CopyReport:
    """What one :func:`copy_store` call did.

    Attributes:
        scopes: the scopes it copied, sorted.
        records: per family, the records it wrote at least one version of (a scope's
            profile counts one); a family it wrote nothing of is absent.
        versions: per family, the versions it wrote (a profile counts one).
        skipped: per family, the versions (profiles) the target held already: what an
            earlier, interrupted copy wrote.
        vectors_copied: vectors written as the source held them.
        vectors_embedded: vectors embedded again with the ``embedder`` given.
        retired: versions the target held searchable that the source no longer does.
        tombstones: tombstones of erased memory entries new to the target.
    """

    scopes: tuple[str, ...]
    records: Mapping[Family, int]
    versions: Mapping[Family, int]
    skipped: Mapping[Family, int]
    vectors_copied: int = 0
    vectors_embedded: int = 0
    retired: int = 0
    tombstones: int = 0

    @property
    def written(self) -> int:
        """Every version and profile it wrote."""
        return sum(self.versions.values())


async def copy_store(
    source: CopySource,
    target: CopyTarget,
    *,
    scopes: Sequence[str] | None = None,
    progress: Callable[[int, int], object] | None = None,
    embedder: Embedder | None = None,
) -> CopyReport:
    """Copy every record of every family of ``source`` (or of ``scopes``) into ``target``.

    Every version keeps its entry or record id, version number, key, dates, thread,
    tags, kind, summaries, body and searchability; each scope's profile and every erased
    entry's tombstone come along (a tombstone names no scope: all of them are copied).
    A citation made on ``source`` resolves on ``target`` to the same text, and a whole
    store copied into an empty one of the same kind gives byte-identical packs. Run it
    while nothing writes to ``source``. Run it again after an interruption: it writes
    only what ``target`` lacks.

    Args:
        source: the store to read (any :class:`~satchel.stores.CopySource`; every
            satchel store is one).
        target: the store to write (any :class:`~satchel.stores.CopyTarget`).
        scopes: the scopes to copy; every scope of ``source`` when None.
        progress: called after each page as ``progress(done, total)``, counting
            versions and profiles, those the target held already included. An
            exception it raises stops the copy (what was written stays; run again to
            finish).
        embedder: the embedder of ``target``'s vectors, needed only when they do not
            come from the embedder that built ``source``'s (the fingerprints differ):
            each searchable version is then embedded again with it.

    Returns:
        What it wrote and skipped (:class:`CopyReport`).

    Raises:
        InvalidRequestError: an argument is malformed, ``scopes`` names a scope the
            source does not hold, or the vectors need embedding again and no
            ``embedder`` (or one the target refuses) was given.
        StoreError: a store failed; what was written before stays.
    """
    _check_stores(source, target)
    if progress is not None and not callable(progress):
        raise InvalidRequestError("progress must be a callable (done, total) or None")
    chosen = await _chosen_scopes(source, scopes)
    writer = await RecordWriter.into(target, await source.vectors_built_by(), embedder, progress)
    writer.expect(await count_versions(source, chosen))
    await writer.keep_tombstones(await source.read_tombstones())
    async with aclosing(read_records(source, chosen)) as batches:
        async for batch in batches:
            await writer.write(batch)
    return writer.report(tuple(chosen))


async def count_versions(source: CopySource, scopes: Sequence[str]) -> int:
    """Every version and profile ``source`` holds in ``scopes``: a copy's total."""
    return sum([sum((await source.count_versions(scope)).values()) for scope in scopes])


def _check_stores(source: object, target: object) -> None:
    if source is target:
        raise InvalidRequestError("source and target must be two stores, not the same one")
    if not isinstance(source, CopySource):
        raise InvalidRequestError("source must be a store that can be copied from (CopySource)")
    if not isinstance(target, CopyTarget):
        raise InvalidRequestError("target must be a store that can be copied into (CopyTarget)")


async def _chosen_scopes(source: CopySource, scopes: object) -> list[str]:
    held = list(await source.copy_scopes())
    if scopes is None:
        return held
    if isinstance(scopes, str) or not isinstance(scopes, list | tuple | set | frozenset):
        raise InvalidRequestError("scopes must be a list of scope ids, or None for every scope")
    known = set(held)
    missing = sorted({scope for scope in scopes if scope not in known}, key=str)
    if missing:
        raise InvalidRequestError(f"scopes: the source holds no scope {missing[0]!r}")
    return sorted(set(scopes))


@attrs.frozen
class _VectorPlan:
    """Whether vectors travel as they are or are embedded again, and the fingerprint
    the target records with them."""

    reuse: bool
    fingerprint: str | None
    embedder: Embedder | None = None

    @classmethod
    def between(
        cls, built: VectorOrigin, held: VectorOrigin, embedder: Embedder | None, origin: str
    ) -> _VectorPlan:
        """The plan for versions whose vectors ``built`` made (``origin`` names where
        they come from: "the source", "the archive"), written into a target whose
        vectors ``held`` made: the target's vectors keep one embedder (the one that
        built them, else the ``embedder`` given, else the versions')."""
        if embedder is not None:
            given = VectorOrigin(fingerprint_of(embedder), embedder.dimension)
            if not _may_join(held, given):
                raise InvalidRequestError(
                    f"embedder: the target's vectors were built by {_named(held)}, not by"
                    f" the embedder given ({_named(given)}); pass the target's embedder"
                )
            return cls(built.dimension is None or built == given, given.fingerprint, embedder)
        if built.dimension is None:  # no vector travels: nothing to embed
            return cls(True, held.fingerprint)
        if held == built or (held.dimension is None and _may_join(held, built)):
            return cls(True, built.fingerprint)
        raise InvalidRequestError(
            f"embedder: {origin}'s vectors were built by {_named(built)}, the target's"
            f" by {_named(held)}; pass the target's embedder (embedder=...) to embed the"
            " copied records again"
        )


def _may_join(store: VectorOrigin, vectors: VectorOrigin) -> bool:
    """Whether ``vectors`` may be written into a store whose vectors came from ``store``."""
    return store.fingerprint in (None, vectors.fingerprint) and store.dimension in (
        None,
        vectors.dimension,
    )


def _named(origin: VectorOrigin) -> str:
    return origin.fingerprint or f"an unrecorded {origin.dimension}-dimensional embedder"


@attrs.define
class _Tally:
    """The running counts of a copy, reported to ``progress`` after each page."""

    progress: Callable[[int, int], object] | None
    total: int = 0
    done: int = 0
    versions: Counter[Family] = attrs.Factory(Counter)
    records: Counter[Family] = attrs.Factory(Counter)
    skipped: Counter[Family] = attrs.Factory(Counter)
    copied_vectors: int = 0
    embedded_vectors: int = 0
    retired: int = 0
    tombstones: int = 0

    def advance(self, count: int) -> None:
        self.done += count
        if self.progress is not None:
            self.progress(self.done, self.total)

    def report(self, scopes: tuple[str, ...]) -> CopyReport:
        return CopyReport(
            scopes, _counts(self.records), _counts(self.versions), _counts(self.skipped),
            self.copied_vectors, self.embedded_vectors, self.retired, self.tombstones,
        )  # fmt: skip


def _counts(counted: Counter[Family]) -> dict[Family, int]:
    """Per family, in the family table's order; a family with none is absent."""
    return {family: counted[family] for family in FAMILY_RULES if counted[family]}


@attrs.frozen
class Batch:
    """Records in transit, as :func:`read_records` reads them and :class:`RecordWriter`
    writes them: a page of versions of one family of one scope, in the order the
    source wrote them, or (``family`` "profile") a scope's profile text."""

    scope_id: str
    family: Family
    versions: tuple[StoredVersion, ...] = ()
    profile: str | None = None


async def read_records(source: CopySource, scopes: Sequence[str]) -> AsyncGenerator[Batch]:
    """Every version of every versioned family of each scope, a page at a time in the
    order the source wrote them, then the scope's profile: what a copy and an archive
    carry, in the order they carry it. Holds one page at a time. Iterate it under
    ``contextlib.aclosing``, so a stop between pages closes it at once."""
    for scope_id in scopes:
        for family in VERSIONED:
            after = 0
            while page := await source.read_versions(scope_id, family, after=after, limit=PAGE):
                after = page[-1].position
                yield Batch(scope_id, family, tuple(page))
        profile = await source.get_profile(scope_id)
        if profile is not None:
            assert profile.text is not None
            yield Batch(scope_id, "profile", profile=profile.text)


@attrs.define
class RecordWriter:
    """Writes :class:`Batch` es into a target as a copy and an import do: what the target
    holds of a page's records is read first and only what it lacks is written, so a
    rerun after an interruption writes nothing twice; vectors are copied or embedded
    again as the plan says. Counts what it does for the report and for ``progress``."""

    target: CopyTarget
    plan: _VectorPlan
    tally: _Tally
    _at: tuple[str, Family] | None = None
    _written: set[str] = attrs.Factory(set)

    @classmethod
    async def into(
        cls,
        target: CopyTarget,
        built: VectorOrigin,
        embedder: Embedder | None,
        progress: Callable[[int, int], object] | None,
        *,
        origin: str = "the source",
    ) -> RecordWriter:
        """A writer into ``target`` of versions whose vectors ``built`` made.

        Raises:
            InvalidRequestError: the vectors need embedding again and no ``embedder``
                (or one the target refuses) was given.
        """
        if embedder is not None:
            embedder = check_embedder(embedder, "embedder")
        held = await target.vectors_built_by()
        return cls(target, _VectorPlan.between(built, held, embedder, origin), _Tally(progress))

    def expect(self, total: int) -> None:
        """Set the total that ``progress`` counts up to."""
        self.tally.total = total

    async def keep_tombstones(self, tombstones: Sequence[str]) -> None:
        """Keep tombstones of erased entries in the target (those it lacks are new)."""
        self.tally.tombstones += await self.target.keep_tombstones(tombstones)

    async def write(self, batch: Batch) -> None:
        """Write what the target lacks of one batch, then report progress."""
        if (batch.scope_id, batch.family) != self._at:
            self._count_records()
            self._at = (batch.scope_id, batch.family)
        if batch.profile is not None:
            await self._write_profile(batch.scope_id, batch.profile)
            self.tally.advance(1)
        elif batch.versions:
            page = batch.versions
            self._written.update(await _copy_page(self.target, batch, self.plan, self.tally))
            self.tally.advance(len(page))

    def report(self, scopes: tuple[str, ...]) -> CopyReport:
        """What it wrote and skipped, once every batch was written."""
        self._count_records()
        self._at = None
        return self.tally.report(scopes)

    def _count_records(self) -> None:
        if self._at is not None:
            self.tally.records[self._at[1]] += len(self._written)
        self._written.clear()

    async def _write_profile(self, scope_id: str, text: str) -> None:
        kept = await self.target.get_profile(scope_id)
        if kept is not None and kept.text == text:
            self.tally.skipped["profile"] += 1
            return
        await self.target.write("profile", scope_id, [Profile(text)])
        self.tally.versions["profile"] += 1
        self.tally.records["profile"] += 1


async def _copy_page(
    target: CopyTarget, batch: Batch, plan: _VectorPlan, tally: _Tally
) -> set[str]:
    """One page: what the target holds searchable and the source no longer does leaves
    search; what it lacks is written, its vectors copied or embedded again. Returns the
    ids of the records it wrote a version of."""
    scope_id, family, page = batch.scope_id, batch.family, batch.versions
    records = sorted({version.record_id for version in page})
    held = await target.held_versions(scope_id, family, records)
    stale = [(v.record_id, v.version) for v in page if held.get(_id(v)) and not v.live]
    if stale:
        tally.retired += await target.retire_versions(scope_id, family, stale)
    missing = [version for version in page if _id(version) not in held]
    tally.skipped[family] += len(page) - len(missing)
    if not missing:
        return set()
    missing = await _with_vectors(missing, plan, tally)
    written = await target.write_versions(scope_id, family, missing, fingerprint=plan.fingerprint)
    tally.versions[family] += written
    tally.skipped[family] += len(missing) - written  # written meanwhile by another copy
    return {version.record_id for version in missing}


def _id(version: StoredVersion) -> tuple[str, int]:
    return (version.record_id, version.version)


async def _with_vectors(
    versions: list[StoredVersion], plan: _VectorPlan, tally: _Tally
) -> list[StoredVersion]:
    """The versions as the target writes them: a searchable version of a vector
    family keeps its vector, or is embedded again when the plan says so (or when the
    source kept none for it); every other version carries none."""
    embeds = FAMILY_RULES[versions[0].family].vector_channel
    again = [
        at
        for at, version in enumerate(versions)
        if embeds and version.live and (not plan.reuse or version.vector is None)
    ]
    if again and plan.embedder is None:
        lacking = versions[again[0]]
        raise StoreError(
            f"the source kept no vector of {lacking.family}"
            f" {compact_id(lacking.record_id)!r} version {lacking.version}; pass an embedder"
            " to embed it again"
        )
    result = [attrs.evolve(v, vector=None) if not (embeds and v.live) else v for v in versions]
    if again:
        assert plan.embedder is not None
        texts = [versions[at].embedding_text() for at in again]
        fresh = await embed_checked(plan.embedder, texts)
        for at, vector in zip(again, fresh, strict=True):
            result[at] = attrs.evolve(result[at], vector=vector)
    tally.embedded_vectors += len(again)
    tally.copied_vectors += sum(v.vector is not None for v in result) - len(again)
    return result
