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
import numpy as np

from ..vocabulary._errors import InvalidRequestError

if TYPE_CHECKING:
    import numpy.typing as npt

    from ..vocabulary._evidence import Pool
    from ..vocabulary._families import Family

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
        """Distinct query terms a lexical candidate must contain, for ``term_count`` terms.

        Raises:
            InvalidRequestError: ``term_count`` is not a non-negative integer.
        """
        if isinstance(term_count, bool) or not isinstance(term_count, int) or term_count < 0:
            raise InvalidRequestError("term_count must be a non-negative integer")
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
    """The admitted part of a pool, each channel still in its retrieval order (arrays, so
    fusion never walks candidates in Python)."""

    lexical_keys: npt.NDArray[np.int64] = attrs.field(eq=False)
    lexical_matches: npt.NDArray[np.int32] = attrs.field(eq=False)
    vector_keys: npt.NDArray[np.int64] = attrs.field(eq=False)
    vector_similarities: npt.NDArray[np.float32] = attrs.field(eq=False)
    counts: AdmissionCounts
    time_keys: npt.NDArray[np.int64] = attrs.field(
        factory=lambda: np.empty(0, dtype=np.int64), eq=False
    )
    #: The full-text channel ranked by passage (``in_context``), which fusion ranks by
    #: in its place; None: turn by turn.
    context_keys: npt.NDArray[np.int64] | None = attrs.field(default=None, eq=False)


def admit(pool: Pool, term_count: int, floor: AdmissionFloor) -> Admitted:
    """Filter ``pool`` through ``floor`` for a query of ``term_count`` distinct terms."""
    lexical = pool.lexical_matches >= floor.lexical_floor(term_count)
    vector = pool.vector_similarities >= floor.vector_floor()
    lexical_keys = pool.lexical_keys[lexical]
    vector_keys = pool.vector_keys[vector]
    time_keys = pool.time_candidates
    # The window a query's date names is the time channel's floor: it admits them all.
    counts = AdmissionCounts(
        family=pool.family,
        scope_id=pool.scope_id,
        retrieved=pool.retrieved,
        admitted=len(lexical_keys) + len(vector_keys) + len(time_keys),
    )
    return Admitted(
        lexical_keys=lexical_keys,
        lexical_matches=pool.lexical_matches[lexical],
        vector_keys=vector_keys,
        vector_similarities=pool.vector_similarities[vector],
        counts=counts,
        time_keys=time_keys,
    )
