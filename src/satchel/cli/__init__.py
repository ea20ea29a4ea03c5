"""The ``satchel`` command line: ``demo``, ``ingest`` and ``prepare`` over the public API."""

from ._main import main as main

__all__ = ["main"]
