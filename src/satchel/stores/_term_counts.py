"""How many records of a scope hold each term, kept while the scope's write version
stands, for rating evidence (``vocabulary.rarity``). Used by the stores that read the
counts with a statement (SQLite, OceanBase), which hand :func:`rate` their read.

A prepare rates the turns it reads, and the next prepare of an unchanged scope reads
mostly the same turns, so a scope's counts are kept by its write version: a count read
while the version stood is the count at that version, and a write (this process's or
another's, as the store's version sees it) starts the scope afresh. The ratings made
with the counts are kept beside them, and a store may keep the rated evidence it served
too (:meth:`TermCounts.keep`): a record version's evidence never changes, and its
rating not while the version stands, so the next read of the key serves the same
immutable ``Evidence`` rather than a rebuilt one.
"""

from __future__ import annotations

import contextlib
import threading
from typing import TYPE_CHECKING, Final, NamedTuple

from .._loop import loop_turn
from ..vocabulary._rarity import (
    content_terms,
    known_terms,
    rarity,
    rarity_terms,
    with_rarity,
)

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Mapping, Sequence
    from contextlib import AbstractAsyncContextManager

    from ..vocabulary._evidence import Evidence
    from ..vocabulary._families import Family

#: Scopes whose counts are kept at once; the oldest kept goes first. A scope's counts
#: are the terms its prepares read, a few thousand at most for a chat.
MOST_SCOPES: Final = 256
#: Items whose texts are analysed in one turn of the host's loop (a turn's analysis
#: costs 10-170 us the first time it is read).
RATE_STRETCH: Final = 8
#: Items rated in one turn of the host's loop when their texts' terms are known (a
#: rating takes a few microseconds): after a write to its scope a prepare rates anew
#: every turn it reads, some 80, whose terms an earlier read remembered, and a turn of
#: the loop for each eight of them cost more than the ratings.
KNOWN_STRETCH: Final = 64
#: Known terms rated in one turn of the host's loop (a term's count looked up and its
#: logarithm taken, about 0.2 us): long turns make shorter stretches.
KNOWN_TERMS: Final = 1024
#: Rated ``Evidence`` objects kept over every scope at once (:meth:`TermCounts.keep`;
#: a LoCoMo conversation's questions read some 400 keys). Each is an object the
#: garbage collector tracks (the evidence cache keeps untracked dicts for that
#: reason), and a scope's are freed at once when its version moves, on the host's
#: loop: 4,096 of them take about 0.5 ms to free.
MOST_EVIDENCE: Final = 4096


class TermCounts:
    """Per (family, scope): its write version, and the counts read and ratings made
    at it (by key: a key names one record version, whose text never changes).

    Read and rated on the host's loop, followed and reloaded by a store's writes on the
    thread that committed them: a lock keeps the scopes and their tally whole."""

    def __init__(self) -> None:
        self._kept: dict[tuple[Family, str], Kept] = {}
        #: The rated evidence kept over every scope (at most ``MOST_EVIDENCE``).
        self._evidence = 0
        self._lock = threading.Lock()

    def at(self, family: Family, scope_id: str, version: int) -> Kept:
        """What is kept of the scope at ``version``: the counts and ratings kept, or
        none if they were kept at another version (kept from now on in their place)."""
        key = (family, scope_id)
        kept = self._kept.get(key)
        if kept is not None and kept.version == version:
            return kept  # the common case, without the lock
        with self._lock:
            return self._at(key, version)

    def _at(self, key: tuple[Family, str], version: int) -> Kept:
        kept = self._kept.get(key)
        if kept is None or kept.version != version:
            if kept is None and len(self._kept) >= MOST_SCOPES:
                self._evidence -= len(self._kept.pop(next(iter(self._kept))).evidence)
            elif kept is not None:
                self._evidence -= len(kept.evidence)
            kept = Kept(version)
            self._kept[key] = kept
        return kept

    def keep(
        self, family: Family, scope_id: str, kept: Kept, rated: Mapping[int, Evidence]
    ) -> None:
        """Keep the ``rated`` evidence a read of the scope served at ``kept``'s version,
        while it is still the scope's kept version (a write that landed during the read
        started the scope afresh: nothing is kept) and ``MOST_EVIDENCE`` allows."""
        with self._lock:
            self._keep(family, scope_id, kept, rated)

    def _keep(
        self, family: Family, scope_id: str, kept: Kept, rated: Mapping[int, Evidence]
    ) -> None:
        if self._kept.get((family, scope_id)) is not kept:
            return
        room = MOST_EVIDENCE - self._evidence
        if room <= 0:
            return
        held = kept.evidence
        before = len(held)
        if len(rated) <= room:
            held.update(rated)
        else:
            for key, item in rated.items():
                if len(held) - before >= room:
                    break
                held[key] = item
        self._evidence += len(held) - before

    def follow(
        self,
        family: Family,
        scope_id: str,
        versions: tuple[int, int],
        added: Sequence[str] | None,
    ) -> None:
        """Follow a committed write of the scope's ``family`` that moved its write
        version from ``versions[0]`` to ``versions[1]``: when the write only added
        records (``added``: each one's analysed terms joined by spaces, as indexed) and
        every count kept at the first was read there (:attr:`Kept.exact`), those counts
        are kept at the second, each grown by the added records holding its term. An
        agent writes a turn before each question; the next prepare then reads none of
        the counts of the turns it rates again. The ratings and rated evidence are not
        carried (a rating is on the scale of the scope's size, which the write moved),
        nor the names' spellings. ``added`` None (the write took records out, or their
        terms are not at hand): nothing is carried."""
        with self._lock:
            self._follow((family, scope_id), versions, added)

    def _follow(
        self, key: tuple[Family, str], versions: tuple[int, int], added: Sequence[str] | None
    ) -> None:
        kept = self._kept.get(key)
        if kept is None or kept.version != versions[0]:
            return
        del self._kept[key]
        self._evidence -= len(kept.evidence)
        if added is None or not kept.exact:
            return
        # A copy: a rating still in flight at the first version writes its counts into
        # the first's, never into these.
        counts = dict(kept.counts)
        for terms in added:
            for term in set(terms.split()):
                if term in counts:
                    counts[term] += 1
        carried = Kept(versions[1])
        carried.counts = counts
        self._kept[key] = carried

    def drop(self, scope_id: str) -> None:
        """Drop the scope's counts and ratings of every family (after an erase: no word
        of an erased text outlives it here)."""
        with self._lock:
            for key in [key for key in self._kept if key[1] == scope_id]:
                self._evidence -= len(self._kept.pop(key).evidence)

    def forget(self) -> None:
        """Drop every scope's counts (the store closed, or reloaded everything)."""
        with self._lock:
            self._kept.clear()
            self._evidence = 0


