"""``satchel.Limits``: every count the pipeline bounds itself by, as one runtime option."""

from __future__ import annotations

import functools
import math
from typing import TYPE_CHECKING, Final

import attrs

from ._errors import InvalidRequestError
from ._families import FAMILIES, rules

if TYPE_CHECKING:
    from ._families import Family, FamilyRules

POOL_FACTOR: Final = 4
MIN_POOL: Final = 32


def _rules(family: Family) -> FamilyRules:
    try:
        return rules(family)
    except (KeyError, TypeError):  # TypeError: an unhashable value
        raise InvalidRequestError(f"family must be one of {', '.join(FAMILIES)}") from None


#: The largest count or byte size a limit may name: far past any useful pack, and well
#: inside what SQLite and numpy hold.
MAX_LIMIT: Final = 1_000_000


def _positive(instance: object, attribute: attrs.Attribute[int], value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_LIMIT:
        raise InvalidRequestError(f"Limits.{attribute.name} must be an integer in 1..{MAX_LIMIT:_}")


def _flag(instance: object, attribute: attrs.Attribute[bool], value: bool) -> None:
    if not isinstance(value, bool):
        raise InvalidRequestError(f"Limits.{attribute.name} must be True or False")


#: The pack size the counts of limits that scale with the budget are set for: a request
#: for more bytes scales them by ``max_bytes / SIZED_FOR_BYTES`` (:meth:`Limits.for_bytes`).
SIZED_FOR_BYTES: Final = 8000
#: The counts that scale with the budget. Not the experience family's: it delivers at
#: most ``experience_items`` (2) whatever the budget, so more candidates would only be
#: more work; nor the per-item byte cap and the truncation floor, which size one item.
SCALED: Final = (
    "memory_candidates",
    "topic_memory_candidates",
    "resource_candidates",
    "max_items",
    "topic_memory_items",
)


@attrs.frozen(kw_only=True)
class Limits:
    """Candidate ceilings, item limits and the per-item byte cap.

    The default lets the byte budget decide how many items are delivered: its counts are
    set for a pack of 8,000 bytes (``SIZED_FOR_BYTES``), and with ``scale_with_budget``
    a request for more bytes scales the candidate ceilings and item limits with it
    (:meth:`for_bytes`), so a 32 KB pack of short chat turns is not cut at 64 items with
    a quarter of its bytes unused. :meth:`classic` is the classic constants of the
    recall-sufficiency design, which stay fixed whatever the budget.
    """

    memory_candidates: int = attrs.field(default=64, validator=_positive)
    topic_memory_candidates: int = attrs.field(default=16, validator=_positive)
    experience_candidates: int = attrs.field(default=8, validator=_positive)
    resource_candidates: int = attrs.field(default=8, validator=_positive)
    max_items: int = attrs.field(default=64, validator=_positive)
    experience_items: int = attrs.field(default=2, validator=_positive)
    topic_memory_items: int = attrs.field(default=16, validator=_positive)
    item_bytes: int = attrs.field(default=2000, validator=_positive)
    min_truncated_bytes: int = attrs.field(default=64, validator=_positive)
    scale_with_budget: bool = attrs.field(default=True, validator=_flag)

    @classmethod
    def classic(cls) -> Limits:
        """The classic ceilings: 16 memory, 8 topic memory, 8 experience; 8 items."""
        return cls(
            memory_candidates=16,
            topic_memory_candidates=8,
            experience_candidates=8,
            resource_candidates=8,
            max_items=8,
            experience_items=2,
            topic_memory_items=8,
            scale_with_budget=False,
        )

    def for_bytes(self, max_bytes: int) -> Limits:
        """The limits of a request for ``max_bytes``: these, or with ``scale_with_budget``
        and a budget over ``SIZED_FOR_BYTES``, each count of ``SCALED`` times
        ``max_bytes / SIZED_FOR_BYTES``, rounded up (at most ``MAX_LIMIT``). A pack of
        8,000 bytes or fewer is fitted under exactly these limits."""
        if not self.scale_with_budget or max_bytes <= SIZED_FOR_BYTES:
            return self
        return _scaled(self, max_bytes)

    def ceiling(self, family: Family) -> int:
        """The most candidates a family may offer the Builder, across all scopes.

        Raises:
            InvalidRequestError: ``family`` is not a family name (also for
                :meth:`pool_size` and :meth:`item_limit`).
        """
        field = _rules(family).candidates_limit
        return 1 if field is None else int(getattr(self, field))

    def pool_size(self, family: Family) -> int:
        """How many candidates a search retrieves before admission: ``max(4 * ceiling, 32)``."""
        return max(POOL_FACTOR * self.ceiling(family), MIN_POOL)

    def item_limit(self, family: Family) -> int:
        """The most items of one family delivered without an assembly."""
        field = _rules(family).items_limit
        return self.max_items if field is None else int(getattr(self, field))


@functools.lru_cache(maxsize=64)
def _scaled(limits: Limits, max_bytes: int) -> Limits:
    """``limits`` scaled to ``max_bytes`` (:meth:`Limits.for_bytes`), made once per budget:
    the same object for every prepare asking it, so what is kept per limits is kept once."""
    factor = max_bytes / SIZED_FOR_BYTES
    return attrs.evolve(
        limits,
        **{field: min(MAX_LIMIT, math.ceil(getattr(limits, field) * factor)) for field in SCALED},
    )
