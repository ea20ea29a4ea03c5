"""The Builder package's public surface."""

from __future__ import annotations

import satchel.builder


def test_builder_exports_exactly_its_public_names() -> None:
    """``__all__`` lists the names the runtime calls, and each one resolves."""
    assert satchel.builder.__all__ == [
        "BuildResult",
        "DeliveredItem",
        "FitMemo",
        "OmissionCounts",
        "build_context",
        "fitting",
        "needs_body",
        "parse_context",
        "tier_ceiling",
    ]
    assert all(hasattr(satchel.builder, name) for name in satchel.builder.__all__)
