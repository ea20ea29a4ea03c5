"""satchel's wire contract, defined once: every request and answer the HTTP service and
the MCP server exchange, with the bounds, names and meanings their schemas state.

The shapes (``_prepare``, ``_memories``, ``_listing``, ``_errors``) are written once, in
the terms of ``_model``: a :class:`Shape` is a JSON object, a :class:`Field` one of its
members. Every bound and name in them is read from the constant satchel's own validation applies
(``satchel.vocabulary``, and the recall policy's bound on expansion rounds; ``_bounds``),
never restated, so a schema a client follows is never refused and a bound changed in
satchel changes every schema with it. The servers render the shapes their own way: the
OpenAPI document (``http/_openapi.py``: named components, open answers, ``type: [T,
"null"]``) and the MCP tools' JSON Schemas (``mcp/_schemas.py``: inline, closed, null as
an ``anyOf`` branch). Their generated copies are committed as ``docs/openapi.json`` and
``docs/mcp-tools.json`` (``python scripts/contract.py`` writes them; a test regenerates
both and compares, so neither drifts unseen).

It sits above the public facade, beside ``_wire`` (which reads and writes the values these
shapes describe), and imports only the vocabulary and the recall policy: the servers
import it, nothing below them does.
"""

from __future__ import annotations

import json
from typing import Any

from satchel.vocabulary import CHANNELS as CHANNELS
from satchel.vocabulary import DEFAULT_FAMILIES as DEFAULT_FAMILIES
from satchel.vocabulary import DEFAULT_MAX_BYTES as DEFAULT_MAX_BYTES
from satchel.vocabulary import DEFAULT_PAGE as DEFAULT_PAGE
from satchel.vocabulary import FAMILIES as FAMILIES
from satchel.vocabulary import MAX_KEY_CHARS as MAX_KEY_CHARS
from satchel.vocabulary import MAX_MAX_BYTES as MAX_MAX_BYTES
from satchel.vocabulary import MAX_OMISSIONS as MAX_OMISSIONS
from satchel.vocabulary import MAX_PAGE as MAX_PAGE
from satchel.vocabulary import MAX_QUERY_CHARS as MAX_QUERY_CHARS
from satchel.vocabulary import MAX_REFERENCES as MAX_REFERENCES
from satchel.vocabulary import MAX_SCOPE_CHARS as MAX_SCOPE_CHARS
from satchel.vocabulary import MAX_SECTION_LIMIT as MAX_SECTION_LIMIT
from satchel.vocabulary import MAX_VERSION as MAX_VERSION
from satchel.vocabulary import MIN_MAX_BYTES as MIN_MAX_BYTES
from satchel.vocabulary import OMISSION_CAUSES as OMISSION_CAUSES
from satchel.vocabulary import TIERS as TIERS

