"""Every async test runs on asyncio and on trio (the tests of timeouts, on trio with a
mock clock: ``tests/_clock.py``)."""

from __future__ import annotations

import os
import re
import shutil
from typing import TYPE_CHECKING, Any, Final

import pytest

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
def seekdb_engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
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
        yield instance
    finally:
        instance.close()
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="session")
def seekdb(seekdb_engine: Any) -> str:
    """The Unix socket of the session's seekdb engine."""
    socket: str = seekdb_engine.connection_options()["unix_socket"]
    return socket


#: The name of a database a test of this suite made (the only names emptied for reuse).
TEST_DATABASE: Final = re.compile(r"t_[0-9a-f]{12}")


@pytest.fixture(scope="session")
def _emptied_databases() -> list[str]:
    """Databases of the session's engine that an earlier test used and that are empty
    again: satchel's tables made, no row but the schema version, no vectors table."""
    return []


@pytest.fixture
def oceanbase(seekdb: str, seekdb_engine: Any, _emptied_databases: list[str]) -> Iterator[Any]:
    """A factory of OceanBase stores on the session's engine, each test on a database
    of its own: a new one, or one an earlier test used, emptied.

    Emptied rather than new because every database the engine holds costs it work
    in the background for the rest of the session (its tablets), and making one is
    a dozen schema statements: with a new database per test, the engine's CPU grew
    with each test, to most of the OceanBase tests' time. An emptied database is what
    a second store opening a made database finds, and the store treats it as such; the
    tests of schema creation use :func:`new_oceanbase`."""
    database = _emptied_databases.pop() if _emptied_databases else _new_database()
    yield _store_factory(seekdb, database)
    if emptied_for_reuse(seekdb_engine, database):
        _emptied_databases.append(database)


@pytest.fixture
def new_oceanbase(seekdb: str) -> Any:
    """A factory of OceanBase stores on a database no test has made: what a store's
    first open meets."""
    return _store_factory(seekdb, _new_database())


def _new_database() -> str:
    import uuid

    return f"t_{uuid.uuid4().hex[:12]}"


def _store_factory(socket: str, database: str) -> Any:
    from satchel.stores import OceanBaseStore

    def make(**options: Any) -> OceanBaseStore:
        # Tables whole unless a test asks for partitions: each partition is a tablet the
        # session's engine keeps working on, and the OceanBase tests took 198 s with 16
        # against 121 s whole (tests/stores/test_oceanbase_partitions.py covers them).
        options.setdefault("partitions", 0)
        return OceanBaseStore(unix_socket=socket, database=database, **options)

    return make


def emptied_for_reuse(engine: Any, database: str) -> bool:
    """Empty ``database`` for another test if it holds satchel's schema at the current
    version and nothing else, and no connection uses it; whether it was emptied. A
    database in any other state (the test changed its schema, or failed with a store
    open) is left as it is."""
    import pylibseekdb

    from satchel.stores.oceanbase import _schema

    if not TEST_DATABASE.fullmatch(database):
        return False
    conn = engine.connect(autocommit=True)
    try:
        cur = conn.cursor()
        cur.execute(
            f"SELECT table_name FROM information_schema.tables WHERE table_schema = '{database}'"
        )
        tables = {name for (name,) in cur.fetchall()} - {"satchel_vectors"}
        if tables != set(_schema.TABLES):
            return False
        cur.execute(f"SELECT COUNT(*) FROM information_schema.processlist WHERE db = '{database}'")
        if cur.fetchall() != [(0,)]:
            return False
        cur.execute(f"SELECT value FROM {database}.satchel_meta WHERE name = 'schema'")
        if cur.fetchall() != [(str(_schema.SCHEMA_VERSION),)]:
            return False
        for table in _schema.TABLES:
            keep = " WHERE name <> 'schema'" if table == "satchel_meta" else ""
            cur.execute(f"DELETE FROM {database}.{table}{keep}")
        cur.execute(f"DROP TABLE IF EXISTS {database}.satchel_vectors")
        return True
    except pylibseekdb.SeekdbError:  # a lock the test left, say: not reused
        return False
    finally:
        conn.close()
