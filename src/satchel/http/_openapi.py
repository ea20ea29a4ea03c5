"""The service's OpenAPI 3.1 document, served at ``GET /openapi.json``.

A plain dict, written by hand beside the routes it describes; a test checks that every
route of the app appears in it.
"""

from __future__ import annotations

from typing import Any, Final

import satchel

_FAMILIES: Final = list(satchel.stores.FAMILY_RULES)
_TIERS: Final = ["uri", "abstract", "overview", "full"]


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
    "503": _error("the store cannot be reached now; retry (Retry-After)"),
}
_BODY_ERRORS: Final = {
    "400": _error("the body is not valid JSON"),
    "413": _error("the body is larger than the service accepts"),
    "415": _error("the body is not application/json"),
}
_REF_PARAMETERS: Final = [
    {
        "name": "scope",
        "in": "path",
        "required": True,
        "description": (
            "the scope; percent-encode it (it may hold ':' and '/': every segment before"
            " the last is the scope)"
        ),
        "schema": {"type": "string"},
    },
    {
        "name": "entry_id",
        "in": "path",
        "required": True,
        "description": "the entry id, the last path segment",
        "schema": {"type": "string"},
    },
    {
        "name": "version",
        "in": "query",
        "required": True,
        "description": "the exact version",
        "schema": {"type": "integer", "minimum": 1},
    },
]
_SCOPE: Final = {"type": "string", "minLength": 1, "maxLength": 256}

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
                "responses": {
                    "200": {"description": "the version", **_json_body("MemoryRecord")},
                    "404": _error("no such entry or version"),
                    **_ERRORS,
                },
            },
            "delete": {
                "operationId": "forgetMemory",
                "summary": "Take an entry out of search; its versions stay readable",
                "responses": {
                    "204": {"description": "forgotten (or already forgotten)"},
                    "404": _error("no such entry or version"),
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
                    "query": {"type": "string", "minLength": 1, "maxLength": 8192},
                    "max_bytes": {
                        "type": "integer",
                        "minimum": 512,
                        "maximum": 32768,
                        "default": 8000,
                        "description": "the pack's byte budget",
                    },
                    "assembly": {"oneOf": [_ref("Assembly"), {"type": "null"}]},
                    "references": {
                        "type": "array",
                        "items": _SCOPE,
                        "maxItems": 32,
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
                                "limit": {"type": "integer", "minimum": 1, "maximum": 8},
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
                    "schema": {"const": "satchel.prepared-context.v2"},
                    "status": {"enum": ["ready", "empty"]},
                    "content": {
                        "type": ["string", "null"],
                        "description": "the rendered pack, null when nothing fits",
                    },
                    "content_bytes": {"type": "integer", "minimum": 0},
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
                        "maxLength": 512,
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
                                    "timeout",
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