from ._bounds import DEFAULT_KIND as DEFAULT_KIND
from ._bounds import MAX_ROUND as MAX_ROUND
from ._bounds import MAX_SECTION_ITEMS as MAX_SECTION_ITEMS
from ._bounds import NOT_BLANK as NOT_BLANK
from ._bounds import SCHEMA_ID as SCHEMA_ID
from ._bounds import SECTION_LIMITS as SECTION_LIMITS
from ._bounds import STATUSES as STATUSES
from ._errors import ERROR as ERROR
from ._errors import ERROR_TYPES as ERROR_TYPES
from ._errors import ErrorType as ErrorType
from ._listing import CURSOR_DOC as CURSOR_DOC
from ._listing import FAMILY_DOC as FAMILY_DOC
from ._listing import FORGOTTEN_DOC as FORGOTTEN_DOC
from ._listing import LIMIT_DOC as LIMIT_DOC
from ._listing import LIST_RECORDS as LIST_RECORDS
from ._listing import RECORD_PAGE as RECORD_PAGE
from ._listing import SCOPE_SUMMARY as SCOPE_SUMMARY
from ._listing import SCOPES as SCOPES
from ._listing import STORED_RECORD as STORED_RECORD
from ._memories import ADD_MEMORIES as ADD_MEMORIES
from ._memories import ADDED_MEMORIES as ADDED_MEMORIES
from ._memories import ENTRY as ENTRY
from ._memories import ERASED_RECORDS as ERASED_RECORDS
from ._memories import ERASED_VERSIONS as ERASED_VERSIONS
from ._memories import FORGOTTEN as FORGOTTEN
from ._memories import MEMORY_ENTRY as MEMORY_ENTRY
from ._memories import MEMORY_RECORD as MEMORY_RECORD
from ._memories import MEMORY_RECORD_FLAT as MEMORY_RECORD_FLAT
from ._memories import MEMORY_REF as MEMORY_REF
from ._memories import UPDATE_MEMORY as UPDATE_MEMORY
from ._model import NO_DEFAULT as NO_DEFAULT
from ._model import Field as Field
from ._model import Schema as Schema
from ._model import Shape as Shape
from ._prepare import ASSEMBLY as ASSEMBLY
from ._prepare import CITATION as CITATION
from ._prepare import CITED_RECORD as CITED_RECORD
from ._prepare import DEADLINE as DEADLINE
from ._prepare import EXPLAINED_CONTEXT as EXPLAINED_CONTEXT
from ._prepare import OMISSION as OMISSION
from ._prepare import PREPARE_ARGUMENTS as PREPARE_ARGUMENTS
from ._prepare import PREPARE_REQUEST as PREPARE_REQUEST
from ._prepare import PREPARED as PREPARED
from ._prepare import PREPARED_CONTEXT as PREPARED_CONTEXT
from ._prepare import RECEIPT as RECEIPT
from ._prepare import SECTION as SECTION
from ._records import ADD_EXPERIENCES as ADD_EXPERIENCES
from ._records import ADD_RESOURCES as ADD_RESOURCES
from ._records import ADD_TOPIC_MEMORIES as ADD_TOPIC_MEMORIES
from ._records import ADDED_RECORDS as ADDED_RECORDS
from ._records import ERASE as ERASE
from ._records import ERASED as ERASED
from ._records import EXPERIENCE as EXPERIENCE
from ._records import PROFILE as PROFILE
from ._records import RECORD_REF as RECORD_REF
from ._records import RESOURCE as RESOURCE
from ._records import SET_PROFILE as SET_PROFILE
from ._records import TOPIC_MEMORY as TOPIC_MEMORY

__all__ = [
    "ADDED_MEMORIES",
    "ADDED_RECORDS",
    "ADD_EXPERIENCES",
    "ADD_MEMORIES",
    "ADD_RESOURCES",
    "ADD_TOPIC_MEMORIES",
    "ASSEMBLY",
    "CHANNELS",
    "CITATION",
    "CITED_RECORD",
    "CURSOR_DOC",
    "DEADLINE",
    "DEFAULT_FAMILIES",
    "DEFAULT_KIND",
    "DEFAULT_MAX_BYTES",
    "DEFAULT_PAGE",
    "ENTRY",
    "ERASE",
    "ERASED",
    "ERASED_RECORDS",
    "ERASED_VERSIONS",
    "ERROR",
    "ERROR_TYPES",
    "EXPERIENCE",
    "EXPLAINED_CONTEXT",
    "FAMILIES",
    "FAMILY_DOC",
    "FORGOTTEN",
    "FORGOTTEN_DOC",
    "LIMIT_DOC",
    "LIST_RECORDS",
    "MAX_KEY_CHARS",
    "MAX_MAX_BYTES",
    "MAX_OMISSIONS",
    "MAX_PAGE",
    "MAX_QUERY_CHARS",
    "MAX_REFERENCES",
    "MAX_ROUND",
    "MAX_SCOPE_CHARS",
    "MAX_SECTION_ITEMS",
    "MAX_SECTION_LIMIT",
    "MAX_VERSION",
    "MEMORY_ENTRY",
    "MEMORY_RECORD",
    "MEMORY_RECORD_FLAT",
    "MEMORY_REF",
    "MIN_MAX_BYTES",
    "NOT_BLANK",
    "NO_DEFAULT",
    "OMISSION",
    "OMISSION_CAUSES",
    "PREPARED",
    "PREPARED_CONTEXT",
    "PREPARE_ARGUMENTS",
    "PREPARE_REQUEST",
    "PROFILE",
    "RECEIPT",
    "RECORD_PAGE",
    "RECORD_REF",
    "RESOURCE",
    "SCHEMA_ID",
    "SCOPES",
    "SCOPE_SUMMARY",
    "SECTION",
    "SECTION_LIMITS",
    "SET_PROFILE",
    "STATUSES",
    "STORED_RECORD",
    "TIERS",
    "TOPIC_MEMORY",
    "UPDATE_MEMORY",
    "ErrorType",
    "Field",
    "Schema",
    "Shape",
    "dumped",
]


def dumped(document: Any) -> str:
    """A generated document as it is committed: JSON, keys sorted, two-space indents,
    one final newline (so a regenerated copy compares byte for byte)."""
    return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
