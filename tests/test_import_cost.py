"""``import satchel`` loads only what every host needs: no optional extra, no store a
host may never open, no event loop library, no package metadata reader."""

from __future__ import annotations

import subprocess
import sys

#: Modules ``import satchel`` must leave unloaded, each for a reason: the extras
#: (``satchel[ann]``, ``[client]``, ``[service]``, ``[trio]``), the OceanBase store
#: (loaded when ``satchel.stores.OceanBaseStore`` is first named), asyncio (a host on
#: asyncio has it loaded already; a trio host or a CLI start-up need not pay ~20 ms
#: for it), importlib.metadata (read when a version is first asked for) and the
#: pure-Python snowballstemmer (its 30-odd languages' stemmers, 10,000 objects every
#: full garbage collection walks; the analyser stems with PyStemmer).
UNLOADED = (
    "usearch",
    "numkong",
    "httpx",
    "starlette",
    "trio",
    "satchel.stores.oceanbase",
    "asyncio",
    "importlib.metadata",
    "snowballstemmer",
)


def test_import_satchel_leaves_the_optional_modules_unloaded() -> None:
    """A fresh interpreter's ``import satchel`` loads none of ``UNLOADED``; naming
    ``satchel.stores.OceanBaseStore`` then loads its store, and ``satchel.__version__``
    reads the version."""
    probe = (
        "import sys, satchel\n"
        f"print(sorted(set({UNLOADED!r}) & set(sys.modules)))\n"
        "store = satchel.stores.OceanBaseStore\n"
        "print(store.__module__, 'OceanBaseStore' in dir(satchel.stores))\n"
        "print(bool(satchel.__version__))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    )
    loaded, store, version = result.stdout.splitlines()
    assert loaded == "[]"
    assert store == "satchel.stores.oceanbase._store True"
    assert version == "True"
