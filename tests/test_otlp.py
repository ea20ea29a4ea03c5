"""OTLP export from satchel's own processes (``satchel._otlp``).

The end-to-end tests run ``satchel`` as a subprocess against a real OTLP/HTTP receiver on
loopback and decode what arrived (spans and metrics) with the official protobuf
definitions: nothing reads the exporter's memory. The others pin when export is
configured, that nothing is imported or configured when it is not, and that a collector
that is down costs a command at most a second and one line.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any, ClassVar

import anyio
import pytest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

import satchel
from satchel._otlp import telemetry_from_env, tracer_provider_from_env
from satchel.embedders import from_spec

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

    from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
    from opentelemetry.proto.metrics.v1.metrics_pb2 import Metric
    from opentelemetry.proto.trace.v1.trace_pb2 import Span

QUERY = "Which CI system runs the deploy pipeline?"
STORED = "The deploy pipeline runs on Kestrel CI, rebuilt every Tuesday."
#: How long the receiver may take to see what an exited process sent.
WAIT = 30.0


class Receiver:
    """An OTLP/HTTP receiver on loopback: decodes every ``POST /v1/traces`` body into an
    ``ExportTraceServiceRequest`` (kept with the request's headers) and every
    ``POST /v1/metrics`` body into an ``ExportMetricsServiceRequest``."""

    def __init__(self) -> None:
        self.requests: list[ExportTraceServiceRequest] = []
        self.metric_requests: list[ExportMetricsServiceRequest] = []
        self.headers: list[dict[str, str]] = []
        self._arrived = threading.Condition()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            receiver: ClassVar[Receiver] = owner

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                if self.path not in ("/v1/traces", "/v1/metrics"):
                    self.send_error(404)
                    return
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                if self.path == "/v1/metrics":
                    self.receiver.keep_metrics(ExportMetricsServiceRequest.FromString(body))
                    answer = ExportMetricsServiceResponse().SerializeToString()
                else:
                    request = ExportTraceServiceRequest.FromString(body)
                    self.receiver.keep(request, dict(self.headers))
                    answer = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, format: str, *args: Any) -> None:
                return None  # quiet: pytest shows stderr of failing tests

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def endpoint(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def keep(self, request: ExportTraceServiceRequest, headers: dict[str, str]) -> None:
        with self._arrived:
            self.requests.append(request)
            self.headers.append({name.lower(): value for name, value in headers.items()})
            self._arrived.notify_all()

    def keep_metrics(self, request: ExportMetricsServiceRequest) -> None:
        with self._arrived:
            self.metric_requests.append(request)
            self._arrived.notify_all()

    def metrics(self) -> list[Metric]:
        """Every metric received, with its data points (cumulative: the last export
        of a name holds its totals)."""
        with self._arrived:
            return [
                metric
                for request in self.metric_requests
                for resource in request.resource_metrics
                for scope in resource.scope_metrics
                for metric in scope.metrics
            ]

    def wait_for_metrics(self, done: Callable[[list[Metric]], bool]) -> list[Metric]:
        """The metrics received once ``done`` holds for them; fails after ``WAIT`` s."""
        with self._arrived:
            arrived = self._arrived.wait_for(lambda: done(self.metrics()), timeout=WAIT)
        assert arrived, f"the receiver saw {[m.name for m in self.metrics()]} after {WAIT} s"
        return self.metrics()

    def spans(self) -> list[Span]:
        with self._arrived:
            return [
                span
                for request in self.requests
                for resource in request.resource_spans
                for scope in resource.scope_spans
                for span in scope.spans
            ]

    def wait_for(self, done: Callable[[list[Span]], bool]) -> list[Span]:
        """The spans received once ``done`` holds for them; fails after ``WAIT`` s."""
        with self._arrived:  # a reentrant lock: spans() takes it again
            arrived = self._arrived.wait_for(lambda: done(self.spans()), timeout=WAIT)
        assert arrived, f"the receiver saw {[s.name for s in self.spans()]} after {WAIT} s"
        return self.spans()

    def __enter__(self) -> Receiver:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=WAIT)


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with Receiver() as running:
        yield running


def clean_environment() -> dict[str, str]:
    """This process's environment without any OpenTelemetry setting."""
    return {name: value for name, value in os.environ.items() if not name.startswith("OTEL_")}


def exporting_to(receiver: Receiver) -> dict[str, str]:
    return {
        **clean_environment(),
        "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint,
        "OTEL_SERVICE_NAME": "satchel-test",
        "OTEL_RESOURCE_ATTRIBUTES": "deployment.environment.name=test",
        "OTEL_EXPORTER_OTLP_HEADERS": "x-satchel-test=token-1",
    }


def satchel_process(environment: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "satchel", *args],
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def value(any_value: AnyValue) -> object:
    kind = any_value.WhichOneof("value")
    return None if kind is None else getattr(any_value, kind)


def attributes(pairs: Any) -> dict[str, object]:
    listed: list[KeyValue] = list(pairs)
    return {pair.key: value(pair.value) for pair in listed}


def resources(receiver: Receiver) -> list[dict[str, object]]:
    return [
        attributes(spans.resource.attributes)
        for request in receiver.requests
        for spans in request.resource_spans
    ]


def named(spans: list[Span], name: str) -> list[Span]:
    return [span for span in spans if span.name == name]


async def write_database(path: Path) -> None:
    """A small database built with the embedder ``--embedder hashing`` names."""
    async with satchel.open_runtime(str(path), embedder=from_spec("hashing")) as rt:
        await rt.add_memories(
            "team",
            [
                satchel.MemoryEntry(text=STORED),
                satchel.MemoryEntry(text="Lunch is at noon on Fridays."),
            ],
        )
        await rt.add_experiences(
            "team", [satchel.Experience("a deploy failed", "rolled back", "recovered", "pin")]
        )


def test_prepare_exports_its_spans_to_an_otlp_receiver(tmp_path: Path, receiver: Receiver) -> None:
    """``satchel prepare`` with OTEL_EXPORTER_OTLP_ENDPOINT set sends every span of the
    prepare over OTLP/HTTP: one trace under ``satchel.prepare_context``, the round under
    it, a search per family under the round, the DB spans under the searches, the build
    under the root; the resource and headers come from the environment; neither the
    query nor the stored text is on any span."""
    database = tmp_path / "team.db"
    anyio.run(write_database, database)
    done = satchel_process(
        exporting_to(receiver),
        "prepare", "--db", str(database), "--scope", "team", "--embedder", "hashing", QUERY,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert STORED in done.stdout  # the pack carried the content the spans must not
    assert "warning" not in done.stderr
    spans = receiver.wait_for(lambda spans: bool(named(spans, "satchel.prepare_context")))

    for resource in resources(receiver):
        assert resource["service.name"] == "satchel-test"
        assert resource["deployment.environment.name"] == "test"
        assert resource["telemetry.sdk.name"] == "opentelemetry"
    assert all(headers.get("x-satchel-test") == "token-1" for headers in receiver.headers)
    assert all(headers["content-type"] == "application/x-protobuf" for headers in receiver.headers)

    (root,) = named(spans, "satchel.prepare_context")
    assert root.parent_span_id == b""
    (round_zero,) = named(spans, "satchel.recall.round")
    assert round_zero.parent_span_id == root.span_id
    assert attributes(round_zero.attributes)["satchel.recall.round.index"] == 0
    searches = named(spans, "search_memory")
    assert {attributes(s.attributes)["satchel.memory.family"] for s in searches} == {
        "memory", "experience", "topic-memory",
    }  # fmt: skip
    assert all(search.parent_span_id == round_zero.span_id for search in searches)
    db_spans = [span for span in spans if span.name.startswith("sqlite ")]
    assert {"sqlite retrieve", "sqlite evidence"} <= {span.name for span in db_spans}
    search_ids = {search.span_id for search in searches}
    for span in db_spans:
        assert attributes(span.attributes)["db.system.name"] == "sqlite"
        if span.trace_id == root.trace_id:  # the prepare's reads (binding the embedder is not)
            assert span.parent_span_id in search_ids
    (build,) = named(spans, "satchel.context.build")
    assert build.parent_span_id == root.span_id
    assert attributes(build.attributes)["satchel.context.status"] == "ready"
    prepared = [span for span in spans if span.trace_id == root.trace_id]
    assert len(prepared) >= 1 + 1 + len(searches) + 1 + 2

    words = [*QUERY.rstrip("?").split(), *STORED.rstrip(".").split()]
    distinctive = [word for word in words if len(word) > 4 and word.lower() != "deploy"]
    for span in spans:
        for found in [span.name, *map(str, attributes(span.attributes).values())]:
            assert QUERY not in found
            assert STORED not in found
            assert not [word for word in distinctive if word in found], (span.name, found)


def test_ingest_exports_its_write_spans(tmp_path: Path, receiver: Receiver) -> None:
    """``satchel ingest`` exports the DB spans of its writes the same way."""
    workload = tmp_path / "workload"
    workload.mkdir()
    line = {"id": "m1", "scope": "team", "text": STORED}
    (workload / "entries.jsonl").write_text(json.dumps(line) + "\n", encoding="utf-8")
    done = satchel_process(
        exporting_to(receiver),
        "ingest", str(workload), "--db", str(tmp_path / "team.db"), "--embedder", "hashing",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    spans = receiver.wait_for(lambda spans: bool(named(spans, "sqlite add_memories")))
    (write,) = named(spans, "sqlite add_memories")
    assert attributes(write.attributes)["db.operation.name"] == "add_memories"
    assert {resource["service.name"] for resource in resources(receiver)} == {"satchel-test"}


def test_nothing_is_configured_or_imported_without_the_variables() -> None:
    """Without the variables the block gets None and the SDK is never imported."""
    probe = (
        "import sys\n"
        "from satchel._otlp import tracer_provider_from_env\n"
        "with tracer_provider_from_env() as provider:\n"
        "    assert provider is None\n"
        "print(sorted(m for m in sys.modules if m.startswith(('opentelemetry.sdk',"
        " 'opentelemetry.exporter'))))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        env=clean_environment(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert (done.stdout.strip(), done.stderr) == ("[]", "")


@pytest.fixture
def no_otel_variables(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in os.environ:
        if name.startswith("OTEL_"):
            monkeypatch.delenv(name)
    return monkeypatch


@pytest.mark.parametrize(
    ("variables", "exports", "warning"),
    [
        ({}, False, None),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9"}, True, None),
        ({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:9/v1/traces"}, True, None),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": " "}, False, None),
        ({"OTEL_TRACES_EXPORTER": "otlp"}, True, None),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9", "OTEL_TRACES_EXPORTER": "none"},
         False, None),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9", "OTEL_SDK_DISABLED": "true"},
         False, None),
        ({"OTEL_TRACES_EXPORTER": "console"}, False, "only otlp"),
        ({"OTEL_TRACES_EXPORTER": "otlp,console"}, True, "console ignored"),
        ({"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"},
         True, "'grpc' is not supported"),
    ],
)  # fmt: skip
def test_when_export_is_configured(
    no_otel_variables: pytest.MonkeyPatch,
    variables: dict[str, str],
    exports: bool,
    warning: str | None,
) -> None:
    """The standard variables decide: an endpoint or ``otlp`` in OTEL_TRACES_EXPORTER
    turns export on; ``none`` or another exporter, or OTEL_SDK_DISABLED, keep it off;
    anything satchel cannot honour is one warning line."""
    for name, setting in variables.items():
        no_otel_variables.setenv(name, setting)
    stream = io.StringIO()
    with tracer_provider_from_env(stderr=stream) as provider:
        assert (provider is not None) == exports
    lines = stream.getvalue().splitlines()
    if warning is None:
        assert lines == []
    else:
        (line,) = lines
        assert line.startswith("satchel: warning: ")
        assert warning in line


@pytest.mark.parametrize(
    ("variables", "service"),
    [
        ({}, "satchel"),
        ({"OTEL_SERVICE_NAME": "memory-svc"}, "memory-svc"),
        ({"OTEL_RESOURCE_ATTRIBUTES": "service.name=from-attributes,team=ops"}, "from-attributes"),
        ({"OTEL_RESOURCE_ATTRIBUTES": "service.name=a", "OTEL_SERVICE_NAME": "b"}, "b"),
    ],
)
def test_the_resource_comes_from_the_environment(
    no_otel_variables: pytest.MonkeyPatch, variables: dict[str, str], service: str
) -> None:
    """service.name is OTEL_SERVICE_NAME, else the one OTEL_RESOURCE_ATTRIBUTES names,
    else ``satchel``; the other resource attributes are kept."""
    from opentelemetry.sdk.trace import TracerProvider

    no_otel_variables.setenv("OTEL_TRACES_EXPORTER", "otlp")
    for name, setting in variables.items():
        no_otel_variables.setenv(name, setting)
    with tracer_provider_from_env() as provider:
        assert isinstance(provider, TracerProvider)
        resource = dict(provider.resource.attributes)
    assert resource["service.name"] == service
    assert "service.version" in resource
    if "team=ops" in variables.get("OTEL_RESOURCE_ATTRIBUTES", ""):
        assert resource["team"] == "ops"


def test_without_the_sdk_one_line_says_so_and_nothing_is_exported(
    no_otel_variables: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """With the variables set but the SDK or the exporter missing, the block gets None
    and stderr one line naming what to install."""
    no_otel_variables.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9")
    for module in (
        "opentelemetry.sdk.trace",
        "opentelemetry.sdk.trace.export",
        "opentelemetry.sdk.resources",
        "opentelemetry.exporter.otlp.proto.http.trace_exporter",
    ):
        no_otel_variables.setitem(sys.modules, module, None)
    with tracer_provider_from_env() as provider:
        assert provider is None
    (line,) = capsys.readouterr().err.splitlines()
    assert "not installed" in line
    assert "satchel[otel]" in line


@pytest.mark.parametrize(
    ("command", "operation"),
    [
        (("scopes",), "scope_counts"),
        (("forget", "--scope", "team", "--id", "m1", "--version", "1"), "forget_memory"),
    ],
)
def test_the_store_commands_export_their_db_spans(
    tmp_path: Path, receiver: Receiver, command: tuple[str, ...], operation: str
) -> None:
    """``satchel scopes``, ``get`` and ``forget`` export the DB span of the one call they
    make (``get`` and ``forget`` share the code path; ``forget`` runs here)."""
    database = tmp_path / "team.db"

    async def write() -> str:
        async with satchel.open_runtime(str(database), embedder=from_spec("hashing")) as rt:
            (ref,) = await rt.add_memories("team", [satchel.MemoryEntry(text=STORED)])
        return ref.entry_id

    entry_id = anyio.run(write)
    arguments = [entry_id if part == "m1" else part for part in command]
    done = satchel_process(exporting_to(receiver), *arguments, "--db", str(database))
    assert done.returncode == 0, done.stderr
    spans = receiver.wait_for(lambda spans: bool(named(spans, f"sqlite {operation}")))
    (span,) = named(spans, f"sqlite {operation}")
    assert attributes(span.attributes)["db.operation.name"] == operation


def test_serve_exports_server_spans_that_wrap_the_library_spans(
    tmp_path: Path, receiver: Receiver
) -> None:
    """``satchel serve`` with the variables set exports a SERVER span per request, and a
    prepare's library spans (``satchel.prepare_context`` and the DB reads under it) are in
    its trace, under it; no query text is on any span."""
    import httpx

    from .http.test_serve import start_line, wait_until_healthy

    database = tmp_path / "team.db"
    anyio.run(write_database, database)
    command = [sys.executable, "-m", "satchel", "serve", "--db", str(database), "--port", "0",
               "--embedder", "hashing"]  # fmt: skip
    environment = exporting_to(receiver)
    with subprocess.Popen(command, env=environment, stderr=subprocess.PIPE) as server:
        try:
            url = start_line(server).rsplit(" at ", 1)[1].split(" ", 1)[0]
            with httpx.Client(base_url=url, timeout=WAIT) as client:
                wait_until_healthy(client, server)
                answer = client.post(
                    "/v1/context/prepare", json={"scope_id": "team", "query": QUERY}
                )
            assert answer.status_code == 200
            assert STORED in answer.json()["content"]
        finally:
            server.terminate()
            assert server.wait(timeout=WAIT) == 0
    spans = receiver.wait_for(lambda spans: bool(named(spans, "POST /v1/context/prepare")))
    (request,) = named(spans, "POST /v1/context/prepare")
    assert request.kind == request.SPAN_KIND_SERVER
    assert attributes(request.attributes)["http.response.status_code"] == 200
    (root,) = named(spans, "satchel.prepare_context")
    assert root.trace_id == request.trace_id
    assert root.parent_span_id == request.span_id
    reads = [span for span in spans if span.name == "sqlite retrieve"]
    assert reads
    assert all(read.trace_id == request.trace_id for read in reads)
    for span in spans:
        for found in [span.name, *map(str, attributes(span.attributes).values())]:
            assert QUERY not in found


#: A scope named after a person, as hosts often name them.
PERSON = "user:alice@example.com"


async def write_person(path: Path) -> None:
    """A small database whose one scope is a person's."""
    async with satchel.open_runtime(str(path), embedder=from_spec("hashing")) as rt:
        await rt.add_memories(PERSON, [satchel.MemoryEntry(text=STORED)])


@pytest.mark.parametrize("opted_in", [False, True], ids=["default", "opted-in"])
def test_scope_names_reach_the_collector_only_when_the_operator_opts_in(
    tmp_path: Path, receiver: Receiver, opted_in: bool
) -> None:
    """A prepare of a person's scope exports search_memory spans following the GenAI
    memory conventions (operation, record count); by default no span anywhere names
    the scope, and with SATCHEL_TRACE_IDENTIFIERS=true each search names it as
    gen_ai.memory.store.id."""
    database = tmp_path / "people.db"
    anyio.run(write_person, database)
    environment = exporting_to(receiver)
    if opted_in:
        environment["SATCHEL_TRACE_IDENTIFIERS"] = "true"
    done = satchel_process(
        environment,
        "prepare", "--db", str(database), "--scope", PERSON, "--embedder", "hashing", QUERY,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert STORED in done.stdout
    spans = receiver.wait_for(lambda spans: bool(named(spans, "satchel.prepare_context")))
    searches = named(spans, "search_memory")
    assert searches
    for search in searches:
        found = attributes(search.attributes)
        assert found["gen_ai.operation.name"] == "search_memory"
        assert isinstance(found["gen_ai.memory.record.count"], int)
        assert found.get("gen_ai.memory.store.id") == (PERSON if opted_in else None)
    if not opted_in:
        for span in spans:
            for value in [span.name, *map(str, attributes(span.attributes).values())]:
                assert "alice" not in value, (span.name, value)


def test_prepare_exports_its_metrics_to_an_otlp_receiver(
    tmp_path: Path, receiver: Receiver
) -> None:
    """``satchel prepare`` with OTEL_EXPORTER_OTLP_ENDPOINT set also sends satchel's
    metrics over OTLP/HTTP (read as ExportMetricsServiceRequest): one ready prepare's
    duration in seconds, its one round, the bytes it delivered, under the resource
    the environment names and the ``satchel`` scope."""
    database = tmp_path / "team.db"
    anyio.run(write_database, database)
    done = satchel_process(
        exporting_to(receiver),
        "prepare", "--db", str(database), "--scope", "team", "--embedder", "hashing",
        "--json", QUERY,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    delivered = json.loads(done.stdout)["content_bytes"]
    found = receiver.wait_for_metrics(
        lambda metrics: "satchel.prepare.duration" in {metric.name for metric in metrics}
    )
    by_name = {metric.name: metric for metric in found}
    duration = by_name["satchel.prepare.duration"]
    assert duration.unit == "s"
    (point,) = duration.histogram.data_points
    assert attributes(point.attributes) == {"satchel.context.status": "ready"}
    assert point.count == 1
    assert 0 < point.sum < WAIT
    (rounds,) = by_name["satchel.recall.rounds"].histogram.data_points
    assert (rounds.count, rounds.sum) == (1, 1)
    (size,) = by_name["satchel.context.size"].histogram.data_points
    assert by_name["satchel.context.size"].unit == "By"
    assert (size.count, size.sum) == (1, delivered)
    assert "satchel.store.errors" not in by_name
    (request,) = receiver.metric_requests
    for resource in request.resource_metrics:
        assert attributes(resource.resource.attributes)["service.name"] == "satchel-test"
        assert {scope.scope.name for scope in resource.scope_metrics} == {"satchel"}


@pytest.mark.parametrize(
    ("variables", "signals"),
    [
        ({}, set()),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9"}, {"traces", "metrics"}),
        ({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:9/v1/traces"}, {"traces"}),
        ({"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "http://127.0.0.1:9/v1/metrics"}, {"metrics"}),
        ({"OTEL_METRICS_EXPORTER": "otlp"}, {"metrics"}),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9", "OTEL_METRICS_EXPORTER": "none"},
         {"traces"}),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9", "OTEL_SDK_DISABLED": "true"},
         set()),
    ],
)  # fmt: skip
def test_which_signals_are_exported(
    no_otel_variables: pytest.MonkeyPatch, variables: dict[str, str], signals: set[str]
) -> None:
    """Spans and metrics are asked for each by their own variables (or the shared
    endpoint), and turned off each by their own OTEL_*_EXPORTER."""
    for name, setting in variables.items():
        no_otel_variables.setenv(name, setting)
    stream = io.StringIO()
    with telemetry_from_env(stderr=stream) as telemetry:
        exported = {
            signal
            for signal, provider in (
                ("traces", telemetry.tracer_provider),
                ("metrics", telemetry.meter_provider),
            )
            if provider is not None
        }
    assert exported == signals
    assert stream.getvalue() == ""


@pytest.mark.parametrize(("setting", "opted_in"), [("", False), ("true", True), ("no", False)])
def test_trace_identifiers_come_from_the_environment(
    no_otel_variables: pytest.MonkeyPatch, setting: str, opted_in: bool
) -> None:
    """SATCHEL_TRACE_IDENTIFIERS=true (and only that, or 1) lets a command's spans name
    scopes, export or not."""
    no_otel_variables.setenv("SATCHEL_TRACE_IDENTIFIERS", setting)
    with telemetry_from_env() as telemetry:
        assert telemetry.trace_identifiers is opted_in


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then closed)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def test_the_exit_does_not_wait_for_a_collector_that_is_down(
    no_otel_variables: pytest.MonkeyPatch,
) -> None:
    """With the collector down, leaving the block (which exports what is left) costs no
    retry wait (the probe of its address fails at once; it took ~1.1 s), and one line
    says the collector could not be reached."""
    no_otel_variables.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", f"http://127.0.0.1:{closed_port()}")
    stream = io.StringIO()
    with telemetry_from_env(stderr=stream) as telemetry:
        assert telemetry.tracer_provider is not None
        assert telemetry.meter_provider is not None
        with telemetry.tracer_provider.get_tracer("probe").start_as_current_span("probe"):
            pass
        telemetry.meter_provider.get_meter("probe").create_counter("probe").add(1)
        leaving = time.monotonic()
    elapsed = time.monotonic() - leaving
    assert elapsed < 0.5, elapsed  # no retry: the collector's port refused the probe
    (line,) = stream.getvalue().splitlines()
    assert line.startswith("satchel: warning: ")
    assert "could not be reached" in line


def test_a_service_says_at_its_first_failed_export_that_the_collector_is_down(
    no_otel_variables: pytest.MonkeyPatch,
) -> None:
    """While a service runs, the first export that fails (the batch processor's, here
    forced) says at once, in one line, that the collector could not be reached; later
    failures say nothing more, and none waits for the exporter's retries."""
    no_otel_variables.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", f"http://127.0.0.1:{closed_port()}")
    stream = io.StringIO()
    from opentelemetry.sdk.trace import TracerProvider as SdkTracerProvider

    with telemetry_from_env(stderr=stream) as telemetry:
        assert isinstance(telemetry.tracer_provider, SdkTracerProvider)
        tracer = telemetry.tracer_provider.get_tracer("probe")
        for _ in range(2):
            with tracer.start_as_current_span("request"):
                pass
            started = time.monotonic()
            telemetry.tracer_provider.force_flush()
            assert time.monotonic() - started < 0.5
            (line,) = stream.getvalue().splitlines()  # said while serving, once
            assert "could not be reached" in line
    assert len(stream.getvalue().splitlines()) == 1


def test_prepare_with_the_collector_down_gives_the_same_pack_and_says_so_once(
    tmp_path: Path, receiver: Receiver
) -> None:
    """``satchel prepare`` exporting to a closed local port prints the same pack and one
    stderr line saying the collector could not be reached (it took ~8.5 s more, with
    four retry warnings). How long the exit waits is timed in process, by
    test_the_exit_does_not_wait_for_a_collector_that_is_down: between two
    process runs on a loaded machine the noise is seconds."""
    database = tmp_path / "team.db"
    anyio.run(write_database, database)
    command = ("prepare", "--db", str(database), "--scope", "team", "--embedder", "hashing", QUERY)
    up = satchel_process(exporting_to(receiver), *command)
    environment = {
        **clean_environment(),
        "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{closed_port()}",
    }
    down = satchel_process(environment, *command)
    assert (down.returncode, up.returncode) == (0, 0), down.stderr
    assert (down.stdout, up.stderr) == (up.stdout, "")
    (line,) = down.stderr.splitlines()
    assert line.startswith("satchel: warning: the OTLP collector at 127.0.0.1:")
    assert "could not be reached" in line
