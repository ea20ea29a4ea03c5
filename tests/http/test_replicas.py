"""Replicas over one OceanBase engine: one seekdb engine (the session's, a process of its
own reached on a Unix socket), and several ``satchel serve --store oceanbase://...
--shared-sessions`` processes over one database of it, started at once on a database
that does not exist yet, as replicas behind a balancer would be. Writes, forgets,
erases and prepares go to any replica: what one acknowledged, every other serves on its
very next call; what one forgot or erased, none serves; a session's turns alternating
over the replicas hold back what any of them served, as one service would; and a
replica killed with SIGKILL loses no acknowledged write and no session.

Every wait is on an event (a start line, an answer); scopes stay far below the
store's ``exact_rows``, so vectors are searched exactly and no wait on the engine's
HNSW index is needed.
"""

from __future__ import annotations

import contextlib
import json
import signal
import subprocess
import sys
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import quote

import httpx
import pytest

import satchel
from satchel._wire import compact_id

from .._processes import STARTUP_SECONDS
from .test_serve import start_line, wait_until_healthy

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence
    from pathlib import Path

#: The backends of the shared replicas, and of the one the last test kills.
BACKENDS: Final = ("asyncio", "trio")
VICTIM_BACKEND: Final = "asyncio"
#: ``--dedup-turns`` of every replica.
DEDUP_TURNS: Final = 2
AGENT: Final = "replica-agent-token-0123456789"
READER: Final = "replica-reader-token-0123456789"
#: One token file for every replica: sessions belong to a token's name, on all of them.
TOKENS: Final = {
    "tokens": [
        {"name": "agent", "token": AGENT, "scopes": ["team:*"], "write": True},
        {"name": "reader", "token": READER, "scopes": ["team:*"]},
    ]
}
#: Codenames that no other note of a scope holds: a query of one finds its note.
NAMES: Final = ("amber", "birch", "cedar", "dune", "ember", "fjord")


@dataclass
class Replica:
    """A ``satchel serve`` process and a client of it."""

    process: subprocess.Popen[bytes]
    client: httpx.Client

    def post(self, path: str, body: dict[str, Any], token: str = AGENT) -> httpx.Response:
        return self.client.post(path, json=body, headers=bearer(token))

    def get(self, path: str, **params: Any) -> httpx.Response:
        return self.client.get(path, params=params, headers=bearer(AGENT))

    def delete(self, path: str, **params: Any) -> httpx.Response:
        return self.client.delete(path, params=params, headers=bearer(AGENT))


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def command(url: str, tokens: Path, backend: str) -> list[str]:
    return [
        sys.executable, "-m", "satchel", "serve", "--store", url, "--embedder", "hashing",
        "--port", "0", "--backend", backend, "--token-file", str(tokens),
        "--dedup-turns", str(DEDUP_TURNS), "--shared-sessions",
    ]  # fmt: skip


@contextlib.contextmanager
def serving(url: str, tokens: Path, backends: Sequence[str]) -> Iterator[list[Replica]]:
    """One ``satchel serve`` per backend over ``url``, all started before any is waited
    for (so they open the database at once); each stopped with SIGTERM at the end, which
    must exit 0 (a replica a test killed is only reaped)."""
    processes = [
        subprocess.Popen(command(url, tokens, backend), stderr=subprocess.PIPE)
        for backend in backends
    ]
    replicas: list[Replica] = []
    try:
        for process in processes:
            address = start_line(process).split(" at ")[1].split(" ")[0]
            client = httpx.Client(base_url=address, timeout=STARTUP_SECONDS)
            replicas.append(Replica(process, client))
            wait_until_healthy(client, process)
        yield replicas
        for process in processes:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in processes:
            killed = process.returncode == -signal.SIGKILL
            _, err = process.communicate(timeout=STARTUP_SECONDS)
            assert killed or process.returncode == 0, err.decode(errors="replace")
    finally:
        for replica in replicas:
            replica.client.close()
        for process in processes:
            if process.poll() is None:
                process.kill()
                process.communicate()


@pytest.fixture(scope="module")
def replicas(seekdb: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[Replica]]:
    """Two replicas shared by the tests, and last a third that only the test killing a
    replica uses, over one new database of the session's engine."""
    tokens = tmp_path_factory.mktemp("replicas") / "tokens.json"
    tokens.write_text(json.dumps(TOKENS))
    tokens.chmod(0o600)
    url = f"oceanbase://root@localhost/t_{uuid.uuid4().hex[:12]}?unix_socket={seekdb}"
    with serving(url, tokens, (*BACKENDS, VICTIM_BACKEND)) as started:
        yield started


def shared(replicas: list[Replica]) -> list[Replica]:
    return replicas[: len(BACKENDS)]


def note(name: str) -> dict[str, str]:
    return {"text": f"The {name} runbook: restart the {name} queue from the console"}


def add(replica: Replica, scope: str, *entries: dict[str, str]) -> list[dict[str, Any]]:
    response = replica.post("/v1/memories", {"scope_id": scope, "entries": list(entries)})
    assert response.status_code == 200, response.text
    refs: list[dict[str, Any]] = response.json()["refs"]
    return refs


def cited(
    replica: Replica, scope: str, query: str, token: str = AGENT, **fields: Any
) -> list[satchel.Citation]:
    """The citations of one prepare on ``replica`` by ``token``, in pack order."""
    body = {"scope_id": scope, "query": query, "max_bytes": 2000, **fields}
    response = replica.post("/v1/context/prepare", body, token=token)
    assert response.status_code == 200, response.text
    content = response.json()["content"]
    return [item.citation for item in satchel.parse_context(content)]


