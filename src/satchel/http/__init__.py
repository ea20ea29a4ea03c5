"""The HTTP service: an ASGI app over the public API (``satchel serve``).

:func:`create_app` builds a Starlette app over an open :class:`satchel.Runtime`: prepare a
context pack, add memories (all or nothing), read and forget a memory version, a health
check and an OpenAPI document. It runs on any ASGI server, on asyncio or trio; ``satchel
serve`` runs it with Hypercorn (:func:`listen`, then :func:`serve`). Optional bearer
tokens (:class:`TokenGrant`, :func:`load_tokens`) limit each caller to the scopes it may
read, and write if allowed. ``docs/service.md`` is the user's guide.

Like every layer above the facade, this package imports only ``satchel``'s public API.
"""

from ._app import DEFAULT_MAX_BODY_BYTES as DEFAULT_MAX_BODY_BYTES
from ._app import create_app as create_app
from ._auth import MIN_TOKEN_CHARS as MIN_TOKEN_CHARS
from ._auth import TokenGrant as TokenGrant
from ._auth import describe as describe
from ._auth import load_tokens as load_tokens
from ._auth import parse_tokens as parse_tokens
from ._openapi import OPENAPI as OPENAPI
from ._reading import DEFAULT_READ_TIMEOUT as DEFAULT_READ_TIMEOUT
from ._server import is_loopback as is_loopback
from ._server import listen as listen
from ._server import serve as serve
from ._server import url_of as url_of
from ._spans import route_template as route_template

__all__ = [
    "DEFAULT_MAX_BODY_BYTES",
    "DEFAULT_READ_TIMEOUT",
    "MIN_TOKEN_CHARS",
    "OPENAPI",
    "TokenGrant",
    "create_app",
    "describe",
    "is_loopback",
    "listen",
    "load_tokens",
    "parse_tokens",
    "route_template",
    "serve",
    "url_of",
]
