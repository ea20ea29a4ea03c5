"""``python -m bench hostile``: ``satchel serve`` under hostile clients, on loopback only.

It starts ``satchel serve`` in a subprocess on 127.0.0.1 (a free port, a temporary SQLite
database, a token file, a short ``--read-timeout``) and treats it the way broken and
hostile clients do, ``--tries`` tries per class:

=====================  ==================================================================
slow-body              declares 1000 bytes and sends 7, all tries at once: a JSON 408
                       with ``Connection: close``, then the close
dribbled-body          sends its body a byte every quarter of the read timeout: 408
slow-headers           headers that never end: closed, without an answer
idle-connection        connects and sends nothing: closed
refused-401/413/415    a refused request, then a good one, on one pooled connection:
                       the refusal says ``Connection: close``; the good one is a 200
malformed: NAME        what the HTTP server refuses itself (a NUL in a header, a garbage
                       request line, ...): its status and ``Connection: close`` at once
look-alike-scope       a token granted exactly ``"B:secret "`` (a trailing space) asks
                       for scope ``"B:secret"``'s entry by prepare, by id and by erase:
                       never served, never erased
forget-replay          a keyed entry written twice, forgotten, then each older content
                       replayed (its time in another UTC offset too): nothing served
store-removed          a write once the database file is deleted: a 503 ``StoreError``
store-replaced         a write once another file took its path: the same
store-file-limit       writes into a second server until a file size limit stops them
                       (``RLIMIT_FSIZE``, as a full disk would): a 503 or 507
                       ``StoreError``, never a 500
shutdown               each server, on SIGTERM: exit 0
=====================  ==================================================================

A try is *held* when the server still keeps its connection open past the read timeout
plus ``GRACE`` seconds, and *failed* when it was held, when the answer is not the one
above, or when the client saw a transport error. Then the MCP probes
(``bench/_hostile_mcp.py``) run against ``satchel mcp`` over stdio; in their table a
try is *held* when the server held up (the answer it should give, and alive after it),
and failed otherwise. It prints both tables (class / tries / held / failed) and exits 1
when any try failed. Nothing leaves the loopback interface, and every wait is bounded.

Run: ``python -m bench hostile [--tries 50] [--read-timeout 1] [--backend asyncio|trio]``
(about a minute).
"""

from __future__ import annotations

import argparse
import functools
import json
import secrets
import tempfile
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import anyio
import httpx

from bench import _hostile_mcp
from bench._serve_process import running_server

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Sequence

#: One class of probes: its name, tries, tries the server held, tries that failed.
Row = tuple[str, int, int, int]

#: Seconds past the read timeout after which a connection still open counts as held.
GRACE: Final = 5.0
#: Seconds a request may take to be answered (a loaded machine is slow, not hostile).
ANSWER_SECONDS: Final = 30.0
#: The largest request body the probed server takes (413 beyond).
MAX_BODY_BYTES: Final = 4096
#: The largest file the file-limit server may write: a fresh database and some batches.
FILE_BYTES: Final = 2_000_000
#: Batches the file-limit probe writes at most before the limit must have stopped one.
MOST_BATCHES: Final = 400
GOOD_BODY: Final = {"scope_id": "s", "query": "when do backups run?"}

