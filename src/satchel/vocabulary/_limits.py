"""``satchel.Limits``: every count the pipeline bounds itself by, as one runtime option."""

from __future__ import annotations

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


@attrs.frozen(kw_only=True)
class Limits:
    """Candidate ceilings, item limits and the per-item byte cap.

    The default lets the byte budget decide how many items are delivered;
    :meth:`classic` is the classic constants of the recall-sufficiency design.
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
        )

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
