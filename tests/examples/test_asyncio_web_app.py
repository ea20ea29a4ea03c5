"""``examples/asyncio_web_app.py``: the chat app opens satchel in its lifespan, answers
with the context a remembered fact makes, and answers without context, on time, when
the prepare overruns its deadline. The app uses ``asyncio.timeout``: asyncio only."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import subprocess
import sys
import time
from typing import TYPE_CHECKING, Any, Final

import httpx
import pytest

import asyncio_web_app
import satchel

from .._processes import announced
from . import EXAMPLES

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Sequence

    import numpy as np
    import numpy.typing as npt

pytestmark = pytest.mark.anyio

FACT: Final = "Deploys happen on Thursdays after the stand-up"
QUESTION: Final = "When do we deploy?"


@pytest.fixture
def anyio_backend() -> str:
    """The app prepares under asyncio.timeout: it runs on asyncio only."""
    return "asyncio"


@contextlib.asynccontextmanager
async def chat_app(
    **runtime_options: Any,
) -> AsyncIterator[tuple[httpx.AsyncClient, satchel.Runtime]]:
    """The app over an in-memory database, its lifespan entered: a client of it, and
    the runtime the lifespan opened."""
    options = {"embedder": satchel.HashingEmbedder()} | runtime_options
    app = asyncio_web_app.create_app(":memory:", **options)
    transport = httpx.ASGITransport(app=app)
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(transport=transport, base_url="http://chat") as client,
    ):
        yield client, app.state.runtime


async def test_chat_answers_with_the_context_of_what_was_remembered() -> None:
    """/remember writes to the user's scope; /chat's context is the pack citing it."""
    async with chat_app() as (client, _):
        remembered = await client.post("/remember", json={"user": "ana", "text": FACT})
        assert remembered.status_code == 200, remembered.text
        ref = remembered.json()["ref"]
        assert ref["scope_id"] == "user:ana"
        answer = await client.post("/chat", json={"user": "ana", "message": QUESTION})
        assert answer.status_code == 200, answer.text
        body = answer.json()
    assert body["fallback"] is None
    (item,) = satchel.parse_context(body["context"])
    assert item.text == FACT
    assert item.citation.id == ref["entry_id"]


async def test_another_user_gets_no_context() -> None:
    """Scopes are per user: ben's chat never sees ana's memory (an empty pack)."""
    async with chat_app() as (client, _):
        await client.post("/remember", json={"user": "ana", "text": FACT})
        answer = await client.post("/chat", json={"user": "ben", "message": QUESTION})
    assert answer.json() == {"context": None, "fallback": None}


class StuckOnQuestions(satchel.HashingEmbedder):
    """Embeds what is remembered, never returns for a question: a model server that
    hangs. satchel bounds embedding only by prepare_timeout; without it, only the app's
    deadline stops the prepare."""

    async def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        if any(text.endswith("?") for text in texts):
            await asyncio.Event().wait()
        return await super().embed(texts)


async def ask_within_ten_seconds(client: httpx.AsyncClient) -> tuple[httpx.Response, float]:
    """The answer to a question about the fact, and the seconds it took."""
    await client.post("/remember", json={"user": "ana", "text": FACT})
    began = time.monotonic()
    async with asyncio.timeout(10):  # a bound for the test: the app must answer well before
        answer = await client.post("/chat", json={"user": "ana", "message": QUESTION})
    return answer, time.monotonic() - began


async def test_the_app_abandons_a_prepare_at_its_deadline() -> None:
    """A prepare satchel itself does not stop (a hanging embedder, no prepare_timeout) is
    cancelled by the app's asyncio.timeout at deadline_for (round_timeout, 0.2 s): the
    chat answers without context, says why, and waits no longer."""
    async with chat_app(embedder=StuckOnQuestions(), round_timeout=0.2) as (client, _):
        answer, elapsed = await ask_within_ten_seconds(client)
    assert answer.status_code == 200
    assert answer.json() == {"context": None, "fallback": "timeout"}
    assert 0.2 <= elapsed < 2


async def test_a_failing_prepare_answers_without_context() -> None:
    """The store is gone (closed under the app): the chat still answers, without
    context, and says it was an error."""
    async with chat_app() as (client, runtime):
        await client.post("/remember", json={"user": "ana", "text": FACT})
        await runtime.store.aclose()
        answer = await client.post("/chat", json={"user": "ana", "message": QUESTION})
    assert answer.status_code == 200
    assert answer.json() == {"context": None, "fallback": "error"}


async def test_satchel_timing_out_first_is_a_timeout_too() -> None:
    """A planner that never returns holds the prepare until satchel's own prepare_timeout
    (0.1 s, the deadline too) raises PrepareTimeoutError: the same answer."""
    started = asyncio.Event()

    async def stuck_planner(query: str, **context: Any) -> Sequence[str]:
        started.set()
        await asyncio.Event().wait()
        return []

    async with chat_app(planner=stuck_planner, prepare_timeout=0.1) as (client, _):
        answer, elapsed = await ask_within_ten_seconds(client)
    assert started.is_set()
    assert answer.json() == {"context": None, "fallback": "timeout"}
    assert 0.1 <= elapsed < 2


@pytest.mark.parametrize(
    ("path", "body", "status"),
    [
        ("/chat", {"user": "ana"}, 422),
        ("/chat", {"user": "ana", "message": QUESTION, "session_id": 7}, 422),
        ("/chat", {"user": "ana", "message": "x" * 9000}, 422),
        ("/remember", {"user": "", "text": FACT}, 422),
        ("/remember", [FACT], 422),
    ],
    ids=["no-message", "session-not-string", "message-too-long", "blank-user", "array"],
)
async def test_a_malformed_request_is_refused(path: str, body: object, status: int) -> None:
    """A missing or malformed field is the caller's error (422), not a fallback."""
    async with chat_app() as (client, _):
        answer = await client.post(path, json=body)
    assert answer.status_code == status


def test_the_script_serves_the_app_with_hypercorn(tmp_path: Any) -> None:
    """``python examples/asyncio_web_app.py --db FILE --port 0``: Hypercorn runs the
    lifespan, serves over real HTTP, and stops with exit code 0 on SIGTERM."""
    command = [sys.executable, str(EXAMPLES / "asyncio_web_app.py"), "--db",
               str(tmp_path / "chat.db"), "--port", "0"]  # fmt: skip
    server = subprocess.Popen(command, stderr=subprocess.PIPE)
    try:
        url = running_on(server)
        with httpx.Client(base_url=url, timeout=30) as client:
            assert client.post("/remember", json={"user": "ana", "text": FACT}).status_code == 200
            answer = client.post("/chat", json={"user": "ana", "message": QUESTION}).json()
        assert FACT in answer["context"]
        server.send_signal(signal.SIGTERM)
        _, err = server.communicate(timeout=30)
    finally:
        if server.poll() is None:
            server.kill()
            server.communicate()
    assert server.returncode == 0, err.decode()
    assert b"Traceback" not in err


def running_on(server: subprocess.Popen[bytes]) -> str:
    """The URL in Hypercorn's "Running on" line, read within a bounded time."""
    found = announced(server.stderr, rb"Running on (http://\S+)", "the app")
    return found.group(1).decode()
