"""``bench/locomo.py`` reads the LoCoMo release in each form it circulates (the zip, its
folder, the wrapped JSON) into one workload, and evaluates it end to end."""

from __future__ import annotations

import functools
import json
import zipfile
from typing import TYPE_CHECKING, Any

import anyio
import pytest

from bench import locomo, orchestrator
from satchel._workload import read_queries
from satchel.vocabulary._speakers import LONGEST_FILLER_TEXT, opens_with_speaker, says_nothing

if TYPE_CHECKING:
    from pathlib import Path

    import satchel

CONVERSATION: dict[str, Any] = {
    "speaker_a": "Caroline",
    "speaker_b": "Melanie",
    "session_1_date_time": "1:56 pm on 8 May, 2023",
    "session_1": [
        {"speaker": "Caroline", "dia_id": "D1:1", "text": "I went to a support group yesterday."},
        {
            "speaker": "Melanie",
            "dia_id": "D1:2",
            "text": "Look at my pottery!",
            "blip_caption": "a photo of a clay bowl",
        },
    ],
    "session_2_date_time": "7:55 pm on 25 May, 2023",
    "session_2": [{"speaker": "Caroline", "dia_id": "D2:1", "text": "I ran a charity race."}],
}
QA: list[dict[str, Any]] = [
    {"question": "When did Caroline go to the support group?", "answer": "7 May 2023",
     "evidence": ["D1:1"], "category": 2},
    {"question": "What do both women do?", "answer": "x", "evidence": ["D1:2; D2:1"],
     "category": 1},
    {"question": "What did Caroline realise?", "evidence": ["D2:1"], "category": 5},
]  # fmt: skip


def forms(tmp_path: Path) -> dict[str, Path]:
    """The release's three forms, each holding the one conversation above."""
    folder = tmp_path / "locomo10_v2"
    folder.mkdir()
    (folder / "26.json").write_text(json.dumps({**CONVERSATION, "qa": QA}))
    archive = tmp_path / "locomo10.zip"
    with zipfile.ZipFile(archive, "w") as out:
        out.write(folder / "26.json", "data/multimodal_dialog/locomo10_v2/26.json")
    wrapped = tmp_path / "locomo10.json"
    wrapped.write_text(json.dumps([{"sample_id": "26", "conversation": CONVERSATION, "qa": QA}]))
    return {"folder": folder, "zip": archive, "wrapped": wrapped}


@pytest.mark.parametrize("form", ["folder", "zip", "wrapped"])
def test_every_form_becomes_one_workload(tmp_path: Path, form: str) -> None:
    """Turns become dated, threaded entries (a photo's caption kept); questions of
    categories 1-4 keep their evidence (two ids in one item split), 5 is left out."""
    samples = locomo.conversations(forms(tmp_path)[form])
    folder = locomo.workload(samples, tmp_path / "out")
    entries = [json.loads(line) for line in (folder / "entries.jsonl").read_text().splitlines()]
    queries = [json.loads(line) for line in (folder / "queries.jsonl").read_text().splitlines()]
    assert [e["id"] for e in entries] == ["locomo:26/D1:1", "locomo:26/D1:2", "locomo:26/D2:1"]
    assert entries[1]["text"] == "Melanie: Look at my pottery! [photo: a photo of a clay bowl]"
    assert entries[1]["created_at"] == "2023-05-08T13:57:00+00:00"
    assert entries[2]["thread"] == "locomo:26/session-2"
    assert [(q["category"], q["expected"]) for q in queries] == [
        ("temporal", ["locomo:26/D1:1"]),
        ("multi-hop", ["locomo:26/D1:2", "locomo:26/D2:1"]),
    ]


def test_a_path_without_conversations_is_refused(tmp_path: Path) -> None:
    (tmp_path / "other.json").write_text(json.dumps({"hello": 1}))
    with pytest.raises(ValueError, match="holds no LoCoMo conversation"):
        locomo.conversations(tmp_path)