# What the HTTP server itself refuses, and the status it answers.
MALFORMED: Final = {
    "nul-in-header": (b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-A: a\x00b\r\n\r\n", 400),
    "garbage-request-line": (b"HELLO WORLD\r\n\r\n", 400),
    "tls-to-plain-http": (b"\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03\r\n\r\n", 400),
    "non-ascii-target": (b"GET /v1/memories/\xff/e HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 400),
    "two-lengths": (
        b"POST /v1/memories HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\n"
        b"Content-Length: 3\r\n\r\n{}",
        400,
    ),
    "unknown-coding": (
        b"POST /v1/memories HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: gzip\r\n\r\n",
        501,
    ),
    "headers-too-large": (
        b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-A: " + b"a" * 100_000 + b"\r\n\r\n",
        431,
    ),
}


@dataclass
class Tally:
    """The tries of one class so far."""

    name: str
    tries: int = 0
    held: int = 0
    failed: int = 0

    def count(self, *, held: bool = False, failed: bool = False) -> None:
        self.tries += 1
        self.held += held
        self.failed += failed

    def row(self) -> Row:
        return (self.name, self.tries, self.held, self.failed)


@dataclass
class Probe:
    """Where the server listens, its token, and the read timeout it was started with."""

    host: str
    port: int
    token: str
    read_timeout: float
    #: A second token, granted exactly :data:`LOOK_ALIKE`.
    look_alike_token: str = ""

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def client(self, **options: Any) -> httpx.AsyncClient:
        """A pooled client that drops an idle connection well before the server's idle
        timer (the read timeout) would close it under a request being sent."""
        limits = httpx.Limits(max_connections=1, keepalive_expiry=self.read_timeout / 4)
        return httpx.AsyncClient(
            base_url=self.url, limits=limits, timeout=ANSWER_SECONDS, **options
        )

    @property
    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    def head(self, length: int) -> bytes:
        """An authenticated POST's head declaring ``length`` bytes of JSON body."""
        return (
            f"POST /v1/context/deadline HTTP/1.1\r\nHost: {self.host}\r\n"
            f"Authorization: Bearer {self.token}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {length}\r\n\r\n"
        ).encode()


# ----------------------------------------------------------------------- raw sockets


@dataclass
class Exchange:
    """What a server sent on one connection, and whether it closed it within the bound."""

    raw: bytes
    closed: bool

    @property
    def status(self) -> int | None:
        line = self.raw.partition(b"\r\n")[0].split()
        return int(line[1]) if len(line) > 1 and line[1].isdigit() else None

    @property
    def headers(self) -> dict[str, str]:
        head = self.raw.partition(b"\r\n\r\n")[0].decode("latin-1").split("\r\n")[1:]
        pairs = (line.partition(":") for line in head)
        return {name.strip().lower(): value.strip() for name, _, value in pairs}

    @property
    def error_type(self) -> str | None:
        """The ``type`` of a JSON error body, None when the body is not one."""
        try:
            error = json.loads(self.raw.partition(b"\r\n\r\n")[2])["error"]
        except (ValueError, KeyError, TypeError):
            return None
        kind = error.get("type") if isinstance(error, dict) else None
        return kind if isinstance(kind, str) else None


async def exchange(probe: Probe, parts: Sequence[bytes], bound: float, gap: float = 0) -> Exchange:
    """Send ``parts`` (``gap`` seconds apart, while the server listens) and read what
    comes back until the server closes, for ``bound`` seconds at most."""
    received = bytearray()
    closed = False
    stream = await anyio.connect_tcp(probe.host, probe.port)
    async with stream, anyio.create_task_group() as group:

        async def send() -> None:
            with suppress(anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                for index, part in enumerate(parts):
                    await anyio.sleep(gap if index else 0)
                    await stream.send(part)

        group.start_soon(send)
        with anyio.move_on_after(bound):
            try:
                while True:
                    received += await stream.receive()
            except (anyio.EndOfStream, anyio.BrokenResourceError, OSError):  # closed, or reset
                closed = True
        group.cancel_scope.cancel()
    return Exchange(bytes(received), closed)


async def all_at_once(tries: int, attempt: Callable[[], Awaitable[Exchange]]) -> list[Exchange]:
    """``tries`` attempts, all connected at the same time."""
    found: list[Exchange] = []

    async def one() -> None:
        found.append(await attempt())

    async with anyio.create_task_group() as group:
        for _ in range(tries):
            group.start_soon(one)
    return found


# -------------------------------------------------------------------------- classes


async def slow_requests(probe: Probe, tries: int) -> list[Row]:
    """A body that stops, a body that dribbles, headers that stop, a silent client."""
    bound = probe.read_timeout + GRACE
    body = json.dumps(GOOD_BODY).encode()
    dribble = [probe.head(len(body)), *(body[i : i + 1] for i in range(len(body)))]
    attempts: dict[str, tuple[Sequence[bytes], float, int | None]] = {
        "slow-body": ([probe.head(1000) + b'{"scope'], 0, 408),
        "dribbled-body": (dribble, probe.read_timeout / 4, 408),
        "slow-headers": ([b"POST /v1/memories HTTP/1.1\r\nHost: 127.0"], 0, None),
        "idle-connection": ([], 0, None),
    }
    rows = []
    for name, (parts, gap, status) in attempts.items():
        tally = Tally(name)
        run = functools.partial(exchange, probe, parts, bound, gap)
        for answer in await all_at_once(tries, run):
            timely = status is None or (
                answer.error_type == "request_timeout"
                and answer.headers.get("connection") == "close"
            )
            wrong = answer.status != status or not timely
            tally.count(held=not answer.closed, failed=not answer.closed or wrong)
        rows.append(tally.row())
    return rows


async def refusals(probe: Probe, tries: int) -> list[Row]:
    """A refused request then a good one, ``tries`` times, on one pooled connection."""
    rows = []
    for status in (401, 413, 415):
        tally = Tally(f"refused-{status}")
        async with probe.client() as client:
            for _ in range(tries):
                tally.count(failed=not await _refused_then_served(probe, client, status))
        rows.append(tally.row())
    return rows


async def _refused_then_served(probe: Probe, client: httpx.AsyncClient, status: int) -> bool:
    body = json.dumps(GOOD_BODY).encode()
    headers = {**probe.auth, "Content-Type": "application/json"}
    if status == 401:
        headers.pop("Authorization")
    elif status == 413:
        body += b" " * MAX_BODY_BYTES  # over the limit, yet sent before the refusal arrives
    else:
        headers["Content-Type"] = "text/plain"
    try:
        refused = await client.post("/v1/context/deadline", content=body, headers=headers)
        good = await client.post("/v1/context/deadline", json=GOOD_BODY, headers=probe.auth)
    except httpx.HTTPError:
        return False
    closes = refused.headers.get("connection") == "close"
    return refused.status_code == status and closes and good.status_code == 200


#: The scope a second token is granted exactly, and the scope it must never reach.
LOOK_ALIKE: Final = "B:secret "
SECRET_SCOPE: Final = "B:secret"


async def look_alike_scope(probe: Probe, tries: int) -> list[Row]:
    """Scope names are exact: the look-alike token's prepare, GET and erase of
    ``"B:secret "`` never serve or remove what ``"B:secret"`` holds."""
    tally = Tally("look-alike-scope")
    other = {"Authorization": f"Bearer {probe.look_alike_token}"}
    async with probe.client() as client:
        for attempt in range(tries):
            secret = f"the vault code is {secrets.token_hex(4)} ({attempt})"
            try:
                ref = await _add(client, probe.auth, SECRET_SCOPE, {"text": secret})
                path = f"/v1/memories/{LOOK_ALIKE}/{ref['entry_id']}?version=1"
                asked = {"scope_id": LOOK_ALIKE, "query": "what is the vault code"}
                served = await client.post("/v1/context/prepare", json=asked, headers=other)
                read = await client.get(path, headers=other)
                erased = await client.delete(f"/v1/scopes/{LOOK_ALIKE}", headers=other)
                kept = await client.get(
                    f"/v1/memories/{SECRET_SCOPE}/{ref['entry_id']}?version=1", headers=probe.auth
                )
            except (httpx.HTTPError, KeyError, ValueError):
                tally.count(failed=True)
                continue
            leaked = secret in served.text or secret in read.text or read.status_code != 404
            tally.count(failed=leaked or erased.status_code != 200 or kept.status_code != 200)
    return [tally.row()]


async def forget_replay(probe: Probe, tries: int) -> list[Row]:
    """Forget is forever for every version a key wrote: replays write nothing served."""
    tally = Tally("forget-replay")
    async with probe.client(headers=probe.auth) as client:
        for attempt in range(tries):
            scope, key, word = f"replay-{attempt}", f"k{attempt}", secrets.token_hex(4)
            said = "2023-05-08T13:00:00+00:00"
            older = {"text": f"deploy window {word} is Tuesday", "key": key, "created_at": said}
            try:
                await _add(client, {}, scope, older)
                newer = await _add(client, {}, scope, {**older, "text": "it is Thursday"})
                path = f"/v1/memories/{scope}/{newer['entry_id']}?version={newer['version']}"
                forgot = await client.delete(path)
                elsewhere = {**older, "created_at": "2023-05-08T09:00:00-04:00"}
                for replay in (older, elsewhere, {**older, "text": "it is Thursday"}):
                    await _add(client, {}, scope, replay)
                asked = {"scope_id": scope, "query": f"when is the deploy window {word}"}
                served = await client.post("/v1/context/prepare", json=asked)
            except (httpx.HTTPError, KeyError, ValueError):
                tally.count(failed=True)
                continue
            tally.count(
                failed=forgot.status_code != 204
                or "window" in served.text.replace(asked["query"], "")
                or "Thursday" in served.text
            )
    return [tally.row()]


async def _add(
    client: httpx.AsyncClient, headers: dict[str, str], scope: str, entry: dict[str, Any]
) -> dict[str, Any]:
    """One entry written; its ref (raises when the write was refused)."""
    written = await client.post(
        "/v1/memories", json={"scope_id": scope, "entries": [entry]}, headers=headers
    )
    written.raise_for_status()
    ref: dict[str, Any] = written.json()["refs"][0]
    return ref


#: JSON bodies whose refusal echoes what the client sent, and the status each gets: a
#: field name holding a lone surrogate (JSON's ``\\ud800``), and bodies that are not
#: UTF-8. Each must be answered with a JSON error, never a plain-text 500.
ECHOED: Final = {
    "surrogate-field": (b'{"scope_id": "s", "query": "q", "\\ud800": 1}', 422),
    "surrogate-repeated": (b'{"scope_id": "s", "query": "q", "\\ud800": 1, "\\ud800": 2}', 422),
    "surrogate-nested": (b'{"scope_id": "s", "query": "q", "exclude": [{"\\ud800": 1}]}', 422),
    "surrogate-exclude-scope": (
        b'{"scope_id": "s", "query": "q",'
        b' "exclude": [{"family": "memory", "scope": "\\ud800", "id": "e", "version": 1}]}',
        422,
    ),
    "utf16-body": ('{"scope_id": "s", "query": "q"}'.encode("utf-16"), 400),
}


async def echoed(probe: Probe, tries: int) -> list[Row]:
    """Bodies whose refusal echoes what they hold: a JSON error with its status, then a
    good request served."""
    rows = []
    headers = {**probe.auth, "Content-Type": "application/json"}
    async with probe.client() as client:
        for name, (body, status) in ECHOED.items():
            tally = Tally(f"echoed: {name}")
            for _ in range(tries):
                try:
                    refused = await client.post(
                        "/v1/context/prepare", content=body, headers=headers
                    )
                    good = await client.post(
                        "/v1/context/deadline", json=GOOD_BODY, headers=probe.auth
                    )
                except httpx.HTTPError:
                    tally.count(failed=True)
                    continue
                is_json = refused.headers.get("content-type") == "application/json"
                tally.count(
                    failed=refused.status_code != status or not is_json or good.status_code != 200
                )
            rows.append(tally.row())
    return rows


async def malformed(probe: Probe, tries: int) -> list[Row]:
    """What the HTTP server refuses itself: its status and a close, at once."""
    rows = []
    for name, (data, status) in MALFORMED.items():
        tally = Tally(f"malformed: {name}")
        for _ in range(tries):
            answer = await exchange(probe, [data], GRACE)
            closes = answer.headers.get("connection", "").lower() == "close"
            wrong = answer.status != status or not closes
            tally.count(held=not answer.closed, failed=not answer.closed or wrong)
        rows.append(tally.row())
    return rows


async def store_faults(probe: Probe, tries: int, db: Path) -> list[Row]:
    """Writes and reads once the database file was removed, then once another file took
    its path: each a StoreError's 503."""
    removed, replaced = Tally("store-removed"), Tally("store-replaced")
    read = Tally("store-removed-read")
    async with probe.client(headers=probe.auth) as client:
        await _write(client, 0)  # the store has written before its file goes
        for path in (db, db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")):
            path.unlink(missing_ok=True)
        for attempt in range(tries):
            removed.count(failed=_store_answer(await _write(client, attempt)) != 503)
            try:
                asked = await client.post("/v1/context/prepare", json=GOOD_BODY)
            except httpx.HTTPError:
                asked = None
            read.count(failed=_store_answer(asked) != 503)
        await anyio.Path(db).write_bytes(b"")
        for attempt in range(tries):
            replaced.count(failed=_store_answer(await _write(client, attempt)) != 503)
    return [removed.row(), read.row(), replaced.row()]


async def file_limit(probe: Probe, tries: int) -> list[Row]:
    """Batches written until the file size limit stops one, then ``tries`` more: each a
    200 or a StoreError's 503 or 507, never anything else."""
    tally = Tally("store-file-limit")
    async with probe.client(headers=probe.auth) as client:
        for attempt in range(MOST_BATCHES):
            answer = _store_answer(await _write(client, attempt, entries=10, note_bytes=5000))
            if answer != 200:
                tally.count(failed=answer not in (503, 507))
                break
        else:
            tally.count(failed=True)  # the limit never stopped a write
        for attempt in range(tries - 1):
            answer = _store_answer(await _write(client, attempt, entries=10, note_bytes=5000))
            tally.count(failed=answer not in (200, 503, 507))
    return [tally.row()]


async def _write(
    client: httpx.AsyncClient, attempt: int, entries: int = 1, note_bytes: int = 1000
) -> httpx.Response | None:
    """A batch of ``entries`` notes of about ``note_bytes`` (None when the client saw
    an error)."""
    filler = "lorem ipsum " * (note_bytes // 12)
    notes = [
        {"text": f"note {attempt}.{index} {secrets.token_hex(8)} {filler}"}
        for index in range(entries)
    ]
    with suppress(httpx.HTTPError):
        return await client.post("/v1/memories", json={"scope_id": "s", "entries": notes})
    return None


def _store_answer(response: httpx.Response | None) -> int | None:
    """The status of a write's answer when it is a 200 or a StoreError's own error
    (its type name first in the message); None for anything else."""
    if response is None:
        return None
    if response.status_code == 200:
        return 200
    try:
        error: dict[str, Any] = response.json()["error"]
    except (ValueError, KeyError, TypeError):
        return None
    if not str(error.get("message", "")).startswith("StoreError: "):
        return None
    return response.status_code


# ---------------------------------------------------------------------------- servers


def probe_service(*, tries: int, read_timeout: float, backend: str) -> list[Row]:
    """Every class above against fresh ``satchel serve`` subprocesses; one row each."""
    with tempfile.TemporaryDirectory(prefix="satchel-hostile-") as directory:
        folder = Path(directory)
        token = secrets.token_urlsafe(24)
        tokens = folder / "tokens.json"
        grant = {"name": "hostile", "token": token, "scopes": ["*"], "write": True}
        look_alike = secrets.token_urlsafe(24)
        narrow = {"name": "look-alike", "token": look_alike, "scopes": [LOOK_ALIKE], "write": True}
        tokens.write_text(json.dumps({"tokens": [grant, narrow]}))
        tokens.chmod(0o600)
        options = [
            "--token-file", str(tokens), "--read-timeout", str(read_timeout),
            "--embedder", "hashing",
        ]  # fmt: skip
        small_bodies = [*options, "--max-body-bytes", str(MAX_BODY_BYTES)]
        shutdown = Tally("shutdown")
        db = folder / "hostile.db"
        with running_server(db, backend, folder / "a.log", options=small_bodies) as server:
            probe = _probe(server.url, token, read_timeout, look_alike)
            rows = anyio.run(probe_running, probe, tries, db)
        shutdown.count(failed=server.process.returncode != 0)
        limited = folder / "limited.db"
        log = folder / "b.log"
        with running_server(
            limited, backend, log, options=options, file_bytes=FILE_BYTES
        ) as server:
            probe = _probe(server.url, token, read_timeout, look_alike)
            rows += anyio.run(file_limit, probe, tries)
        shutdown.count(failed=server.process.returncode != 0)
    return [*rows, shutdown.row()]


async def probe_running(probe: Probe, tries: int, db: Path) -> list[Row]:
    """Every class but the file limit and the shutdown against a running service over
    the SQLite file ``db``, whose file it takes away last."""
    rows = await slow_requests(probe, tries)
    rows += await refusals(probe, tries)
    rows += await malformed(probe, tries)
    rows += await echoed(probe, tries)
    rows += await look_alike_scope(probe, tries)
    rows += await forget_replay(probe, tries)
    return rows + await store_faults(probe, tries, db)  # last: it takes the file away


def _probe(url: str, token: str, read_timeout: float, look_alike_token: str) -> Probe:
    host, _, port = url.removeprefix("http://").rpartition(":")
    return Probe(host, int(port), token, read_timeout, look_alike_token)


def table(rows: Sequence[Row]) -> str:
    """The rows as a Markdown table."""
    lines = ["| class | tries | held | failed |", "|---|---:|---:|---:|"]
    lines += [f"| {name} | {tries} | {held} | {failed} |" for name, tries, held, failed in rows]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench hostile", description=__doc__)
    parser.add_argument("--tries", type=int, default=50, help="tries per class (default: 50)")
    parser.add_argument(
        "--read-timeout", type=float, default=1.0, help="the server's --read-timeout (1 s)"
    )
    parser.add_argument("--backend", choices=("asyncio", "trio"), default="asyncio")
    args = parser.parse_args()
    rows = probe_service(tries=args.tries, read_timeout=args.read_timeout, backend=args.backend)
    print("satchel serve (held: a connection still open past the read timeout):\n")
    print(table(rows))
    mcp = anyio.run(functools.partial(_hostile_mcp.run_mcp_probes, backend=args.backend))
    print("\nsatchel mcp over stdio (held: the expected answer, and alive after it):\n")
    print(table(mcp))
    if any(failed for *_, failed in [*rows, *mcp]):
        raise SystemExit(1)


if __name__ == "__main__":
    main()
