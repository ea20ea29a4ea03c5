"""What a search asks a store for: one value, carrying the ranking rules a store follows.

A store implements retrieval (a full-text ranking, a vector product, a date range scan);
which query terms are worth ranking by, and when a rare term's every holder joins the
pool, are rules of satchel's, decided here, so every store applies the same ones. Pure:
no I/O, no clock.
"""

from __future__ import annotations

import math
from datetime import UTC, date, datetime, timedelta
from typing import TYPE_CHECKING, Final

import attrs
import numpy as np

from ._analysis import AnalysedQuery
from ._dates import NARROW_SPAN
from ._speakers import MIN_SHORT_NAME, SPEAKER_SHARE, name_variant, nicknames_of

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    import numpy.typing as npt

#: Most postings (records holding any chosen term) one full-text search may rank.
POSTINGS_BUDGET: Final = 2048
#: A query term held by more than this share of a scope's searchable records is common
#: there (a speaker's name in a chat, a project's name in its notes): it neither ranks
#: nor counts toward the minimum-match rule, unless nothing else of the query is held.
COMMON_SHARE: Final = 0.5
#: Scopes of fewer records have no common terms: a handful of records says little.
COMMON_MIN_ROWS: Final = 16
#: Scopes of fewer records are never "about" a name the query says (``vector_for``).
NAMED_MIN_ROWS: Final = 8
#: In a scope about the names a query says, the share of the whole query's vector in the
#: one its vector channel ranks by; the rest is the query's without the names
#: (:func:`lightly_named`). Measured on LoCoMo and the synthetic conversations
#: (docs/benchmarks.md): without the names at all (0.0), LoCoMo's recall rose 0.011 at
#: 8,000 bytes but the synthetic conversations' fell 0.07, where short turns are told
#: apart mostly by who said them; at 0.7 LoCoMo keeps the gain and the synthetic
#: conversations are unchanged.
NAMED_SHARE: Final = 0.7


def lightly_named(
    whole: npt.NDArray[np.float32], unnamed: npt.NDArray[np.float32]
) -> npt.NDArray[np.float32]:
    """The query's vector with its proper names weighing less: ``NAMED_SHARE`` of the
    whole query's vector and the rest of the query's without the names, unit length."""
    mixed = NAMED_SHARE * whole + (1.0 - NAMED_SHARE) * unnamed
    norm = float(np.linalg.norm(mixed))
    return (mixed / norm if norm > 0 else whole).astype(np.float32)


#: The least length ``apart_from_common`` divides by: a record lying along its scope's
#: common direction has nothing of its own to rank by.
APART_FLOOR: Final = 1e-2


