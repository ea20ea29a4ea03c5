"""Every async test runs on asyncio and on trio (trio with an autojumping mock clock)."""

from __future__ import annotations

from typing import Any

import pytest
import trio.testing


@pytest.fixture(
    params=[
        pytest.param(("asyncio", {}), id="asyncio"),
        pytest.param(("trio", {}), id="trio"),
    ]
)
def anyio_backend(request: pytest.FixtureRequest) -> tuple[str, dict[str, Any]]:
    """Run each async test once per backend."""
    backend: tuple[str, dict[str, Any]] = request.param
    return backend


@pytest.fixture
def mock_clock_backend() -> tuple[str, dict[str, Any]]:
    """A trio backend whose clock jumps ahead whenever every task is blocked."""
    return ("trio", {"clock": trio.testing.MockClock(autojump_threshold=0)})


@pytest.fixture
def spans() -> tuple[Any, Any]:
    """An OpenTelemetry provider whose finished spans land in memory, and its exporter."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider, exporter


@pytest.fixture(scope="session")
def seekdb(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A seekdb engine (the OceanBase-compatible engine from ``pylibseekdb``) started
    embedded for the whole session, listening on a Unix socket; stopped at the end.

    Never skipped: ``pylibseekdb`` is a test dependency, and a missing engine fails.
    """
    import pylibseekdb

    instance = pylibseekdb.open(db_dir=str(tmp_path_factory.mktemp("seekdb") / "db"))
    yield instance.connection_options()["unix_socket"]
    instance.close()


@pytest.fixture
def oceanbase(seekdb: str) -> Any:
    """A factory of OceanBase stores on the session's engine, each test on a database
    of its own."""
    import uuid

    from satchel.stores import OceanBaseStore

    database = f"t_{uuid.uuid4().hex[:12]}"

    def make(**options: Any) -> OceanBaseStore:
        return OceanBaseStore(unix_socket=seekdb, database=database, **options)

    return make
