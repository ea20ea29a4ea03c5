"""A real ``satchel serve`` process for the client's tests, and the Runtime and the Client
that the same test functions run against.

One server serves a file for the whole module; a Runtime opened over the same file in
the test's process is the twin every pack the Client receives is compared with, byte
for byte (several processes may share one SQLite file). Each test writes to scopes of
its own.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import time
from typing import TYPE_CHECKING, Final

import httpx

import satchel

from .._processes import STARTUP_SECONDS, announced

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterator
    from pathlib import Path

TOKEN: Final = "client-suite-token-0123456789"
#: The service's prepare deadline, and the same option for the twin Runtime.
PREPARE_TIMEOUT: Final = 20.0


class Server:
    """A running ``satchel serve``: its URL and the file it serves."""

    def __init__(self, url: str, db: Path) -> None:
        self.url = url
        self.db = db


@contextlib.contextmanager
def running_server(folder: Path) -> Iterator[Server]:
    """``satchel serve`` over ``folder/agent.db`` with one token that may write every
    scope, stopped (SIGTERM) and reaped at the end."""
    db = folder / "agent.db"
    tokens = folder / "tokens.json"
    grant = {"name": "suite", "token": TOKEN, "scopes": ["*"], "write": True}
    tokens.write_text(json.dumps({"tokens": [grant]}))
    tokens.chmod(0o600)
    command = [
        sys.executable, "-m", "satchel", "serve", "--create", "--db", str(db),
        "--embedder", "hashing", "--port", "0", "--token-file", str(tokens),
        "--timeout", str(PREPARE_TIMEOUT),
    ]  # fmt: skip
    server = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        line = announced(server.stderr, rb"satchel serve: serving", "satchel serve").group()
        url = line.decode().split(" at ")[1].split(" ")[0]
        _wait_until_healthy(url, server)
        yield Server(url, db)
    finally:
        server.terminate()
        server.communicate(timeout=STARTUP_SECONDS)


def _wait_until_healthy(url: str, server: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + STARTUP_SECONDS
    with httpx.Client(base_url=url, timeout=STARTUP_SECONDS) as client:
        while True:
            assert server.poll() is None, "satchel serve exited before it answered"
            try:
                client.get("/healthz").raise_for_status()
                return
            except httpx.TransportError:
                assert time.monotonic() < deadline, "satchel serve never answered /healthz"
                time.sleep(0.05)


@contextlib.asynccontextmanager
async def twin_runtime(server: Server) -> AsyncIterator[satchel.Runtime]:
    """A Runtime over the file the server serves, with the server's options."""
    async with satchel.open_runtime(
        str(server.db), embedder=satchel.HashingEmbedder(), prepare_timeout=PREPARE_TIMEOUT
    ) as runtime:
        yield runtime
