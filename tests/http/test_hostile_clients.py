"""The service under hostile clients, over real loopback sockets (Hypercorn in process,
asyncio and trio): a request that stops arriving is bounded (408, or closed before its
headers end), a refusal given before the body was read says ``Connection: close`` so a
pooled client never reuses a connection the server closes, a store fault is a 503 (507
for a full disk) with the store's own message, and malformed HTTP gets the server's own
answer and a closed connection, never a held one.

Every wait is bounded by a fail_after; the timeouts under test are a fifth of a second.
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import math
import os
import sqlite3
from typing import TYPE_CHECKING, Any, Final

import anyio
import httpx
import pytest

import satchel
from satchel.http import TokenGrant, create_app, listen, serve

from ..cli._driver import run
from ._service import error_of

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Mapping
    from pathlib import Path

    from starlette.applications import Starlette

    from satchel.stores import Family, Pool, PoolRequest, Ref

pytestmark = pytest.mark.anyio

TOKEN: Final = "hostile-clients-0123456789"
AUTH: Final = b"Authorization: Bearer " + TOKEN.encode() + b"\r\n"
#: The read timeout under test: short, so that every test is quick.
READ_TIMEOUT: Final = 0.2
#: The longest any exchange may take before the test fails (a held connection).
PATIENCE: Final = 15.0
#: The read timeout of tests about anything else: no idle connection closes under them
#: (a pooled client sending on a connection the server's idle timer is closing fails).
NO_TIMEOUT: Final = 60.0
#: The idle bound of a connection whose request arrived in time.
IDLE: Final = 1.0
#: The longest an httpx request may take (a loaded machine is slow, not hostile).
ANSWER_SECONDS: Final = 30.0
LIMIT: Final = 1000
DEADLINE_BODY: Final = {"scope_id": "s", "query": "when do backups run?"}


# ---------------------------------------------------------------------------- helpers


@contextlib.asynccontextmanager
async def running(
    store: satchel.Store | None = None,
    *,
    body_timeout: float = READ_TIMEOUT,
    header_timeout: float = NO_TIMEOUT,
) -> AsyncIterator[tuple[str, int]]:
    """The app over a fresh runtime, served by Hypercorn on a free loopback port; the
    address it listens on. The read timeout is ``body_timeout`` in the app (the body's
    bound) and ``header_timeout`` in the server (the headers' bound): a test of one is
    not at the mercy of the other on a loaded machine."""
    async with satchel.open_runtime(
        ":memory:", store=store, embedder=satchel.HashingEmbedder()
    ) as runtime:
        app = create_app(
            runtime,
            tokens={TOKEN: TokenGrant(scopes=("*",), write=True)},
            max_body_bytes=LIMIT,
            read_timeout=body_timeout,
        )
        async with served(app, header_timeout) as address:
            yield address


@contextlib.asynccontextmanager
async def served(app: Starlette, read_timeout: float) -> AsyncIterator[tuple[str, int]]:
    sock = listen("127.0.0.1", 0)
    address: tuple[str, int] = sock.getsockname()[:2]
    stop = anyio.Event()
    async with anyio.create_task_group() as group:
        group.start_soon(
            functools.partial(
                serve, app, sock, shutdown_trigger=stop.wait, read_timeout=read_timeout
            )
        )
        try:
            yield address
        finally:
            stop.set()


class Answer:
    """What the server sent on one connection before closing it."""

    def __init__(self, raw: bytes, seconds: float) -> None:
        head, _, self.body = raw.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        self.status = int(lines[0].split()[1]) if lines[0] else None
        self.headers = {
            name.strip().lower(): value.strip()
            for name, _, value in (line.partition(":") for line in lines[1:])
        }
        self.seconds = seconds

    def error(self) -> dict[str, Any]:
        """The JSON error object of the answer (its shape checked)."""
        response = httpx.Response(self.status or 0, headers=self.headers, content=self.body)
        return error_of(response)


async def exchange(address: tuple[str, int], *parts: bytes, gap: float = 0.0) -> Answer:
    """Send ``parts`` (``gap`` seconds apart, for as long as the server listens) and read
    until the server closes; fails if it has not closed within ``PATIENCE``."""
    start = anyio.current_time()
    received = bytearray()
    with anyio.fail_after(PATIENCE):
        async with await anyio.connect_tcp(*address) as stream, anyio.create_task_group() as group:

            async def send() -> None:
                with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
                    for index, part in enumerate(parts):
                        if index:
                            await anyio.sleep(gap)
                        await stream.send(part)

            group.start_soon(send)
            with contextlib.suppress(anyio.EndOfStream, anyio.BrokenResourceError):
                while True:
                    received += await stream.receive()
            group.cancel_scope.cancel()
    return Answer(bytes(received), anyio.current_time() - start)


def request(body: bytes, *, length: int | None = None, headers: bytes = AUTH) -> bytes:
    """A POST of ``body`` to the deadline endpoint declaring ``length`` bytes."""
    declared = len(body) if length is None else length
    return (
        b"POST /v1/context/deadline HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        + headers
        + b"Content-Type: application/json\r\nContent-Length: "
        + str(declared).encode()
        + b"\r\n\r\n"
        + body
    )


# ----------------------------------------------------------------- slow requests (408)


async def test_a_body_that_stops_arriving_is_408_and_the_connection_closed() -> None:
    """Declared 1000 bytes, sent 7: a JSON 408 with Connection: close, then the close."""
    async with running() as address:
        answer = await exchange(address, request(b'{"scope', length=1000))
    assert answer.status == 408
    assert answer.error()["type"] == "request_timeout"
    assert answer.headers["connection"] == "close"
    assert answer.seconds >= READ_TIMEOUT


async def test_a_body_dribbled_a_byte_at_a_time_is_bounded_as_a_whole() -> None:
    """The bound is on the whole body, not on each read: bytes that keep coming, too
    slowly, still end in 408 once the body's time is up."""
    body = json.dumps(DEADLINE_BODY).encode()
    head = request(b"", length=len(body))
    bytes_ = [body[index : index + 1] for index in range(len(body))]
    async with running() as address:
        answer = await exchange(address, head, *bytes_, gap=READ_TIMEOUT / 4)
    assert answer.status == 408
    assert answer.seconds < len(bytes_) * READ_TIMEOUT / 4  # long before the body ended


async def test_many_stalled_bodies_are_all_answered_and_released() -> None:
    """A hundred clients that stop mid-body at once hold nothing: each gets its 408."""
    answers: list[Answer] = []
    async with running() as address:

        async def stall() -> None:
            answers.append(await exchange(address, request(b'{"scope', length=1000)))

        async with anyio.create_task_group() as group:
            for _ in range(100):
                group.start_soon(stall)
    assert [answer.status for answer in answers] == [408] * 100


async def test_headers_that_stop_arriving_close_the_connection() -> None:
    """A request whose headers never end is closed by the server (it has nothing to
    answer yet): no connection is held."""
    async with running(header_timeout=READ_TIMEOUT) as address:
        answer = await exchange(address, b"POST /v1/memories HTTP/1.1\r\nHost: 127.0")
        idle = await exchange(address)  # connected, sends nothing
    assert answer.status is None
    assert idle.status is None
    assert READ_TIMEOUT <= answer.seconds < PATIENCE


async def test_a_body_in_time_is_served_on_a_connection_that_stays_open() -> None:
    """The deadline does not touch a request that arrives in time: its answer is 200
    and keeps the connection open (closed only when idle for the read timeout)."""
    body = json.dumps(DEADLINE_BODY).encode()
    async with running(header_timeout=IDLE) as address:
        answer = await exchange(address, request(body))
    assert answer.status == 200
    assert "connection" not in answer.headers
    assert answer.seconds >= IDLE  # the idle close, not an answer's


@pytest.mark.parametrize("value", [0, -1, math.inf, math.nan, True, "10"])
async def test_a_malformed_read_timeout_is_refused(value: Any) -> None:
    """create_app and serve refuse a read timeout that is not a positive number."""
    async with satchel.open_runtime(embedder=satchel.HashingEmbedder()) as runtime:
        with pytest.raises(satchel.InvalidRequestError, match="read_timeout"):
            create_app(runtime, read_timeout=value)
        app = create_app(runtime)
    sock = listen("127.0.0.1", 0)
    with sock, pytest.raises(satchel.InvalidRequestError, match="read_timeout"):
        await serve(app, sock, shutdown_trigger=anyio.sleep_forever, read_timeout=value)


def test_serve_takes_a_read_timeout(capsys: pytest.CaptureFixture[str]) -> None:
    """``satchel serve --read-timeout`` is documented and refuses a bad value."""
    code, out, _ = run(capsys, "serve", "--help")
    assert code == 0
    assert "--read-timeout" in out
    code, _, err = run(capsys, "serve", "--db", "x.db", "--read-timeout", "0")
    assert code == 2
    assert "--read-timeout" in err


# -------------------------------------------------------- refusals on pooled clients


async def _refused(client: httpx.AsyncClient, status: int) -> httpx.Response:
    body = json.dumps(DEADLINE_BODY).encode()
    headers = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}
    if status == 401:
        headers.pop("Authorization")
    elif status == 413:
        body = b" " * LIMIT + body  # over the limit, and sent before the refusal arrives
    elif status == 415:
        headers["Content-Type"] = "text/plain"
    return await client.post("/v1/context/deadline", content=body, headers=headers)


