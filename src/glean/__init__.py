"""glean: bounded, cited context packs for AI agents from the memory they keep."""

from . import stores as stores
from ._embedders import Embedder as Embedder
from ._embedders import HashingEmbedder as HashingEmbedder
from ._errors import GleanError as GleanError
from ._errors import InvalidRequestError as InvalidRequestError
from ._errors import NotFoundError as NotFoundError
from ._errors import PrepareFailedError as PrepareFailedError
from ._errors import PrepareTimeoutError as PrepareTimeoutError
from ._errors import StoreError as StoreError
from ._limits import Limits as Limits
from ._records import Experience as Experience
from ._records import MemoryEntry as MemoryEntry
from ._records import MemoryRecord as MemoryRecord
from ._records import MemoryRef as MemoryRef
from ._records import Profile as Profile
from ._records import RecordRef as RecordRef
from ._records import Resource as Resource
from ._records import TopicMemory as TopicMemory
from ._requests import Assembly as Assembly
from ._requests import PrepareContextRequest as PrepareContextRequest
from ._requests import PreparedContext as PreparedContext
from ._requests import Section as Section
from ._runtime import Runtime as Runtime
from ._runtime import open_runtime as open_runtime
from ._sentence import SentenceTransformerEmbedder as SentenceTransformerEmbedder
from ._static import ModelLoadError as ModelLoadError
from ._static import StaticEmbedder as StaticEmbedder
from .builder import BudgetView as BudgetView
from .recall._admission import AdmissionCounts as AdmissionCounts
from .recall._admission import AdmissionFloor as AdmissionFloor
from .recall._effort import RecallEffort as RecallEffort
from .recall._fusion import FusionWeights as FusionWeights
from .recall._gate import FamilyView as FamilyView
from .recall._gate import GateAssessment as GateAssessment
from .recall._gate import RecallSufficiencyGate as RecallSufficiencyGate
from .recall._policy import RecallExpander as RecallExpander
from .recall._policy import RecallSufficiencyPolicy as RecallSufficiencyPolicy
from .recall._policy import SearchPlan as SearchPlan
from .stores import SqliteStore as SqliteStore
from .stores import Store as Store

__all__ = [
    "AdmissionCounts",
    "AdmissionFloor",
    "Assembly",
    "BudgetView",
    "Embedder",
    "Experience",
    "FamilyView",
    "FusionWeights",
    "GateAssessment",
    "GleanError",
    "HashingEmbedder",
    "InvalidRequestError",
    "Limits",
    "MemoryEntry",
    "MemoryRecord",
    "MemoryRef",
    "ModelLoadError",
    "NotFoundError",
    "PrepareContextRequest",
    "PrepareFailedError",
    "PrepareTimeoutError",
    "PreparedContext",
    "Profile",
    "RecallEffort",
    "RecallExpander",
    "RecallSufficiencyGate",
    "RecallSufficiencyPolicy",
    "RecordRef",
    "Resource",
    "Runtime",
    "SearchPlan",
    "Section",
    "SentenceTransformerEmbedder",
    "SqliteStore",
    "StaticEmbedder",
    "Store",
    "StoreError",
    "TopicMemory",
    "open_runtime",
    "stores",
]
