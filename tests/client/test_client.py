"""What only the client does: its arguments, the service's refusals and failures as
satchel's errors, retries of idempotent requests only, timeouts that follow the
service's deadline. The service is answered here by an httpx mock transport (one
function per test, counting requests), or by a real ``satchel serve`` where noted."""

from __future__ import annotations

import json
import socket
from typing import TYPE_CHECKING, Any

import httpx
import pytest

import satchel
from satchel.client._client import ATTEMPTS, FIRST_BACKOFF

from .._clock import MOCK_CLOCK

if TYPE_CHECKING:
    from collections.abc import Callable

pytestmark = pytest.mark.anyio

URL = "http://satchel.test"
ENTRY = satchel.MemoryEntry(text="The nightly backup runs at 02:00", key="backup")
REF = satchel.MemoryRef("s", "e" * 32, 1)
REQUEST = satchel.PrepareContextRequest(scope_id="s", query="backup")


def mocked(handler: Callable[[httpx.Request], httpx.Response]) -> satchel.Client:
    """A client whose requests ``handler`` answers."""
    client = satchel.Client(URL, token="t" * 20, timeout=3)
    client._http = httpx.AsyncClient(
        base_url=URL, transport=httpx.MockTransport(handler), headers=client._http.headers
    )
    return client


def error(status: int, kind: str, message: str, **headers: str) -> httpx.Response:
    body = {"error": {"type": kind, "message": message, "field": None}}
    return httpx.Response(status, json=body, headers=headers)


def pack() -> httpx.Response:
    return httpx.Response(
        200,
        json={"schema": "satchel.prepared-context.v2", "status": "empty", "content": None,
              "content_bytes": 0},
    )  # fmt: skip


def test_the_facade_names_the_client() -> None:
    """satchel.Client is the client class, exported from satchel."""
    from satchel.client import Client

    assert satchel.Client is Client
    assert "Client" in satchel.__all__
    assert "Client" in dir(satchel)
    with pytest.raises(AttributeError, match="no attribute 'Clients'"):
        _ = satchel.Clients


@pytest.mark.parametrize(
    ("arguments", "named"),
    [
        ({"url": "ftp://x"}, "url"),
        ({"url": 3}, "url"),
        ({"token": ""}, "token"),
        ({"timeout": 0}, "timeout"),
        ({"timeout": True}, "timeout"),
        ({"timeout": float("inf")}, "timeout"),
    ],
)
def test_bad_arguments_are_refused_by_name(arguments: dict[str, Any], named: str) -> None:
    """A malformed URL, token or timeout is an InvalidRequestError naming it."""
    arguments = {"url": URL, **arguments}
    with pytest.raises(satchel.InvalidRequestError, match=f"^{named}"):
        satchel.Client(**arguments)


async def test_the_token_is_sent_as_a_bearer() -> None:
    """Every request carries Authorization: Bearer TOKEN."""
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.headers["authorization"])
        return httpx.Response(204)

    async with mocked(handler) as client:
        await client.forget_memory(REF)
    assert seen == ["Bearer " + "t" * 20]


@pytest.mark.parametrize(
    ("status", "kind", "raised"),
    [
        (422, "invalid_request", satchel.InvalidRequestError),
        (413, "payload_too_large", satchel.InvalidRequestError),
        (404, "not_found", satchel.NotFoundError),
        (504, "timeout", satchel.PrepareTimeoutError),
        (503, "store_error", satchel.StoreError),
        (507, "insufficient_storage", satchel.StoreError),
        (401, "unauthorized", PermissionError),
        (403, "forbidden", PermissionError),
        (500, "internal", satchel.SatchelError),
    ],
)
async def test_error_answers_become_satchels_errors(
    status: int, kind: str, raised: type[Exception]
) -> None:
    """Each error type of the service is raised as the satchel error it stands for,
    with the service's message."""
    async with mocked(lambda request: error(status, kind, f"it went {kind}")) as client:
        with pytest.raises(raised, match=f"it went {kind}") as caught:
            await client.get_memory(REF)
    assert isinstance(caught.value, satchel.SatchelError)