@attrs.frozen
class CommonDirection:
    """A scope's common direction and what each of its records (the rows of a matrix
    of unit vectors) holds of it: ``shares``, each row's cosine to the direction, and
    ``inverse_lengths``, one over the length of each row apart from it. Made once per
    state of the scope's vectors (:meth:`of`); each query then costs one product
    (:meth:`rank`)."""

    direction: npt.NDArray[np.float32] = attrs.field(eq=False)
    shares: npt.NDArray[np.float32] = attrs.field(eq=False)
    inverse_lengths: npt.NDArray[np.float32] = attrs.field(eq=False)

    @classmethod
    def of(
        cls, matrix: npt.NDArray[np.float32], total: npt.NDArray[np.float64] | None
    ) -> CommonDirection | None:
        """The direction of ``total`` (the sum of the scope's vectors) for the rows of
        ``matrix``; None for no total or a zero one."""
        norm = 0.0 if total is None else float(np.linalg.norm(total))
        if total is None or norm == 0.0:
            return None
        direction = (total / norm).astype(np.float32)
        shares: npt.NDArray[np.float32] = matrix @ direction
        lengths = np.sqrt(np.maximum(1.0 - shares * shares, APART_FLOOR * APART_FLOOR))
        return cls(direction, shares, (1.0 / lengths).astype(np.float32))

    def rank(
        self, matrix: npt.NDArray[np.float32], query: npt.NDArray[np.float32]
    ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
        """:func:`apart_from_common` for the rows this direction was made for."""
        along = float(query @ self.direction)
        apart: npt.NDArray[np.float32] = matrix @ (query - along * self.direction)
        cosines: npt.NDArray[np.float32] = apart + along * self.shares
        scores: npt.NDArray[np.float32] = apart * self.inverse_lengths
        return scores, cosines

    def scores_of(
        self,
        matrix: npt.NDArray[np.float32],
        query: npt.NDArray[np.float32],
        rows: npt.NDArray[np.int64],
    ) -> npt.NDArray[np.float32]:
        """:meth:`rank`'s scores of the ``rows`` of ``matrix`` only (the time channel's
        records in a window), in their order."""
        along = float(query @ self.direction)
        apart: npt.NDArray[np.float32] = matrix[rows] @ (query - along * self.direction)
        scores: npt.NDArray[np.float32] = apart * self.inverse_lengths[rows]
        return scores


def apart_from_common(
    matrix: npt.NDArray[np.float32],
    query: npt.NDArray[np.float32],
    total: npt.NDArray[np.float64] | None,
) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
    """How the vector channel ranks a scope's records (the rows of ``matrix``, unit
    vectors) for ``query``: each record's cosine to the query once both have lost the
    scope's common direction, the direction of ``total``, the sum of the scope's
    vectors. Returns those scores and each record's plain cosine to the query (what
    admission and the gate read), in row order.

    A static embedding averages a text's token vectors, so every record of a scope
    shares a large common part: in a chat, its people's names and its everyday words.
    Every short turn ("Alice: Deal.") is then near every question naming Alice, while
    what a record says beyond the common part is what tells it apart. So the query
    loses its component along the common direction ``u`` and each record's cosine is
    taken to its own part apart from ``u``: ``(q - (q.u) u) . d / |d - (d.u) u|``. On
    LoCoMo this ranks 0.747 of the evidence among the 50 most similar turns, against
    0.717 by the plain cosine (docs/benchmarks.md). With no total (or a zero one) the
    scores are the plain cosines. A store searching a scope again and again keeps the
    scope's :class:`CommonDirection` while its vectors stand, and pays one product a
    query.
    """
    common = CommonDirection.of(matrix, total)
    if common is None:
        plain: npt.NDArray[np.float32] = matrix @ query
        return plain, plain
    return common.rank(matrix, query)


#: A query term held by at most this many of a scope's records is rare enough that every
#: record holding it joins the full-text candidates, however the ranking placed it.
RARE_POSTINGS: Final = 32
#: Most records one time window may select before they are ranked.
WINDOW_SCAN: Final = 4096
#: How recent a scope's newest record must be for the scope to be live: only then are
#: a query's relative dates ("last week") seen from today (see ``PoolRequest.reference``).
LIVE_SPAN: Final = timedelta(days=30)
#: BM25's parameters, as SQLite's FTS5 ``bm25()`` sets them.
K1: Final = 1.2
B: Final = 0.75
#: The least weight a term adds (FTS5's floor for a term held by most records).
MIN_IDF: Final = 1e-6


def bm25(
    held: Mapping[str, int],
    length: int,
    terms: Iterable[str],
    frequencies: Mapping[str, int],
    count: int,
    average: float,
) -> float:
    """Okapi BM25 of one record over ``terms``, negated as FTS5's ``bm25()`` reports it
    (lower is better), for a store that ranks in Python.

    ``held`` counts each term in the record's analysed text, ``length`` is that text's
    term count; ``frequencies`` are the scope's document frequencies among ``count``
    searchable records of ``average`` length.
    """
    score = 0.0
    norm = K1 * (1 - B + B * length / average) if average > 0 else K1
    for term in terms:
        times = held.get(term, 0)
        if times:
            holders = frequencies[term]
            idf = max(math.log((count - holders + 0.5) / (holders + 0.5)), MIN_IDF)
            score += idf * times * (K1 + 1) / (times + norm)
    return -score


@attrs.frozen
class TimeWindow:
    """One date the query names, as the time channel scans it, in UTC epoch seconds.

    Records said in ``[said_from, said_to)`` (the days with a day's margin each side)
    belong to it, nearest its middle first. A record whose own text names a span of days
    overlapping ``[day_from, day_to)`` ("yesterday", said the day after) belongs to it
    ahead of them all, provided the span is at most ``widest_mention`` long (a week, or
    the window's own width when that is more: "last month" belongs to a question about
    that month, not to one about a day of it). So a counted span starts at most
    ``widest_mention`` before the window, and a store finds them with one range scan of
    span starts from ``mentions_from``: a week back for a day, whatever the year holds.
    """

    said_from: float
    said_to: float
    day_from: float
    day_to: float

    @property
    def mentions_from(self) -> float:
        return self.day_from - self.widest_mention

    @property
    def widest_mention(self) -> float:
        """The longest named span, in seconds, that counts for this window."""
        return max(self.day_to - self.day_from, NARROW_SPAN.total_seconds())

    def names(self, start: float, end: float) -> bool:
        """Whether a record whose text names ``[start, end)`` belongs to this window."""
        return start < self.day_to and end > self.day_from and end - start <= self.widest_mention

    def distance(self, said_at: float) -> float:
        """How far from the window's middle a record said at ``said_at`` is (>= 1)."""
        return abs(said_at - (self.said_from + self.said_to) / 2) + 1.0


class TimeHits:
    """The time channel's candidates as a store collects them, ranked the same way by
    every store: records naming a day of a window first, then by similarity to the
    query, then nearest the window's middle."""

    def __init__(self) -> None:
        self._distance: dict[int, float] = {}

    def said(self, window: TimeWindow, rows: Iterable[tuple[int, float]]) -> None:
        """Records said in ``window``: ``(key, said_at)`` pairs."""
        for key, at in rows:
            self._distance[key] = min(self._distance.get(key, math.inf), window.distance(at))

    def named(self, keys: Iterable[int]) -> None:
        """Records whose own text names a day of a window."""
        for key in keys:
            self._distance[key] = 0.0

    @property
    def keys(self) -> list[int]:
        return list(self._distance)

    def ranked(
        self, size: int, similarities: npt.NDArray[np.float32] | None = None
    ) -> npt.NDArray[np.int64]:
        """The best ``size`` keys; ``similarities`` (to the query, aligned with
        :attr:`keys`) rank within each group when given."""
        keys = np.fromiter(self._distance, dtype=np.int64, count=len(self._distance))
        distances = np.fromiter(self._distance.values(), dtype=np.float64, count=len(keys))
        if similarities is None:
            order = np.argsort(distances, kind="stable")
        else:
            order = np.lexsort((distances, -similarities, distances > 0))
        return keys[order[:size]]

    def __len__(self) -> int:
        return len(self._distance)


@attrs.frozen
class TermSelection:
    """How one full-text search runs: rank the records holding any of ``terms``
    (rarest first), keep the best ``limit``, then append every other record holding
    ``rescue`` (at most ``RARE_POSTINGS`` of them), scored by that term alone. ``common``
    are the query's terms left out as common in the scope: they are in no candidate's
    matched-term count. ``held`` counts the query's other terms that any record of the
    scope holds (ranked or not: the postings budget may leave some out of ``terms``),
    and ``distinctive`` those of them rare in the language (``AnalysedQuery.rare``)."""

    terms: tuple[str, ...] = ()
    limit: int = 0
    rescue: str | None = None
    common: tuple[str, ...] = ()
    held: int = 0
    distinctive: int = 0


@attrs.frozen
class PoolRequest:
    """One search's request to a store: a family's pool in one scope.

    ``query`` is the analysed query (its terms, which every candidate's matched-term
    count is taken over, and its dates, for the time channel); ``vector`` its embedding,
    or None when the vector channel is off; ``size`` the most candidates per channel;
    ``now`` when the prepare began, in UTC epoch seconds (None: no clock, so relative
    dates select nothing); ``unnamed_vector`` the query's vector with its proper names
    weighing less (:func:`lightly_named`, from the embedding of
    ``AnalysedQuery.unnamed``), None when it names nothing. Both were embedded once per
    prepare, in one call; :meth:`vector_for` says which one the vector channel ranks
    by in a scope.
    """

    query: AnalysedQuery = attrs.field(validator=attrs.validators.instance_of(AnalysedQuery))
    vector: npt.NDArray[np.float32] | None
    size: int
    now: float | None = None
    unnamed_vector: npt.NDArray[np.float32] | None = None
    #: The names :meth:`naming_held` put in the query for names the scope spells
    #: otherwise (``Pool.spelled_names``); empty as asked.
    spelled: tuple[str, ...] = ()

    def vector_for(
        self, frequencies: Mapping[str, int], rows: int
    ) -> npt.NDArray[np.float32] | None:
        """The vector the vector and time channels rank by in a scope of ``rows``
        searchable records, given how many hold each query term.

        When every proper name the query says is held by more than ``SPEAKER_SHARE`` (a
        tenth) of a scope of at least ``NAMED_MIN_ROWS`` records, the names are what the
        scope is about (a chat's participants, whose names open their turns; in a chat
        of two each holds half the turns, in a group of five a fifth): in a static
        embedding a name weighs like any word, so every turn of the person named looks
        near the question, the short ones nearest. The question's meaning is in its
        other words: the channel ranks by the vector in which the names weigh less
        (``unnamed_vector``), and the turns said by the person named are lifted by name
        (``FusionWeights.named_speaker``). Otherwise, by the whole query.
        """
        names = self.query.names
        if self.unnamed_vector is None or not names or rows < NAMED_MIN_ROWS:
            return self.vector
        if all(frequencies.get(name, 0) > SPEAKER_SHARE * rows for name in names):
            return self.unnamed_vector
        return self.vector

    @property
    def frequency_terms(self) -> tuple[str, ...]:
        """The terms whose counts a store reads for this request: the query's terms and
        its respellings (``AnalysedQuery.respellings``), which :meth:`respelled` then
        takes into the query where the scope holds them."""
        query = self.query
        return query.terms + query.respellings if query.respellings else query.terms

    def respelled(self, frequencies: Mapping[str, int]) -> tuple[PoolRequest, dict[str, int]]:
        """This request with the respellings the scope holds (``frequencies``: how many
        records hold each of :attr:`frequency_terms`, the terms none holds left out or at
        0) among the query's terms, after its own, and the counts of its terms alone.
        A scope where a chat typed "adopt" as "adpot" is searched for both."""
        query = self.query
        terms = query.terms
        counts = {term: count for term in terms if (count := frequencies.get(term, 0))}
        if len(counts) == sum(1 for count in frequencies.values() if count):
            return self, counts  # no respelling held (most queries): none looked for
        held = tuple(term for term in query.respellings if frequencies.get(term, 0))
        counts.update((term, frequencies[term]) for term in held)
        respelled = attrs.evolve(query, terms=terms + held, respellings=())
        return attrs.evolve(self, query=respelled), counts

    def unheld_names(self, frequencies: Mapping[str, int] | None) -> tuple[str, ...]:
        """The proper names the query says that no record of the scope holds, given how
        many hold each query term (None: not read, which a store may skip when the
        query names nothing)."""
        if frequencies is None:
            return ()
        return tuple(name for name in self.query.names if not frequencies.get(name, 0))

    def name_starts(self, frequencies: Mapping[str, int] | None) -> tuple[str, ...]:
        """The first letter of each proper name the query says that no record of the
        scope holds, and of each of its nicknames and the names it is one of
        (:func:`~._speakers.nicknames_of`: "r" for "Bob"), given how many hold each query
        term: a store reads the terms it holds that start so, for :meth:`naming_held`.
        Empty when the scope holds every name (most questions: no further read)."""
        if not frequencies:
            return ()
        starts: dict[str, None] = {}
        for name in self.query.names:
            if not frequencies.get(name, 0):
                if len(name) >= MIN_SHORT_NAME:
                    starts[name[:1]] = None
                starts.update(dict.fromkeys(related[:1] for related in nicknames_of(name)))
        return tuple(starts)

    def naming_held(
        self,
        frequencies: Mapping[str, int],
        held: Mapping[str, int],
        rows: int,
        variants: dict[str, str | None] | None = None,
    ) -> tuple[PoolRequest, dict[str, int]]:
        """This request as a scope of ``rows`` records spells its names, with the query
        terms' frequencies to match: each name the scope never holds that it holds in
        another form (:func:`~._speakers.name_variant` over ``held``, the terms starting
        as :meth:`name_starts` says and how many records hold each) is replaced by that
        form in the query's terms, names and rare words. "Mel" asked of a chat where
        Melanie speaks is a question about her: searched, ranked and judged so.

        ``variants``, when given, keeps each name's variant (or None) found in this
        ``held`` at these ``rows``, and serves it to the next request: a store keeps it
        beside ``held`` for the scope's version, so a scope searched as a reference by
        every question of another conversation compares the same names with its terms
        once, not once a question."""
        spelled: dict[str, str] = {}
        for name in self.query.names:
            if not frequencies.get(name, 0):
                if variants is None:
                    variant = name_variant(name, held, rows)
                elif name in variants:
                    variant = variants[name]
                else:
                    variant = variants[name] = name_variant(name, held, rows)
                if variant is not None:
                    spelled[name] = variant
        if not spelled:
            return self, dict(frequencies)
        query = self.query

        def respelled(terms: Iterable[str]) -> tuple[str, ...]:
            return tuple(dict.fromkeys(spelled.get(term, term) for term in terms))

        query = attrs.evolve(
            query,
            terms=respelled(query.terms),
            names=respelled(query.names),
            rare=frozenset(respelled(query.rare)),
        )
        counts = dict(frequencies)
        counts.update((variant, held[variant]) for variant in spelled.values())
        return attrs.evolve(self, query=query, spelled=tuple(spelled.values())), counts

    @property
    def needs_reference(self) -> bool:
        """Whether a date of the query is relative and there is a clock to see it from:
        the store then supplies its newest record's time to :meth:`time_windows`."""
        return self.now is not None and any(mention.relative for mention in self.query.dates)

    def reference(self, newest: float | None) -> date | None:
        """The day the query's relative dates are seen from: today, when the scope is
        live (its newest record said at most ``LIVE_SPAN`` before now); otherwise none,
        and relative dates select nothing.

        "Last week" asked of a conversation last touched long ago is rarely about the
        week before its last turn: hosts replay old conversations, and a question about
        an event said long before uses such words too. So a scope that is not live
        gives no window, and the question is answered by its other words.
        """
        if self.now is None or newest is None or self.now - newest > LIVE_SPAN.total_seconds():
            return None
        return datetime.fromtimestamp(self.now, UTC).date()

    def time_windows(self, newest: float | None = None) -> tuple[TimeWindow, ...]:
        """The windows the query's dates name, relative ones seen from
        :meth:`reference` given the time of the scope's newest record (``newest``)."""
        reference = self.reference(newest) if self.needs_reference else None
        windows = []
        for mention in self.query.dates:
            said = mention.window(reference)
            days = mention.window(reference, timedelta(0))
            if said is not None and days is not None:
                windows.append(TimeWindow(*said, *days))
        return tuple(windows)

    @property
    def time_size(self) -> int:
        """The most candidates of the time channel: a quarter of the pool."""
        return self.size // 4

    def select_terms(self, frequencies: Mapping[str, int], rows: int = 0) -> TermSelection:
        """The full-text search to run, given how many of the scope's ``rows``
        searchable records hold each query term (a term absent from the mapping, or at
        0, is held by none).

        A term held by more than ``COMMON_SHARE`` of a scope of at least
        ``COMMON_MIN_ROWS`` records is common there: it matches most of the scope, so it
        would only make the search rank nearly every record and let any record holding
        one other query term pass the minimum-match rule. So is a proper name held by
        more than ``SPEAKER_SHARE``: a participant of a chat, whose turns a search reads
        by who said them (``FusionWeights.named_speaker``), not as hits of their name.
        Common terms are left out (``common``) while another query term is held; when
        none is, they are searched as any others.

        Ranking costs per matching record, so a term held by most of a scope would make
        every search scan the scope while adding almost nothing to the order. Terms are
        taken rarest first while their postings stay within ``POSTINGS_BUDGET`` (the
        rarest is always taken). A length-normalised ranking can push a long record
        naming a rare term once past the limit, below short records holding two common
        terms; when the rarest term is rare and the postings overflow the limit, its
        every holder is kept (``rescue``).
        """
        held = {term: count for term in self.query.terms if (count := frequencies.get(term, 0))}
        common: tuple[str, ...] = ()
        if rows >= COMMON_MIN_ROWS:
            names = self.query.names
            common = tuple(
                term
                for term, count in held.items()
                if count > (SPEAKER_SHARE if term in names else COMMON_SHARE) * rows
            )
            if len(common) < len(held):
                held = {term: count for term, count in held.items() if term not in common}
            else:
                common = ()
        chosen: list[str] = []
        postings = 0
        for term in sorted(held, key=held.__getitem__):
            if chosen and postings + held[term] > POSTINGS_BUDGET:
                break
            chosen.append(term)
            postings += held[term]
        if not chosen:
            return TermSelection()
        rarest = chosen[0]
        rescue = postings > self.size and held[rarest] <= RARE_POSTINGS and len(chosen) > 1
        rescue_term = rarest if rescue else None
        distinctive = sum(term in self.query.rare for term in held)
        return TermSelection(tuple(chosen), self.size, rescue_term, common, len(held), distinctive)
