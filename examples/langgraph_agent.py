"""satchel inside a LangGraph graph, as the graph's store: a node recalls what the
store holds for the user's message before the model node, and a node after it stores
the turn.

The graph is compiled with ``store=SatchelStore(runtime)``
(``satchel.integrations.langgraph``), so its nodes use LangGraph's own store API and
satchel answers it: a namespace (``("user", "ana")``) is a satchel scope, an item a
memory entry, and ``store.asearch(namespace, query=...)`` ranks with satchel's recall.
One turn runs three nodes, ``START -> recall -> respond -> remember -> END``:

``recall``
    searches the user's namespace for the latest user message, into the state's
    ``context`` (None when the store found nothing or failed: the turn goes on
    without memory).
``respond``
    calls the chat model with one system message, the agent's instructions and the
    recalled memories, before the conversation's messages. The system message is built
    for this call only and never enters the state's ``messages``.
``remember``
    stores the turn, the user's message and the model's answer, as two items of the
    user's namespace (``{"text": "User: ...", "conversation": ...}``): the next turns,
    in any conversation, find them.

:func:`build_graph` compiles the graph around a chat model and a store, once; whose
memory a turn uses is each invocation's context, a :class:`Memory`
(``graph.ainvoke(turn_input(message), config, context=Memory(...))``). With a
checkpointer (the script's ``InMemorySaver``) a conversation's messages stay in the
graph between turns, under its ``thread_id``. LangGraph runs a graph's async API on
asyncio only (``ainvoke`` reads the running asyncio loop).

Run: ``python examples/langgraph_agent.py [--db agent.db]`` (needs
``satchel[langgraph]``). Its model is :class:`OfflineChatModel`, which answers by
quoting the first recalled memory; ``build_graph(model, store)`` takes any LangChain
chat model (``ChatOpenAI(...)``, ``init_chat_model(...)``) in its place, and the store
may sit over a ``satchel.Client`` of a ``satchel serve`` instead of a Runtime.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated, Any, Final, NotRequired, TypedDict

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, SystemMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages

import satchel
from satchel.integrations.langgraph import SatchelStore

if TYPE_CHECKING:
    from collections.abc import Sequence

    from langchain_core.callbacks import (
        AsyncCallbackManagerForLLMRun,
        CallbackManagerForLLMRun,
    )
    from langchain_core.messages import BaseMessage
    from langchain_core.runnables import RunnableConfig
    from langgraph.graph.state import CompiledStateGraph
    from langgraph.runtime import Runtime
    from langgraph.store.base import BaseStore
    from langgraph.types import Checkpointer

logger = logging.getLogger("langgraph_agent")
#: The most memories recalled for a message.
RECALLED: Final = 5
#: The agent's fixed instructions; the memories follow them in the same system message.
SYSTEM_PROMPT: Final = (
    "You are a helpful assistant. Use the memory below, recalled for the user's "
    "message, when it helps."
)


class State(TypedDict):
    """The graph's state: the conversation, and what was recalled for its latest user
    message."""

    messages: Annotated[list[AnyMessage], add_messages]
    context: NotRequired[str | None]


@dataclass(frozen=True)
class Memory:
    """An invocation's context: whose memory the turn uses."""

    #: The store namespace the user's memory lives in (``("user", "ana")``).
    namespace: tuple[str, ...]
    #: The conversation: its turns are stored with it.
    conversation: str


def build_graph(
    model: BaseChatModel, store: BaseStore, *, checkpointer: Checkpointer = None
) -> CompiledStateGraph[State, Memory, State, State]:
    """The turn's graph, ``recall -> respond -> remember``, around ``model``, its nodes
    using ``store`` (a :class:`SatchelStore`); with a ``checkpointer`` it keeps each
    conversation's messages between turns."""

    async def recall(state: State, runtime: Runtime[Memory]) -> dict[str, Any]:
        message = latest(state["messages"], HumanMessage)
        assert runtime.store is not None
        found = await recalled(runtime.store, runtime.context, message) if message else None
        return {"context": found}

    async def respond(state: State) -> dict[str, Any]:
        pack = state.get("context")
        system = f"{SYSTEM_PROMPT}\n\n{pack}" if pack else SYSTEM_PROMPT
        reply = await model.ainvoke([SystemMessage(system), *state["messages"]])
        return {"messages": [reply]}

    async def remember(state: State, runtime: Runtime[Memory]) -> dict[str, Any]:
        message, answer = (
            latest(state["messages"], HumanMessage),
            latest(state["messages"], AIMessage),
        )
        assert runtime.store is not None
        await remember_turn(runtime.store, runtime.context, message, answer)
        return {}

    builder = StateGraph(State, context_schema=Memory)
    builder.add_node("recall", recall)
    builder.add_node("respond", respond)
    builder.add_node("remember", remember)
    builder.add_edge(START, "recall")
    builder.add_edge("recall", "respond")
    builder.add_edge("respond", "remember")
    builder.add_edge("remember", END)
    return builder.compile(checkpointer, store=store, name="satchel-agent")