def test_the_evaluation_reports_recall_and_where_misses_went(tmp_path: Path) -> None:
    """End to end on the sample: every setting has a recall per category, a p50 and the
    CPU time per prepare, and the missed evidence is accounted for by cause."""
    result = anyio.run(locomo.run, forms(tmp_path)["zip"], None, 1)
    assert set(result["settings"]) == {setting.name for setting in locomo.settings()}
    for values in result["settings"].values():
        assert list(values["recall"]) == ["all", "beyond one turn", "multi-hop", "temporal"]
        assert values["p50_ms"] > 0
        assert values["cpu_us"] > 0
    misses = result["misses_8000_gate_on"]
    assert misses["evidence"] == 3
    assert sum(v for k, v in misses.items() if k != "evidence") <= 3
    assert "| gate on / 8000 |" in locomo.report(result)


def test_beyond_one_turn_counts_every_question_but_single_hop() -> None:
    """The *beyond one turn* column holds every category's questions but single-hop's."""
    assert locomo.buckets("single-hop") == ("all", "single-hop")
    for category in ("multi-hop", "temporal", "open-domain"):
        assert locomo.buckets(category) == ("all", "beyond one turn", category)


def test_the_budgets_asked_at_may_be_chosen(tmp_path: Path) -> None:
    """``--budgets`` names the budgets of the default limits (the classic limits are
    asked besides); a budget outside 512..32768 is refused by the parser."""
    args = locomo.parser().parse_args([str(tmp_path), "--budgets", "8000", "32768"])
    assert args.budgets == [8000, 32768]
    result = anyio.run(
        locomo.run, forms(tmp_path)["zip"], None, 1, None, "static", None, 1, True, False,
        False, 0, (8000, 32768),
    )  # fmt: skip
    assert set(result["settings"]) == {
        f"gate {gate} / {limits}" for gate in ("off", "on") for limits in (8000, 32768, "classic")
    }
    for bad in ("100", "40000", "lots"):
        with pytest.raises(SystemExit):
            locomo.parser().parse_args([str(tmp_path), "--budgets", bad])


def test_the_embedder_is_the_one_asked_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """--embedder builds the store and embeds the questions with that embedder; a spec
    naming no embedder is a usage error naming the choices."""
    used: list[satchel.Embedder] = []
    ingest = orchestrator.ingest_workload

    async def spying(db: Path, folder: Path, embedder: satchel.Embedder) -> object:
        used.append(embedder)
        return await ingest(db, folder, embedder)

    monkeypatch.setattr(orchestrator, "ingest_workload", spying)
    out = tmp_path / "out.json"
    locomo.main([str(forms(tmp_path)["zip"]), "--embedder", "hashing", "--out", str(out)])
    assert [type(e).__name__ for e in used] == ["HashingEmbedder"]
    assert json.loads(out.read_text())["embedder"] == "hashing"
    with pytest.raises(SystemExit) as exited:
        locomo.main([str(tmp_path), "--embedder", "bert"])
    assert exited.value.code == 2
    assert "static|hashing|st:PATH" in capsys.readouterr().err


