"""``satchel.BudgetView``: what one fitting pass would deliver within the byte budget.

The Builder's budget probe produces it and the sufficiency gate reads it, so it lives
below both: a plain value.
"""

from __future__ import annotations

import attrs


@attrs.frozen
class BudgetView:
    """``max_bytes`` with what one fitting pass over the candidates would deliver.

    The gate tells a budget-bound pack (items cut or dropped, nothing unused) from a
    recall-thin one (bytes to spare) by it.
    """

    max_bytes: int
    delivered_items: int
    truncated_items: int
    dropped_items: int
    unused_bytes: int
