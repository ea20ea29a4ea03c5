"""Admission: the floor a retrieved pool must clear before fusion.

Pure. A lexical candidate must contain ``required_matches`` distinct query terms; a
vector candidate needs a cosine similarity of at least the floor (0.3 by default).
Expansion rounds lower these floors on the same pool; nothing here retrieves.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Final

import attrs

if TYPE_CHECKING:
    from .._families import Family
    from ._evidence import Pool

DEFAULT_MIN_SIMILARITY: Final = 0.3


def required_matches(term_count: int) -> int:
    """Distinct query terms a lexical candidate must contain: 1 for queries of at most
    two terms, else ``max(2, ceil(0.25 * terms))``."""
    if term_count <= 2:
        return 1
    return max(2, math.ceil(0.25 * term_count))


@attrs.frozen
class AdmissionFloor:
    """The floor one round applies; ``None`` means the derived default.

    ``AdmissionFloor()`` reproduces round 0 exactly.
    """

    required_matches: int | None = None
    min_similarity: float | None = None

    def lexical_floor(self, term_count: int) -> int:
        if self.required_matches is None:
            return required_matches(term_count)
        return max(1, min(self.required_matches, required_matches(term_count)))

    def vector_floor(self) -> float:
        return DEFAULT_MIN_SIMILARITY if self.min_similarity is None else self.min_similarity


@attrs.frozen
class AdmissionCounts:
    """How many candidates one search retrieved and how many survived admission."""

    family: Family
    scope_id: str
    retrieved: int
    admitted: int


@attrs.frozen
class Admitted:
    """The admitted part of a pool, each channel still in its retrieval order."""

    lexical_keys: tuple[int, ...]
    lexical_matches: tuple[int, ...]
    vector_keys: tuple[int, ...]
    vector_similarities: tuple[float, ...]
    counts: AdmissionCounts


def admit(pool: Pool, term_count: int, floor: AdmissionFloor) -> Admitted:
    """Filter ``pool`` through ``floor`` for a query of ``term_count`` distinct terms."""
    needed = floor.lexical_floor(term_count)
    minimum = floor.vector_floor()
    lexical = pool.lexical_matches >= needed
    vector = pool.vector_similarities >= minimum
    lexical_keys = tuple(pool.lexical_keys[lexical].tolist())
    vector_keys = tuple(pool.vector_keys[vector].tolist())
    counts = AdmissionCounts(
        family=pool.family,
        scope_id=pool.scope_id,
        retrieved=pool.retrieved,
        admitted=len(lexical_keys) + len(vector_keys),
    )
    return Admitted(
        lexical_keys=lexical_keys,
        lexical_matches=tuple(pool.lexical_matches[lexical].tolist()),
        vector_keys=vector_keys,
        vector_similarities=tuple(pool.vector_similarities[vector].tolist()),
        counts=counts,
    )
