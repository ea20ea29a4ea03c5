"""The examples are scripts, not a package: their folder goes on ``sys.path`` so the
tests import the apps (``asyncio_web_app``, ``trio_app``) and the hooks' client by name
and drive them in process."""

from __future__ import annotations

import sys

from . import EXAMPLES

# Last: an example never shadows an installed package.
sys.path += [str(EXAMPLES), str(EXAMPLES / "hooks")]
