"""The ``satchel`` command line over the public API: one module per command, each
declaring its arguments and its handler as an ``_options.Command``, listed in
``_main.COMMANDS``; ``_running`` opens what a command's store and runtime need."""

from ._main import main as main

__all__ = ["main"]
