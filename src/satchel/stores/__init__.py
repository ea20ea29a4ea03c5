"""Stores: where records live and pools come from (I/O).

``Store`` (= ``RecordStore`` + ``SearchStore``) is the extension point; every type its
signatures use is exported here (a write takes any family's ``Record`` and returns a
``Ref``; the family table, ``FAMILY_RULES``, says how each family is written), so a
store written outside satchel imports only ``satchel.stores``. ``MemoryStore`` is the
reference implementation to read first, ``SqliteStore`` the embedded default.
``SessionStore`` is optional: a store keeping
sessions lets runtimes share them (``shared_sessions``); the three stores here do.
``EmptyFamilies`` is optional too: a store telling which families a scope holds nothing
of spares a prepare a search task for each (the embedded and in-memory stores do).
``copy_store`` moves every record of a store into another through ``CopySource`` and
``CopyTarget``, which the three stores implement and no search ever calls;
``export_archive`` and ``import_archive`` move them through a file the same way.
Stores write records and retrieve pools; they know nothing of the gate, the
orchestration or the Builder, and use only the vocabulary (and an embedder's
fingerprint).

``OceanBaseStore`` is loaded when first named (a module ``__getattr__``): its modules
and the asyncio machinery they drive cost ``import satchel`` ~20 ms that a host of the
embedded store need not pay.
"""

import typing as _typing

from ..vocabulary._analysis import AnalysedQuery as AnalysedQuery
from ..vocabulary._analysis import index_text as index_text
from ..vocabulary._dates import DateMention as DateMention
from ..vocabulary._dates import mentioned_days as mentioned_days
from ..vocabulary._errors import NotFoundError as NotFoundError
from ..vocabulary._errors import StoreError as StoreError
from ..vocabulary._errors import StoreUnavailableError as StoreUnavailableError
from ..vocabulary._evidence import Evidence as Evidence
from ..vocabulary._evidence import Pool as Pool
from ..vocabulary._evidence import ThreadNeighbours as ThreadNeighbours
from ..vocabulary._families import FAMILY_RULES as FAMILY_RULES
from ..vocabulary._families import Family as Family
from ..vocabulary._families import FamilyRules as FamilyRules
from ..vocabulary._listing import ListedRecord as ListedRecord
from ..vocabulary._records import Columns as Columns
from ..vocabulary._records import Experience as Experience
from ..vocabulary._records import MemoryEntry as MemoryEntry
from ..vocabulary._records import MemoryRecord as MemoryRecord
from ..vocabulary._records import MemoryRef as MemoryRef
from ..vocabulary._records import Profile as Profile
from ..vocabulary._records import Record as Record
from ..vocabulary._records import RecordRef as RecordRef
from ..vocabulary._records import Ref as Ref
from ..vocabulary._records import Resource as Resource
from ..vocabulary._records import TopicMemory as TopicMemory
from ..vocabulary._retrieval import WINDOW_SCAN as WINDOW_SCAN
from ..vocabulary._retrieval import PoolRequest as PoolRequest
from ..vocabulary._retrieval import TermSelection as TermSelection
from ..vocabulary._retrieval import TimeHits as TimeHits
from ..vocabulary._retrieval import TimeWindow as TimeWindow
from ._archive import export_archive as export_archive
from ._archive import import_archive as import_archive
from ._copy import CopyReport as CopyReport
from ._copy import copy_store as copy_store
from ._copy_protocol import CopySource as CopySource
from ._copy_protocol import CopyTarget as CopyTarget
from ._copy_protocol import StoredVersion as StoredVersion
from ._copy_protocol import VectorOrigin as VectorOrigin
from ._open import open_store as open_store
from ._open import redact as redact
from ._protocol import EmptyFamilies as EmptyFamilies
from ._protocol import RecordStore as RecordStore
from ._protocol import SearchStore as SearchStore
from ._protocol import SessionStore as SessionStore
from ._protocol import Store as Store
from .memory import MemoryStore as MemoryStore
from .sqlite import SqliteStore as SqliteStore

if _typing.TYPE_CHECKING:
    from .oceanbase import OceanBaseStore as OceanBaseStore

__all__ = [
    "FAMILY_RULES",
    "WINDOW_SCAN",
    "AnalysedQuery",
    "Columns",
    "CopyReport",
    "CopySource",
    "CopyTarget",
    "DateMention",
    "EmptyFamilies",
    "Evidence",
    "Experience",
    "Family",
    "FamilyRules",
    "ListedRecord",
    "MemoryEntry",
    "MemoryRecord",
    "MemoryRef",
    "MemoryStore",
    "NotFoundError",
    "OceanBaseStore",
    "Pool",
    "PoolRequest",
    "Profile",
    "Record",
    "RecordRef",
    "RecordStore",
    "Ref",
    "Resource",
    "SearchStore",
    "SessionStore",
    "SqliteStore",
    "Store",
    "StoreError",
    "StoreUnavailableError",
    "StoredVersion",
    "TermSelection",
    "ThreadNeighbours",
    "TimeHits",
    "TimeWindow",
    "TopicMemory",
    "VectorOrigin",
    "copy_store",
    "export_archive",
    "import_archive",
    "index_text",
    "mentioned_days",
    "open_store",
    "redact",
]


def __getattr__(name: str) -> object:
    """``OceanBaseStore``, imported on first use (see the module's docstring)."""
    if name == "OceanBaseStore":
        from .oceanbase import OceanBaseStore

        globals()[name] = OceanBaseStore
        return OceanBaseStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), "OceanBaseStore"})