def cited_ids(replica: Replica, scope: str, query: str) -> list[str | None]:
    """The ids a prepare's pack cites, spelled as the pack (and every answer) writes them."""
    return [
        None if citation.id is None else compact_id(citation.id)
        for citation in cited(replica, scope, query)
    ]


def memory_path(scope: str, entry_id: str) -> str:
    return f"/v1/memories/{quote(scope, safe='')}/{entry_id}"


@pytest.mark.slow
def test_a_write_one_replica_acknowledged_is_served_by_every_other_at_once(
    replicas: list[Replica],
) -> None:
    """Each write goes to the next replica; right after its answer, a prepare on every
    replica cites it and a read of its version gives its text. Then the replicas write
    at once, into one scope: every acknowledged entry is read back from every replica."""
    scope = "team:writes"
    serving = shared(replicas)
    for number, name in enumerate(NAMES):
        writer = serving[number % len(serving)]
        [ref] = add(writer, scope, note(name))
        for replica in serving:
            assert ref["entry_id"] in cited_ids(replica, scope, f"{name} runbook")
            got = replica.get(memory_path(scope, ref["entry_id"]), version=1)
            assert got.status_code == 200, got.text
            assert got.json()["text"] == note(name)["text"]

    def burst(replica: Replica) -> list[dict[str, Any]]:
        return [ref for n in range(4) for ref in add(replica, scope, note(f"burst{n}"))]

    with ThreadPoolExecutor(len(serving)) as pool:
        written = [ref for refs in pool.map(burst, serving) for ref in refs]
    assert len({ref["entry_id"] for ref in written}) == 4 * len(serving)
    for ref in written:
        for replica in serving:
            got = replica.get(memory_path(scope, ref["entry_id"]), version=ref["version"])
            assert got.status_code == 200, got.text


def test_no_replica_serves_what_another_forgot_or_erased(replicas: list[Replica]) -> None:
    """A forget on one replica: no replica serves the entry on its next call, and each
    still reads it. An erase on the other: none serves it and each says it was erased.
    A scope erased: every replica's next prepare is empty."""
    scope = "team:forget"
    serving = shared(replicas)
    first, second = serving
    forgotten, erased, kept = (
        ref["entry_id"] for ref in add(first, scope, *map(note, ("cedar", "dune", "ember")))
    )
    for replica in serving:
        assert forgotten in cited_ids(replica, scope, "cedar runbook")
    assert second.delete(memory_path(scope, forgotten), version=1).status_code == 204
    for replica in serving:
        assert forgotten not in cited_ids(replica, scope, "cedar runbook")
        assert replica.get(memory_path(scope, forgotten), version=1).status_code == 200

    answer = first.delete(memory_path(scope, erased), erase="true")
    assert answer.status_code == 200, answer.text
    assert answer.json()["erased_versions"] == 1
    for replica in serving:
        assert erased not in cited_ids(replica, scope, "dune runbook")
        gone = replica.get(memory_path(scope, erased), version=1)
        assert gone.status_code == 404
        assert "erased" in gone.json()["error"]["message"]
        assert kept in cited_ids(replica, scope, "ember runbook")

    dropped = second.delete(f"/v1/scopes/{quote(scope, safe='')}")
    assert dropped.status_code == 200, dropped.text
    for replica in serving:
        assert cited_ids(replica, scope, "ember runbook") == []


KESTREL: Final = [
    {"text": f"Kestrel deploy note {n}: step {n} of the rollout runs after the canary"}
    for n in range(16)
]


def turns(replicas: Sequence[Replica], scope: str, token: str = AGENT) -> list[set[str]]:
    """One turn of session ``chat-7`` per replica, in order: the identities each served."""
    served = []
    for replica in replicas:
        citations = cited(
            replica, scope, "kestrel deploy", token, session_id="chat-7", max_bytes=600
        )
        served.append({f"{citation.id}/{citation.version}" for citation in citations})
    return served


def test_a_sessions_turns_over_the_replicas_hold_back_as_one_service(
    replicas: list[Replica],
) -> None:
    """Turns 1 and 3 on one replica, 2 and 4 on the other: each of turns 2 and 3 holds
    back what the turns before it served (``--dedup-turns 2``), and turn 4 serves turn
    1's items again, as one process would. The same session id under another token's
    name is another session: its first turn is turn 1 again."""
    scope = "team:sessions"
    first, second = shared(replicas)
    add(second, scope, *KESTREL)
    one, two, three, four = turns([first, second, first, second], scope)
    assert one
    assert two
    assert three
    assert one.isdisjoint(two)
    assert three.isdisjoint(one | two)
    assert four == one
    [theirs] = turns([second], scope, token=READER)
    assert theirs == one


def test_a_killed_replica_loses_no_write_and_no_session(replicas: list[Replica]) -> None:
    """A replica answers a write and a session's turn, then dies by SIGKILL: another
    replica reads the write, serves it, and holds back what the dead one served."""
    scope = "team:killed"
    victim, survivor = replicas[len(BACKENDS)], replicas[0]
    add(victim, scope, *KESTREL)
    [ref] = add(victim, scope, note("garnet"))
    [first] = turns([victim], scope)
    victim.process.kill()
    victim.process.wait(timeout=STARTUP_SECONDS)
    got = survivor.get(memory_path(scope, ref["entry_id"]), version=1)
    assert got.status_code == 200, got.text
    assert ref["entry_id"] in cited_ids(survivor, scope, "garnet runbook")
    [second] = turns([survivor], scope)
    assert second
    assert first.isdisjoint(second)
