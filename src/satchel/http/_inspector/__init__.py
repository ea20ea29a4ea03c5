"""The inspector: a read-and-manage web page at ``/ui/`` over the public API.

Server-rendered HTML (Jinja2 templates, every value escaped), no JavaScript, every asset
served from here. :mod:`._sessions` keeps logins and CSRF tokens in signed cookies,
:mod:`._views` reads what each page shows through :class:`satchel.Runtime`, and
:mod:`._pages` routes, checks and answers. ``docs/inspector.md`` is the user's guide.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._pages import Inspector
from ._sessions import Sessions

if TYPE_CHECKING:
    from collections.abc import Collection, Mapping

    from starlette.routing import Route

    import satchel

    from .._auth import Tokens


def inspector_routes(
    runtime: satchel.Runtime,
    tokens: Tokens | None,
    allowed_hosts: Collection[str] | None,
    playground: Mapping[str, satchel.Runtime] | None,
) -> list[Route]:
    """The inspector's routes, under ``/ui/``, for ``create_app``."""
    chosen = None if playground is None else dict(playground)
    return Inspector(runtime, Sessions(tokens), allowed_hosts, chosen).routes()