#: httpx drops its request body's iterator unfinished when a refusal and the server's
#: close overtake the body it is sending (which is what these tests provoke); trio's
#: async generator hooks say so when it is collected.
ABANDONED_BODY: Final = (
    "ignore:Async generator 'httpx._content.ByteStream.__aiter__':ResourceWarning"
)


@pytest.mark.filterwarnings(ABANDONED_BODY)
@pytest.mark.parametrize("status", [401, 413, 415])
async def test_a_refusal_before_the_body_never_breaks_a_pooled_client(status: int) -> None:
    """A refusal given before the body was read says Connection: close (the server
    closes that connection); a pooled client then sends its next request on a new
    connection, so a hundred refused-then-good pairs on one pool all succeed."""
    headers = {"Authorization": f"Bearer {TOKEN}"}
    limits = httpx.Limits(max_connections=1)
    refused, served_ = [], []
    async with running(body_timeout=NO_TIMEOUT) as address:
        url = f"http://{address[0]}:{address[1]}"
        async with httpx.AsyncClient(base_url=url, limits=limits, timeout=ANSWER_SECONDS) as client:
            for _ in range(100):
                refused.append(await _refused(client, status))
                good = await client.post(
                    "/v1/context/deadline", json=DEADLINE_BODY, headers=headers
                )
                served_.append(good.status_code)
    assert {response.status_code for response in refused} == {status}
    assert {response.headers.get("connection") for response in refused} == {"close"}
    assert served_ == [200] * 100


