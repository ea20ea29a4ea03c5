"""The vocabulary: plain values and rules that every layer of satchel shares.

Records and references, the prepare request and the prepared context, the family table,
limits, evidence and the pools stores retrieve, query analysis and dates, embedder
calibration, the budget view, the error tree and the tracer factory. Nothing here
imports anything else of satchel, runs a task or touches a store: it is the bottom layer.
"""

from ._analysis import AnalysedQuery as AnalysedQuery
from ._analysis import analyse as analyse
from ._analysis import analyse_query as analyse_query
from ._analysis import index_text as index_text
from ._analysis import match_expression as match_expression
from ._analysis import names_apart as names_apart
from ._budget import BudgetView as BudgetView
from ._calibration import Calibration as Calibration
from ._citations import Citation as Citation
from ._citations import ContextItem as ContextItem
from ._dates import DateMention as DateMention
from ._dates import asks_when as asks_when
from ._dates import extract_dates as extract_dates
from ._dates import mentioned_days as mentioned_days
from ._dates import says_when as says_when
from ._errors import InvalidRequestError as InvalidRequestError
from ._errors import InvariantError as InvariantError
from ._errors import MalformedLineError as MalformedLineError
from ._errors import ModelLoadError as ModelLoadError
from ._errors import NotFoundError as NotFoundError
from ._errors import PrepareFailedError as PrepareFailedError
from ._errors import PrepareTimeoutError as PrepareTimeoutError
from ._errors import SatchelError as SatchelError
from ._errors import StoreError as StoreError
from ._errors import StoreUnavailableError as StoreUnavailableError
from ._evidence import Evidence as Evidence
from ._evidence import Pool as Pool
from ._evidence import ThreadNeighbours as ThreadNeighbours
from ._families import DEFAULT_FAMILIES as DEFAULT_FAMILIES
from ._families import FAMILIES as FAMILIES
from ._families import FAMILY_RULES as FAMILY_RULES
from ._families import INTERLEAVE_ORDER as INTERLEAVE_ORDER
from ._families import TIERS as TIERS
from ._families import Family as Family
from ._families import FamilyRules as FamilyRules
from ._families import NameRule as NameRule
from ._families import Tier as Tier
from ._families import citation as citation
from ._families import rules as rules
from ._limits import Limits as Limits
from ._listing import DEFAULT_PAGE as DEFAULT_PAGE
from ._listing import MAX_PAGE as MAX_PAGE
from ._listing import ListedRecord as ListedRecord
from ._listing import RecordPage as RecordPage
from ._listing import ScopeSummary as ScopeSummary
from ._listing import StoredRecord as StoredRecord
from ._memo import forget_texts as forget_texts
from ._receipts import CHANNELS as CHANNELS
from ._receipts import MAX_OMISSIONS as MAX_OMISSIONS
from ._receipts import OMISSION_CAUSES as OMISSION_CAUSES
from ._receipts import Channel as Channel
from ._receipts import Explanation as Explanation
from ._receipts import Omission as Omission
from ._receipts import OmissionCause as OmissionCause
from ._receipts import Receipt as Receipt
from ._records import Columns as Columns
from ._records import Experience as Experience
from ._records import MemoryEntry as MemoryEntry
from ._records import MemoryRecord as MemoryRecord
from ._records import MemoryRef as MemoryRef
from ._records import Profile as Profile
from ._records import Record as Record
from ._records import RecordRef as RecordRef
from ._records import Ref as Ref
from ._records import Resource as Resource
from ._records import TopicMemory as TopicMemory
from ._requests import DEFAULT_MAX_BYTES as DEFAULT_MAX_BYTES
from ._requests import MAX_KEY_CHARS as MAX_KEY_CHARS
from ._requests import MAX_MAX_BYTES as MAX_MAX_BYTES
from ._requests import MAX_QUERY_CHARS as MAX_QUERY_CHARS
from ._requests import MAX_REFERENCES as MAX_REFERENCES
from ._requests import MAX_SCOPE_CHARS as MAX_SCOPE_CHARS
from ._requests import MAX_SECTION_LIMIT as MAX_SECTION_LIMIT
from ._requests import MAX_VERSION as MAX_VERSION
from ._requests import MIN_MAX_BYTES as MIN_MAX_BYTES
from ._requests import SCHEMA as SCHEMA
from ._requests import Assembly as Assembly
from ._requests import PrepareContextRequest as PrepareContextRequest
from ._requests import PreparedContext as PreparedContext
from ._requests import ResolvedRequest as ResolvedRequest
from ._requests import Section as Section
from ._requests import Status as Status
from ._requests import validate_request as validate_request
from ._requests import validate_scope as validate_scope
from ._requests import validate_session_owner as validate_session_owner
from ._retrieval import POSTINGS_BUDGET as POSTINGS_BUDGET
from ._retrieval import RARE_POSTINGS as RARE_POSTINGS
from ._retrieval import WINDOW_SCAN as WINDOW_SCAN
from ._retrieval import PoolRequest as PoolRequest
from ._retrieval import TermSelection as TermSelection
from ._retrieval import TimeHits as TimeHits
from ._retrieval import TimeWindow as TimeWindow
from ._retrieval import apart_from_common as apart_from_common
from ._retrieval import lightly_named as lightly_named
from ._speakers import answered as answered
from ._speakers import asks_question as asks_question
from ._speakers import called_by_name as called_by_name
from ._speakers import chat_filler as chat_filler
from ._speakers import given_name as given_name
from ._speakers import nicknamed as nicknamed
from ._speakers import said_by as said_by
from ._speakers import says_nothing as says_nothing
from ._speakers import speaker_terms as speaker_terms
from ._speakers import unlabelled as unlabelled
from ._telemetry import check_provider as check_provider
from ._telemetry import error_type as error_type
from ._telemetry import satchel_version as satchel_version
from ._telemetry import tracer as tracer

