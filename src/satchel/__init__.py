"""satchel: bounded, cited context packs for AI agents from the memory they keep.

The package is layered; each layer imports only the layers below it (a test pins this):

- ``cli`` calls the public API below, ``embedders`` (to build an embedder from
  ``--embedder``), the workload files (``_workload``, which the benchmarks read too,
  and which use only the vocabulary's plain values), the OTLP set-up (``_otlp``) and
  the servers (``http``, ``mcp``), which in turn call the public API, the JSON
  spellings (``_wire``) and the wire contract (``_contract``).
- ``client`` (``satchel.Client``, loaded when first named, so ``import satchel`` needs no
  httpx) and ``integrations`` (``SatchelStore`` for LangGraph) sit beside the servers:
  the public API over the service, and the public API behind other frameworks.
- ``runtime``: ``open_runtime`` and ``Runtime``, the public API; the only layer that
  wires the others together.
- ``orchestration``: the only layer that runs a prepare's tasks. One prepare goes
  ``Preparer`` (makes the prepare's one ``PrepareState``) -> ``Coordinator`` (runs
  the effects the recall state machine asks for: rounds and fits) -> ``Searcher``
  tasks; per-scope locks and the session
  ledger live here. The stores and embedders keep their own worker threads and
  connections (the places are listed, with their reasons, in tests/test_layers.py).
- ``recall`` (admission, fusion, gate, expander, merge, allocation) and ``builder``
  (selection, tiers, fitting, rendering, budget probe): pure, side by side.
- ``stores``: the ``Store`` protocol, the record rules every store keeps, and the
  stores: ``memory`` (the reference), ``sqlite`` (the embedded default), ``oceanbase``
  (I/O).
- ``embedders``: text to vectors, each with its calibration.
- ``vocabulary``: records, requests, the family table, limits, evidence and pools,
  query analysis, dates, the error tree: plain values every layer shares.
- ``_loop``: below everything, the event loop's turn every layer running on it takes.

docs/architecture.md walks through the pipeline and the contracts each layer keeps.
"""

import typing as _typing

from . import stores as stores
from .builder import parse_context as parse_context
from .embedders import Embedder as Embedder
from .embedders import HashingEmbedder as HashingEmbedder
from .embedders import SentenceTransformerEmbedder as SentenceTransformerEmbedder
from .embedders import StaticEmbedder as StaticEmbedder
from .recall import AdmissionCounts as AdmissionCounts
from .recall import AdmissionFloor as AdmissionFloor
from .recall import FamilyView as FamilyView
from .recall import FusionWeights as FusionWeights
from .recall import GateAssessment as GateAssessment
from .recall import RecallEffort as RecallEffort
from .recall import RecallExpander as RecallExpander
from .recall import RecallSufficiencyGate as RecallSufficiencyGate
from .recall import RecallSufficiencyPolicy as RecallSufficiencyPolicy
from .recall import SearchPlan as SearchPlan
from .runtime import Runtime as Runtime
from .runtime import open_runtime as open_runtime
from .stores import MemoryStore as MemoryStore
from .stores import SqliteStore as SqliteStore
from .stores import Store as Store
from .vocabulary import Assembly as Assembly
from .vocabulary import BudgetView as BudgetView
from .vocabulary import Calibration as Calibration
from .vocabulary import Citation as Citation
from .vocabulary import ContextItem as ContextItem
from .vocabulary import Experience as Experience
from .vocabulary import Explanation as Explanation
from .vocabulary import InvalidRequestError as InvalidRequestError
from .vocabulary import Limits as Limits
from .vocabulary import MemoryEntry as MemoryEntry
from .vocabulary import MemoryRecord as MemoryRecord
from .vocabulary import MemoryRef as MemoryRef
from .vocabulary import ModelLoadError as ModelLoadError
from .vocabulary import NotFoundError as NotFoundError
from .vocabulary import Omission as Omission
from .vocabulary import PrepareContextRequest as PrepareContextRequest
from .vocabulary import PreparedContext as PreparedContext
from .vocabulary import PrepareFailedError as PrepareFailedError
from .vocabulary import PrepareTimeoutError as PrepareTimeoutError
from .vocabulary import Profile as Profile
from .vocabulary import Receipt as Receipt
from .vocabulary import RecordPage as RecordPage
from .vocabulary import RecordRef as RecordRef
from .vocabulary import Resource as Resource
from .vocabulary import SatchelError as SatchelError
from .vocabulary import ScopeSummary as ScopeSummary
from .vocabulary import Section as Section
from .vocabulary import StoredRecord as StoredRecord
from .vocabulary import StoreError as StoreError
from .vocabulary import StoreUnavailableError as StoreUnavailableError
from .vocabulary import TopicMemory as TopicMemory

__all__ = [
    "AdmissionCounts",
    "AdmissionFloor",
    "Assembly",
    "BudgetView",
    "Calibration",
    "Citation",
    "Client",
    "ContextItem",
    "Embedder",
    "Experience",
    "Explanation",
    "FamilyView",
    "FusionWeights",
    "GateAssessment",
    "HashingEmbedder",
    "InvalidRequestError",
    "Limits",
    "MemoryEntry",
    "MemoryRecord",
    "MemoryRef",
    "MemoryStore",
    "ModelLoadError",
    "NotFoundError",
    "Omission",
    "PrepareContextRequest",
    "PrepareFailedError",
    "PrepareTimeoutError",
    "PreparedContext",
    "Profile",
    "RecallEffort",
    "RecallExpander",
    "RecallSufficiencyGate",
    "RecallSufficiencyPolicy",
    "Receipt",
    "RecordPage",
    "RecordRef",
    "Resource",
    "Runtime",
    "SatchelError",
    "ScopeSummary",
    "SearchPlan",
    "Section",
    "SentenceTransformerEmbedder",
    "SqliteStore",
    "StaticEmbedder",
    "Store",
    "StoreError",
    "StoreUnavailableError",
    "StoredRecord",
    "TopicMemory",
    "open_runtime",
    "parse_context",
    "stores",
]

if _typing.TYPE_CHECKING:
    from .client import Client as Client


def __getattr__(name: str) -> object:
    """``satchel.Client``, loaded when first named: the client sits above the facade
    (it speaks the service's JSON) and needs httpx, the ``satchel[client]`` extra, which
    ``import satchel`` must not. ``satchel.__version__``: the installed distribution's
    version, read on first use (reading package metadata at import would slow every
    ``import satchel``)."""
    if name == "Client":
        import importlib

        client: object = importlib.import_module("satchel.client").Client
        return client
    if name == "__version__":
        from importlib import metadata

        try:
            return metadata.version("satchel")
        except metadata.PackageNotFoundError:  # run from a source tree
            return "0+unknown"
    raise AttributeError(f"module 'satchel' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), "Client"})
