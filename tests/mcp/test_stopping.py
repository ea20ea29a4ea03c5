"""``satchel mcp`` stopped by a signal, over stdio and over HTTP, the same way every time:
it closes the store, says ``satchel mcp: stopped`` and exits 130 for Ctrl-C (SIGINT), 0
for SIGTERM. Over stdio it stops while the host still holds stdin open."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pathlib import Path


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def wait_until(ready: object, server: subprocess.Popen[bytes], seconds: float = 120) -> None:
    assert callable(ready)
    deadline = time.monotonic() + seconds
    while not ready():
        assert server.poll() is None, f"satchel mcp exited {server.returncode}"
        assert time.monotonic() < deadline, f"satchel mcp was not serving in {seconds} s"
        time.sleep(0.1)


def listening(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    except OSError:
        return False
    return True


@pytest.mark.slow
@pytest.mark.parametrize("number", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_a_signal_stops_the_server_and_says_so(
    tmp_path: Path, transport: str, number: signal.Signals
) -> None:
    """Serving, then signalled: the last line on stderr is 'satchel mcp: stopped', the
    exit code is 130 for SIGINT and 0 for SIGTERM, stdout carries nothing, and stdin was
    never closed (a host that has not hung up does not keep the server alive)."""
    log, out = tmp_path / "stderr.log", tmp_path / "stdout.log"
    command = [
        sys.executable,
        "-m",
        "satchel",
        "mcp",
        "--create",
        "--db",
        str(tmp_path / "agent.db"),
    ]
    command += ["--embedder", "hashing"]
    port = free_port()
    if transport == "http":
        command += ["--http", "--port", str(port)]
    with log.open("wb") as errors, out.open("wb") as output:
        server = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=output, stderr=errors)
        try:
            if transport == "http":
                wait_until(lambda: listening(port), server)
            else:
                wait_until(lambda: b"over stdio" in log.read_bytes(), server)
            server.send_signal(number)
            code = server.wait(timeout=120)
        finally:
            if server.poll() is None:
                server.kill()
            assert server.stdin is not None
            server.stdin.close()
            server.wait()
    stderr = log.read_text(encoding="utf-8")
    assert code == (130 if number == signal.SIGINT else 0), stderr
    assert stderr.endswith("satchel mcp: stopped\n"), stderr
    assert "Traceback" not in stderr
    assert out.read_bytes() == b""
