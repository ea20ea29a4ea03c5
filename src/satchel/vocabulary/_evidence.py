"""Evidence and the pools a store retrieves: plain values, shared by stores and the core.

Pure: no I/O, no clock. A store builds these; admission, fusion and the Builder read them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

import attrs
import numpy as np
import numpy.typing as npt

from ._families import citation

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from datetime import datetime

    from ._families import Family


@attrs.frozen
class Evidence:
    """One searchable record version as retrieved, with its exact citation.

    ``identity`` is the family's evidence identity (memory: entry and version;
    experience and topic memory: id and revision; resource: URI; profile: scope): the
    citation's values joined into one string, so that merging and dedup are dictionary
    lookups.
    ``text`` is the whole body for every family but resource, whose body is only
    read when a request pins it (then ``text`` holds it, else None).
    """

    family: Family
    scope_id: str
    identity: str
    citation: Mapping[str, str | int]
    text: str | None
    abstract: str | None = None
    overview: str | None = None
    created_at: datetime | None = None
    thread: str | None = None
    #: How rare in its scope the record's words are (``vocabulary.rarity``), rated by
    #: the store with the scope's counts as of the read; None when it does not rate.
    rarity: float | None = None

    @classmethod
    def from_record(
        cls,
        family: Family,
        scope_id: str,
        record_id: str | None = None,
        version: int | None = None,
        **content: Any,
    ) -> Evidence:
        """The evidence of one record version, its citation and identity spelled by the
        family table; ``content`` holds ``text``, ``abstract``, ``overview``,
        ``created_at`` and ``thread`` as the record has them."""
        cited = citation(family, scope_id, record_id, version)
        identity = "\x1f".join(str(value) for value in cited.values())
        content.setdefault("text", None)
        return cls(family, scope_id, identity, cited, **content)


@attrs.frozen
class ThreadNeighbours:
    """The searchable records around one record in its thread, by key, nearest first on
    each side: ``before[0]`` was said just before it, ``after[0]`` just after."""

    before: tuple[int, ...] = ()
    after: tuple[int, ...] = ()

    @classmethod
    def in_line(
        cls, line: Sequence[int], at: int, reach: int, passed: Callable[[int], bool]
    ) -> ThreadNeighbours:
        """The neighbours of ``line[at]`` in its thread's keys in order (``line``): up to
        ``reach`` on each side, nearest first, passing over the keys ``passed`` says a
        read passes over (``vocabulary.passed_over``)."""
        before: list[int] = []
        place = at - 1
        while place >= 0 and len(before) < reach:
            if not passed(line[place]):
                before.append(line[place])
            place -= 1
        after: list[int] = []
        place = at + 1
        while place < len(line) and len(after) < reach:
            if not passed(line[place]):
                after.append(line[place])
            place += 1
        return cls(tuple(before), tuple(after))

    def within(self, distance: int) -> tuple[int, ...]:
        """The keys at most ``distance`` places away: those before, then those after."""
        return self.before[:distance] + self.after[:distance]

    def at(self, distance: int) -> tuple[int, ...]:
        """The keys exactly ``distance`` places away (none, one or two)."""
        return self.before[distance - 1 : distance] + self.after[distance - 1 : distance]


def _keys(value: object) -> npt.NDArray[np.int64]:
    return np.asarray(value, dtype=np.int64)


def _similarities(value: object) -> npt.NDArray[np.float32]:
    return np.asarray(value, dtype=np.float32)


def _counts(value: object) -> npt.NDArray[np.int32]:
    return np.asarray(value, dtype=np.int32)


def _none(dtype: type[np.generic]) -> npt.NDArray[Any]:
    """An empty array no one may write to: every pool's empty channel shares it (a
    family holding nothing in a scope is most searches' answer)."""
    empty = np.empty(0, dtype=dtype)
    empty.flags.writeable = False
    return empty


_NO_KEYS: Final = _none(np.int64)
_NO_SCORES: Final = _none(np.float32)
_NO_COUNTS: Final = _none(np.int32)


