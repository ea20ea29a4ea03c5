"""How many records of a scope hold each term, kept while the scope's write version
stands, for rating evidence (``vocabulary.rarity``). Used by the stores that read the
counts with a statement (SQLite, OceanBase); pure bookkeeping, no I/O.

A prepare rates the turns it reads, and the next prepare of an unchanged scope reads
mostly the same turns, so a scope's counts are kept by its write version: a count read
while the version stood is the count at that version, and a write (this process's or
another's, as the store's version sees it) starts the scope afresh. Counts read while
the version moved are served to that read only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from ..vocabulary._families import Family

#: Scopes whose counts are kept at once; the oldest kept goes first. A scope's counts
#: are the terms its prepares read, a few thousand at most for a chat.
MOST_SCOPES: Final = 256


class TermCounts:
    """Per (family, scope): its write version, the counts read at it, and the ratings
    made with them (by key: a key names one record version, whose text never changes)."""

    def __init__(self) -> None:
        self._kept: dict[tuple[Family, str], _Kept] = {}

    def known(
        self, family: Family, scope_id: str, version: int, terms: Iterable[str]
    ) -> tuple[dict[str, int], list[str], dict[int, float | None] | None]:
        """The counts kept at ``version`` (the store's own; not to be changed), which of
        ``terms`` they lack, and the ratings made with them (None when they lack any:
        ratings are kept only with the counts they were made with)."""
        kept = self._kept.get((family, scope_id))
        if kept is None or kept.version != version:
            return {}, list(terms), None
        missing = [term for term in terms if term not in kept.counts]
        return kept.counts, missing, None if missing else kept.ratings

    def keep(
        self,
        family: Family,
        scope_id: str,
        version: int,
        read: Mapping[str, int],
        asked: Iterable[str],
    ) -> dict[int, float | None]:
        """Keep what a read at ``version`` found for the ``asked`` terms (those it did
        not find are held by no record); counts kept at another version go. Call only
        when the version still stands after the read. The ratings kept with them, to
        be given new ones."""
        key = (family, scope_id)
        kept = self._kept.get(key)
        if kept is None or kept.version != version:
            if kept is None and len(self._kept) >= MOST_SCOPES:
                del self._kept[next(iter(self._kept))]
            kept = _Kept(version)
            self._kept[key] = kept
        for term in asked:
            kept.counts[term] = read.get(term, 0)
        return kept.ratings

    def forget(self) -> None:
        """Drop every scope's counts (the store closed, or reloaded everything)."""
        self._kept.clear()


class _Kept:
    __slots__ = ("counts", "ratings", "version")

    def __init__(self, version: int) -> None:
        self.version = version
        self.counts: dict[str, int] = {}
        self.ratings: dict[int, float | None] = {}
