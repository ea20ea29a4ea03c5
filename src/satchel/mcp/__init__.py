"""The Model Context Protocol server over the public API (``satchel mcp``).

:func:`create_server` exposes an open :class:`satchel.Runtime` as four MCP tools
(``prepare_context``, ``add_memories``, ``get_memory``, ``forget_memory``; a fifth,
``erase_memory``, with ``allow_erase=True``) on the MCP SDK's low-level server;
:func:`serve_stdio` and :func:`serve_http` serve it. Needs the MCP SDK:
``pip install "satchel[mcp]"``. docs/mcp.md describes the tools and their schemas.

Inside this package ``import mcp`` is the SDK (absolute imports), never this package.
"""

from ._server import INSTRUCTIONS as INSTRUCTIONS
from ._server import create_server as create_server
from ._transports import HTTP_PATH as HTTP_PATH
from ._transports import serve_http as serve_http
from ._transports import serve_stdio as serve_stdio

__all__ = ["HTTP_PATH", "INSTRUCTIONS", "create_server", "serve_http", "serve_stdio"]
