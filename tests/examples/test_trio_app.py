"""``examples/trio_app.py``: the trio agent loop answers ``ask`` with the context of
what was ``remember``-ed, and without context, exactly at the deadline, when the
prepare overruns it. The app is written for trio: trio only."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
from typing import TYPE_CHECKING, Any, Final

import pytest
import trio
import trio.testing

import satchel
import trio_app

from .._clock import MOCK_CLOCK
from .._processes import announced
from . import EXAMPLES

if TYPE_CHECKING:
    from collections.abc import Sequence

    import numpy as np
    import numpy.typing as npt

pytestmark = pytest.mark.anyio

FACT: Final = "Deploys happen on Thursdays after the stand-up"
QUESTION: Final = satchel.PrepareContextRequest(scope_id="team", query="When do we deploy?")


@pytest.fixture
def anyio_backend() -> str:
    """The app is a trio program: it runs on trio only."""
    return "trio"


class Client:
    """The client end of one conversation with :func:`trio_app.converse`."""

    def __init__(self, stream: trio.abc.Stream) -> None:
        self._stream = stream
        self._lines = trio_app.LineReader(stream)

    async def send(self, line: str) -> dict[str, Any]:
        await self._stream.send_all(line.encode() + b"\n")
        answer = await self._lines.readline()
        assert answer is not None
        result: dict[str, Any] = json.loads(answer)
        return result


async def converse(runtime: satchel.Runtime, *lines: str) -> list[dict[str, Any]]:
    """The answers to ``lines``, sent one at a time over an in-memory stream."""
    client_end, app_end = trio.testing.memory_stream_pair()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(
            lambda: trio_app.converse(runtime, app_end, scope="team", session_id="c-1")
        )
        client = Client(client_end)
        answers = [await client.send(line) for line in lines]
        await client_end.aclose()
    return answers


async def test_ask_answers_with_the_context_of_what_was_remembered() -> None:
    """``remember`` writes to the scope; ``ask`` answers with the pack citing it."""
    async with satchel.open_runtime(embedder=satchel.HashingEmbedder()) as runtime:
        remembered, asked, unknown = await converse(
            runtime, f"remember {FACT}", "ask When do we deploy?", "sing"
        )
    assert remembered["ref"]["scope_id"] == "team"
    assert asked["fallback"] is None
    (item,) = satchel.parse_context(asked["context"])
    assert item.text == FACT
    assert item.citation.id == remembered["ref"]["entry_id"]
    assert "error" in unknown


async def test_a_malformed_question_is_an_error_not_a_fallback() -> None:
    """An empty question is refused by name; the loop goes on."""
    async with satchel.open_runtime(embedder=satchel.HashingEmbedder()) as runtime:
        refused, asked = await converse(runtime, "ask ", "ask anything")
    assert "query" in refused["error"]
    assert asked == {"context": None, "fallback": None}


async def test_a_failing_prepare_answers_without_context() -> None:
    """The store is gone (closed under the app): the answer comes, without context,
    and says it was an error."""
    async with satchel.open_runtime(embedder=satchel.HashingEmbedder()) as runtime:
        await runtime.add_memories("team", [satchel.MemoryEntry(text=FACT)])
        await runtime.store.aclose()
        (asked,) = await converse(runtime, "ask When do we deploy?")
    assert asked == {"context": None, "fallback": "error"}


class StuckOnQuestions(satchel.HashingEmbedder):
    """Embeds what is remembered, never returns for a question: a model server that
    hangs. satchel bounds embedding only by prepare_timeout; without it, only the app's
    deadline stops the prepare."""

    async def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        if any(text.endswith("?") for text in texts):
            await trio.sleep_forever()
        return await super().embed(texts)


async def ask_within_ten_seconds(runtime: satchel.Runtime) -> tuple[dict[str, Any], float]:
    """The answer to a question about the fact, and the (simulated) seconds it took."""
    await runtime.add_memories("team", [satchel.MemoryEntry(text=FACT)])
    started = trio.current_time()
    with trio.fail_after(10):  # a bound for the test: the app must answer well before
        (asked,) = await converse(runtime, "ask When do we deploy?")
    return asked, trio.current_time() - started


@pytest.mark.parametrize("anyio_backend", MOCK_CLOCK)
async def test_the_app_abandons_a_prepare_at_its_deadline() -> None:
    """A prepare satchel itself does not stop (a hanging embedder, no prepare_timeout) is
    cancelled by the app's move_on_after at deadline_for (round_timeout, 1 s): the
    answer comes without context exactly then."""
    async with satchel.open_runtime(embedder=StuckOnQuestions(), round_timeout=1.0) as runtime:
        assert runtime.deadline_for(QUESTION) == 1.0
        asked, elapsed = await ask_within_ten_seconds(runtime)
    assert asked == {"context": None, "fallback": "timeout"}
    assert elapsed == pytest.approx(1.0)


@pytest.mark.parametrize("anyio_backend", MOCK_CLOCK)
async def test_satchel_timing_out_first_is_a_timeout_too() -> None:
    """A planner that never returns holds the prepare until satchel's own prepare_timeout
    (2 s, the deadline too) raises PrepareTimeoutError: the same answer, at 2 s."""

    async def stuck_planner(query: str, **context: Any) -> Sequence[str]:
        await trio.sleep_forever()

    async with satchel.open_runtime(
        embedder=satchel.HashingEmbedder(), planner=stuck_planner, prepare_timeout=2.0
    ) as runtime:
        asked, elapsed = await ask_within_ten_seconds(runtime)
    assert asked == {"context": None, "fallback": "timeout"}
    assert elapsed == pytest.approx(2.0)  # the mock clock's sums of floats


def test_the_script_serves_over_tcp(tmp_path: Any) -> None:
    """``python examples/trio_app.py --port 0``: one conversation per connection over
    real TCP; SIGINT stops it with exit code 0."""
    command = [sys.executable, str(EXAMPLES / "trio_app.py"), "--db", str(tmp_path / "a.db"),
               "--port", "0", "--scope", "team"]  # fmt: skip
    app = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        host, port = listening_on(app)
        with socket.create_connection((host, port), timeout=30) as connection:
            lines = connection.makefile("rwb")
            answers = []
            for line in (f"remember {FACT}", "ask When do we deploy?"):
                lines.write(line.encode() + b"\n")
                lines.flush()
                answers.append(json.loads(lines.readline()))
        assert FACT in answers[1]["context"]
        app.send_signal(signal.SIGINT)
        _, err = app.communicate(timeout=30)
    finally:
        if app.poll() is None:
            app.kill()
            app.communicate()
    assert app.returncode == 0, err.decode()
    assert b"Traceback" not in err


def listening_on(app: subprocess.Popen[bytes]) -> tuple[str, int]:
    """The address in the app's "listening on" line, read within a bounded time."""
    found = announced(app.stdout, rb"listening on (\S+):(\d+)", "the app")
    return found.group(1).decode(), int(found.group(2))
