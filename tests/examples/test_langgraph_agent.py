"""``examples/langgraph_agent.py``: a graph compiled with ``SatchelStore``; its ``recall``
node puts what the store recalls for the user's message into the chat model's input as a
system message, and its ``remember`` node stores the turn there, where later turns find
it. Offline: the model is langchain-core's
``GenericFakeChatModel``, its input recorded by a callback handler. LangGraph runs a
graph's async API on asyncio only: trio is skipped, saying why."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import TYPE_CHECKING, Any, Final

import pytest
from langchain_core.callbacks import AsyncCallbackHandler
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langgraph.checkpoint.memory import InMemorySaver

import langgraph_agent
import satchel
from satchel.integrations.langgraph import SatchelStore

from . import EXAMPLES

if TYPE_CHECKING:
    from langchain_core.messages import BaseMessage

pytestmark = pytest.mark.anyio

FACT: Final = "Deploys happen on Thursdays after the stand-up"
QUESTION: Final = "When do we deploy?"
USER: Final = ("user", "ana")
#: Why the graph's tests do not run on trio.
ASYNCIO_ONLY: Final = (
    "LangGraph runs a graph's async API on asyncio only: ainvoke asks for the running "
    "asyncio loop (asyncio.get_running_loop), which trio does not have"
)


#: LangChain sends traces to LangSmith when the environment turns tracing on: never from
#: these tests, whatever the developer's shell says.
NO_TRACING: Final = {"LANGSMITH_TRACING": "false", "LANGCHAIN_TRACING_V2": "false"}


@pytest.fixture(autouse=True)
def _no_tracing(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in NO_TRACING.items():
        monkeypatch.setenv(name, value)


@pytest.fixture(
    params=[
        pytest.param("asyncio", id="asyncio"),
        pytest.param("trio", id="trio", marks=pytest.mark.skip(reason=ASYNCIO_ONLY)),
    ]
)
def anyio_backend(request: pytest.FixtureRequest) -> str:
    """asyncio; trio is skipped (ASYNCIO_ONLY says why)."""
    backend: str = request.param
    return backend


class Inputs(AsyncCallbackHandler):
    """Records the messages each chat model call is given."""

    def __init__(self) -> None:
        self.calls: list[list[BaseMessage]] = []

    async def on_chat_model_start(
        self, serialized: dict[str, Any], messages: list[list[BaseMessage]], **kwargs: Any
    ) -> None:
        self.calls.extend(list(batch) for batch in messages)


def fake_model(inputs: Inputs, *answers: str) -> GenericFakeChatModel:
    """A chat model that answers ``answers`` in turn, its inputs recorded in ``inputs``."""
    return GenericFakeChatModel(messages=iter(AIMessage(a) for a in answers), callbacks=[inputs])


async def recalled(store: SatchelStore, message: str) -> str | None:
    """What the ``recall`` node puts in the system message for ``message`` now."""
    return await langgraph_agent.recalled(
        store, langgraph_agent.Memory(USER, conversation="probe"), message
    )


async def test_recalled_memory_reaches_the_model_as_a_system_message() -> None:
    """The model's input is one system message, the instructions and then what the store
    recalls for the user's message (the fact, by satchel's recall), and the message; the
    state keeps the recalled memory and the answer, not the system message."""
    inputs = Inputs()
    async with satchel.open_runtime(embedder=satchel.HashingEmbedder()) as runtime:
        store = SatchelStore(runtime)
        graph = langgraph_agent.build_graph(fake_model(inputs, "Thursdays."), store)
        await store.aput(USER, "deploys", {"text": FACT})
        expected = await recalled(store, QUESTION)
        memory = langgraph_agent.Memory(USER, conversation="c-1")
        state = await graph.ainvoke(langgraph_agent.turn_input(QUESTION), context=memory)
    assert expected == f"- {FACT}"
    ((system, asked),) = inputs.calls
    assert isinstance(system, SystemMessage)
    assert system.content == f"{langgraph_agent.SYSTEM_PROMPT}\n\n{expected}"
    assert isinstance(asked, HumanMessage)
    assert asked.content == QUESTION
    assert state["context"] == expected
    assert [type(m) for m in state["messages"]] == [HumanMessage, AIMessage]


async def test_the_turn_is_stored_and_a_later_turn_finds_it() -> None:
    """After a turn, the store holds it as two items of the user's namespace (satchel
    memory entries of its scope); a turn in another conversation gets the user's words
    in its system message."""
    inputs = Inputs()
    told = "Our staging server is called kestrel."
    async with satchel.open_runtime(embedder=satchel.HashingEmbedder()) as runtime:
        store = SatchelStore(runtime)
        model = fake_model(inputs, "Noted: kestrel.", "kestrel")
        graph = langgraph_agent.build_graph(model, store)
        first = langgraph_agent.Memory(USER, conversation="c-1")
        await graph.ainvoke(langgraph_agent.turn_input(told), context=first)
        stored = await store.asearch(USER)
        second = langgraph_agent.Memory(USER, conversation="c-2")
        asked = "What is the staging server called?"
        await graph.ainvoke(langgraph_agent.turn_input(asked), context=second)
    assert sorted((item.value["text"], item.value["conversation"]) for item in stored) == [
        ("Assistant: Noted: kestrel.", "c-1"),
        (f"User: {told}", "c-1"),
    ]
    assert inputs.calls[0][0].content == langgraph_agent.SYSTEM_PROMPT  # no memory yet
    system = inputs.calls[1][0]
    assert isinstance(system, SystemMessage)
    assert f"- User: {told}" in str(system.content).split("\n")


async def test_a_checkpointed_conversation_keeps_its_messages_and_recalls_anew() -> None:
    """With a checkpointer, the second turn's model gets the first turn's messages and
    one system message, holding what is recalled for the new message (the first turn
    among it) and nothing recalled before."""
    inputs = Inputs()
    follow_up = "And who runs the deploy stand-up?"
    async with satchel.open_runtime(embedder=satchel.HashingEmbedder()) as runtime:
        store = SatchelStore(runtime)
        model = fake_model(inputs, "Thursdays.", "Priya does.")
        graph = langgraph_agent.build_graph(model, store, checkpointer=InMemorySaver())
        await store.aput(USER, "deploys", {"text": FACT})
        memory = langgraph_agent.Memory(USER, conversation="c-1")
        config = langgraph_agent.conversation_config(memory)
        await graph.ainvoke(langgraph_agent.turn_input(QUESTION), config, context=memory)
        expected = await recalled(store, follow_up)
        state = await graph.ainvoke(langgraph_agent.turn_input(follow_up), config, context=memory)
    assert expected is not None
    system, *conversation = inputs.calls[1]
    assert system.content == f"{langgraph_agent.SYSTEM_PROMPT}\n\n{expected}"
    assert [(type(m), m.content) for m in conversation] == [
        (HumanMessage, QUESTION),
        (AIMessage, "Thursdays."),
        (HumanMessage, follow_up),
    ]
    assert f"- {FACT}" in expected.split("\n")
    assert not any(isinstance(m, SystemMessage) for m in state["messages"])


async def test_without_memory_the_turn_goes_on() -> None:
    """The store is gone (satchel's, closed under the graph): the model gets the
    instructions alone and answers; the turn that cannot be stored is logged, not
    raised."""
    inputs = Inputs()
    async with satchel.open_runtime(embedder=satchel.HashingEmbedder()) as runtime:
        store = SatchelStore(runtime)
        graph = langgraph_agent.build_graph(fake_model(inputs, "Thursdays, I think."), store)
        await store.aput(USER, "deploys", {"text": FACT})
        await runtime.store.aclose()
        memory = langgraph_agent.Memory(USER, conversation="c-1")
        state = await graph.ainvoke(langgraph_agent.turn_input(QUESTION), context=memory)
    assert [m.content for m in inputs.calls[0]] == [langgraph_agent.SYSTEM_PROMPT, QUESTION]
    assert state["context"] is None
    assert state["messages"][-1].content == "Thursdays, I think."


def test_the_script_runs_offline() -> None:
    """``python examples/langgraph_agent.py``: with its offline model, the first
    conversation's deploy question is answered from the seeded fact, and the second
    conversation is answered from what the user said in the first."""
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / "langgraph_agent.py")],
        capture_output=True, text=True, check=True, timeout=120,
        env={**os.environ, **NO_TRACING},
    )  # fmt: skip
    first, _, second = done.stdout.split("[chat-")[1:]
    assert "agent: From memory: Deploys happen on Thursdays after the 10:00 stand-up" in first
    assert second.startswith("2] user: What is the staging server called?")
    assert "agent: From memory: User: Our staging server is called kestrel." in second
    assert "Traceback" not in done.stderr
