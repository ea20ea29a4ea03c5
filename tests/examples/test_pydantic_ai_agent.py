"""``examples/pydantic_ai_agent.py``: the agent's dynamic system prompt carries satchel's
pack for the user's message into the model's input, and each run's turn is stored, where
later runs find it. Offline: the models are Pydantic AI's ``FunctionModel`` and
``TestModel``. Pydantic AI runs an agent on asyncio only: trio is skipped, saying why."""

from __future__ import annotations

import copy
import subprocess
import sys
from typing import TYPE_CHECKING, Final

import pytest
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    UserPromptPart,
)
from pydantic_ai.models.function import FunctionModel

import pydantic_ai_agent
import satchel

from . import EXAMPLES

if TYPE_CHECKING:
    from pydantic_ai.models.function import AgentInfo

pytestmark = pytest.mark.anyio

FACT: Final = "Deploys happen on Thursdays after the stand-up"
QUESTION: Final = "When do we deploy?"
SCOPE: Final = "user:ana"
#: Why the agent's tests do not run on trio.
ASYNCIO_ONLY: Final = (
    "Pydantic AI runs an agent on asyncio only: Agent.run starts its run as an asyncio "
    "task (asyncio.create_task), which finds no running asyncio loop under trio"
)


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


class Recording:
    """A ``FunctionModel`` that records each request's input messages and answers
    with ``answer``."""

    def __init__(self, answer: str = "Noted.") -> None:
        self.answer = answer
        self.inputs: list[list[ModelMessage]] = []

    def respond(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.inputs.append(copy.deepcopy(messages))  # a later run may rewrite them
        return ModelResponse(parts=[TextPart(self.answer)])

    def model(self) -> FunctionModel:
        return FunctionModel(self.respond, model_name="recording")

    def system_prompts(self, request: int = -1) -> list[str]:
        """The system prompt parts of one request's input, in order."""
        return [
            part.content
            for message in self.inputs[request]
            if isinstance(message, ModelRequest)
            for part in message.parts
            if isinstance(part, SystemPromptPart)
        ]

    def user_prompts(self, request: int = -1) -> list[object]:
        """The user prompts of one request's input, in order."""
        return [
            part.content
            for message in self.inputs[request]
            if isinstance(message, ModelRequest)
            for part in message.parts
            if isinstance(part, UserPromptPart)
        ]


async def pack_for(runtime: satchel.Runtime, message: str) -> str | None:
    """The pack satchel prepares for ``message`` now, as the agent's prompt asks for it."""
    request = satchel.PrepareContextRequest(
        scope_id=SCOPE, query=message, max_bytes=pydantic_ai_agent.MAX_BYTES
    )
    return (await runtime.prepare_context(request)).content


async def test_the_pack_reaches_the_model_in_its_system_prompt() -> None:
    """The model's input holds the agent's instructions, then satchel's pack for the
    user's message (byte for byte what prepare_context renders, citing the fact), then
    the message."""
    model = Recording()
    async with satchel.open_runtime(embedder=satchel.HashingEmbedder()) as runtime:
        (fact,) = await runtime.add_memories(SCOPE, [satchel.MemoryEntry(text=FACT)])
        expected = await pack_for(runtime, QUESTION)
        memory = pydantic_ai_agent.Memory(runtime, scope=SCOPE, conversation="c-1")
        turn = await pydantic_ai_agent.ask(memory, QUESTION, model=model.model())
    assert expected is not None
    assert len(model.inputs) == 1
    assert model.system_prompts() == [pydantic_ai_agent.SYSTEM_PROMPT, expected]
    assert model.user_prompts() == [QUESTION]
    (item,) = satchel.parse_context(expected)
    assert (item.text, item.citation.id) == (FACT, fact.entry_id)
    assert memory.context == expected
    assert turn.result.output == "Noted."


async def test_the_turn_is_stored_and_a_later_run_finds_it() -> None:
    """After a run its turn is two dialog memories in the conversation's thread; a run
    in another conversation of the scope gets the user's words back in its pack."""
    told = Recording("Noted: kestrel is the staging server.")
    asked = Recording()
    async with satchel.open_runtime(embedder=satchel.HashingEmbedder()) as runtime:
        first = pydantic_ai_agent.Memory(runtime, scope=SCOPE, conversation="c-1")
        turn = await pydantic_ai_agent.ask(
            first, "Our staging server is called kestrel.", model=told.model()
        )
        stored = [await runtime.get_memory(ref) for ref in turn.stored]
        second = pydantic_ai_agent.Memory(runtime, scope=SCOPE, conversation="c-2")
        await pydantic_ai_agent.ask(
            second, "What is the staging server called?", model=asked.model()
        )
    assert [(r.text, r.kind, r.thread) for r in stored] == [
        ("User: Our staging server is called kestrel.", "dialog", "c-1"),
        ("Assistant: Noted: kestrel is the staging server.", "dialog", "c-1"),
    ]
    assert first.context is None  # nothing in the scope yet: an empty system prompt part
    assert told.system_prompts() == [pydantic_ai_agent.SYSTEM_PROMPT, ""]
    pack = asked.system_prompts()[1]
    cited = {item.citation.id: item.text for item in satchel.parse_context(pack)}
    assert cited[turn.stored[0].entry_id] == "User: Our staging server is called kestrel."


async def test_a_continued_conversation_gets_the_pack_of_its_new_message() -> None:
    """A run continuing an earlier one's messages evaluates the prompt again: its model
    sees one pack, the new message's (with the first turn in it), and no earlier one."""
    model = Recording("Thursdays, after the stand-up.")
    async with satchel.open_runtime(embedder=satchel.HashingEmbedder()) as runtime:
        await runtime.add_memories(SCOPE, [satchel.MemoryEntry(text=FACT)])
        memory = pydantic_ai_agent.Memory(runtime, scope=SCOPE, conversation="c-1")
        first = await pydantic_ai_agent.ask(memory, QUESTION, model=model.model())
        follow_up = "And who runs the deploy stand-up?"
        expected = await pack_for(runtime, follow_up)
        await pydantic_ai_agent.ask(
            memory, follow_up, model=model.model(), history=first.result.all_messages()
        )
    assert expected is not None
    assert model.system_prompts(0)[1] != expected
    assert model.system_prompts(1) == [pydantic_ai_agent.SYSTEM_PROMPT, expected]
    assert model.user_prompts(1) == [QUESTION, follow_up]
    texts = [item.text for item in satchel.parse_context(expected)]
    assert f"User: {QUESTION}" in texts


async def test_without_memory_the_run_goes_on() -> None:
    """The store is gone (closed under the agent): the prompt's part is empty, the model
    answers all the same, and the turn that cannot be stored is logged, not raised."""
    model = Recording()
    async with satchel.open_runtime(embedder=satchel.HashingEmbedder()) as runtime:
        await runtime.add_memories(SCOPE, [satchel.MemoryEntry(text=FACT)])
        await runtime.store.aclose()
        memory = pydantic_ai_agent.Memory(runtime, scope=SCOPE, conversation="c-1")
        turn = await pydantic_ai_agent.ask(memory, QUESTION, model=model.model())
    assert model.system_prompts() == [pydantic_ai_agent.SYSTEM_PROMPT, ""]
    assert turn.result.output == "Noted."
    assert turn.stored == []


async def test_any_pydantic_ai_model_name_runs_the_agent() -> None:
    """``--model`` takes a model name: ``test`` (Pydantic AI's offline TestModel) answers,
    and its turn is stored like any other."""
    async with satchel.open_runtime(embedder=satchel.HashingEmbedder()) as runtime:
        memory = pydantic_ai_agent.Memory(runtime, scope=SCOPE, conversation="c-1")
        turn = await pydantic_ai_agent.ask(memory, QUESTION, model="test")
        records = [await runtime.get_memory(ref) for ref in turn.stored]
    assert [r.text for r in records] == [f"User: {QUESTION}", f"Assistant: {turn.result.output}"]


def test_the_script_runs_offline() -> None:
    """``python examples/pydantic_ai_agent.py``: with its offline model, the first
    conversation's deploy question is answered from the seeded fact, and the second
    conversation is answered from what the user said in the first."""
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / "pydantic_ai_agent.py")],
        capture_output=True, text=True, check=True, timeout=120,
    )  # fmt: skip
    first, told, second = done.stdout.split("[chat-")[1:]
    assert "agent: From memory: Deploys happen on Thursdays after the 10:00 stand-up" in first
    assert "stored: 2 memories" in told
    assert second.startswith("2] user: What is the staging server called?")
    assert "agent: From memory: User: Our staging server is called kestrel." in second
    assert "Traceback" not in done.stderr
