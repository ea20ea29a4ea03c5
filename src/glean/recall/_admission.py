"""Admission: the floor a retrieved pool must clear before fusion.

Pure. A lexical candidate must contain ``required_matches`` distinct query terms; a
vector candidate needs a cosine similarity of at least the floor (0.3 by default); a
time candidate was recorded in a window the query names, which is its floor.
Expansion rounds lower these floors on the same pool; nothing here retrieves.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Final

import attrs

from .._errors import InvalidRequestError

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


def _matches(instance: object, attribute: attrs.Attribute[int | None], value: object) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise InvalidRequestError(f"AdmissionFloor.{attribute.name} must be a positive integer")


def _similarity(instance: object, attribute: attrs.Attribute[float | None], value: object) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int | float) or not -1 <= value <= 1:
        raise InvalidRequestError(f"AdmissionFloor.{attribute.name} must be a cosine in -1..1")


@attrs.frozen
class AdmissionFloor:
    """The floor one round applies; ``None`` means the derived default.

    ``AdmissionFloor()`` reproduces round 0 exactly.
    """

    required_matches: int | None = attrs.field(default=None, validator=_matches)
    min_similarity: float | None = attrs.field(default=None, validator=_similarity)

    def lexical_floor(self, term_count: int) -> int:
        if self.required_matches is None:
            return required_matches(term_count)
        return max(1, min(self.required_matches, required_matches(term_count)))

    def vector_floor(self) -> float:
        # An override only lowers the floor: expansion never raises it above round 0's.
        if self.min_similarity is None:
            return DEFAULT_MIN_SIMILARITY
        return min(self.min_similarity, DEFAULT_MIN_SIMILARITY)


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
    time_keys: tuple[int, ...] = ()


def admit(pool: Pool, term_count: int, floor: AdmissionFloor) -> Admitted:
    """Filter ``pool`` through ``floor`` for a query of ``term_count`` distinct terms."""
    needed = floor.lexical_floor(term_count)
    minimum = floor.vector_floor()
    lexical = pool.lexical_matches >= needed
    vector = pool.vector_similarities >= minimum
    lexical_keys = tuple(pool.lexical_keys[lexical].tolist())
    vector_keys = tuple(pool.vector_keys[vector].tolist())
    # The window a query's date names is the time channel's floor: it admits them all.
    time_keys = tuple(pool.time_keys.tolist())
    counts = AdmissionCounts(
        family=pool.family,
        scope_id=pool.scope_id,
        retrieved=pool.retrieved,
        admitted=len(lexical_keys) + len(vector_keys) + len(time_keys),
    )
    return Admitted(
        lexical_keys=lexical_keys,
        lexical_matches=tuple(pool.lexical_matches[lexical].tolist()),
        vector_keys=vector_keys,
        vector_similarities=tuple(pool.vector_similarities[vector].tolist()),
        counts=counts,
        time_keys=time_keys,
    )
