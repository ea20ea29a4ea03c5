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
    """Per (family, scope): its write version and the counts read at it."""

    def __init__(self) -> None:
        self._kept: dict[tuple[Family, str], tuple[int, dict[str, int]]] = {}

    def known(
        self, family: Family, scope_id: str, version: int, terms: Iterable[str]
    ) -> tuple[dict[str, int], list[str]]:
        """The counts kept at ``version`` (the store's own; not to be changed), and
        which of ``terms`` they lack."""
        kept = self._kept.get((family, scope_id))
        counts = kept[1] if kept is not None and kept[0] == version else {}
        return counts, [term for term in terms if term not in counts]

    def keep(
        self,
        family: Family,
        scope_id: str,
        version: int,
        read: Mapping[str, int],
        asked: Iterable[str],
    ) -> None:
        """Keep what a read at ``version`` found for the ``asked`` terms (those it did
        not find are held by no record); counts kept at another version go. Call only
        when the version still stands after the read."""
        key = (family, scope_id)
        kept = self._kept.get(key)
        if kept is None or kept[0] != version:
            if kept is None and len(self._kept) >= MOST_SCOPES:
                del self._kept[next(iter(self._kept))]
            kept = (version, {})
            self._kept[key] = kept
        counts = kept[1]
        for term in asked:
            counts[term] = read.get(term, 0)

    def forget(self) -> None:
        """Drop every scope's counts (the store closed, or reloaded everything)."""
        self._kept.clear()
