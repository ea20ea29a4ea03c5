"""The Builder: fits admitted evidence into a byte budget and renders it. Pure."""

from ._build import BuildResult as BuildResult
from ._build import DeliveredItem as DeliveredItem
from ._build import build_context as build_context
from ._fitting import OmissionCounts as OmissionCounts
from ._probe import BudgetView as BudgetView
from ._probe import probe_budget as probe_budget
from ._tiers import needs_body as needs_body
from ._tiers import tier_ceiling as tier_ceiling

__all__ = [
    "BudgetView",
    "BuildResult",
    "DeliveredItem",
    "OmissionCounts",
    "build_context",
    "needs_body",
    "probe_budget",
    "tier_ceiling",
]