async def test_an_answer_after_the_whole_body_keeps_the_connection() -> None:
    """Connection: close only when the body was left unread: a 422 read it all, and a
    GET has none, so their connections stay open for the next request."""
    headers = {"Authorization": f"Bearer {TOKEN}"}
    async with running(body_timeout=NO_TIMEOUT) as address:
        url = f"http://{address[0]}:{address[1]}"
        async with httpx.AsyncClient(base_url=url, timeout=ANSWER_SECONDS) as client:
            invalid = await client.post("/v1/context/deadline", json={"x": 1}, headers=headers)
            missing = await client.get("/v1/memories/s/e?version=1")  # 401, no body
    assert invalid.status_code == 422
    assert missing.status_code == 401
    assert "connection" not in invalid.headers
    assert "connection" not in missing.headers


# -------------------------------------------------------------------- store faults


@contextlib.asynccontextmanager
async def on_file(path: Path) -> AsyncIterator[httpx.AsyncClient]:
    """A client of the service (in process) over a runtime on the SQLite file ``path``."""
    async with satchel.open_runtime(str(path), embedder=satchel.HashingEmbedder()) as runtime:
        transport = httpx.ASGITransport(app=create_app(runtime))
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            yield client


async def test_a_removed_database_file_is_503_with_the_store_message(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A write after the database file was removed: 503, the StoreError's type and its
    own message (what happened, what to do), and the server log has it too."""
    path = tmp_path / "team.db"
    async with on_file(path) as client:
        batch = {"scope_id": "s", "entries": [{"text": "backups run at 02:00"}]}
        assert (await client.post("/v1/memories", json=batch)).status_code == 200
        for name in ("team.db", "team.db-wal", "team.db-shm"):
            (tmp_path / name).unlink(missing_ok=True)
        with caplog.at_level(logging.ERROR, logger="satchel.http"):
            response = await client.post("/v1/memories", json=batch)
    assert response.status_code == 503
    error = error_of(response)
    assert error["type"] == "store_error"
    assert error["message"].startswith("StoreError: the database file")
    assert "removed or replaced" in error["message"]
    assert "removed or replaced" in caplog.text


async def test_reads_of_a_removed_database_file_are_503_until_it_returns(tmp_path: Path) -> None:
    """Prepares and GETs after the database file was moved away are 503 with the store's
    message, as writes are (they answered 200 from the old file before); the file moved
    back, they are served again."""
    path = tmp_path / "team.db"
    async with on_file(path) as client:
        batch = {"scope_id": "s", "entries": [{"text": "backups run at 02:00"}]}
        written = await client.post("/v1/memories", json=batch)
        ref = written.json()["refs"][0]
        entry = f"/v1/memories/s/{ref['entry_id']}?version=1"
        ask = {"scope_id": "s", "query": "when do backups run"}
        os.replace(path, tmp_path / "moved.db")
        gone = [await client.get(entry), await client.post("/v1/context/prepare", json=ask)]
        os.replace(tmp_path / "moved.db", path)
        back = [await client.get(entry), await client.post("/v1/context/prepare", json=ask)]
    for response in gone:
        assert response.status_code == 503, response.text
        assert "removed or replaced" in error_of(response)["message"]
    assert [response.status_code for response in back] == [200, 200]
    assert back[1].json()["status"] == "ready"


def _disk_full() -> sqlite3.Error:
    """A genuine SQLITE_FULL from SQLite: a database capped at two pages, overfilled."""
    conn = sqlite3.connect(":memory:")
    try:
        conn.execute("PRAGMA max_page_count = 2")
        conn.execute("CREATE TABLE t (x)")
        conn.execute("INSERT INTO t VALUES (zeroblob(100000))")
    except sqlite3.Error as exc:
        return exc
    finally:
        conn.close()
    raise AssertionError("the insert should have filled the database")


class FaultyStore(satchel.MemoryStore):
    """A store whose writes find the disk full and whose searches find the file damaged,
    raising as the SQLite store does (a StoreError from the sqlite3 error)."""

    async def write(self, *args: Any, **kwargs: Any) -> list[Ref]:
        cause = _disk_full()
        raise satchel.StoreError(f"write failed: {cause}") from cause

    async def retrieve(self, family: Family, scope_id: str, request: PoolRequest) -> Pool:
        raise satchel.StoreError(
            "retrieve could not read the database: database disk image is malformed"
            " (if the file is damaged, restore it from a backup)"
        )


async def test_a_full_disk_is_507_with_the_store_message() -> None:
    """SQLITE_FULL under a StoreError is 507 Insufficient Storage, with its message."""
    async with running(FaultyStore(), body_timeout=NO_TIMEOUT) as address:
        url = f"http://{address[0]}:{address[1]}"
        async with httpx.AsyncClient(base_url=url, timeout=ANSWER_SECONDS) as client:
            response = await client.post(
                "/v1/memories",
                json={"scope_id": "s", "entries": [{"text": "x"}]},
                headers={"Authorization": f"Bearer {TOKEN}"},
            )
    assert response.status_code == 507
    error = error_of(response)
    assert error["type"] == "insufficient_storage"
    assert error["message"] == "StoreError: write failed: database or disk is full"


async def test_a_store_fault_during_a_prepare_is_503_with_the_store_message() -> None:
    """A search's StoreError fails the prepare (PrepareFailedError from the group); the
    answer is still the store's own 503, not a generic 500."""
    async with running(FaultyStore(), body_timeout=NO_TIMEOUT) as address:
        url = f"http://{address[0]}:{address[1]}"
        async with httpx.AsyncClient(base_url=url, timeout=ANSWER_SECONDS) as client:
            response = await client.post(
                "/v1/context/prepare",
                json=DEADLINE_BODY,
                headers={"Authorization": f"Bearer {TOKEN}"},
            )
    assert response.status_code == 503
    error = error_of(response)
    assert error["type"] == "store_error"
    assert error["message"].startswith("StoreError: retrieve could not read the database")
    assert "restore it from a backup" in error["message"]


# ------------------------------------------------------------------- malformed HTTP

MALFORMED: Final[Mapping[str, tuple[bytes, int]]] = {
    "nul-in-header": (b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-A: a\x00b\r\n\r\n", 400),
    "garbage-request-line": (b"HELLO WORLD\r\n\r\n", 400),
    "tls-to-plain-http": (b"\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03\r\n\r\n", 400),
    "non-ascii-target": (b"GET /v1/memories/\xff/e HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 400),
    "no-host": (b"GET /healthz HTTP/1.1\r\n\r\n", 400),
    "headers-too-large": (
        b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-A: " + b"a" * 100_000 + b"\r\n\r\n",
        431,
    ),
    "two-lengths": (
        b"POST /v1/memories HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\n"
        b"Content-Length: 3\r\n\r\n{}",
        400,
    ),
    "unknown-coding": (
        b"POST /v1/memories HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: gzip\r\n\r\n",
        501,
    ),
    # Without a length an HTTP/1.0 body is no body: its bytes are a next request line.
    "http10-body-without-length": (
        b"POST /v1/context/deadline HTTP/1.0\r\nHost: 127.0.0.1\r\n" + AUTH
        + b"Content-Type: application/json\r\n\r\n" + json.dumps(DEADLINE_BODY).encode(),
        400,
    ),
}  # fmt: skip


@pytest.mark.parametrize("name", list(MALFORMED))
async def test_malformed_http_gets_the_servers_answer_and_a_closed_connection(name: str) -> None:
    """What the HTTP server refuses itself (the app never sees it) is its own empty
    answer with Connection: close, and the connection is closed at once: the read
    timeout is far longer than the exchange may take, so no timeout closed it."""
    data, status = MALFORMED[name]
    async with running(body_timeout=NO_TIMEOUT) as address:
        answer = await exchange(address, data)
    assert answer.status == status
    assert answer.headers["connection"].lower() == "close"
    assert answer.body == b""
