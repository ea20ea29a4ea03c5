"""``python -m bench hostile``: its probes, run against the service in process (a
Hypercorn server on a free loopback port, asyncio and trio), find nothing held and
nothing failed, and its table lists each class."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Final

import anyio
import pytest

import satchel
from bench import hostile
from satchel.http import TokenGrant, create_app, listen, serve

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.anyio

TOKEN: Final = "bench-hostile-0123456789"
#: A token granted exactly ``hostile.LOOK_ALIKE`` (the look-alike-scope class's).
LOOK_ALIKE_TOKEN: Final = "bench-hostile-look-alike-0123"
#: Short, so the slow classes are quick; long enough that the probes' pooled clients
#: drop an idle connection (after a quarter of it) well before the server does, and
#: that a loaded machine parses a request's headers within it.
READ_TIMEOUT: Final = 1.0


# httpx drops its request body's iterator unfinished when a refusal and the server's
# close overtake the body it is sending (the refusal classes provoke it); trio's async
# generator hooks say so when it is collected.
@pytest.mark.slow
@pytest.mark.filterwarnings(
    "ignore:Async generator 'httpx._content.ByteStream.__aiter__':ResourceWarning"
)
async def test_the_probes_find_nothing_held_or_failed(tmp_path: Path) -> None:
    """Every class but the subprocess-only ones (a file size limit, the shutdown) runs
    its tries against a fresh service, and none is held or failed."""
    db = tmp_path / "hostile.db"
    async with satchel.open_runtime(str(db), embedder=satchel.HashingEmbedder()) as runtime:
        app = create_app(
            runtime,
            tokens={
                TOKEN: TokenGrant(scopes=("*",), write=True),
                LOOK_ALIKE_TOKEN: TokenGrant(scopes=(hostile.LOOK_ALIKE,), write=True),
            },
            max_body_bytes=hostile.MAX_BODY_BYTES,
            read_timeout=READ_TIMEOUT,
        )
        sock = listen("127.0.0.1", 0)
        host, port = sock.getsockname()[:2]
        stop = anyio.Event()
        async with anyio.create_task_group() as group:
            group.start_soon(
                functools.partial(
                    serve, app, sock, shutdown_trigger=stop.wait, read_timeout=READ_TIMEOUT
                )
            )
            probe = hostile.Probe(host, port, TOKEN, READ_TIMEOUT, LOOK_ALIKE_TOKEN)
            rows = await hostile.probe_running(probe, 2, db)
            stop.set()
    names = [name for name, *_ in rows]
    assert names[:4] == ["slow-body", "dribbled-body", "slow-headers", "idle-connection"]
    assert {
        "refused-413",
        "malformed: nul-in-header",
        "echoed: surrogate-field",
        "echoed: utf16-body",
        "store-removed",
        "store-removed-read",
        "look-alike-scope",
        "forget-replay",
    } <= set(names)
    assert [row for row in rows if row[1] != 2 or row[2] or row[3]] == []


def test_the_table_has_a_line_per_class() -> None:
    """A Markdown table: a header, a rule, then class, tries, held, failed per row."""
    lines = hostile.table([("slow-body", 50, 0, 1), ("shutdown", 2, 0, 0)]).splitlines()
    assert lines[0] == "| class | tries | held | failed |"
    assert lines[2:] == ["| slow-body | 50 | 0 | 1 |", "| shutdown | 2 | 0 | 0 |"]