async def test_an_answer_that_is_no_satchel_error_says_its_status() -> None:
    """A proxy's HTML error page is a SatchelError naming the status."""
    async with mocked(lambda request: httpx.Response(502, text="<html>")) as client:
        with pytest.raises(satchel.SatchelError, match="answered 502"):
            await client.get_memory(REF)


async def test_an_unreachable_service_is_store_unavailable() -> None:
    """Nobody listening: StoreUnavailableError naming the URL, after the retries."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    async with satchel.Client(url) as client:
        with pytest.raises(satchel.StoreUnavailableError, match=f"{url} cannot be reached"):
            await client.add_memories("s", [ENTRY])


@pytest.fixture(params=MOCK_CLOCK)
def anyio_backend(request: pytest.FixtureRequest) -> Any:
    """The retry tests wait their backoffs on trio's mock clock."""
    return request.param


def dropping(times: int, then: Callable[[httpx.Request], httpx.Response]) -> tuple[
    list[httpx.Request], Callable[[httpx.Request], httpx.Response]
]:  # fmt: skip
    """A handler whose connection drops ``times`` times before ``then`` answers."""
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if len(seen) <= times:
            raise httpx.RemoteProtocolError("server disconnected", request=request)
        return then(request)

    return seen, handler


def refs(request: httpx.Request) -> httpx.Response:
    return httpx.Response(
        200, json={"refs": [{"scope_id": "s", "entry_id": "e" * 32, "version": 1}]}
    )


async def test_a_keyed_write_is_retried_after_a_dropped_connection() -> None:
    """A keyed batch is idempotent: sent again after a drop, with a doubling backoff."""
    import trio

    seen, handler = dropping(2, refs)
    async with mocked(handler) as client:
        started = trio.current_time()
        assert await client.add_memories("s", [ENTRY]) == [REF]
        assert trio.current_time() - started == pytest.approx(FIRST_BACKOFF * 3)
    assert len(seen) == 3
    assert json.loads(seen[0].content) == json.loads(seen[2].content)


async def test_retries_stop_after_the_last_attempt() -> None:
    """A connection that keeps dropping is StoreUnavailableError after ATTEMPTS tries."""
    seen, handler = dropping(ATTEMPTS, refs)
    async with mocked(handler) as client:
        with pytest.raises(satchel.StoreUnavailableError, match="RemoteProtocolError"):
            await client.add_memories("s", [ENTRY])
    assert len(seen) == ATTEMPTS


async def test_an_unkeyed_write_is_never_retried() -> None:
    """A batch with an entry without a key could be written twice: it is sent once."""
    seen, handler = dropping(1, refs)
    async with mocked(handler) as client:
        with pytest.raises(satchel.StoreUnavailableError):
            await client.add_memories("s", [ENTRY, satchel.MemoryEntry(text="no key")])
    assert len(seen) == 1


async def test_an_erase_is_never_retried() -> None:
    """A repeated erase would answer 0 and lose the first's count: sent once."""
    seen, handler = dropping(2, lambda request: httpx.Response(200))
    async with mocked(handler) as client:
        with pytest.raises(satchel.StoreUnavailableError):
            await client.erase(REF)
        with pytest.raises(satchel.StoreUnavailableError):
            await client.erase_scope("s")
    assert len(seen) == 2


