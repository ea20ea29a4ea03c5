"""The service's OpenAPI 3.1 document, served at ``GET /openapi.json``.

A plain dict beside the routes it describes, its bounds and names taken from satchel's
one wire contract (``satchel._contract``), never restated. Its generated copy is
``docs/openapi.json`` (``python scripts/contract.py``); a test regenerates it and
compares, and checks that the app's routes and the document's paths are the same.
"""

from __future__ import annotations

from typing import Any, Final

from .._contract import (
    CHANNELS,
    FAMILIES,
    MAX_KEY_CHARS,
    MAX_MAX_BYTES,
    MAX_OMISSIONS,
    MAX_QUERY_CHARS,
    MAX_REFERENCES,
    MAX_ROUND,
    MAX_SCOPE_CHARS,
    MAX_SECTION_LIMIT,
    MIN_MAX_BYTES,
    OMISSION_CAUSES,
    SCHEMA_ID,
    STATUSES,
    TIERS,
)

_FAMILIES: Final = list(FAMILIES)
_TIERS: Final = list(TIERS)


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _json_body(name: str) -> dict[str, Any]:
    return {"content": {"application/json": {"schema": _ref(name)}}}


def _error(description: str) -> dict[str, Any]:
    return {"description": description, **_json_body("Error")}


_ERRORS: Final = {
    "401": _error("no bearer token, or an unknown one (only when tokens are configured)"),
    "403": _error("the token may not read (or write) a scope the request names"),
    "421": _error("the Host header names another host (only when allowed hosts are set)"),
    "422": _error("a field is malformed, out of range or unknown; error.field names it"),
    "500": _error("an internal error; the message names its kind only"),
    "503": _error(
        "the store cannot be reached now (store_unavailable; retry, Retry-After), or"
        " cannot serve the call (store_error: the message is the StoreError's own)"
    ),
    "507": _error("the store's disk is full (insufficient_storage: the StoreError's message)"),
}
_BODY_ERRORS: Final = {
    "400": _error("the body is not valid JSON"),
    "408": _error("the body did not arrive within the read timeout (Connection: close)"),
    "413": _error("the body is larger than the service accepts"),
    "415": _error("the body is not application/json"),
}
_SCOPE_PARAMETER: Final = {
    "name": "scope",
    "in": "path",
    "required": True,
    "description": (
        "the scope; percent-encode it (it may hold ':' and '/': every segment before"
        " the last is the scope)"
    ),
    "schema": {"type": "string"},
}
_REF_PARAMETERS: Final = [
    _SCOPE_PARAMETER,
    {
        "name": "entry_id",
        "in": "path",
        "required": True,
        "description": "the entry id, the last path segment (as satchel minted it or as a"
        " pack writes it)",
        "schema": {"type": "string"},
    },
]
_VERSION_PARAMETER: Final = {
    "name": "version",
    "in": "query",
    "required": True,
    "description": "the exact version",
    "schema": {"type": "integer", "minimum": 1},
}
_DELETE_PARAMETERS: Final = [
    {
        **_VERSION_PARAMETER,
        "required": False,
        "description": (
            "the exact version; required unless erase is true (an erase takes every"
            " version, so a version it is given must be an integer but need not exist)"
        ),
    },
    {
        "name": "erase",
        "in": "query",
        "required": False,
        "description": (
            "true: erase every version of the entry (nothing stays readable) and answer"
            " 200 with the count; false (the default): forget it and answer 204"
        ),
        "schema": {"type": "string", "enum": ["true", "false"], "default": "false"},
    },
]
_SCOPE: Final = {"type": "string", "minLength": 1, "maxLength": MAX_SCOPE_CHARS}
_CHANNEL_RANKS: Final = {
    "type": "object",
    "propertyNames": {"enum": list(CHANNELS)},
    "additionalProperties": {"type": "integer", "minimum": 1},
    "description": "each channel that ranked it and its rank there, from 1 (in the round"
    " that committed it; below the floor, in what the channel retrieved)",
}

