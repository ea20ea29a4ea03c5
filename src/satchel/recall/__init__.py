"""The recall policy: admission, fusion, the sufficiency gate, the expander, merging and
allocation. Pure: no I/O, no anyio, no store, no OpenTelemetry, no clock; it reads only
its arguments and the vocabulary, and is tested with plain values."""

from ._admission import AdmissionCounts as AdmissionCounts
from ._admission import AdmissionFloor as AdmissionFloor
from ._admission import Admitted as Admitted
from ._admission import admit as admit
from ._admission import required_matches as required_matches
from ._allocation import allocate as allocate
from ._allocation import check_ceiling as check_ceiling
from ._allocation import takes as takes
from ._context import CONTEXT_REACH as CONTEXT_REACH
from ._context import context_hits as context_hits
from ._context import in_context as in_context
from ._effort import RecallEffort as RecallEffort
from ._effort import RecallEffortSink as RecallEffortSink
from ._fusion import FamilySearch as FamilySearch
from ._fusion import FusionWeights as FusionWeights
from ._fusion import by_named_speaker as by_named_speaker
from ._fusion import fuse as fuse
from ._fusion import neighbour_scores as neighbour_scores
from ._fusion import with_neighbours as with_neighbours
from ._gate import AT_MAX_ROUNDS as AT_MAX_ROUNDS
from ._gate import EXPANSION_FAILED as EXPANSION_FAILED
from ._gate import EXPANSION_TIMEOUT as EXPANSION_TIMEOUT
from ._gate import GATE_FAILED as GATE_FAILED
from ._gate import POOL_EXHAUSTED as POOL_EXHAUSTED
from ._gate import FamilyView as FamilyView
from ._gate import GateAssessment as GateAssessment
from ._gate import RecallSufficiencyGate as RecallSufficiencyGate
from ._merge import merge_rounds as merge_rounds
from ._policy import MAX_EXPANSIONS as MAX_EXPANSIONS
from ._policy import NEIGHBOURS as NEIGHBOURS
from ._policy import RecallExpander as RecallExpander
from ._policy import RecallSufficiencyPolicy as RecallSufficiencyPolicy
from ._policy import SearchPlan as SearchPlan
from ._policy import calibrate as calibrate
from ._relevance import DISTINCTIVE as DISTINCTIVE
from ._relevance import NO_RELEVANT as NO_RELEVANT
from ._relevance import VOCABULARY as VOCABULARY
from ._relevance import VOUCHED_ONLY as VOUCHED_ONLY
from ._relevance import RelevanceFloor as RelevanceFloor
from ._relevance import evidence_of_relevance as evidence_of_relevance
from ._relevance import vouched as vouched
from ._trace import SearchTrace as SearchTrace
from ._trace import below_floor as below_floor
from ._trace import trace_search as trace_search
from ._views import family_view as family_view
from ._views import lowest_floor as lowest_floor
from ._views import reachable as reachable

__all__ = [
    "AT_MAX_ROUNDS",
    "CONTEXT_REACH",
    "DISTINCTIVE",
    "EXPANSION_FAILED",
    "EXPANSION_TIMEOUT",
    "GATE_FAILED",
    "MAX_EXPANSIONS",
    "NEIGHBOURS",
    "NO_RELEVANT",
    "POOL_EXHAUSTED",
    "VOCABULARY",
    "VOUCHED_ONLY",
    "AdmissionCounts",
    "AdmissionFloor",
    "Admitted",
    "FamilySearch",
    "FamilyView",
    "FusionWeights",
    "GateAssessment",
    "RecallEffort",
    "RecallEffortSink",
    "RecallExpander",
    "RecallSufficiencyGate",
    "RecallSufficiencyPolicy",
    "RelevanceFloor",
    "SearchPlan",
    "SearchTrace",
    "admit",
    "allocate",
    "below_floor",
    "by_named_speaker",
    "calibrate",
    "check_ceiling",
    "context_hits",
    "evidence_of_relevance",
    "family_view",
    "fuse",
    "in_context",
    "lowest_floor",
    "merge_rounds",
    "neighbour_scores",
    "reachable",
    "required_matches",
    "takes",
    "trace_search",
    "vouched",
    "with_neighbours",
]