__all__ = [
    "CHANNELS",
    "DEFAULT_FAMILIES",
    "DEFAULT_MAX_BYTES",
    "DEFAULT_PAGE",
    "FAMILIES",
    "FAMILY_RULES",
    "INTERLEAVE_ORDER",
    "MAX_KEY_CHARS",
    "MAX_MAX_BYTES",
    "MAX_OMISSIONS",
    "MAX_PAGE",
    "MAX_QUERY_CHARS",
    "MAX_REFERENCES",
    "MAX_SCOPE_CHARS",
    "MAX_SECTION_LIMIT",
    "MAX_VERSION",
    "MIN_MAX_BYTES",
    "OMISSION_CAUSES",
    "POSTINGS_BUDGET",
    "RARE_POSTINGS",
    "SCHEMA",
    "TIERS",
    "WINDOW_SCAN",
    "AnalysedQuery",
    "Assembly",
    "BudgetView",
    "Calibration",
    "Channel",
    "Citation",
    "Columns",
    "ContextItem",
    "DateMention",
    "Evidence",
    "Experience",
    "Explanation",
    "Family",
    "FamilyRules",
    "InvalidRequestError",
    "InvariantError",
    "Limits",
    "ListedRecord",
    "MalformedLineError",
    "MemoryEntry",
    "MemoryRecord",
    "MemoryRef",
    "ModelLoadError",
    "NameRule",
    "NotFoundError",
    "Omission",
    "OmissionCause",
    "Pool",
    "PoolRequest",
    "PrepareContextRequest",
    "PrepareFailedError",
    "PrepareTimeoutError",
    "PreparedContext",
    "Profile",
    "Receipt",
    "Record",
    "RecordPage",
    "RecordRef",
    "Ref",
    "ResolvedRequest",
    "Resource",
    "SatchelError",
    "ScopeSummary",
    "Section",
    "Status",
    "StoreError",
    "StoreUnavailableError",
    "StoredRecord",
    "TermSelection",
    "ThreadNeighbours",
    "Tier",
    "TimeHits",
    "TimeWindow",
    "TopicMemory",
    "analyse",
    "analyse_query",
    "answered",
    "apart_from_common",
    "asks_question",
    "asks_when",
    "called_by_name",
    "chat_filler",
    "check_provider",
    "citation",
    "error_type",
    "extract_dates",
    "forget_texts",
    "given_name",
    "index_text",
    "lightly_named",
    "match_expression",
    "mentioned_days",
    "names_apart",
    "nicknamed",
    "rules",
    "said_by",
    "satchel_version",
    "says_nothing",
    "says_when",
    "speaker_terms",
    "tracer",
    "unlabelled",
    "validate_request",
    "validate_scope",
    "validate_session_owner",
]
