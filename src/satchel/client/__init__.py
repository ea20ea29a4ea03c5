"""``satchel.Client``: satchel's public API over a ``satchel serve`` service (the
``satchel[client]`` extra: httpx).

It sits beside the servers, above the public facade, and imports only the public API,
the vocabulary's request check and the JSON spellings (``_wire``) the service reads and
writes. The facade names :class:`Client` lazily, so ``import satchel`` needs no httpx.
"""

from ._client import Client as Client

__all__ = ["Client"]
