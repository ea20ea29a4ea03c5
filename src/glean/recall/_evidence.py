"""Evidence and the pools a store retrieves: plain values, shared by stores and the core.

Pure: no I/O, no clock. A store builds these; admission, fusion and the Builder read them.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

import attrs

from .._families import Family


@attrs.frozen
class Evidence:
    """One searchable record version as retrieved, with its exact citation.

    ``identity`` is the family's evidence identity (memory: entry and version;
    experience and topic memory: id and revision; resource: URI; profile: scope),
    joined into one string so that merging and dedup are dictionary lookups.
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


@attrs.frozen
class LexicalHit:
    """A full-text candidate: its BM25 (lower is better, as SQLite reports it) and
    the distinct query terms its analysed text contains."""

    evidence: Evidence
    bm25: float
    matched_terms: frozenset[str]


@attrs.frozen
class VectorHit:
    """A vector candidate with its cosine similarity to the query vector."""

    evidence: Evidence
    similarity: float


@attrs.frozen
class Pool:
    """What one retrieve returned for one family in one scope, before admission.

    ``version`` is the scope's write version when the pool was read: a later round may
    re-admit this pool only while the scope still has that version.
    """

    family: Family
    scope_id: str
    version: int
    lexical: tuple[LexicalHit, ...] = ()
    vector: tuple[VectorHit, ...] = ()

    @property
    def retrieved(self) -> int:
        """Candidates the backend returned, counted per channel (the RFC's count)."""
        return len(self.lexical) + len(self.vector)
