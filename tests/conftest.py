"""Every async test runs on asyncio and on trio (trio with an autojumping mock clock)."""

from __future__ import annotations

import os
import shutil
from typing import TYPE_CHECKING, Any, Final

import pytest
import trio.testing

if TYPE_CHECKING:
    from collections.abc import Iterator


#: Test processes a whole-suite run uses at most when pytest-xdist is installed (the
#: ``test`` extra installs it). The suite waits a lot on subprocesses, threads and the
#: seekdb engine, so two workers shorten a run even on two cores; but each worker
#: collects the whole suite (about 10 s of CPU) and makes its own session fixtures
#: (a seekdb engine, servers). (xdist's ``loadgroup``, which could keep one engine per
#: run, cannot rename tests on pytest 9, where a node's id is read-only: not used.)
MOST_WORKERS: Final = 4


def cpus() -> int:
    """The CPUs this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> None:
    """Spread a whole-suite run (``pytest`` with no paths, as the README and CI run it)
    over min(CPUs, MOST_WORKERS) xdist workers. A run of named files or tests stays in
    one process (it starts at once, and ``--pdb`` works); so does a run whose command
    line chose (``-n 0``, ``-n 2``, ``-p no:xdist``), and any run without xdist
    installed. Runs before xdist's own hook reads ``-n``."""
    option = config.option
    if (
        config.args_source is pytest.Config.ArgsSource.ARGS
        or not config.pluginmanager.hasplugin("xdist")
        or hasattr(config, "workerinput")  # an xdist worker itself
        or getattr(option, "numprocesses", 0) is not None  # -n given
        or getattr(option, "dist", "no") != "no"
        or option.usepdb
        or option.collectonly
    ):
        return
    workers = min(cpus(), MOST_WORKERS)
    if workers > 1:
        option.numprocesses = workers


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The tests marked ``slow`` (seconds each: engines, processes, servers) run first.

    xdist hands the first quarter of a run's tests to its workers one by one, in turn,
    and the rest in batches as they finish: slow tests at the front are shared out and
    overlap the many short ones, instead of one worker ending the run alone on them."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


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


#: The session engine's limit on one statement, in microseconds. The engine's default
#: (``ob_query_timeout``, 10 s) is sized for a server of its own; on a test machine
#: busy with other work (two cores, a parallel test run, other builds) a schema
#: statement has taken longer, and the test failed for the machine's load, not for
#: satchel. Two minutes still ends a statement that truly hangs.
SEEKDB_QUERY_TIMEOUT_US: Final = 120_000_000

#: The session engine logs errors only and records no performance events or trace
#: logs: at its defaults (INFO logs, about 10 MB a minute) the engine's own bookkeeping
#: was most of its CPU, and the OceanBase half of the store contract took 146 s and 249
#: CPU-seconds in one process; with these, 92 s and 149. What satchel does is the same.
QUIET_ENGINE: Final = (
    "syslog_level = 'ERROR'",
    "enable_perf_event = false",
    "enable_record_trace_log = false",
)


@pytest.fixture(scope="session")
def seekdb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A seekdb engine (the OceanBase-compatible engine from ``pylibseekdb``) started
    embedded for the whole session (one per xdist worker), listening on a Unix socket;
    stopped at the end and its files (hundreds of MB) removed. Tests share it, each on a
    database of its own (:func:`oceanbase`).

    Never skipped: ``pylibseekdb`` is a test dependency, and a missing engine fails.
    """
    import pylibseekdb

    folder = tmp_path_factory.mktemp("seekdb")
    instance = pylibseekdb.open(db_dir=str(folder / "db"))
    try:
        admin = instance.connect(autocommit=True)
        try:
            admin.cursor().execute(f"SET GLOBAL ob_query_timeout = {SEEKDB_QUERY_TIMEOUT_US}")
            for setting in QUIET_ENGINE:
                admin.cursor().execute(f"ALTER SYSTEM SET {setting}")
        finally:
            admin.close()
        yield instance.connection_options()["unix_socket"]
    finally:
        instance.close()
        shutil.rmtree(folder, ignore_errors=True)


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
