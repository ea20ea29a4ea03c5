"""OpenTelemetry spans of a prepare (API only: the SDK, if any, is the host's).

``glean.prepare_context`` is the root; each round is a ``glean.recall.round``; each family
search a ``search_memory`` (GenAI memory conventions); each store query a DB span; the
fit is ``glean.context.build`` with aggregate counters. No query text or content is
recorded unless the host opts in.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING

from opentelemetry import trace

if TYPE_CHECKING:
    from opentelemetry.trace import Tracer, TracerProvider


def _version() -> str:
    try:
        return version("glean")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "0"


def tracer(provider: TracerProvider | None) -> Tracer:
    """glean's tracer from ``provider``, or from the global provider when None."""
    return trace.get_tracer("glean", _version(), tracer_provider=provider)