def test_the_questions_may_call_people_otherwise(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--names replaces each whole-word name of a question (not a longer word holding
    it); a file that is not a JSON object of names is a usage error."""
    samples = locomo.conversations(forms(tmp_path)["zip"])
    folder = locomo.workload(samples, tmp_path / "out", {"Caroline": "Carol", "Mel": "X"})
    queries = [json.loads(line) for line in (folder / "queries.jsonl").read_text().splitlines()]
    assert queries[0]["query"] == "When did Carol go to the support group?"
    assert (
        locomo._renaming({"Mel": "X"})("Did Melanie see Mel's dog?") == "Did Melanie see X's dog?"
    )
    names = tmp_path / "names.json"
    names.write_text('["Caroline"]')
    with pytest.raises(SystemExit) as exited:
        locomo.main([str(tmp_path), "--names", str(names)])
    assert exited.value.code == 2
    assert "JSON object" in capsys.readouterr().err


def test_conversations_may_share_a_scope(tmp_path: Path) -> None:
    """--together N puts every N conversations in one scope, each in its own threads,
    its turns and questions named as before; it must be at least 1."""
    other = {**CONVERSATION, "speaker_a": "Jon", "speaker_b": "Gina"}
    samples = [
        {"id": "26", "conversation": CONVERSATION, "qa": QA},
        {"id": "30", "conversation": other, "qa": QA},
    ]
    folder = locomo.workload(samples, tmp_path / "out", together=2)
    entries = [json.loads(line) for line in (folder / "entries.jsonl").read_text().splitlines()]
    queries = [json.loads(line) for line in (folder / "queries.jsonl").read_text().splitlines()]
    assert {e["scope"] for e in entries} == {"locomo:26+30"}
    assert [e["id"] for e in entries][2:4] == ["locomo:26/D2:1", "locomo:30/D1:1"]
    assert {e["thread"] for e in entries} >= {"locomo:26/session-1", "locomo:30/session-1"}
    assert [q["scopes"] for q in queries] == [["locomo:26+30"]] * 4
    assert queries[2]["expected"] == ["locomo:30/D1:1"]
    with pytest.raises(SystemExit) as exited:
        locomo.main([str(tmp_path), "--together", "0"])
    assert exited.value.code == 2


def test_the_turns_may_be_kept_without_threads(tmp_path: Path) -> None:
    """--no-threads writes every turn without its session's thread."""
    samples = locomo.conversations(forms(tmp_path)["zip"])
    folder = locomo.workload(samples, tmp_path / "out", threads=False)
    entries = [json.loads(line) for line in (folder / "entries.jsonl").read_text().splitlines()]
    assert len(entries) == 3
    assert not any("thread" in entry for entry in entries)
    assert locomo.parser().parse_args([str(tmp_path), "--no-threads"]).threads is False


@pytest.mark.parametrize("app", ["android", "iphone"])
def test_a_conversation_may_go_through_an_apps_export(tmp_path: Path, app: str) -> None:
    """--exported writes each conversation as the app exports a chat and reads it back
    as ``satchel ingest --chat`` does: the same ids, texts and times as --no-threads
    writes, of kind dialog (the export's file kept beside the workload)."""
    samples = locomo.conversations(forms(tmp_path)["zip"])
    plain = locomo.workload(samples, tmp_path / "plain", threads=False)
    exported = locomo.workload(samples, tmp_path / "exported", exported=app)

    def rows(folder: Path) -> list[tuple[str, str, str, str]]:
        lines = (folder / "entries.jsonl").read_text().splitlines()
        return [(e["id"], e["text"], e["created_at"], e["kind"]) for e in map(json.loads, lines)]

    assert rows(exported) == rows(plain)
    assert len(rows(exported)) == 3
    written = (exported / "locomo-26.txt").read_text(encoding="utf-8")
    head = (
        "08/05/2023, 13:56 - "
        if app == "android"
        else "[5/8/23, 1:56:00\N{NARROW NO-BREAK SPACE}PM] "
    )
    assert written.startswith(head + "Caroline: I went to a support group yesterday.")
    assert locomo.parser().parse_args([str(tmp_path), "--exported", app]).exported == app


def test_the_turns_may_be_typed_as_people_text(tmp_path: Path) -> None:
    """--chat-spellings types every other use of a word of TYPED as people do, past the
    speaker's name, counted over the conversation; the questions stay as released."""
    typed = locomo.texting()
    said = [typed(text) for text in ("So good, so good!", "My birthday", "your birthday")]
    assert said == ["So good, sooo goood!", "My birthday", "your bday"]
    samples = locomo.conversations(forms(tmp_path)["zip"])
    folder = locomo.workload(samples, tmp_path / "out", chat_spellings=True)
    queries = (folder / "queries.jsonl").read_text()
    assert "support group" in queries
    assert locomo.parser().parse_args([str(tmp_path), "--chat-spellings"]).chat_spellings


def test_the_turns_may_be_cut_into_messages(tmp_path: Path) -> None:
    """--messages cuts a turn at its sentences into messages of about MESSAGE_WORDS
    words, five seconds apart, the photo's caption with the last; a delivered message
    delivers its turn."""
    words = " ".join(["word"] * 10)
    entry = {
        "id": "locomo:26/D1:1", "scope": "locomo:26", "kind": "dialog", "thread": "t",
        "created_at": "2023-05-08T13:56:00+00:00",
        "text": f"Ann: {words}. {words}! {words}? Short. [photo: a cat]",
    }  # fmt: skip
    messages = locomo.cut_into_messages(entry)
    assert [m["text"] for m in messages] == [
        f"Ann: {words}. {words}!",
        f"Ann: {words}? Short. [photo: a cat]",
    ]
    assert [m["id"] for m in messages] == ["locomo:26/D1:1#0", "locomo:26/D1:1#1"]
    assert [m["created_at"] for m in messages] == [
        "2023-05-08T13:56:00+00:00",
        "2023-05-08T13:56:05+00:00",
    ]
    assert all(m["thread"] == "t" and m["kind"] == "dialog" for m in messages)
    assert locomo.turn_of("locomo:26/D1:1#1") == locomo.turn_of("locomo:26/D1:1")
    release = forms(tmp_path)["zip"]
    folder = locomo.workload(locomo.conversations(release), tmp_path / "out", messages=True)
    ids = [json.loads(line)["id"] for line in (folder / "entries.jsonl").read_text().splitlines()]
    assert ids == ["locomo:26/D1:1#0", "locomo:26/D1:2#0", "locomo:26/D2:1#0"]
    assert locomo.parser().parse_args([str(tmp_path), "--messages"]).messages
    # End to end: each turn is one message here, and a delivered message counts as its
    # turn, so recall is the uncut chat's (nothing would count without turn_of).
    cut = anyio.run(functools.partial(locomo.run, release, None, 1, messages=True))
    whole = anyio.run(locomo.run, release, None, 1)
    for name, values in whole["settings"].items():
        assert cut["settings"][name]["recall"] == values["recall"]
    assert whole["settings"]["gate off / 8000"]["recall"]["all"] > 0


def test_a_shared_photo_may_leave_the_line_an_export_writes(tmp_path: Path) -> None:
    """--media-omitted adds, after each turn sharing a photo, its speaker's "<Media
    omitted>" five seconds later, under an id that is no turn's evidence."""
    release = forms(tmp_path)["zip"]
    folder = locomo.workload(locomo.conversations(release), tmp_path / "out", media_omitted=True)
    entries = [json.loads(line) for line in (folder / "entries.jsonl").read_text().splitlines()]
    assert [entry["id"] for entry in entries] == [
        "locomo:26/D1:1", "locomo:26/D1:2", "locomo:26/D1:2~media", "locomo:26/D2:1",
    ]  # fmt: skip
    photo, placeholder = entries[1], entries[2]
    assert photo["text"] == "Melanie: Look at my pottery! [photo: a photo of a clay bowl]"
    assert placeholder["text"] == "Melanie: <Media omitted>"
    assert placeholder["created_at"] == "2023-05-08T13:57:05+00:00"
    assert placeholder["thread"] == photo["thread"]
    assert locomo.turn_of(placeholder["id"]) != "locomo:26/D1:2"
    assert locomo.parser().parse_args([str(tmp_path), "--media-omitted"]).media_omitted


def ten_turns_written(tmp_path: Path, **options: Any) -> list[str]:
    """The entry ids of a workload written with ``options`` whose first conversation's
    first session is ten turns taking turns."""
    samples = locomo.conversations(forms(tmp_path)["zip"])
    turns = [
        {
            "speaker": "Caroline" if n % 2 else "Melanie",
            "dia_id": f"D1:{n + 1}",
            "text": f"turn {n}",
        }
        for n in range(10)
    ]
    samples[0]["conversation"] = {**samples[0]["conversation"], "session_1": turns}
    folder = locomo.workload(samples, tmp_path / "out", **options)
    return [json.loads(line)["id"] for line in (folder / "entries.jsonl").read_text().splitlines()]


def test_the_chat_may_hold_fillers(tmp_path: Path) -> None:
    """--fillers adds, after three turns in ten, the other person's filler twenty seconds
    later, under an id that is no turn's evidence."""
    said = [
        {
            "id": "locomo:26/D1:1",
            "text": "Caroline: I went",
            "created_at": "2023-05-08T13:56:00+00:00",
        }
    ]
    speakers = {"speaker_a": "Caroline", "speaker_b": "Melanie"}
    assert locomo.with_filler(said, speakers, 2)[1] == {
        "id": "locomo:26/D1:1~filler", "text": "Melanie: haha",
        "created_at": "2023-05-08T13:56:20+00:00",
    }  # fmt: skip
    assert locomo.with_filler([{**said[0], "text": "Melanie: x"}], speakers, 0)[1]["text"] == (
        "Caroline: ok"
    )
    ids = ten_turns_written(tmp_path, fillers="plain")
    assert [i for i in ids if i.endswith("~filler")] == [
        "locomo:26/D1:3~filler", "locomo:26/D1:6~filler", "locomo:26/D1:9~filler",
    ]  # fmt: skip
    assert locomo.parser().parse_args([str(tmp_path), "--fillers"]).fillers == "plain"


def test_typed_fillers_are_spelled_as_people_type_them(tmp_path: Path) -> None:
    """--fillers typed says the fillers as people type them: no word of them is one of
    the plain fillers'."""
    said = [{"id": "locomo:26/D1:1", "text": "Caroline: I went"}]
    speakers = {"speaker_a": "Caroline", "speaker_b": "Melanie"}
    typed = [
        locomo.with_filler(said, speakers, n, locomo.TYPED_FILLERS)[1]["text"]
        for n in range(len(locomo.TYPED_FILLERS))
    ]
    assert typed[:3] == ["Melanie: hahahaha", "Melanie: okk", "Melanie: lolol"]
    words = {word for filler in locomo.TYPED_FILLERS for word in filler.strip("?!").split()}
    assert words.isdisjoint(word.strip("!").casefold() for word in locomo.FILLERS)
    assert locomo.parser().parse_args([str(tmp_path), "--fillers", "typed"]).fillers == "typed"
    assert locomo.parser().parse_args([str(tmp_path)]).fillers is None


def test_the_chat_may_hold_links(tmp_path: Path) -> None:
    """--links adds, after one turn in ten, a link its speaker shares ten seconds later,
    drawn from the turn's place (the same every run), under an id that is no turn's
    evidence; some are longer than a filler."""
    said = [
        {
            "id": "locomo:26/D1:5",
            "text": "Caroline: I went",
            "created_at": "2023-05-08T13:56:00+00:00",
        }
    ]
    shared = locomo.with_link(said, "locomo:26/4")
    assert shared[0] == said[0]
    assert shared[1]["id"] == "locomo:26/D1:5~link"
    assert shared[1]["created_at"] == "2023-05-08T13:56:10+00:00"
    assert shared[1]["text"].startswith("Caroline: https://")
    assert shared == locomo.with_link(said, "locomo:26/4")
    lengths = {len(locomo.with_link(said, f"locomo:26/{n}")[1]["text"]) for n in range(40)}
    assert min(lengths) < LONGEST_FILLER_TEXT < max(lengths)
    ids = ten_turns_written(tmp_path, links=True)
    assert [i for i in ids if i.endswith("~link")] == ["locomo:26/D1:5~link"]
    assert locomo.parser().parse_args([str(tmp_path), "--links"]).links


def test_the_chat_may_hold_reactions(tmp_path: Path) -> None:
    """--reactions adds, after one turn in ten, the other person's reaction quoting its
    last message fifteen seconds later, under an id that is no turn's evidence."""
    said = [
        {
            "id": "locomo:26/D1:8#0",
            "text": "Caroline: I went",
            "created_at": "2023-05-08T13:56:00+00:00",
        },
        {
            "id": "locomo:26/D1:8#1",
            "text": "Caroline: It was fun!",
            "created_at": "2023-05-08T13:56:01+00:00",
        },
    ]
    speakers = {"speaker_a": "Caroline", "speaker_b": "Melanie"}
    reacted = locomo.with_reaction(said, speakers, 4)
    assert reacted[:2] == said
    assert reacted[2] == {
        "id": "locomo:26/D1:8~reaction",
        "text": "Melanie: Reacted \U0001f602 to \u201cIt was fun!\u201d",
        "created_at": "2023-05-08T13:56:16+00:00",
    }
    assert says_nothing(reacted[2]["text"])
    ids = ten_turns_written(tmp_path, reactions=True)
    assert [i for i in ids if i.endswith("~reaction")] == ["locomo:26/D1:8~reaction"]
    assert locomo.parser().parse_args([str(tmp_path), "--reactions"]).reactions


def test_the_cost_of_reference_scopes_is_measured_against_one(tmp_path: Path) -> None:
    """``--references N`` asks the first conversation's questions alone and with N
    other conversations as references, in alternated chunks, and reports each arm's
    CPU per prepare and their ratio; it refuses more references than conversations."""
    other = json.loads(json.dumps(CONVERSATION).replace("Caroline", "Joanna"))
    folder = tmp_path / "locomo10_v2"
    folder.mkdir()
    (folder / "26.json").write_text(json.dumps({**CONVERSATION, "qa": QA}))
    (folder / "30.json").write_text(json.dumps({**other, "qa": QA}))
    result = anyio.run(functools.partial(locomo.run, folder, None, 2, references=1))
    assert result["scopes"] == ["locomo:26", "locomo:30"]
    assert result["questions"] == 2
    assert result["chunks"] == 2
    for arm in ("1", "2"):
        assert result["cpu_us_p25"][arm] > 0
        assert result["cpu_us_median"][arm] > 0
    assert result["ratio_p25"] == pytest.approx(
        result["cpu_us_p25"]["2"] / result["cpu_us_p25"]["1"]
    )
    assert "| chunks' median |" in locomo.ratio_report(result)
    with pytest.raises(ValueError, match="--references 2 needs 3 conversations, not 2"):
        anyio.run(functools.partial(locomo.run, folder, None, 1, references=2))


def test_a_turn_cut_into_messages_counts_by_its_messages_delivered_too(tmp_path: Path) -> None:
    """With --messages the report's *every message* column counts an evidence turn by
    the share of its messages a pack delivered: a pack holding one of a turn's two
    messages delivers the turn, and half of it."""
    words = " ".join(["support"] * 10)
    said = f"{words}. {words}! Then I went home."  # two messages
    conversation = {**CONVERSATION, "session_1": [
        {"speaker": "Caroline", "dia_id": "D1:1", "text": said}, *CONVERSATION["session_1"][1:]
    ]}  # fmt: skip
    (tmp_path / "26.json").write_text(json.dumps({**conversation, "qa": QA}))
    folder = locomo.workload(locomo.conversations(tmp_path), tmp_path / "out", messages=True)
    cut = locomo.messages_of(folder)
    assert cut["locomo:26/D1:1"] == ["locomo:26/D1:1#0", "locomo:26/D1:1#1"]
    assert cut["locomo:26/D2:1"] == ["locomo:26/D2:1#0"]
    assert locomo.messages_of(locomo.workload(locomo.conversations(tmp_path), tmp_path / "w")) == {}
    (question, *_) = [q for q in read_queries(folder / "queries.jsonl")[0]
                      if q.expected]  # fmt: skip
    owners = {("memory", "s", "m0", 1): "locomo:26/D1:1#0", ("memory", "s", "m1", 1): "x"}
    pack = (
        'Everything...\nBEGIN_SATCHEL_CONTEXT_V2\n{"family":"memory","scope":"s"}\n'
        '[null,"Caroline: support","m0"]\nEND_SATCHEL_CONTEXT_V2\n'
    )
    assert locomo._recall(question, owners, pack) == 1.0
    assert locomo._messages_recall(question, owners, pack, cut) == 0.5
    result = anyio.run(functools.partial(locomo.run, tmp_path, None, 1, messages=True))
    for values in result["settings"].values():
        assert 0 < values["messages_recall"] <= values["recall"]["all"]
    assert "every message" in locomo.report(result)


def test_speakers_may_be_labelled_as_a_chat_export_labels_them(tmp_path: Path) -> None:
    """--labels relabels every turn's speaker (fillers' too) the same way each time; a
    phone-number label still opens a turn; --lower-questions types the questions in
    lower case."""
    assert locomo.labelled("Caroline", "unsaid") == "Pnebyvar"
    assert locomo.labelled("Caroline", "lower") == "caroline"
    assert locomo.labelled("Caroline", "full").startswith("Caroline ")
    assert locomo.labelled("Caroline", "emoji") == locomo.labelled("Caroline", "emoji")
    phone = locomo.labelled("Caroline", "phone")
    assert phone != locomo.labelled("Melanie", "phone")
    assert opens_with_speaker(f"{phone}: hi")
    handle = locomo.labelled("Caroline", "handle")
    assert handle.startswith("caroline_")
    assert opens_with_speaker(f"{handle}: hi")
    user = locomo.labelled("Caroline", "user")
    assert user.startswith("User ")
    assert opens_with_speaker(f"{user}: hi")
    with pytest.raises(ValueError, match="labels must be one of"):
        locomo.labelled("Caroline", "nickname")
    exporter = {"speaker_a": "Caroline", "speaker_b": "Melanie"}
    assert locomo.relabelled(exporter, "me") == {"Caroline": "Me", "Melanie": "Melanie"}
    assert locomo.relabelled(exporter, "user")["Caroline"] == user
    release = forms(tmp_path)["folder"]
    folder = locomo.workload(
        locomo.conversations(release), tmp_path / "out", labels="phone", fillers="plain",
        lower_questions=True,
    )  # fmt: skip
    entries = [json.loads(line) for line in (folder / "entries.jsonl").read_text().splitlines()]
    labels = {entry["text"].split(": ", 1)[0] for entry in entries}
    assert labels == {phone, locomo.labelled("Melanie", "phone")}
    assert any(entry["id"].endswith("~filler") for entry in entries)
    questions = [
        json.loads(line)["query"] for line in (folder / "queries.jsonl").read_text().splitlines()
    ]
    assert questions
    assert all(question == question.lower() for question in questions)
    args = locomo.parser().parse_args([str(release), "--labels", "phone", "--lower-questions"])
    assert (args.labels, args.lower_questions) == ("phone", True)


@pytest.mark.parametrize(
    ("said", "other", "left"),
    [
        ("Hey Mel! Thanks, Melanie. Mel, guess what", "Melanie", "Hey! Thanks. guess what"),
        ("That's great, Caroline!", "Caroline", "That's great!"),
        ("Jon, how is the studio?", "Jon", "how is the studio?"),
        ("Melons and melodies", "Melanie", "Melons and melodies"),  # whole words only
    ],
)
def test_a_turn_may_leave_out_the_name_it_calls(said: str, other: str, left: str) -> None:
    """--no-vocatives takes the other person's name and its short forms, with the comma
    that set it off, out of a turn; a word that merely starts alike stays."""
    assert locomo.uncalled(said, other) == left


def test_the_chat_may_call_nobody_by_name(tmp_path: Path) -> None:
    """Each speaker's turns lose the other's name, never their own label."""
    samples = locomo.conversations(forms(tmp_path)["zip"])
    turns = [
        {"speaker": "Caroline", "dia_id": "D1:1", "text": "Hey Mel! I went to the group."},
        {"speaker": "Melanie", "dia_id": "D1:2", "text": "Caroline, that's great!"},
    ]
    samples[0]["conversation"] = {**samples[0]["conversation"], "session_1": turns}
    folder = locomo.workload(samples[:1], tmp_path / "out", vocatives=False)
    texts = [
        json.loads(line)["text"] for line in (folder / "entries.jsonl").read_text().splitlines()
    ]
    assert texts[:2] == ["Caroline: Hey! I went to the group.", "Melanie: that's great!"]
    assert not locomo.parser().parse_args([str(tmp_path), "--no-vocatives"]).vocatives
    assert locomo.parser().parse_args([str(tmp_path)]).vocatives


def test_the_turns_may_be_typed_with_real_misspellings(tmp_path: Path) -> None:
    """--misspellings FILE reads 'wrong->right' lines (one correction, lowercase words
    only) and types every tenth use of a listed word as the next of its misspellings,
    counted over the conversation, a capital kept; the questions stay as released."""
    listed = tmp_path / "dictionary.txt"
    listed.write_text(
        "adpot->adopt\nadobt->adopt\nsupprot->support\nteh->the, ten,\nAbc->abc\n",
        encoding="utf-8",
    )
    table = locomo.read_misspellings(listed)
    assert table == {"adopt": ["adpot", "adobt"], "support": ["supprot"]}
    typed = locomo.misspelling(table)
    said = [typed("Adopt a dog, adopt it") for _ in range(10)]
    assert said[:4] == ["Adopt a dog, adopt it"] * 4
    assert said[4] == "Adopt a dog, adpot it"  # the tenth use
    assert said[9] == "Adopt a dog, adobt it"  # the twentieth, the next misspelling
    samples = locomo.conversations(forms(tmp_path)["zip"])
    table = {"support": ["supprot"]}  # said once here: under every tenth use, kept
    folder = locomo.workload(samples, tmp_path / "out", misspellings=table)
    assert "supprot" not in (folder / "entries.jsonl").read_text()
    assert "support group" in (folder / "queries.jsonl").read_text()
    parsed = locomo.parser().parse_args([str(tmp_path), "--misspellings", str(listed)])
    assert parsed.misspellings == locomo.read_misspellings(listed)
    with pytest.raises(SystemExit):
        locomo.parser().parse_args([str(tmp_path), "--misspellings", str(tmp_path / "no")])
