"""The orchestration: the only layer that runs tasks.

A prepare flows through it in this order: :class:`Preparer` (``_prepare``) analyses and
embeds the query, starts the session's turn and makes the prepare's one
:class:`PrepareState` (``_state``: the request, its deadline, its searches and its
:class:`Exclusions`), which it passes down; the :class:`Coordinator` (``_coordinator``)
runs round 0 and the gated expansion rounds, each a ranking and a reading phase of
:class:`Searcher` tasks (``_search``) that send their outcomes back to it, their fair
shares (``_shares``) computed between the phases; it holds the frozen
:class:`Committed` state, whose every transition ``_committed`` owns, asks the expander
for each next step and fits through the prepare's :class:`Packer` (``_packer``), which
calls the pure Builder. Per-scope readers-writer guards (``_locks``) and the session
dedup ledger (``_ledger``; ``_shared_ledger`` when the store keeps the sessions) live
here too, the receipts of an explained prepare (``_receipts``), and the spans and
metrics of a prepare (``_telemetry``).
"""

from ._committed import Candidates as Candidates
from ._committed import Committed as Committed
from ._committed import Recall as Recall
from ._committed import Recalled as Recalled
from ._committed import RecallRules as RecallRules
from ._coordinator import Coordinator as Coordinator
from ._ledger import DedupLedger as DedupLedger
from ._locks import ScopeGuards as ScopeGuards
from ._options import RuntimeOptions as RuntimeOptions
from ._packer import Packer as Packer
from ._prepare import Explained as Explained
from ._prepare import Preparer as Preparer
from ._search import RoundSettings as RoundSettings
from ._search import Searcher as Searcher
from ._search import SearchOutcome as SearchOutcome
from ._shared_ledger import SharedLedger as SharedLedger
from ._stages import Digest as Digest
from ._stages import Planner as Planner
from ._state import Exclusions as Exclusions
from ._state import PrepareState as PrepareState
from ._state import SearchSpec as SearchSpec
from ._telemetry import PrepareMetrics as PrepareMetrics
from ._telemetry import check_meter_provider as check_meter_provider

__all__ = [
    "Candidates",
    "Committed",
    "Coordinator",
    "DedupLedger",
    "Digest",
    "Exclusions",
    "Explained",
    "Packer",
    "Planner",
    "PrepareMetrics",
    "PrepareState",
    "Preparer",
    "Recall",
    "RecallRules",
    "Recalled",
    "RoundSettings",
    "RuntimeOptions",
    "ScopeGuards",
    "SearchOutcome",
    "SearchSpec",
    "Searcher",
    "SharedLedger",
    "check_meter_provider",
]
