"""Each agent hook is one file: its copy of the hook client is exactly what
``scripts/sync_hooks.py`` makes of ``examples/hooks/_satchel_client.py``."""

from __future__ import annotations

import importlib.util
from typing import TYPE_CHECKING, Any, Final

import pytest

from . import EXAMPLES

if TYPE_CHECKING:
    from pathlib import Path

SCRIPT: Final = EXAMPLES.parent / "scripts" / "sync_hooks.py"


def sync_hooks() -> Any:
    """``scripts/sync_hooks.py``, imported (scripts are not a package)."""
    spec = importlib.util.spec_from_file_location("sync_hooks", SCRIPT)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SYNC: Final = sync_hooks()


@pytest.mark.parametrize("hook", SYNC.HOOK_FILES, ids=lambda path: path.name)
def test_each_hook_holds_the_current_client(hook: Path) -> None:
    """The hook's copy is the client as it is now: run ``python scripts/sync_hooks.py``
    after editing ``_satchel_client.py``."""
    text = hook.read_text(encoding="utf-8")
    client = SYNC.CLIENT.read_text(encoding="utf-8")
    assert SYNC.synced(text, client) == text
    assert SYNC.client_block(client) in text


def test_an_edit_to_the_client_makes_every_copy_stale() -> None:
    """A changed client gives each hook another copy, with the change in it."""
    client = SYNC.CLIENT.read_text(encoding="utf-8").replace(
        "DEFAULT_MAX_WAIT: Final = 10.0", "DEFAULT_MAX_WAIT: Final = 11.0"
    )
    for hook in SYNC.HOOK_FILES:
        text = hook.read_text(encoding="utf-8")
        assert "DEFAULT_MAX_WAIT: Final = 11.0" in SYNC.synced(text, client)
        assert SYNC.synced(text, client) != text


def test_the_copy_carries_the_clients_documentation_as_comments() -> None:
    """The client's docstring (every variable, the timeouts) is in each hook, as
    comments between the markers, with no second module docstring or future import."""
    block = SYNC.client_block(SYNC.CLIENT.read_text(encoding="utf-8"))
    assert block.startswith(SYNC.BEGIN + "\n# The satchel hook client:")
    assert "# - ``SATCHEL_MAX_BYTES``: the pack's byte budget" in block
    assert '"""The satchel' not in block
    assert "from __future__" not in block
    assert block.endswith(SYNC.END + "\n")


def test_a_hook_without_markers_is_refused() -> None:
    """The script never guesses where a copy goes."""
    with pytest.raises(ValueError, match="marker"):
        SYNC.synced("print('hook')\n", SYNC.CLIENT.read_text(encoding="utf-8"))
