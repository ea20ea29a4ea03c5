"""The service's OpenAPI 3.1 document, served at ``GET /openapi.json``.

The routes' own words (paths, parameters, status codes) are written here, beside the
routes they describe; every body is a shape of satchel's one wire contract
(``satchel._contract``), rendered into the document's components, so no bound, name or
field is restated. The OpenAPI spelling: each named shape is a component the document
refers to, a request is closed to unknown members and an answer is open (a client must
ignore a member it does not know), and a value that may be null is ``type: [T, "null"]``
(``oneOf`` with null, for a union or a component). Its generated copy is
``docs/openapi.json`` (``python scripts/contract.py``); a test regenerates it and
compares, and checks that the app's routes and the document's paths are the same.
"""

from __future__ import annotations

from typing import Any, Final

from .. import _contract as contract
from .._contract import NO_DEFAULT, Field, Schema, Shape

_NULL: Final = {"type": "null"}


def _json_body(shape: Shape) -> dict[str, Any]:
    return {"content": {"application/json": {"schema": shape}}}


def _error(description: str) -> dict[str, Any]:
    return {"description": description, **_json_body(contract.ERROR)}


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
_LIST_PARAMETERS: Final = [
    {
        "name": "family",
        "in": "query",
        "required": False,
        "description": contract.FAMILY_DOC,
        "schema": {"enum": list(contract.FAMILIES)},
    },
    {
        "name": "forgotten",
        "in": "query",
        "required": False,
        "description": contract.FORGOTTEN_DOC,
        "schema": {"type": "string", "enum": ["true", "false"], "default": "false"},
    },
    {
        "name": "cursor",
        "in": "query",
        "required": False,
        "description": contract.CURSOR_DOC,
        "schema": {"type": "string"},
    },
    {
        "name": "limit",
        "in": "query",
        "required": False,
        "description": contract.LIMIT_DOC,
        "schema": {
            "type": "integer",
            "minimum": 1,
            "maximum": contract.MAX_PAGE,
            "default": contract.DEFAULT_PAGE,
        },
    },
]
_DOCUMENT: Final[dict[str, Any]] = {
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
                "requestBody": {"required": True, **_json_body(contract.PREPARE_REQUEST)},
                "responses": {
                    "200": {"description": "the pack", **_json_body(contract.PREPARED_CONTEXT)},
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
                "requestBody": {"required": True, **_json_body(contract.PREPARE_REQUEST)},
                "responses": {
                    "200": {
                        "description": "the pack, its receipts and its omissions",
                        **_json_body(contract.EXPLAINED_CONTEXT),
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
                "requestBody": {"required": True, **_json_body(contract.PREPARE_REQUEST)},
                "responses": {
                    "200": {"description": "the deadline", **_json_body(contract.DEADLINE)},
                    **_BODY_ERRORS,
                    **_ERRORS,
                },
            }
        },
        "/v1/memories": {
            "post": {
                "operationId": "addMemories",
                "summary": "Write memory entries to one scope, all or nothing",
                "requestBody": {"required": True, **_json_body(contract.ADD_MEMORIES)},
                "responses": {
                    "200": {
                        "description": "one reference per entry, in input order",
                        **_json_body(contract.ADDED_MEMORIES),
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
                    "200": {"description": "the version", **_json_body(contract.MEMORY_RECORD)},
                    "404": _error("no such entry or version"),
                    **_ERRORS,
                },
            },
            "put": {
                "operationId": "updateMemory",
                "summary": (
                    "Write a new version of an entry; the version the URL names stays"
                    " readable by its ref"
                ),
                "parameters": [{**_VERSION_PARAMETER, "description": "the version replaced"}],
                "requestBody": {"required": True, **_json_body(contract.UPDATE_MEMORY)},
                "responses": {
                    "200": {"description": "the new version", **_json_body(contract.MEMORY_REF)},
                    "404": _error("no such entry or version"),
                    **_BODY_ERRORS,
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
                        **_json_body(contract.ERASED_VERSIONS),
                    },
                    "204": {"description": "forgotten (or already forgotten)"},
                    "404": _error("forget only: no such entry or version"),
                    **_ERRORS,
                },
            },
        },
        "/v1/scopes": {
            "get": {
                "operationId": "listScopes",
                "summary": (
                    "The scopes the token may read that hold anything, with their searchable"
                    " records per family and their last write"
                ),
                "responses": {
                    "200": {"description": "the scopes", **_json_body(contract.SCOPES)},
                    **_ERRORS,
                },
            }
        },
        "/v1/scopes/{scope}/records": {
            "parameters": [{**_SCOPE_PARAMETER, "description": "the scope; percent-encode it"}],
            "get": {
                "operationId": "listRecords",
                "summary": (
                    "One page of the scope's records, newest first, each once as its newest"
                    " version; writes nothing"
                ),
                "parameters": _LIST_PARAMETERS,
                "responses": {
                    "200": {"description": "the page", **_json_body(contract.RECORD_PAGE)},
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
                        **_json_body(contract.ERASED_RECORDS),
                    },
                    **_ERRORS,
                },
            },
        },
        **{
            path: {
                "post": {
                    "operationId": operation,
                    "summary": f"Write {what} to one scope, all or nothing",
                    "requestBody": {"required": True, **_json_body(shape)},
                    "responses": {
                        "200": {
                            "description": "one reference per record, in input order",
                            **_json_body(contract.ADDED_RECORDS),
                        },
                        **_BODY_ERRORS,
                        **_ERRORS,
                    },
                }
            }
            for path, operation, what, shape in (
                ("/v1/experiences", "addExperiences", "experiences", contract.ADD_EXPERIENCES),
                (
                    "/v1/topic-memories",
                    "addTopicMemories",
                    "topic memories (a title written again is a new revision)",
                    contract.ADD_TOPIC_MEMORIES,
                ),
                (
                    "/v1/resources",
                    "addResources",
                    "resources (a URI written again is a new revision)",
                    contract.ADD_RESOURCES,
                ),
            )
        },
        "/v1/profiles/{scope}": {
            "parameters": [{**_SCOPE_PARAMETER, "description": "the scope; percent-encode it"}],
            "put": {
                "operationId": "setProfile",
                "summary": "Replace the scope's profile (read whole by requests that select it)",
                "requestBody": {"required": True, **_json_body(contract.SET_PROFILE)},
                "responses": {
                    "204": {"description": "the profile is set"},
                    **_BODY_ERRORS,
                    **_ERRORS,
                },
            },
        },
        "/v1/erase": {
            "post": {
                "operationId": "eraseRecord",
                "summary": (
                    "Erase any record a citation names, every version of it, from every"
                    " place the store keeps it"
                ),
                "requestBody": {"required": True, **_json_body(contract.ERASE)},
                "responses": {
                    "200": {
                        "description": "how many versions were erased; 0 when none was held",
                        **_json_body(contract.ERASED),
                    },
                    **_BODY_ERRORS,
                    **_ERRORS,
                },
            }
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
    },
}


