"""satchel inside a LangGraph graph: a node prepares the context for the user's message
before the model node, and a node after it stores the turn as memory.

One turn runs three nodes, ``START -> recall -> respond -> remember -> END``:

``recall``
    prepares the pack for the latest user message under the prepare's deadline, into
    the state's ``context`` (None when satchel found nothing, overran or failed: the
    turn goes on without memory).
``respond``
    calls the chat model with one system message, the agent's instructions and the pack,
    before the conversation's messages. The system message is built for this call only
    and never enters the state's ``messages``, so each turn's model sees its own pack
    and no earlier one.
``remember``
    stores the turn, the user's message and the model's answer, as two ``dialog``
    memories in the conversation's thread: the next turns find them.

:func:`build_graph` compiles the graph around a chat model, once; where memory comes
from and goes is each invocation's context, a :class:`Memory`
(``graph.ainvoke(turn_input(message), config, context=Memory(...))``). With a
checkpointer (the script's ``InMemorySaver``) a conversation's messages stay in the
graph between turns, under its satchel thread as LangGraph's ``thread_id``; what was
said stays in satchel, for every conversation in the scope. LangGraph runs a graph's
async API on asyncio only (``ainvoke`` reads the running asyncio loop).

Run: ``python examples/langgraph_agent.py [--db agent.db]`` (needs
``satchel[frameworks]``). Its model is :class:`OfflineChatModel`, which answers by
quoting the pack's first item; ``build_graph(model)`` takes any LangChain chat model
(``ChatOpenAI(...)``, ``init_chat_model(...)``) in its place.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import math
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
    from langgraph.types import Checkpointer

logger = logging.getLogger("langgraph_agent")
#: The pack's byte budget: what the model's prompt can spare.
MAX_BYTES: Final = 4000
#: The agent's fixed instructions; the pack follows them in the same system message.
SYSTEM_PROMPT: Final = (
    "You are a helpful assistant. Use the memory below, recalled for the user's "
    "message, when it helps."
)


class State(TypedDict):
    """The graph's state: the conversation, and the pack of its latest user message."""

    messages: Annotated[list[AnyMessage], add_messages]
    context: NotRequired[str | None]


@dataclass(frozen=True)
class Memory:
    """An invocation's context: where the turn's memory comes from and goes."""

    runtime: satchel.Runtime
    #: The scope the user's memory lives in (``user:ana``).
    scope: str
    #: The conversation: the thread its turns are stored in, and the session whose
    #: repeats a runtime opened with ``dedup_turns`` holds back.
    conversation: str
    max_bytes: int = MAX_BYTES


def build_graph(
    model: BaseChatModel, *, checkpointer: Checkpointer = None
) -> CompiledStateGraph[State, Memory, State, State]:
    """The turn's graph, ``recall -> respond -> remember``, around ``model``; with a
    ``checkpointer`` it keeps each conversation's messages between turns."""

    async def recall(state: State, runtime: Runtime[Memory]) -> dict[str, Any]:
        message = latest(state["messages"], HumanMessage)
        return {"context": await context_for(runtime.context, message) if message else None}

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
        await remember_turn(runtime.context, message, answer)
        return {}

    builder = StateGraph(State, context_schema=Memory)
    builder.add_node("recall", recall)
    builder.add_node("respond", respond)
    builder.add_node("remember", remember)
    builder.add_edge(START, "recall")
    builder.add_edge("recall", "respond")
    builder.add_edge("respond", "remember")
    builder.add_edge("remember", END)
    return builder.compile(checkpointer, name="satchel-agent")


def turn_input(message: str) -> State:
    """A turn's input: the user's message, added to the conversation's messages."""
    return {"messages": [HumanMessage(message)]}


def conversation_config(memory: Memory) -> RunnableConfig:
    """The config that keeps a conversation's messages in a checkpointer: its LangGraph
    thread is its satchel thread."""
    return {"configurable": {"thread_id": memory.conversation}}