async def test_a_session_turn_is_never_retried_but_a_read_is() -> None:
    """A prepare with a session_id is a turn (sent once); without one, a read."""
    seen, handler = dropping(1, lambda request: pack())
    deadline = {"deadline_seconds": 5.0}

    def answer(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("deadline"):
            return httpx.Response(200, json=deadline)
        return handler(request)

    async with mocked(answer) as client:
        turn = satchel.PrepareContextRequest(scope_id="s", query="q", session_id="chat-1")
        with pytest.raises(satchel.StoreUnavailableError):
            await client.prepare_context(turn)
        assert len(seen) == 1
        assert (await client.prepare_context(REQUEST)).status == "empty"
    assert len(seen) == 2


async def test_a_busy_store_is_retried_after_its_retry_after() -> None:
    """503 store_unavailable on a read waits Retry-After, then asks again."""
    import trio

    answers = [error(503, "store_unavailable", "retry later", **{"Retry-After": "1"})]
    record: dict[str, Any] = {
        "ref": {"scope_id": "s", "entry_id": "e" * 32, "version": 1}, "text": "t", "kind": "fact",
        "tags": [], "created_at": None, "thread": None, "key": None,
    }  # fmt: skip

    def handler(request: httpx.Request) -> httpx.Response:
        return answers.pop() if answers else httpx.Response(200, json=record)

    async with mocked(handler) as client:
        started = trio.current_time()
        assert (await client.get_memory(REF)).ref == REF
        assert trio.current_time() - started == 1.0


async def test_the_prepare_waits_its_deadline_and_the_networks_share() -> None:
    """A prepare's read timeout is the service's deadline plus the client's timeout;
    an unbounded deadline waits as long as the service works."""
    timeouts: list[dict[str, float | None]] = []

    def answering(seconds: float | None) -> Callable[[httpx.Request], httpx.Response]:
        def handler(request: httpx.Request) -> httpx.Response:
            if request.url.path.endswith("deadline"):
                return httpx.Response(200, json={"deadline_seconds": seconds})
            timeouts.append(request.extensions["timeout"])
            return pack()

        return handler

    async with mocked(answering(7.5)) as client:
        assert await client.deadline_for(REQUEST) == 7.5
        await client.prepare_context(REQUEST)
    async with mocked(answering(None)) as client:
        assert await client.deadline_for(REQUEST) == float("inf")
        await client.prepare_context(REQUEST)
    assert timeouts[0]["read"] == 10.5
    assert timeouts[0]["connect"] == 3
    assert timeouts[1]["read"] is None


async def test_a_prepare_past_its_deadline_is_a_prepare_timeout() -> None:
    """The service not answering a prepare in time is PrepareTimeoutError."""

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("deadline"):
            return httpx.Response(200, json={"deadline_seconds": 1.0})
        raise httpx.ReadTimeout("timed out", request=request)

    async with mocked(handler) as client:
        with pytest.raises(satchel.PrepareTimeoutError, match="deadline"):
            await client.prepare_context(REQUEST)


async def test_session_owner_is_the_tokens() -> None:
    """A client cannot name a session's owner: the service names it by the token."""
    async with mocked(lambda request: pack()) as client:
        with pytest.raises(satchel.InvalidRequestError, match=r"^session_owner"):
            await client.prepare_context(REQUEST, session_owner="ana")


async def test_a_memory_ref_and_a_citation_take_their_routes() -> None:
    """A MemoryRef is erased at its entry's URL, a citation through POST /v1/erase;
    anything else is refused before anything is sent."""
    seen: list[tuple[str, str]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append((request.method, request.url.path))
        return httpx.Response(200, json={"erased_versions": 1})

    async with mocked(handler) as client:
        assert await client.erase(REF) == 1
        assert await client.erase(satchel.Citation("profile", "a/b", None, None)) == 1
        with pytest.raises(satchel.InvalidRequestError, match=r"^target must be"):
            await client.erase("s")  # type: ignore[arg-type]
    assert seen == [("DELETE", f"/v1/memories/s/{'e' * 32}"), ("POST", "/v1/erase")]


async def test_an_answer_that_is_not_json_is_a_satchel_error() -> None:
    """A 200 whose body is not JSON is a SatchelError, not a decoding error."""
    async with mocked(lambda request: httpx.Response(200, text="ok")) as client:
        with pytest.raises(satchel.SatchelError, match=r"not JSON"):
            await client.erase_scope("s")
