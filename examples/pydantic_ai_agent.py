"""satchel inside a Pydantic AI agent: each run's system prompt carries the pack satchel
prepares for the user's message, and each finished run is written back as memory.

The agent's dependencies (``deps``) are a :class:`Memory`: the open runtime, the scope
the user's memory lives in and the conversation (satchel's ``thread`` and
``session_id``). A dynamic system prompt, :func:`satchel_context`, prepares the context
for the run's prompt under the prepare's deadline; it is evaluated again on every run,
also when the run continues an earlier one's message history, so the model always gets
the pack of the message it answers, and only that one. Without a pack (satchel found
nothing, overran its deadline or failed) the part is empty and the run goes on.

:func:`ask` runs the agent and then stores the turn, the user's message and the model's
answer, as two ``dialog`` memories in the conversation's thread: the next runs, in this
conversation or another in the scope, find them.

Pydantic AI runs an agent on asyncio only (``Agent.run`` starts an asyncio task).

Run: ``python examples/pydantic_ai_agent.py [--db agent.db] [--model MODEL]`` (needs
``satchel[frameworks]``). Without ``--model`` an offline model (Pydantic AI's
``FunctionModel`` calling :func:`answer_from_memory`) answers by quoting the pack's
first item. ``--model`` takes any model name Pydantic AI knows, such as
``openai:gpt-4o-mini`` (with that provider's package and API key) or ``test`` (Pydantic
AI's offline ``TestModel``).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import math
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Final, NamedTuple

from pydantic_ai import Agent, AgentRunResult, RunContext
from pydantic_ai.messages import ModelRequest, ModelResponse, SystemPromptPart, TextPart
from pydantic_ai.models.function import FunctionModel

import satchel

if TYPE_CHECKING:
    from collections.abc import Sequence

    from pydantic_ai.messages import ModelMessage, UserContent
    from pydantic_ai.models import Model
    from pydantic_ai.models.function import AgentInfo

logger = logging.getLogger("pydantic_ai_agent")
#: The pack's byte budget: what the agent's prompt can spare.
MAX_BYTES: Final = 4000
#: The agent's fixed instructions; the pack follows them as a system prompt of its own.
SYSTEM_PROMPT: Final = (
    "You are a helpful assistant. Use the memory below, recalled for the user's "
    "message, when it helps."
)
#: The line a satchel pack opens its items with (docs/pack-format.md).
BEGIN_MARKER: Final = "BEGIN_SATCHEL_CONTEXT_V2"


@dataclass
class Memory:
    """The agent's dependencies: where a run's context comes from and its turn goes."""

    runtime: satchel.Runtime
    #: The scope the user's memory lives in (``user:ana``).
    scope: str
    #: The conversation: the thread its turns are stored in, and the session whose
    #: repeats a runtime opened with ``dedup_turns`` holds back.
    conversation: str
    max_bytes: int = MAX_BYTES
    #: The pack the latest run's model was given (None: none).
    context: str | None = field(default=None, init=False)


agent: Final = Agent(deps_type=Memory, system_prompt=SYSTEM_PROMPT, name="satchel-agent")


@agent.system_prompt(dynamic=True)
async def satchel_context(ctx: RunContext[Memory]) -> str | None:
    """The pack for the run's prompt, or None (an empty part) when there is none."""
    message = prompt_text(ctx.prompt)
    memory = ctx.deps
    memory.context = await context_for(memory, message) if message.strip() else None
    return memory.context


class Turn(NamedTuple):
    """One finished run, and the references of the memories its turn was stored as
    (none when the write failed)."""

    result: AgentRunResult[str]
    stored: list[satchel.MemoryRef]


async def ask(
    memory: Memory,
    message: str,
    *,
    model: Model | str | None = None,
    history: Sequence[ModelMessage] | None = None,
) -> Turn:
    """Run the agent on ``message`` (continuing ``history``, a previous run's
    ``result.all_messages()``), then store the turn in the conversation's thread.

    ``model`` overrides the agent's (it has none of its own: pass one, or the run fails).
    """
    result = await agent.run(message, deps=memory, model=model, message_history=history)
    stored = await remember_turn(memory, message, result.output)
    return Turn(result, stored)


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


def prompt_text(prompt: str | Sequence[UserContent] | None) -> str:
    """The text of a run's prompt (a multimodal prompt's text parts, joined)."""
    if prompt is None or isinstance(prompt, str):
        return prompt or ""
    return "\n".join(part for part in prompt if isinstance(part, str))


def answer_from_memory(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """An offline stand-in for a language model: it quotes the first item of the pack in
    its system prompt, or says that memory holds nothing on the question."""
    items = satchel.parse_context(pack_in(messages))
    if not items:
        return ModelResponse(parts=[TextPart("I have nothing on that in memory yet.")])
    return ModelResponse(parts=[TextPart(f"From memory: {items[0].text}")])


def pack_in(messages: Sequence[ModelMessage]) -> str | None:
    """The satchel pack in the system prompt of a model's input, if there is one."""
    for message in messages:
        if isinstance(message, ModelRequest):
            for part in message.parts:
                if isinstance(part, SystemPromptPart) and BEGIN_MARKER in part.content:
                    return part.content
    return None


#: The model the script uses without ``--model``.
OFFLINE_MODEL: Final = FunctionModel(answer_from_memory, model_name="satchel-offline")


async def main(database: str, model: Model | str) -> None:
    async with satchel.open_runtime(database) as runtime:
        await runtime.add_memories(
            "user:ana",
            [satchel.MemoryEntry(text="Deploys happen on Thursdays after the 10:00 stand-up",
                                 key="deploy-day")],
        )  # fmt: skip
        first = Memory(runtime, scope="user:ana", conversation="chat-1")
        history: list[ModelMessage] = []
        for message in ("When is the next deploy?", "Our staging server is called kestrel."):
            turn = await ask(first, message, model=model, history=history)
            history = turn.result.all_messages()
            show(first, message, turn)
        # A new conversation: what was said in the first one comes back from memory.
        second = Memory(runtime, scope="user:ana", conversation="chat-2")
        message = "What is the staging server called?"
        show(second, message, await ask(second, message, model=model))


def show(memory: Memory, message: str, turn: Turn) -> None:
    items = satchel.parse_context(memory.context)
    print(f"[{memory.conversation}] user: {message}")
    print(f"  pack: {len(items)} items, {len((memory.context or '').encode())} bytes")
    print(f"  agent: {turn.result.output}")
    print(f"  stored: {len(turn.stored)} memories")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="A Pydantic AI agent with satchel memory.")
    parser.add_argument("--db", default=":memory:")
    parser.add_argument("--model", help="a Pydantic AI model name (default: an offline model)")
    args = parser.parse_args()
    asyncio.run(main(args.db, args.model or OFFLINE_MODEL))
