"""``satchel serve --workers 2 --store seekdb:///dir``: two processes over one embedded
seekdb engine.

pylibseekdb runs one engine process per data directory and lets every process that
opens the directory attach to it (through the engine's Unix socket): the first
``satchel serve`` process starts the engine, its worker attaches to the same one. Each
process holds scopes' vectors (``_vector_cache``), so the test warms both caches first,
then sends each call to one chosen process by freezing the other (SIGSTOP: only the
running one accepts new connections on the shared socket): a write, a forget, an erase
and an ``erase_scope`` acknowledged by one are served by the other on its very next
call. Every wait is on an event (a start line, an answer, a process's end), bounded.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import httpx
import pytest

import satchel
from satchel._wire import compact_id

from .._processes import STARTUP_SECONDS
from .test_serve import start_line, wait_until_healthy
from .test_serve_workers import wait_gone

if TYPE_CHECKING:
    from collections.abc import Iterator

pytestmark = pytest.mark.slow


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` that still runs."""
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        for child in map(int, (task / "children").read_text().split()):
            found += [child, *descendants(child)]
    return found


def command_line(pid: int) -> list[str]:
    return Path(f"/proc/{pid}/cmdline").read_text().split("\0")


class Workers:
    """The first process and its worker, with a way to send a call to either one."""

    def __init__(self, server: subprocess.Popen[bytes], url: str) -> None:
        self.server = server
        self.url = url
        (self.worker,) = [
            pid for pid in descendants(server.pid) if "--listen-fd" in command_line(pid)
        ]

    @contextlib.contextmanager
    def only(self, which: str) -> Iterator[httpx.Client]:
        """A new connection that only ``which`` ("first" or "worker") can accept: the
        other is frozen until the call is answered."""
        frozen = self.worker if which == "first" else self.server.pid
        os.kill(frozen, signal.SIGSTOP)
        try:
            with httpx.Client(base_url=self.url, timeout=STARTUP_SECONDS) as client:
                yield client
        finally:
            os.kill(frozen, signal.SIGCONT)

    def call(self, which: str, method: str, path: str, **kwargs: Any) -> httpx.Response:
        with self.only(which) as client:
            response = client.request(method, path, **kwargs)
        assert response.status_code < 300, response.text
        return response

    def cited(self, which: str, scope: str, query: str) -> list[str | None]:
        body = {"scope_id": scope, "query": query, "max_bytes": 2000}
        content = self.call(which, "POST", "/v1/context/prepare", json=body).json()["content"]
        return [compact_id(item.citation.id or "") for item in satchel.parse_context(content)]

    def add(self, which: str, scope: str, *texts: str) -> list[str]:
        body = {"scope_id": scope, "entries": [{"text": text} for text in texts]}
        refs = self.call(which, "POST", "/v1/memories", json=body).json()["refs"]
        return [ref["entry_id"] for ref in refs]


@contextlib.contextmanager
def serving(directory: Path, backend: str) -> Iterator[Workers]:
    command = [
        sys.executable, "-m", "satchel", "serve", "--create",
        "--store", f"seekdb://{directory}", "--embedder", "hashing", "--no-ui",
        "--port", "0", "--backend", backend, "--workers", "2",
    ]  # fmt: skip
    server = subprocess.Popen(command, stderr=subprocess.PIPE)
    try:
        line = start_line(server)
        assert line.endswith("(no authentication, 2 processes)"), line
        workers = Workers(server, line.split(" at ")[1].split(" ")[0])
        with httpx.Client(base_url=workers.url, timeout=STARTUP_SECONDS) as client:
            wait_until_healthy(client, server)
        yield workers
    finally:
        if server.poll() is None:
            for pid in (server.pid, *descendants(server.pid)):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGCONT)
            server.kill()
        server.communicate()


def note(name: str) -> str:
    return f"The {name} runbook: restart the {name} queue from the console"


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_what_one_worker_acknowledged_the_other_serves_on_its_next_call(
    backend: str, tmp_path: Path
) -> None:
    """Both processes' caches warm on a scope; then a write on one is cited by the
    other's next prepare, a forget and an erase on the other are served by neither's
    next prepare, and a scope erased on one is empty on the other; SIGTERM stops both
    and the engine with them. The engine's folder did not exist, nor its parent."""
    directory = tmp_path / "new" / "engine"  # --create makes the folders above it too
    scope = "team:runbooks"
    with serving(directory, backend) as workers:
        engine = int((directory / "run" / "seekdb.pid").read_text())
        (amber,) = workers.add("first", scope, note("amber"))
        for which in ("first", "worker"):  # each process now holds the scope's vectors
            assert workers.cited(which, scope, "amber runbook") == [amber]

        birch, cedar = workers.add("first", scope, note("birch"), note("cedar"))
        assert birch in workers.cited("worker", scope, "birch runbook")
        assert cedar in workers.cited("worker", scope, "cedar queue")

        workers.call("worker", "DELETE", f"/v1/memories/{quote(scope)}/{birch}?version=1")
        assert birch not in workers.cited("first", scope, "birch runbook")

        erased = workers.call("first", "DELETE", f"/v1/memories/{quote(scope)}/{cedar}?erase=true")
        assert erased.json()["erased_versions"] == 1
        assert cedar not in workers.cited("worker", scope, "cedar queue")
        assert amber in workers.cited("worker", scope, "amber runbook")

        workers.call("worker", "DELETE", f"/v1/scopes/{quote(scope)}")
        assert workers.cited("first", scope, "amber runbook") == []

        workers.server.send_signal(signal.SIGTERM)
        _, err = workers.server.communicate(timeout=STARTUP_SECONDS)
        assert workers.server.returncode == 0, err.decode(errors="replace")
        assert err.decode().count("satchel serve: stopped") == 2
        wait_gone(workers.worker)
        wait_gone(engine)
