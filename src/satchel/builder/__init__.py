"""The Builder: fits admitted evidence into a byte budget and renders it.

Pure: no I/O, no anyio, no store, no OpenTelemetry, no clock; it reads only its
arguments and the vocabulary. Selection (``_selection``) fixes the order items compete
in, tiers (``_tiers``) what each may be served at, fitting (``_fitting``) places them
within the budget, rendering (``_render``) spells the wrapper, and ``_build`` runs them
and offers the budget probe (``BuildResult.budget``): the same fitting pass, read for
its counts before anything is rendered.
"""

from ._build import BuildResult as BuildResult
from ._build import DeliveredItem as DeliveredItem
from ._build import build_context as build_context
from ._fitting import FitMemo as FitMemo
from ._fitting import OmissionCounts as OmissionCounts
from ._fitting import fitting as fitting
from ._parse import parse_context as parse_context
from ._tiers import needs_body as needs_body
from ._tiers import tier_ceiling as tier_ceiling

__all__ = [
    "BuildResult",
    "DeliveredItem",
    "FitMemo",
    "OmissionCounts",
    "build_context",
    "fitting",
    "needs_body",
    "parse_context",
    "tier_ceiling",
]