@attrs.frozen
class Pool:
    """What one retrieve returned for one family in one scope, before admission.

    A pool holds keys and scores only, so a large pool costs no text I/O; admission and
    fusion need nothing more. ``version`` is the scope's write version when the pool was
    read: a later round may re-admit this pool only while the scope still has that
    version.
    """

    family: Family
    scope_id: str
    version: int
    #: How many searchable records of the family the scope held when the pool was read.
    scope_rows: int = 0
    #: The full-text channel in rank order as parallel arrays: each candidate's key (the
    #: store's handle of one record version, unique within family and scope), its BM25
    #: over the scope's own postings (lower is better, as SQLite reports it) and how
    #: many distinct query terms its analysed text contains. A store may append, after
    #: the ranked candidates, records that BM25 ranked past the pool but that hold a
    #: rare query term (their score is that term's alone). Hundreds of candidates cost
    #: three arrays, not objects.
    lexical_keys: npt.NDArray[np.int64] = attrs.field(default=_NO_KEYS, converter=_keys, eq=False)
    lexical_scores: npt.NDArray[np.float32] = attrs.field(
        default=_NO_SCORES, converter=_similarities, eq=False
    )
    lexical_matches: npt.NDArray[np.int32] = attrs.field(
        default=_NO_COUNTS, converter=_counts, eq=False
    )
    #: The vector channel, most similar first: keys and cosine similarities.
    vector_keys: npt.NDArray[np.int64] = attrs.field(default=_NO_KEYS, converter=_keys, eq=False)
    vector_similarities: npt.NDArray[np.float32] = attrs.field(
        default=_NO_SCORES, converter=_similarities, eq=False
    )

    #: The time channel: records whose own text names a day in a window the query's
    #: dates name, then records said in such a window; each group most similar to the
    #: query first (empty when the query names no date). ``time_matched`` counts every
    #: record the windows held, of which ``time_keys`` are the first.
    time_keys: npt.NDArray[np.int64] = attrs.field(default=_NO_KEYS, converter=_keys, eq=False)
    time_matched: int = 0
    #: How many of the query's terms the full-text channel left out as common in this
    #: scope (``TermSelection.common``): they are in no candidate's matched-term count.
    common_terms: int = 0
    #: How many of the query's counted terms (the common ones left out) at least one of
    #: the scope's records holds (``TermSelection.held``): which of the query's words the
    #: scope knows, whether or not a candidate ranked for them.
    held_terms: int = 0
    #: How many of those held terms are rare in the language (``TermSelection.distinctive``):
    #: a codename the scope holds is evidence a question is about it.
    distinctive_terms: int = 0
    #: The proper names the query says that no record of the scope holds
    #: (``PoolRequest.unheld_names``): a question about what the scope never mentions,
    #: unless the turns read say who they are (a short form or a nickname of a label).
    unheld_names: tuple[str, ...] = ()
    #: The query's proper names the scope holds spelled otherwise, as it spells them
    #: (``PoolRequest.naming_held``: "melani" for a question's "Mel"): whose turns a
    #: question naming them is about.
    spelled_names: tuple[str, ...] = ()

    def counted_terms(self, query_terms: int) -> int:
        """The query terms the minimum-match rule counts in this pool: those of a query
        of ``query_terms`` distinct terms, less the scope's common ones."""
        return max(0, query_terms - self.common_terms)

    @property
    def time_candidates(self) -> npt.NDArray[np.int64]:
        """The time channel as admission sees it: empty when the windows held more than
        half the scope ("in 2023" of a year-long chat), since such a list would only
        repeat the vector channel at the time weight."""
        if self.time_matched > max(len(self.time_keys), self.scope_rows // 2):
            return _NO_KEYS
        return self.time_keys

    @property
    def retrieved(self) -> int:
        """Candidates the backend returned, counted per channel (as RecallEffort reports)."""
        return len(self.lexical_keys) + len(self.vector_keys) + len(self.time_candidates)