OPENAPI: Final[dict[str, Any]] = {
    "openapi": "3.1.0",
    "info": {
        "title": "satchel",
        "version": "1",
        "description": (
            "Bounded, cited context packs for AI agents from the memory they keep"
            ' (`satchel serve`). Every error is {"error": {"type", "message", "field"}}.'
        ),
    },
    "security": [{"bearer": []}],
    "paths": {
        "/v1/context/prepare": {
            "post": {
                "operationId": "prepareContext",
                "summary": "Prepare a bounded, cited context pack for a query",
                "requestBody": {"required": True, **_json_body("PrepareContextRequest")},
                "responses": {
                    "200": {"description": "the pack", **_json_body("PreparedContext")},
                    **_BODY_ERRORS,
                    **_ERRORS,
                    "504": _error("the prepare did not finish before its deadline"),
                },
            }
        },
        "/v1/context/explain": {
            "post": {
                "operationId": "explainContext",
                "summary": (
                    "Prepare the same pack as /v1/context/prepare (the same turn of the"
                    " session), with why each item is in it and why the best candidates"
                    " left out are not"
                ),
                "requestBody": {"required": True, **_json_body("PrepareContextRequest")},
                "responses": {
                    "200": {
                        "description": "the pack, its receipts and its omissions",
                        **_json_body("ExplainedContext"),
                    },
                    **_BODY_ERRORS,
                    **_ERRORS,
                    "504": _error("the prepare did not finish before its deadline"),
                },
            }
        },
        "/v1/context/deadline": {
            "post": {
                "operationId": "contextDeadline",
                "summary": "How long a prepare of this body may take (a client's timeout)",
                "requestBody": {"required": True, **_json_body("PrepareContextRequest")},
                "responses": {
                    "200": {"description": "the deadline", **_json_body("Deadline")},
                    **_BODY_ERRORS,
                    **_ERRORS,
                },
            }
        },
        "/v1/memories": {
            "post": {
                "operationId": "addMemories",
                "summary": "Write memory entries to one scope, all or nothing",
                "requestBody": {"required": True, **_json_body("AddMemoriesRequest")},
                "responses": {
                    "200": {
                        "description": "one reference per entry, in input order",
                        **_json_body("AddMemoriesResponse"),
                    },
                    **_BODY_ERRORS,
                    **_ERRORS,
                },
            }
        },
        "/v1/memories/{scope}/{entry_id}": {
            "parameters": _REF_PARAMETERS,
            "get": {
                "operationId": "getMemory",
                "summary": "Read exactly the memory version a citation names",
                "parameters": [_VERSION_PARAMETER],
                "responses": {
                    "200": {"description": "the version", **_json_body("MemoryRecord")},
                    "404": _error("no such entry or version"),
                    **_ERRORS,
                },
            },
            "delete": {
                "operationId": "forgetMemory",
                "summary": (
                    "Take an entry out of search, its versions staying readable; with"
                    " erase=true, erase every version of it"
                ),
                "parameters": _DELETE_PARAMETERS,
                "responses": {
                    "200": {
                        "description": "erased (erase=true): how many versions; 0 when none"
                        " was held (never written, or erased already)",
                        **_json_body("ErasedVersions"),
                    },
                    "204": {"description": "forgotten (or already forgotten)"},
                    "404": _error("forget only: no such entry or version"),
                    **_ERRORS,
                },
            },
        },
        "/v1/scopes/{scope}": {
            "parameters": [{**_SCOPE_PARAMETER, "description": "the scope; percent-encode it"}],
            "delete": {
                "operationId": "eraseScope",
                "summary": "Erase every record of every family in the scope, its profile included",
                "responses": {
                    "200": {
                        "description": "how many records were erased; 0 for a scope that"
                        " holds nothing",
                        **_json_body("ErasedRecords"),
                    },
                    **_ERRORS,
                },
            },
        },
        "/healthz": {
            "get": {
                "operationId": "health",
                "summary": "Liveness; needs no token",
                "security": [],
                "responses": {
                    "200": {
                        "description": "the service answers",
                        "content": {
                            "application/json": {
                                "schema": {
                                    "type": "object",
                                    "properties": {"status": {"const": "ok"}},
                                    "required": ["status"],
                                }
                            }
                        },
                    }
                },
            }
        },
        "/openapi.json": {
            "get": {
                "operationId": "openapi",
                "summary": "This document; needs no token",
                "security": [],
                "responses": {
                    "200": {
                        "description": "the OpenAPI 3.1 document",
                        "content": {"application/json": {"schema": {"type": "object"}}},
                    }
                },
            }
        },
    },
    "components": {
        "securitySchemes": {
            "bearer": {
                "type": "http",
                "scheme": "bearer",
                "description": "a token from the service's token file (when it has one)",
            }
        },
        "schemas": {
            "PrepareContextRequest": {
                "type": "object",
                "additionalProperties": False,
                "required": ["scope_id", "query"],
                "properties": {
                    "scope_id": {**_SCOPE, "description": "the scope to search"},
                    "query": {"type": "string", "minLength": 1, "maxLength": MAX_QUERY_CHARS},
                    "max_bytes": {
                        "type": "integer",
                        "minimum": MIN_MAX_BYTES,
                        "maximum": MAX_MAX_BYTES,
                        "default": 8000,
                        "description": "the pack's byte budget",
                    },
                    "assembly": {"oneOf": [_ref("Assembly"), {"type": "null"}]},
                    "references": {
                        "type": "array",
                        "items": _SCOPE,
                        "maxItems": MAX_REFERENCES,
                        "description": "more scopes to search (the token must read each)",
                    },
                    "session_id": {"type": ["string", "null"], "minLength": 1},
                    "detail": {
                        "description": "a tier for every family, or per family",
                        "oneOf": [
                            {"enum": _TIERS},
                            {
                                "type": "object",
                                "propertyNames": {"enum": _FAMILIES},
                                "additionalProperties": {"enum": _TIERS},
                            },
                            {"type": "null"},
                        ],
                    },
                    "exclude": {
                        "type": "array",
                        "items": _ref("Citation"),
                        "description": "citations never to deliver again",
                    },
                },
            },
            "Assembly": {
                "type": "object",
                "additionalProperties": False,
                "required": ["sections"],
                "properties": {
                    "sections": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "additionalProperties": False,
                            "required": ["family", "limit"],
                            "properties": {
                                "family": {"enum": _FAMILIES},
                                "limit": {
                                    "type": "integer",
                                    "minimum": 1,
                                    "maximum": MAX_SECTION_LIMIT,
                                },
                            },
                        },
                    }
                },
            },
            "Citation": {
                "type": "object",
                "additionalProperties": False,
                "required": ["family", "scope"],
                "description": (
                    "as a pack cites it: id (or entry_id, uri) and version (or revision)"
                ),
                "properties": {
                    "family": {"enum": _FAMILIES},
                    "scope": {"type": "string"},
                    "id": {"type": ["string", "null"]},
                    "entry_id": {"type": "string"},
                    "uri": {"type": "string"},
                    "version": {"type": ["integer", "null"]},
                    "revision": {"type": "integer"},
                },
            },
            "Deadline": {
                "type": "object",
                "additionalProperties": False,
                "required": ["deadline_seconds"],
                "properties": {
                    "deadline_seconds": {
                        "description": "seconds; null when the prepare is unbounded",
                        "anyOf": [{"type": "number", "minimum": 0}, {"type": "null"}],
                    }
                },
            },
            "PreparedContext": {
                "type": "object",
                "required": ["schema", "status", "content", "content_bytes"],
                "properties": {
                    "schema": {"const": SCHEMA_ID},
                    "status": {"enum": list(STATUSES)},
                    "content": {
                        "type": ["string", "null"],
                        "description": "the rendered pack, null when nothing fits",
                    },
                    "content_bytes": {"type": "integer", "minimum": 0},
                },
            },
            "ExplainedContext": {
                "type": "object",
                "required": [
                    "schema",
                    "status",
                    "content",
                    "content_bytes",
                    "receipts",
                    "omitted",
                ],
                "description": "the pack's four fields (as PreparedContext), then its receipts"
                " and omissions",
                "properties": {
                    "schema": {"const": SCHEMA_ID},
                    "status": {"enum": list(STATUSES)},
                    "content": {"type": ["string", "null"]},
                    "content_bytes": {"type": "integer", "minimum": 0},
                    "receipts": {
                        "type": "array",
                        "items": _ref("Receipt"),
                        "description": "one per delivered item, in pack order",
                    },
                    "omitted": {
                        "type": "array",
                        "items": _ref("Omission"),
                        "maxItems": MAX_OMISSIONS,
                        "description": "the best candidates not delivered, best first",
                    },
                },
            },
            "Receipt": {
                "type": "object",
                "required": ["citation", "channels", "score", "round", "tier", "truncated"],
                "properties": {
                    "citation": _ref("CitedRecord"),
                    "channels": _CHANNEL_RANKS,
                    "score": {
                        "type": ["number", "null"],
                        "description": "the fused score its search ranked it by; null for a"
                        " profile",
                    },
                    "round": {
                        "type": "integer",
                        "minimum": 0,
                        "maximum": MAX_ROUND,
                        "description": "the round that committed it",
                    },
                    "tier": {"enum": _TIERS},
                    "truncated": {"type": "boolean"},
                },
            },
            "Omission": {
                "type": "object",
                "required": ["citation", "cause", "channels", "score"],
                "properties": {
                    "citation": _ref("CitedRecord"),
                    "cause": {
                        "enum": list(OMISSION_CAUSES),
                        "description": "budget: no room in the pack's bytes, item limits or"
                        " candidate ceiling; held-back: the session delivered it lately;"
                        " excluded: the request's exclude names it; duplicate: its text repeats"
                        " a candidate offered before it; floor: below the admission floor (or"
                        " the prepare abstained: no evidence of relevance)",
                    },
                    "channels": _CHANNEL_RANKS,
                    "score": {
                        "type": ["number", "null"],
                        "description": "its fused score; null below the floor",
                    },
                },
            },
            "CitedRecord": {
                "type": "object",
                "required": ["family", "scope", "id", "version"],
                "description": "a citation, as parse_context reads it off the pack (exclude"
                " takes it as it is)",
                "properties": {
                    "family": {"enum": _FAMILIES},
                    "scope": {"type": "string"},
                    "id": {"type": ["string", "null"]},
                    "version": {"type": ["integer", "null"]},
                },
            },
            "MemoryEntry": {
                "type": "object",
                "additionalProperties": False,
                "required": ["text"],
                "properties": {
                    "text": {"type": "string", "minLength": 1},
                    "kind": {"type": "string", "minLength": 1, "default": "fact"},
                    "tags": {"type": "array", "items": {"type": "string", "minLength": 1}},
                    "created_at": {
                        "type": ["string", "null"],
                        "format": "date-time",
                        "description": "ISO 8601 with a UTC offset",
                    },
                    "thread": {"type": ["string", "null"], "minLength": 1},
                    "key": {
                        "type": ["string", "null"],
                        "minLength": 1,
                        "maxLength": MAX_KEY_CHARS,
                        "description": "idempotency key, unique per scope",
                    },
                },
            },
            "AddMemoriesRequest": {
                "type": "object",
                "additionalProperties": False,
                "required": ["scope_id", "entries"],
                "properties": {
                    "scope_id": _SCOPE,
                    "entries": {"type": "array", "items": _ref("MemoryEntry")},
                },
            },
            "MemoryRef": {
                "type": "object",
                "required": ["scope_id", "entry_id", "version"],
                "properties": {
                    "scope_id": {"type": "string"},
                    "entry_id": {"type": "string"},
                    "version": {"type": "integer", "minimum": 1},
                },
            },
            "AddMemoriesResponse": {
                "type": "object",
                "required": ["refs"],
                "properties": {"refs": {"type": "array", "items": _ref("MemoryRef")}},
            },
            "MemoryRecord": {
                "type": "object",
                "required": ["ref", "text", "kind", "tags", "created_at", "thread", "key"],
                "properties": {
                    "ref": _ref("MemoryRef"),
                    "text": {"type": "string"},
                    "kind": {"type": "string"},
                    "tags": {"type": "array", "items": {"type": "string"}},
                    "created_at": {"type": ["string", "null"], "format": "date-time"},
                    "thread": {"type": ["string", "null"]},
                    "key": {"type": ["string", "null"]},
                },
            },
            "ErasedVersions": {
                "type": "object",
                "required": ["scope_id", "entry_id", "erased_versions"],
                "properties": {
                    "scope_id": {"type": "string"},
                    "entry_id": {"type": "string", "description": "the full entry id"},
                    "erased_versions": {"type": "integer", "minimum": 0},
                },
            },
            "ErasedRecords": {
                "type": "object",
                "required": ["scope_id", "erased_records"],
                "properties": {
                    "scope_id": {"type": "string"},
                    "erased_records": {
                        "type": "integer",
                        "minimum": 0,
                        "description": "records of every family (a record counts once"
                        " whatever its versions; a profile is one)",
                    },
                },
            },
            "Error": {
                "type": "object",
                "required": ["error"],
                "properties": {
                    "error": {
                        "type": "object",
                        "required": ["type", "message", "field"],
                        "properties": {
                            "type": {
                                "enum": [
                                    "bad_request",
                                    "unauthorized",
                                    "forbidden",
                                    "not_found",
                                    "method_not_allowed",
                                    "misdirected_request",
                                    "payload_too_large",
                                    "unsupported_media_type",
                                    "invalid_request",
                                    "internal",
                                    "store_unavailable",
                                    "store_error",
                                    "timeout",
                                    "request_timeout",
                                    "insufficient_storage",
                                ]
                            },
                            "message": {"type": "string"},
                            "field": {
                                "type": ["string", "null"],
                                "description": "the request field at fault, if one is",
                            },
                        },
                    }
                },
            },
        },
    },
}