def turn_input(message: str) -> State:
    """A turn's input: the user's message, added to the conversation's messages."""
    return {"messages": [HumanMessage(message)]}


def conversation_config(memory: Memory) -> RunnableConfig:
    """The config that keeps a conversation's messages in a checkpointer: its LangGraph
    thread is the conversation."""
    return {"configurable": {"thread_id": memory.conversation}}


async def recalled(store: BaseStore, memory: Memory, message: str) -> str | None:
    """The memories the store recalls for ``message``, one ``- text`` line each, best
    first; None when it recalls nothing, or fails (an agent answers with or without
    memory)."""
    try:
        items = await store.asearch(memory.namespace, query=message, limit=RECALLED)
    except satchel.SatchelError:  # the store is down, a search failed
        logger.exception("no memory: the search failed")
        return None
    return "\n".join(f"- {item.value['text']}" for item in items) or None


async def remember_turn(store: BaseStore, memory: Memory, message: str, answer: str) -> int:
    """Store the user's message and the model's answer as two items of the user's
    namespace, keyed by the time and the speaker; a blank side is not stored. A write
    that fails is logged: the answer stands. Returns the items stored."""
    now = datetime.now(UTC).isoformat()
    stored = 0
    for who, text in (("User", message), ("Assistant", answer)):
        if not text.strip():
            continue
        value = {"text": f"{who}: {text}", "conversation": memory.conversation, "at": now}
        try:
            await store.aput(memory.namespace, f"{memory.conversation}/{now}/{who}", value)
        except satchel.SatchelError:
            logger.exception("the turn was not stored")
            return stored
        stored += 1
    return stored


def latest(messages: Sequence[BaseMessage], kind: type[BaseMessage]) -> str:
    """The text of the last message of ``kind`` ("" when there is none)."""
    found = next((message for message in reversed(messages) if isinstance(message, kind)), None)
    return "" if found is None else str(found.text)


class OfflineChatModel(BaseChatModel):
    """An offline stand-in for a chat model: it quotes the first memory recalled in its
    system message, or says that memory holds nothing on the question."""

    @property
    def _llm_type(self) -> str:
        return "satchel-offline"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        system = next((m for m in messages if isinstance(m, SystemMessage)), None)
        lines = str(system.text).split("\n- ")[1:] if system is not None else []
        first = lines[0].split("\n")[0] if lines else None
        text = f"From memory: {first}" if first else "I have nothing on that in memory yet."
        return ChatResult(generations=[ChatGeneration(message=AIMessage(text))])

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return self._generate(messages, stop, **kwargs)  # no I/O: no worker thread


async def main(database: str) -> None:
    async with satchel.open_runtime(database) as runtime:
        store = SatchelStore(runtime)
        # The conversations' messages live in the checkpointer, their memory in satchel.
        graph = build_graph(OfflineChatModel(), store, checkpointer=InMemorySaver())
        ana = ("user", "ana")
        await store.aput(
            ana, "deploy-day", {"text": "Deploys happen on Thursdays after the 10:00 stand-up"}
        )
        first = Memory(ana, conversation="chat-1")
        for message in ("When is the next deploy?", "Our staging server is called kestrel."):
            state = await graph.ainvoke(
                turn_input(message), conversation_config(first), context=first
            )
            show(first, message, state)
        # A new conversation: what was said in the first one comes back from memory.
        second = Memory(ana, conversation="chat-2")
        message = "What is the staging server called?"
        state = await graph.ainvoke(
            turn_input(message), conversation_config(second), context=second
        )
        show(second, message, state)


def show(memory: Memory, message: str, state: dict[str, Any]) -> None:
    recalled = state.get("context") or ""
    print(f"[{memory.conversation}] user: {message}")
    print(f"  recalled: {recalled.count('- ')} memories")
    print(f"  agent: {latest(state['messages'], AIMessage)}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="A LangGraph agent with satchel as its store.")
    parser.add_argument("--db", default=":memory:")
    args = parser.parse_args()
    asyncio.run(main(args.db))
