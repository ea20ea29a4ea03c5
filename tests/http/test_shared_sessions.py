"""``satchel serve --shared-sessions``: two real service processes over one SQLite file
(replicas behind one address) take a session's turns alternately, and each holds back
what the other served, as one service would."""

from __future__ import annotations

import contextlib
import signal
import subprocess
import sys
from typing import TYPE_CHECKING, Any, Final

import httpx
import pytest

import satchel

from .._processes import STARTUP_SECONDS
from ..cli._driver import run
from .test_serve import start_line, wait_until_healthy

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

NOTES: Final = [
    {"text": f"Kestrel deploy note {n}: step {n} of the rollout runs after the canary"}
    for n in range(16)
]
PREPARE: Final = {
    "scope_id": "project:demo",
    "query": "kestrel deploy",
    "max_bytes": 600,
    "session_id": "chat-7",
}


@contextlib.contextmanager
def replica(db: Path, backend: str) -> Iterator[httpx.Client]:
    """A ``satchel serve --dedup-turns 2 --shared-sessions`` process on ``db`` and a
    client of it; stopped with SIGTERM at the end, which must exit 0."""
    command = [
        sys.executable, "-m", "satchel", "serve", "--create", "--db", str(db),
        "--embedder", "hashing",
        "--port", "0", "--backend", backend, "--dedup-turns", "2", "--shared-sessions",
    ]  # fmt: skip
    server = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        url = start_line(server).split(" at ")[1].split(" ")[0]
        with httpx.Client(base_url=url, timeout=30) as client:
            wait_until_healthy(client, server)
            yield client
        server.send_signal(signal.SIGTERM)
        _, err = server.communicate(timeout=STARTUP_SECONDS)
        assert server.returncode == 0, err.decode()
    finally:
        if server.poll() is None:
            server.kill()
            server.communicate()


def served(client: httpx.Client) -> list[str]:
    """The texts of the items one prepare of the session delivers."""
    response = client.post("/v1/context/prepare", json=PREPARE)
    assert response.status_code == 200, response.text
    content: Any = response.json()["content"]
    return [item.text or "" for item in satchel.parse_context(content)]


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_two_replicas_share_a_sessions_turns(backend: str, tmp_path: Path) -> None:
    """Turn 1 on the first replica, turn 2 on the second: the second holds back what the
    first served; turn 3 (first replica) holds back both; turn 4 (second) serves turn
    1's items again, as ``--dedup-turns 2`` says."""
    db = tmp_path / "replicas.db"
    with replica(db, backend) as first:
        added = first.post("/v1/memories", json={"scope_id": "project:demo", "entries": NOTES})
        assert added.status_code == 200, added.text
        with replica(db, backend) as second:
            turns = [served(client) for client in (first, second, first, second)]
    assert all(turns)
    assert set(turns[0]).isdisjoint(turns[1])
    assert set(turns[2]).isdisjoint(turns[0] + turns[1])
    assert turns[3] == turns[0]


def test_shared_sessions_need_dedup_turns(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--shared-sessions`` without ``--dedup-turns`` would share nothing: a usage
    error, before anything is opened."""
    db = tmp_path / "team.db"
    code, _, err = run(capsys, "serve", "--db", str(db), "--shared-sessions")
    assert code == 2
    assert "--dedup-turns" in err
    assert not db.exists()
