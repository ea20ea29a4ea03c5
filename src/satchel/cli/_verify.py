"""``satchel copy --verify``: both stores opened afresh, surveyed alike, and compared.

A survey of a store reads, for the copied scopes, its versions per family (searchable
or not, and the profile), its searchable records (``scope_counts``) and its tombstones;
a sample of memory versions read back exactly (``get_memory``); and a sample of
prepares, run by a runtime over the store with the embedder that built its vectors.
The sample is drawn from the source and asked of both. Packs are compared byte for
byte when both stores are of the same kind and share an embedder; otherwise (another
engine ranks by its own full-text scoring, another embedder by its own vectors) every
citation of the source's packs must resolve in the target to the same version.

The stores are surveyed one after the other, never open at once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urlsplit

import attrs

import satchel
from satchel.embedders import fingerprint_of, from_spec

from .._wire import compact_id

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Sequence

#: Scopes a survey samples, memory versions it reads back per scope, prepares per scope.
SAMPLED_SCOPES: Final = 8
SAMPLED_VERSIONS: Final = 8
SAMPLED_QUERIES: Final = 3
#: Built-in embedders tried for a store that recorded one (the cheap one first).
BUILT_IN: Final = ("hashing", "static")
#: Store kinds by URL scheme: stores of one kind rank alike.
KINDS: Final = {"sqlite": "sqlite", "seekdb": "oceanbase", "oceanbase": "oceanbase"}
#: Every family in one section each: a prepare that reads all of them.
EVERY_FAMILY: Final = satchel.Assembly(
    (
        satchel.Section("memory", 3),
        satchel.Section("experience", 1),
        satchel.Section("topic-memory", 2),
        satchel.Section("profile", 1),
        satchel.Section("resource", 1),
    )
)


@attrs.define
class Verification:
    """What ``--verify`` checked (one line each) and every difference it found."""

    checked: list[str] = attrs.Factory(list)
    problems: list[str] = attrs.Factory(list)


@attrs.define
class Sample:
    """What both surveys read back: memory versions and prepares (from the source)."""

    refs: list[satchel.MemoryRef] = attrs.Factory(list)
    requests: list[satchel.PrepareContextRequest] = attrs.Factory(list)
    #: What the source's packs cite (once its survey ran).
    citations: list[satchel.Citation] = attrs.Factory(list)


@attrs.define
class Survey:
    """One store as ``--verify`` saw it."""

    counts: dict[str, dict[str, int]]
    searchable: dict[str, dict[str, int]]
    tombstones: set[str]
    #: Per cited (scope, family), the versions held of the cited records.
    held: dict[tuple[str, str], dict[tuple[str, int], bool]]
    fingerprint: str | None
    records: dict[satchel.MemoryRef, object] = attrs.Factory(dict)
    packs: list[str | None] | None = None  # None: no embedder to prepare with


async def verify(
    source: str, target: str, report: satchel.stores.CopyReport, spec: str | None
) -> Verification:
    """Survey ``source`` (drawing the sample), then ``target``, and compare them."""
    sample = Sample()
    before = await survey(source, report.scopes, spec, sample, draw=True)
    after = await survey(target, report.scopes, spec, sample, draw=False)
    same_kind = _kind(source) == _kind(target)
    return compare(before, after, report.scopes, sample, same_kind=same_kind)


def _kind(url: str) -> str:
    scheme = urlsplit(url).scheme
    return KINDS.get(scheme, scheme)


async def survey(
    url: str, scopes: Sequence[str], spec: str | None, sample: Sample, *, draw: bool
) -> Survey:
    """Read ``url``'s store for ``scopes``; with ``draw``, fill ``sample`` from it
    first (and add the memory citations of its packs to it after)."""
    store: Any = await satchel.stores.open_store(url)
    try:
        if draw:
            await _draw(store, scopes, sample)
        origin = await store.vectors_built_by()
        found = Survey(
            counts={scope: dict(await store.count_versions(scope)) for scope in scopes},
            searchable={
                scope: dict(counts)
                for scope, counts in (await store.scope_counts()).items()
                if scope in scopes
            },
            tombstones=set(await store.read_tombstones()),
            held=await _held(store, sample.citations),
            fingerprint=origin.fingerprint,
        )
        embedder = _embedder_for(origin, spec)
    except BaseException:
        await store.aclose()
        raise
    if embedder is None:
        try:
            await _read_records(store.get_memory, sample.refs, found)
        finally:
            await store.aclose()
        return found
    async with satchel.open_runtime(store=store, embedder=embedder) as rt:
        found.packs = [(await rt.prepare_context(r)).content for r in sample.requests]
        if draw:
            sample.citations = [
                item.citation for pack in found.packs for item in satchel.parse_context(pack)
            ]
            sample.refs += _cited(sample.citations, sample.refs)
        await _read_records(rt.get_memory, sample.refs, found)
    return found


async def _draw(store: Any, scopes: Sequence[str], sample: Sample) -> None:
    """Memory versions spread over each sampled scope's first page, and prepares
    asking for a few of its searchable texts (one of them over every family)."""
    for scope in _spread(list(scopes), SAMPLED_SCOPES):
        page = await store.read_versions(scope, "memory", after=0, limit=512)
        sample.refs += [
            satchel.MemoryRef(scope, v.record_id, v.version)
            for v in _spread(page, SAMPLED_VERSIONS)
        ]
        said = [v.text for v in page if v.live]
        topics = await store.read_versions(scope, "topic-memory", after=0, limit=8)
        said += [v.title for v in topics if v.live]
        for at, text in enumerate(_spread(said, SAMPLED_QUERIES)):
            query = " ".join(text.split()[:12])[:200]
            sample.requests.append(satchel.PrepareContextRequest(scope_id=scope, query=query))
            if at == 0:
                sample.requests.append(
                    satchel.PrepareContextRequest(
                        scope_id=scope, query=query, assembly=EVERY_FAMILY, max_bytes=4000
                    )
                )


def _spread(items: list[Any], count: int) -> list[Any]:
    """At most ``count`` of ``items``, evenly spaced, the first included."""
    if len(items) <= count:
        return items
    step = len(items) / count
    return [items[int(at * step)] for at in range(count)]


def _embedder_for(origin: Any, spec: str | None) -> satchel.Embedder | None:
    """The embedder that built the store's vectors: ``spec`` or a built-in one whose
    fingerprint the store recorded (any, for a store holding no vector); None when
    none of them did."""
    if origin.dimension is None:
        return from_spec(spec or "hashing")
    for name in ([spec] if spec else []) + [name for name in BUILT_IN if name != spec]:
        try:
            embedder = from_spec(name)
        except satchel.ModelLoadError:
            continue
        if fingerprint_of(embedder) == origin.fingerprint and (
            embedder.dimension == origin.dimension
        ):
            return embedder
    return None


def _cited(
    citations: list[satchel.Citation], known: list[satchel.MemoryRef]
) -> list[satchel.MemoryRef]:
    """The memory versions ``citations`` name that ``known`` lacks, in order."""
    cited: list[satchel.MemoryRef] = []
    for citation in citations:
        if citation.family == "memory" and citation.id is not None:
            ref = satchel.MemoryRef(citation.scope, citation.id, int(citation.version or 0))
            if ref not in known and ref not in cited:
                cited.append(ref)
    return cited


async def _held(
    store: Any, citations: list[satchel.Citation]
) -> dict[tuple[str, str], dict[tuple[str, int], bool]]:
    """The versions ``store`` holds of each cited experience, topic memory and resource."""
    named: dict[tuple[str, str], set[str]] = {}
    for citation in citations:
        if citation.family not in ("memory", "profile") and citation.id is not None:
            named.setdefault((citation.scope, citation.family), set()).add(citation.id)
    return {
        (scope, family): dict(await store.held_versions(scope, family, sorted(ids)))
        for (scope, family), ids in named.items()
    }


async def _read_records(
    get_memory: Callable[[satchel.MemoryRef], Awaitable[satchel.MemoryRecord]],
    refs: list[satchel.MemoryRef],
    survey: Survey,
) -> None:
    """Each version as ``get_memory`` gives it, or the message of its refusal."""
    for ref in refs:
        try:
            survey.records[ref] = await get_memory(ref)
        except satchel.NotFoundError as exc:
            survey.records[ref] = str(exc)


def compare(
    source: Survey, target: Survey, scopes: Sequence[str], sample: Sample, *, same_kind: bool
) -> Verification:
    """Every difference between the two surveys, and a line per thing checked."""
    found = Verification()
    for scope in scopes:
        for family in sorted({*source.counts[scope], *target.counts[scope]}):
            held = (source.counts[scope].get(family, 0), target.counts[scope].get(family, 0))
            if held[0] != held[1]:
                found.problems.append(
                    f"scope {scope!r}: {held[0]:,} {family} versions in SOURCE, {held[1]:,}"
                    " in TARGET"
                )
        if source.searchable.get(scope) != target.searchable.get(scope):
            found.problems.append(f"scope {scope!r}: searchable records differ")
    versions = sum(sum(counts.values()) for counts in source.counts.values())
    found.checked.append(f"{versions:,} versions and profiles in {len(scopes):,} scopes")
    lost = source.tombstones - target.tombstones
    if lost:
        found.problems.append(f"{len(lost):,} tombstones of erased entries missing in TARGET")
    found.checked.append(f"{len(source.tombstones):,} tombstones of erased entries")
    for ref in sample.refs:
        if source.records.get(ref) != target.records.get(ref):
            found.problems.append(
                f"memory entry {compact_id(ref.entry_id)!r} version {ref.version} in scope"
                f" {ref.scope_id!r} reads differently in TARGET"
            )
    found.checked.append(f"{len(sample.refs):,} memory versions read back")
    _compare_packs(source, target, sample, same_kind, found)
    return found


def _compare_packs(
    source: Survey, target: Survey, sample: Sample, same_kind: bool, found: Verification
) -> None:
    if source.packs is None or target.packs is None:
        found.checked.append(
            "no prepares: no built-in embedder matches a store's vectors (pass --embedder)"
        )
        return
    if same_kind and source.fingerprint == target.fingerprint:
        for request, before, after in zip(sample.requests, source.packs, target.packs, strict=True):
            if before != after:
                found.problems.append(
                    f"a prepare in scope {request.scope_id!r} gave another pack in TARGET"
                )
        found.checked.append(f"{len(sample.requests):,} prepares, byte for byte")
        return
    cited = sample.citations
    for citation in cited:
        if not _resolves(citation, target):
            found.problems.append(f"a citation does not resolve in TARGET: {citation}")
    found.checked.append(
        f"{len(sample.requests):,} prepares: their {len(cited):,} citations resolve in TARGET"
        " (the stores rank with their own engines or embedders: packs are not compared"
        " byte for byte)"
    )


def _resolves(citation: satchel.Citation, target: Survey) -> bool:
    """Whether the target holds the version a citation names, searchable (a memory
    version's record was compared already; a resource is cited by its URI, a profile
    by its scope)."""
    if citation.family == "memory":
        return True
    if citation.family == "profile":
        return "profile" in target.counts.get(citation.scope, {})
    held = target.held.get((citation.scope, citation.family), {})
    if citation.family == "resource":  # cited by URI: its searchable revision
        return any(live for (uri, _), live in held.items() if uri == citation.id)
    return held.get((str(citation.id), int(citation.version or 0))) is True