class Spellings(NamedTuple):
    """The terms a scope holds that start as a question's unheld names do, with how
    many records hold each (``held``), and each name's variant found among them
    (``variants``, filled by ``PoolRequest.naming_held``; None: the scope never says
    the name)."""

    held: Mapping[str, int]
    variants: dict[str, str | None]


class Kept:
    """A scope's counts (term -> records holding it), ratings (key -> rarity) and the
    rated evidence a store kept (key -> evidence, :meth:`TermCounts.keep`) at one
    write version; and the terms its searches read for names the scope never holds
    (``spellings``: by the names' first letters and the least count, the terms so
    starting that at least that many records hold, ``PoolRequest.name_starts``, with
    the variant each name was found to have among them).

    A scope's questions name the same people, so one read of a letter's terms serves
    every later question naming someone the scope does not hold: above all a scope a
    prepare searches beside the one its question is about (``references``), where
    every name the question says is unheld."""

    __slots__ = ("counts", "evidence", "exact", "ratings", "spellings", "version")

    def __init__(self, version: int) -> None:
        self.version = version
        self.counts: dict[str, int] = {}
        #: Whether every count was read at :attr:`version` (from postings held there),
        #: so a write's added records can carry them to the next (``TermCounts.follow``);
        #: a statement reads the live file, which a write may have moved meanwhile.
        self.exact = True
        self.ratings: dict[int, float | None] = {}
        self.evidence: dict[int, Evidence] = {}
        self.spellings: dict[tuple[tuple[str, ...], int], Spellings] = {}

    def served(self, keys: Sequence[int]) -> dict[int, Evidence]:
        """The evidence kept of ``keys``, in their order (the keys not kept left out)."""
        held = self.evidence
        if not held:
            return {}
        return {key: item for key in keys if (item := held.get(key)) is not None}


async def rate(
    found: Mapping[int, Evidence],
    kept: Kept,
    rows: int,
    read_counts: Callable[[list[str]], Awaitable[Mapping[str, int]]],
    *,
    on_host_loop: bool,
) -> dict[int, Evidence]:
    """``found`` rated (``vocabulary.rarity``) with the scope's ``rows`` and ``kept``
    counts, reading (``read_counts``) only those of terms of unrated items not kept
    yet. Counts read while a write landed may be the write's: they serve this read, and
    the version they are kept under is gone by the next. ``on_host_loop``: the texts
    are analysed and rated a stretch (``_stretches``) per turn of the host's loop
    (``_loop``); a store running on a loop of its own takes no turns."""
    unrated = [(key, item) for key, item in found.items() if key not in kept.ratings]
    stretches = _stretches(unrated)
    needed: set[str] = set()
    for stretch in stretches:  # each text analysed the first time it is read
        async with _turn(on_host_loop):
            needed |= rarity_terms(item for _, item in stretch)
    if missing := [term for term in needed if term not in kept.counts]:
        read = await read_counts(missing)
        for term in missing:
            kept.counts[term] = read.get(term, 0)
    for stretch in stretches:
        async with _turn(on_host_loop):
            for key, item in stretch:
                kept.ratings[key] = rarity(content_terms(item.text), kept.counts, rows)
    return {key: with_rarity(item, kept.ratings[key]) for key, item in found.items()}


def _stretches(unrated: list[tuple[int, Evidence]]) -> list[list[tuple[int, Evidence]]]:
    """``unrated`` in stretches of at most ``RATE_STRETCH`` texts to analyse, at most
    ``KNOWN_STRETCH`` items in all and about ``KNOWN_TERMS`` known terms, in order."""
    stretches: list[list[tuple[int, Evidence]]] = []
    stretch: list[tuple[int, Evidence]] = []
    unknown = terms = 0
    for pair in unrated:
        stretch.append(pair)
        known = known_terms(pair[1].text)
        if known is None:
            unknown += 1
        else:
            terms += len(known)
        if unknown == RATE_STRETCH or len(stretch) == KNOWN_STRETCH or terms >= KNOWN_TERMS:
            stretches.append(stretch)
            stretch, unknown, terms = [], 0, 0
    if stretch:
        stretches.append(stretch)
    return stretches


def _turn(on_host_loop: bool) -> AbstractAsyncContextManager[object]:
    """The host's loop's turn (``_loop``), or nothing on a store's loop of its own."""
    return loop_turn() if on_host_loop else contextlib.nullcontext()
