"""The prompt-cache benchmark (bench/prompt_cache.py), run end to end on a tiny workload:
its prefix measurement, its arms and the fields of its JSON."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest

from bench import prompt_cache

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

#: The head arm's budget and the appending arm's per-turn budget in these tests.
BUDGET = 2000
APPEND = f"append-{BUDGET}"
ARM_FIELDS = {
    "per_turn_budget",
    "conversations",
    "turns",
    "prefix_share",
    "prompt_bytes",
    "uncached_bytes",
    "last_prompt_bytes",
    "pack_bytes",
    "recall",
}


@pytest.fixture(scope="module")
def result(generated: Callable[[str], Path], tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The JSON ``python -m bench prompt-cache`` writes for the tiny hard conversations
    (3 conversations, 10 sessions)."""
    out = tmp_path_factory.mktemp("prompt-cache") / "prompt_cache.json"
    workload = generated("hard-conversations")
    budget = str(BUDGET)
    prompt_cache.main(
        [
            "--workload",
            str(workload),
            "--budget",
            budget,
            "--append-budgets",
            budget,
            "--out",
            str(out),
        ]
    )
    return json.loads(out.read_text())


@pytest.mark.parametrize(
    ("left", "right", "length"),
    [
        (b"", b"", 0),
        (b"abc", b"", 0),
        (b"abc", b"abc", 3),
        (b"abc", b"abcdef", 3),
        (b"abXdef", b"abcdef", 2),
        (b"Xbc", b"abc", 0),
        ("caf\u00e9 au lait".encode(), "caf\u00e9 noir".encode(), 6),
    ],
)
def test_common_prefix(left: bytes, right: bytes, length: int) -> None:
    """The longest common prefix, in bytes, either way round."""
    assert prompt_cache.common_prefix(left, right) == length
    assert prompt_cache.common_prefix(right, left) == length


def test_the_json_has_every_arm_and_field(result: Any) -> None:
    """Every arm with every figure and each category's recall; the comparisons with the
    head arm, the workload's counts and the configuration."""
    arms = result["arms"]
    assert list(arms) == ["head", "tail", APPEND, "append-matched"]
    for figures in arms.values():
        assert set(figures) >= ARM_FIELDS
        assert figures["conversations"] == 3
        assert figures["turns"] == result["workload"]["questions"]
        assert next(iter(figures["recall"])) == "all"
        assert 0.0 <= figures["recall"]["all"] <= 1.0
    assert set(result["against_head"]) == set(arms) - {"head"}
    for compared in result["against_head"].values():
        assert set(compared) == {
            "recall_loss",
            "prompt_bytes_ratio",
            "uncached_bytes_ratio",
            "last_prompt_bytes_ratio",
        }
    assert result["workload"]["turns"] > result["workload"]["questions"] > 3
    assert result["config"]["budget"] == BUDGET


def test_appending_keeps_each_prompt_a_prefix_of_the_next(result: Any) -> None:
    """Appending leaves the whole previous prompt in place: the bytes after the prefix add
    up to each conversation's last prompt, and the prefix share is far above the head
    arm's, whose changing pack at the start leaves only the system line and the pack's
    preamble in place."""
    head, append = result["arms"]["head"], result["arms"][APPEND]
    assert append["uncached_bytes"] == pytest.approx(
        append["last_prompt_bytes"] * append["conversations"]
    )
    assert append["prefix_share"] > head["prefix_share"] + 0.3
    assert head["prefix_share"] < 0.25
    assert head["uncached_bytes"] > 0.75 * head["prompt_bytes"]


def test_appending_counts_what_earlier_turns_delivered(result: Any) -> None:
    """At the same per-turn budget the appending arm delivers no item twice and keeps
    what it delivered in the history, so it shows the model at least what the head arm
    does (head's pack holds items delivered before, or ones the new pack has room for);
    the tail arm places the head arm's packs elsewhere, with the same recall and bytes."""
    head, tail, append = (result["arms"][arm] for arm in ("head", "tail", APPEND))
    assert append["recall"]["all"] >= head["recall"]["all"]
    assert append["prompt_bytes"] > head["prompt_bytes"]
    assert tail["recall"] == head["recall"]
    assert tail["prompt_bytes"] == head["prompt_bytes"]
    assert head["prefix_share"] < tail["prefix_share"] < append["prefix_share"]


def test_the_matched_arm_stays_within_the_head_arms_bytes(result: Any) -> None:
    """The matched per-turn budget sends no more prompt bytes than the head arm, or is the
    request floor, marked as over."""
    head, matched = result["arms"]["head"], result["arms"]["append-matched"]
    if matched["within"]:
        assert matched["prompt_bytes"] <= head["prompt_bytes"]
        assert prompt_cache.FLOOR <= matched["per_turn_budget"] <= BUDGET
    else:
        assert matched["prompt_bytes"] > head["prompt_bytes"]
        assert matched["per_turn_budget"] == prompt_cache.FLOOR
