"""The service's error answer: ``{"error": {"type", "message", "field"}}``, and its types.

The types are the service's own vocabulary (``satchel.http`` raises every error by one of
these names, typed with :data:`ErrorType`, so a new kind is stated here first); the MCP
tools answer an error as a tool error's text instead.
"""

from __future__ import annotations

from typing import Final, Literal, TypeAlias, get_args

from ._model import STRING, Field, Shape

#: What went wrong, as an error answer's ``error.type`` says it.
ErrorType: TypeAlias = Literal[
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
ERROR_TYPES: Final[tuple[str, ...]] = get_args(ErrorType)

#: Every error answer of the service.
ERROR: Final = Shape(
    "Error",
    {
        "error": Field(
            Shape(
                None,
                {
                    "type": Field({"enum": list(ERROR_TYPES)}, required=True),
                    "message": Field(STRING, required=True),
                    "field": Field(
                        STRING,
                        "The request field at fault, if one is.",
                        required=True,
                        nullable=True,
                    ),
                },
                answer=True,
            ),
            required=True,
        )
    },
    answer=True,
)
