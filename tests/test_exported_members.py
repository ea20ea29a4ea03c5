"""The public surface is exactly what satchel.__all__ names."""

from __future__ import annotations

import satchel


def test_all_matches_public_names() -> None:
    """Every public attribute is in __all__ and every name in __all__ exists."""
    public = {name for name in dir(satchel) if not name.startswith("_")}
    # the layers' sub-packages, loaded as a side effect of imports
    public -= {"builder", "cli", "embedders", "orchestration", "recall", "runtime", "vocabulary"}
    public -= {"mcp"}  # satchel.mcp, the MCP server above the facade (tests/mcp imports it)
    public -= {"client"}  # satchel.client, loaded once satchel.Client is named
    public -= {"integrations"}  # satchel.integrations.*, imported by name (tests import them)
    public -= {"http"}  # satchel.http, the HTTP service above the facade (tests/http imports it)
    assert set(satchel.__all__) == public
    assert satchel.__all__ == sorted(satchel.__all__)


def test_prepared_context_has_exactly_four_fields() -> None:
    """PreparedContext has schema, status, content and content_bytes, nothing else."""
    import attrs

    names = [field.name for field in attrs.fields(satchel.PreparedContext)]
    assert names == ["schema", "status", "content", "content_bytes"]


def test_optional_embedder_is_public_but_its_library_loads_lazily() -> None:
    """SentenceTransformerEmbedder is exported, yet importing satchel imports no
    sentence_transformers or torch (an optional extra, loaded only when one is built)."""
    import subprocess
    import sys

    assert "SentenceTransformerEmbedder" in satchel.__all__
    probe = (
        "import sys, satchel; print(sorted({'sentence_transformers', 'torch'} & set(sys.modules)))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"


def test_the_version_is_the_installed_distributions() -> None:
    """``satchel.__version__`` is the version ``satchel --version`` prints (the package
    metadata's), and any other missing attribute is still an AttributeError."""
    from importlib import metadata

    import pytest

    assert satchel.__version__ == metadata.version("satchel")
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        satchel.nope  # noqa: B018
