"""``satchel serve --workers N``: N processes over one store and one listening socket.

With the first process stopped (SIGSTOP), the other still accepts, writes and prepares
on the same address; a stop of the first process stops every worker, a SIGTERM and a
``kill -9`` alike; what the processes cannot share is refused before anything starts.
Every wait is on an event (a start line, an answer, a process's end), bounded.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import pytest

import satchel
from satchel._wire import full_id
from satchel.cli import main

from .._processes import STARTUP_SECONDS, alive, announced
from .test_serve import start_line, wait_until_healthy

if TYPE_CHECKING:
    from collections.abc import Iterator


def children(pid: int) -> list[int]:
    """The processes ``pid`` started that still run (from any of its threads)."""
    tasks = Path(f"/proc/{pid}/task").iterdir()
    return sorted(int(child) for task in tasks for child in (task / "children").read_text().split())


def wait_gone(pid: int) -> None:
    deadline = time.monotonic() + STARTUP_SECONDS
    while alive(pid):
        assert time.monotonic() < deadline, f"process {pid} still runs"
        time.sleep(0.05)


@contextlib.contextmanager
def serving(db: Path, backend: str, workers: int = 2) -> Iterator[subprocess.Popen[bytes]]:
    command = [
        sys.executable, "-m", "satchel", "serve", "--create", "--db", str(db),
        "--embedder", "hashing",
        "--port", "0", "--backend", backend, "--workers", str(workers),
    ]  # fmt: skip
    server = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        yield server
    finally:
        if server.poll() is None:
            os.kill(server.pid, signal.SIGCONT)
            server.kill()
        server.communicate()


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_a_worker_serves_the_same_address_while_the_first_process_is_stopped(
    backend: str, tmp_path: Path
) -> None:
    """The start line counts the processes; with the first one frozen, the worker
    accepts the connection, acknowledges a write and delivers it in a pack; SIGTERM to
    the first process then stops both, each exiting cleanly."""
    with serving(tmp_path / "agent.db", backend) as server:
        line = start_line(server)
        assert line.endswith("(no authentication, 2 processes)")
        url = line.split(" at ")[1].split(" ")[0]
        (worker,) = children(server.pid)
        with httpx.Client(base_url=url, timeout=30) as client:
            wait_until_healthy(client, server)
        os.kill(server.pid, signal.SIGSTOP)
        try:  # a new connection: only the worker can accept it now
            with httpx.Client(base_url=url, timeout=30) as client:
                entry = {"text": "The kestrel survey starts at dawn", "key": "k1"}
                added = client.post("/v1/memories", json={"scope_id": "birds", "entries": [entry]})
                assert added.status_code == 200, added.text
                prepared = client.post(
                    "/v1/context/prepare", json={"scope_id": "birds", "query": "kestrel survey"}
                )
        finally:
            os.kill(server.pid, signal.SIGCONT)
        assert prepared.status_code == 200, prepared.text
        cited = [item.citation.id for item in satchel.parse_context(prepared.json()["content"])]
        assert cited == [full_id(added.json()["refs"][0]["entry_id"])]
        server.send_signal(signal.SIGTERM)
        _, err = server.communicate(timeout=STARTUP_SECONDS)
        wait_gone(worker)
    assert server.returncode == 0, err.decode()
    assert b"Traceback" not in err
    assert err.decode().count("satchel serve: stopped") == 2  # the worker, then the first


@pytest.mark.slow
def test_workers_never_outlive_a_first_process_killed(tmp_path: Path) -> None:
    """``kill -9`` of the first process closes the workers' stdin: each stops."""
    with serving(tmp_path / "agent.db", "asyncio", workers=3) as server:
        start_line(server)
        workers = children(server.pid)
        assert len(workers) == 2
        server.kill()
        server.wait()
        for worker in workers:
            wait_gone(worker)


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_a_worker_that_dies_is_replaced(backend: str, tmp_path: Path) -> None:
    """``kill -9`` of a worker: the first process says so and starts another on the same
    socket, which then serves alone while the first process is frozen."""
    with serving(tmp_path / "agent.db", backend) as server:
        url = start_line(server).split(" at ")[1].split(" ")[0]
        (worker,) = children(server.pid)
        os.kill(worker, signal.SIGKILL)
        said = announced(server.stderr, rb"satchel serve: worker 2 exited", "satchel serve")
        assert b"code -9; starting another in its place" in said.group()
        announced(server.stderr, rb"satchel serve: worker 2 replaced", "satchel serve")
        (replacement,) = children(server.pid)
        assert replacement != worker
        os.kill(server.pid, signal.SIGSTOP)
        try:  # only the new worker can accept now
            with httpx.Client(base_url=url, timeout=30) as client:
                entry = {"text": "The kestrel survey starts at dawn", "key": "k1"}
                response = client.post("/v1/memories", json={"scope_id": "s", "entries": [entry]})
                assert response.status_code == 200, response.text
        finally:
            os.kill(server.pid, signal.SIGCONT)


def test_a_worker_that_keeps_dying_is_replaced_a_bounded_number_of_times(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A worker whose every start fails (it exits before it is ready) is replaced at
    most ``RESTARTS`` times in the window; then its watch ends, saying why."""
    import socket

    from satchel.cli import _workers

    with socket.socket() as sock:
        command = [sys.executable, "-c", "raise SystemExit(3)", str(sock.fileno())]
        workers = _workers.Workers([_workers._spawn(command)], command)
        workers.keep(0)  # returns once the bound is reached
        workers.stop()
    err = capsys.readouterr().err
    assert err.count("starting another in its place") == _workers.RESTARTS
    assert "worker 2 exited with code 3; not replaced (5 workers replaced" in err
    assert "replaced\n" not in err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--db", ":memory:"], "--workers 2 needs a store the processes share"),
        (["--store", "memory://"], "--workers 2 needs a store the processes share"),
        (["--db", "x.db", "--dedup-turns", "2"], "--workers 2 with --dedup-turns needs"),
    ],
    ids=["memory-db", "memory-url", "sessions"],
)
def test_what_workers_cannot_share_is_refused(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """An in-memory store, or sessions kept per process, with --workers: exit 2, naming
    what to give instead, before any store is opened."""
    with contextlib.chdir(tmp_path):
        assert main(["serve", "--workers", "2", *argv]) == 2
    assert message in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []
