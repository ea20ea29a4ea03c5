"""Workloads: the JSON Lines folders satchel ingests and evaluates (docs/workload.md).

A workload folder holds ``entries.jsonl`` (records to remember) and ``queries.jsonl``
(questions with the entry ids that answer them). This package reads them line by line
into satchel records (``_reading``), reads a messaging app's chat export into entries of
one scope (``_chats``), writes entries through the public runtime in atomic
batches (``_ingest``) and maps the citations of a prepared context back to workload ids
(``_citations``). The CLI and the benchmarks use it; nothing here reaches below the
public runtime API.
"""

from ..vocabulary._errors import MalformedLineError as MalformedLineError
from ._chats import DATE_ORDERS as DATE_ORDERS
from ._chats import ChatExport as ChatExport
from ._chats import DatesReadBothWays as DatesReadBothWays
from ._chats import read_chat_export as read_chat_export
from ._citations import Change as Change
from ._citations import CitationKey as CitationKey
from ._citations import IdMap as IdMap
from ._citations import append_id_map as append_id_map
from ._citations import key_of as key_of
from ._ingest import IngestError as IngestError
from ._ingest import IngestReport as IngestReport
from ._ingest import RecordWriter as RecordWriter
from ._ingest import RejectedEntry as RejectedEntry
from ._ingest import ingest as ingest
from ._reading import MalformedLine as MalformedLine
from ._reading import Record as Record
from ._reading import WorkloadEntry as WorkloadEntry
from ._reading import WorkloadQuery as WorkloadQuery
from ._reading import iter_entries as iter_entries
from ._reading import iter_queries as iter_queries
from ._reading import read_entries as read_entries
from ._reading import read_queries as read_queries

__all__ = [
    "DATE_ORDERS",
    "Change",
    "ChatExport",
    "CitationKey",
    "DatesReadBothWays",
    "IdMap",
    "IngestError",
    "IngestReport",
    "MalformedLine",
    "MalformedLineError",
    "Record",
    "RecordWriter",
    "RejectedEntry",
    "WorkloadEntry",
    "WorkloadQuery",
    "append_id_map",
    "ingest",
    "iter_entries",
    "iter_queries",
    "key_of",
    "read_chat_export",
    "read_entries",
    "read_queries",
]