async def context_for(memory: Memory, message: str) -> str | None:
    """The pack for ``message``, or None when there is none: nothing fits, or the
    prepare overran its deadline or failed (an agent answers on time, with or without
    memory)."""
    request = satchel.PrepareContextRequest(
        scope_id=memory.scope,
        query=message,
        max_bytes=memory.max_bytes,
        session_id=memory.conversation,
    )
    try:
        deadline = memory.runtime.deadline_for(request)  # math.inf unless timeouts are set
        async with asyncio.timeout(None if math.isinf(deadline) else deadline):
            return (await memory.runtime.prepare_context(request)).content
    except TimeoutError:  # our deadline, or satchel's prepare_timeout (PrepareTimeoutError)
        logger.warning("no context: the prepare overran its deadline")
    except satchel.SatchelError:  # the store is down, a search failed: answer without memory
        logger.exception("no context: the prepare failed")
    return None


async def remember_turn(memory: Memory, message: str, answer: str) -> list[satchel.MemoryRef]:
    """Store the user's message and the model's answer as two ``dialog`` memories in the
    conversation's thread, dated now (the README's "one agent turn"); a blank side is
    not stored. A write that fails is logged and stores nothing: the answer stands."""
    now = datetime.now(UTC)
    thread = memory.conversation
    said = [("User", message), ("Assistant", answer)]
    try:
        return await memory.runtime.add_memories(
            memory.scope,
            [
                satchel.MemoryEntry(
                    text=f"{who}: {text}", kind="dialog", created_at=now, thread=thread
                )
                for who, text in said
                if text.strip()
            ],
        )
    except satchel.SatchelError:
        logger.exception("the turn was not stored")
        return []


def latest(messages: Sequence[BaseMessage], kind: type[BaseMessage]) -> str:
    """The text of the last message of ``kind`` ("" when there is none)."""
    found = next((message for message in reversed(messages) if isinstance(message, kind)), None)
    return "" if found is None else str(found.text)


class OfflineChatModel(BaseChatModel):
    """An offline stand-in for a chat model: it quotes the first item of the satchel pack
    in its system message, or says that memory holds nothing on the question."""

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
        pack = str(system.text) if system is not None else ""
        items = satchel.parse_context(pack) if "BEGIN_SATCHEL_CONTEXT_V2" in pack else ()
        text = f"From memory: {items[0].text}" if items else "I have nothing on that in memory yet."
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
    # The conversations' messages live in the checkpointer, their memory in satchel.
    graph = build_graph(OfflineChatModel(), checkpointer=InMemorySaver())
    async with satchel.open_runtime(database) as runtime:
        await runtime.add_memories(
            "user:ana",
            [satchel.MemoryEntry(text="Deploys happen on Thursdays after the 10:00 stand-up",
                                 key="deploy-day")],
        )  # fmt: skip
        first = Memory(runtime, scope="user:ana", conversation="chat-1")
        for message in ("When is the next deploy?", "Our staging server is called kestrel."):
            state = await graph.ainvoke(
                turn_input(message), conversation_config(first), context=first
            )
            show(first, message, state)
        # A new conversation: what was said in the first one comes back from memory.
        second = Memory(runtime, scope="user:ana", conversation="chat-2")
        message = "What is the staging server called?"
        state = await graph.ainvoke(
            turn_input(message), conversation_config(second), context=second
        )
        show(second, message, state)


def show(memory: Memory, message: str, state: dict[str, Any]) -> None:
    pack = state.get("context")
    items = satchel.parse_context(pack)
    print(f"[{memory.conversation}] user: {message}")
    print(f"  pack: {len(items)} items, {len((pack or '').encode())} bytes")
    print(f"  agent: {latest(state['messages'], AIMessage)}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="A LangGraph agent with satchel memory.")
    parser.add_argument("--db", default=":memory:")
    args = parser.parse_args()
    asyncio.run(main(args.db))
