"""``satchel serve``: it refuses to serve unauthenticated beyond loopback, and for real (a
subprocess on a free loopback port, asyncio and trio) it answers over HTTP and stops
cleanly on SIGTERM or SIGINT with exit code 0."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from typing import TYPE_CHECKING, Any, Final

import httpx
import pytest

import satchel
from satchel._wire import full_id
from satchel.http import is_loopback

from .._processes import STARTUP_SECONDS, announced
from ..cli._driver import run

if TYPE_CHECKING:
    from pathlib import Path

TOKEN: Final = "e2e-token-0123456789abcdef"


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        ("127.0.0.1", True),
        ("127.4.5.6", True),
        ("::1", True),
        ("[::1]", True),
        ("localhost", True),
        ("LocalHost", True),
        ("0.0.0.0", False),
        ("::", False),
        ("192.168.1.10", False),
        ("example.com", False),
        ("localhost.example.com", False),
    ],
)
def test_loopback_is_recognised(host: str, expected: bool) -> None:
    assert is_loopback(host) is expected


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.10", "example.com"])
def test_a_non_loopback_host_without_tokens_is_refused(
    host: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Exit 2 with a clear message, before anything is opened (no database created)."""
    db = tmp_path / "team.db"
    code, out, err = run(capsys, "serve", "--db", str(db), "--host", host)
    assert code == 2
    assert out == ""
    assert f"refusing to serve on {host} without --token-file" in err
    assert "--insecure" in err
    assert not db.exists()


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (None, "No such file"),
        ("{not json", "not JSON"),
        ('{"tokens": [{"token": "short", "scopes": ["a"]}]}', "at least 16 characters"),
    ],
)
def test_a_bad_token_file_is_refused(
    content: str | None, expected: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tokens = tmp_path / "tokens.json"
    if content is not None:
        tokens.write_text(content)
    db = tmp_path / "team.db"
    code, _, err = run(capsys, "serve", "--db", str(db), "--token-file", str(tokens))
    assert code == 2
    assert "--token-file" in err
    assert expected in err
    assert not db.exists()


def test_help_explains_the_service(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "serve", "--help")
    assert code == 0
    for needed in (
        "/v1/context/prepare",
        "/v1/memories",
        "/healthz",
        "--token-file",
        '"write": true',
        "--insecure",
        "Percent-encode",
        "SIGTERM",
        "/ui/",
        "--no-ui",
        "examples:",
    ):
        assert needed in out, needed


def test_help_lists_every_endpoint(capsys: pytest.CaptureFixture[str]) -> None:
    """``serve --help`` lists every method and path of the OpenAPI document."""
    from satchel.http import OPENAPI

    code, out, _ = run(capsys, "serve", "--help")
    assert code == 0
    for path, methods in OPENAPI["paths"].items():
        shown = path.replace("{scope}", "SCOPE").replace("{entry_id}", "ENTRY")
        for method in set(methods) & {"get", "post", "delete"}:
            assert f"{method.upper():<6} {shown}" in out, (method, path)


@pytest.mark.parametrize("value", ["-1", "65536", "http"])
def test_a_bad_port_is_a_usage_error(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "serve", "--db", "x.db", "--port", value)
    assert code == 2
    assert "--port" in err


# ----------------------------------------------------------------------- end to end


def start_line(server: subprocess.Popen[bytes]) -> str:
    """The line ``satchel serve`` prints once it listens (read within a bounded time)."""
    found = announced(server.stderr, rb"satchel serve: serving", "satchel serve")
    return found.group().decode().rstrip("\n")


def wait_until_healthy(client: httpx.Client, server: subprocess.Popen[bytes]) -> None:
    """Poll /healthz until it answers, within a bounded time."""
    deadline = time.monotonic() + STARTUP_SECONDS
    while True:
        assert server.poll() is None, "satchel serve exited before it answered"
        try:
            response = client.get("/healthz")
        except httpx.TransportError:
            assert time.monotonic() < deadline, "satchel serve never answered /healthz"
            time.sleep(0.05)
            continue
        assert response.status_code == 200
        assert response.json() == {"status": "ok"}
        return


@pytest.mark.parametrize("command", ["serve", "mcp"])
@pytest.mark.parametrize("where", ["--db", "--store"])
def test_a_store_that_does_not_exist_is_refused_without_create(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str, where: str
) -> None:
    """``serve`` and ``mcp`` refuse a --db file or a --store that does not exist (a
    mistyped path would serve an empty store), naming it and --create; nothing is made."""
    db = tmp_path / "tem.db"
    target = str(db) if where == "--db" else f"sqlite://{db}"
    code, out, err = run(capsys, command, where, target, "--embedder", "hashing")
    assert code == 2
    assert f"{where}: no store at {db}; pass --create" in err
    assert out == ""
    assert not db.exists()
    seekdb = tmp_path / "seekdb"
    code, _, err = run(capsys, command, "--store", f"seekdb://{seekdb}")
    assert code == 2
    assert f"no store at {seekdb}" in err


@pytest.mark.parametrize(
    ("backend", "tokens", "stop"),
    [
        ("asyncio", False, signal.SIGTERM),
        ("trio", False, signal.SIGTERM),
        ("asyncio", True, signal.SIGTERM),
        ("trio", True, signal.SIGTERM),
        ("trio", False, signal.SIGINT),
    ],
    ids=["asyncio", "trio", "asyncio-tokens", "trio-tokens", "trio-sigint"],
)
def test_satchel_serve_answers_over_real_http_and_stops_cleanly(
    backend: str, tokens: bool, stop: int, tmp_path: Path
) -> None:
    db = tmp_path / "agent.db"
    command = [
        sys.executable, "-m", "satchel", "serve", "--create", "--db", str(db),
        "--embedder", "hashing",
        "--port", "0", "--backend", backend,
    ]  # fmt: skip
    headers = {}
    if tokens:
        token_file = tmp_path / "tokens.json"
        grant = {"name": "e2e", "token": TOKEN, "scopes": ["project:*"], "write": True}
        token_file.write_text(json.dumps({"tokens": [grant]}))
        token_file.chmod(0o600)
        command += ["--token-file", str(token_file)]
        headers = {"Authorization": f"Bearer {TOKEN}"}
    server = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        line = start_line(server)
        url = line.split(" at ")[1].split(" ")[0]
        assert url.startswith("http://127.0.0.1:")
        assert f"{db} (created now)" in line
        assert ("1 token, 1 may write" if tokens else "no authentication") in line
        with httpx.Client(base_url=url, timeout=30) as client:
            wait_until_healthy(client, server)
            added = client.post(
                "/v1/memories",
                json={
                    "scope_id": "project:demo",
                    "entries": [
                        {"text": "Backups run nightly at 02:00 UTC", "key": "b1"},
                        {"text": "Restores take twenty minutes", "key": "r1"},
                    ],
                },
                headers=headers,
            )
            assert added.status_code == 200, added.text
            refs = added.json()["refs"]
            prepared = client.post(
                "/v1/context/prepare",
                json={"scope_id": "project:demo", "query": "when do backups run?"},
                headers=headers,
            )
            assert prepared.status_code == 200, prepared.text
            context = prepared.json()
            assert context["status"] == "ready"
            assert "Backups run nightly at 02:00 UTC" in context["content"]
            cited = [item.citation.id for item in satchel.parse_context(context["content"])]
            assert full_id(refs[0]["entry_id"]) in cited
            got = client.get(
                f"/v1/memories/project%3Ademo/{refs[0]['entry_id']}",
                params={"version": 1},
                headers=headers,
            )
            assert got.json()["text"] == "Backups run nightly at 02:00 UTC"
            if tokens:
                refused = client.post(
                    "/v1/context/prepare", json={"scope_id": "project:demo", "query": "q"}
                )
                assert refused.status_code == 401
            else:  # a loopback service without tokens answers only loopback Host names
                refused = client.get("/healthz", headers={"Host": "rebound.example"})
                assert refused.status_code == 421
                rebound = client.get("/ui/", headers={"Host": "rebound.example"})
                assert rebound.status_code == 421
            inspector = client.get("/ui/")  # a login form first with tokens, else the page
            assert inspector.status_code == (303 if tokens else 200)
            if not tokens:
                assert "project:demo" in inspector.text
        server.send_signal(stop)
        _, err = server.communicate(timeout=STARTUP_SECONDS)
    finally:
        if server.poll() is None:
            server.kill()
            server.communicate()
    assert server.returncode == 0, err.decode()
    assert b"Traceback" not in err
    assert err.decode().rstrip().endswith("satchel serve: stopped")


@pytest.mark.parametrize("allow", ["--insecure", "--token-file"])
def test_insecure_or_tokens_allow_a_non_loopback_host(
    allow: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Past the refusal, the service tries to listen: on an address this machine does
    not have (TEST-NET-1), that fails with a clear message and exit 1."""
    extra = [allow]
    if allow == "--token-file":
        tokens = tmp_path / "tokens.json"
        tokens.write_text(json.dumps({"tokens": [{"token": TOKEN, "scopes": ["*"]}]}))
        tokens.chmod(0o600)
        extra.append(str(tokens))
    db = tmp_path / "team.db"
    args = ["serve", "--create", "--db", str(db), "--embedder", "hashing", "--host", "192.0.2.1"]
    args += extra
    code, _, err = run(capsys, *args)
    assert code == 1
    assert "refusing" not in err
    assert "cannot listen on 192.0.2.1:8765" in err


def test_the_socket_queues_a_burst_of_connections() -> None:
    """The listening socket holds far more pending connections than Hypercorn's default
    of 100: 300 clients connecting at once before any is accepted all get through the
    handshake (agent hooks open one connection per prompt)."""
    from satchel.http import _server

    sock = _server.listen("127.0.0.1", 0)
    clients: list[socket.socket] = []
    try:
        address = sock.getsockname()
        for _ in range(300):
            client = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            client.settimeout(5.0)
            clients.append(client)
            client.connect(address)  # blocks past the backlog: nothing accepts here
    finally:
        for client in clients:
            client.close()
        sock.close()
    assert len(clients) == 300


@pytest.mark.anyio
async def test_hypercorn_listens_with_the_same_backlog(monkeypatch: pytest.MonkeyPatch) -> None:
    """Hypercorn calls listen() again on the socket it is handed, with its config's
    backlog: serve sets it, or the queue would shrink back to 100."""
    import hypercorn.asyncio
    import hypercorn.trio

    from satchel.http import _server

    seen: list[Any] = []

    async def fake_serve(app: object, config: Any, **options: object) -> None:
        seen.append(config)

    monkeypatch.setattr(hypercorn.asyncio, "serve", fake_serve)
    monkeypatch.setattr(hypercorn.trio, "serve", fake_serve)

    async def never() -> None:
        return None

    async def app(scope: object, receive: object, send: object) -> None:
        return None

    await _server.serve(app, _server.listen("127.0.0.1", 0), shutdown_trigger=never)
    (config,) = seen
    os.close(int(config.bind[0].removeprefix("fd://")))  # the detached socket
    assert config.backlog == _server.BACKLOG


def test_no_ui_serves_the_api_without_the_inspector(tmp_path: Path) -> None:
    """``--no-ui``: ``/ui/`` is an unknown path (404), the API answers as before."""
    command = [
        sys.executable, "-m", "satchel", "serve", "--create", "--db", str(tmp_path / "agent.db"),
        "--embedder", "hashing", "--port", "0", "--no-ui",
    ]  # fmt: skip
    server = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        url = start_line(server).split(" at ")[1].split(" ")[0]
        with httpx.Client(base_url=url, timeout=30) as client:
            wait_until_healthy(client, server)
            assert client.get("/ui/").status_code == 404
            assert client.get("/openapi.json").status_code == 200
        server.send_signal(signal.SIGTERM)
        server.communicate(timeout=STARTUP_SECONDS)
    finally:
        if server.poll() is None:
            server.kill()
            server.communicate()
    assert server.returncode == 0