def _document(document: dict[str, Any]) -> dict[str, Any]:
    """``document`` with every shape in it a reference to its component, and the
    components it refers to (those they refer to included) under
    ``components.schemas``."""
    components: dict[str, Schema] = {}
    rendered: dict[str, Any] = _rendered(document, components)
    rendered["components"]["schemas"] = components
    return rendered


def _rendered(value: Any, components: dict[str, Schema]) -> Any:
    if isinstance(value, Shape):
        if value.name is None:
            return _object(value, components)
        if value.name not in components:
            components[value.name] = {}  # taken, while its own members are rendered
            components[value.name] = _object(value, components)
        return {"$ref": f"#/components/schemas/{value.name}"}
    if isinstance(value, dict):
        return {key: _rendered(item, components) for key, item in value.items()}
    if isinstance(value, list):
        return [_rendered(item, components) for item in value]
    return value


def _object(shape: Shape, components: dict[str, Schema]) -> Schema:
    schema: Schema = {"type": "object"}
    if not shape.answer:
        schema["additionalProperties"] = False
    schema["required"] = shape.required
    if shape.doc:
        schema["description"] = shape.doc
    schema["properties"] = {
        name: _member(field, components) for name, field in shape.fields.items()
    }
    return schema


def _member(field: Field, components: dict[str, Schema]) -> Schema:
    value: Schema = _rendered(field.value, components)
    if field.nullable:
        value = _or_null(value)
    if field.default is not NO_DEFAULT:
        value = {**value, "default": field.default}
    doc = field.http_doc or field.doc
    return {**value, "description": doc} if doc else value


def _or_null(schema: Schema) -> Schema:
    kind = schema.get("type")
    if isinstance(kind, str):
        return {**schema, "type": [kind, "null"]}
    branches = schema["anyOf"] if set(schema) == {"anyOf"} else [schema]
    return {"oneOf": [*branches, _NULL]}


OPENAPI: Final = _document(_DOCUMENT)
