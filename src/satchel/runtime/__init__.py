"""The runtime: the public API and the only place that wires the layers together.

:func:`open_runtime` opens a store (the embedded SQLite file by default), binds an
embedder, and builds the orchestration; :class:`Runtime` validates and embeds writes and
hands validated requests to the orchestration. The CLI and anything else above call
this layer's public names and nothing below it.
"""

from ..orchestration import RuntimeOptions as RuntimeOptions
from ._runtime import Runtime as Runtime
from ._runtime import open_runtime as open_runtime

__all__ = ["Runtime", "RuntimeOptions", "open_runtime"]
