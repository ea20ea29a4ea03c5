"""``python -m bench locomo PATH``: evidence recall on LoCoMo, real long conversations.

LoCoMo (the snap-research/locomo repository on GitHub) is ten long conversations between
two people, each over up to 35 sessions weeks apart, with questions whose ``evidence``
names the turns (``dia_id``) that answer them. Nothing of it ships with satchel: pass
``PATH``, which may be

- the release's ``data/locomo10.zip``,
- a folder of ``<conversation>.json`` files (``data/multimodal_dialog/locomo10_v2``
  once unzipped), or
- the wrapped ``locomo10.json`` (a list of ``{"sample_id", "conversation", "qa"}``).

Each conversation becomes a scope; each turn a memory entry ``"Speaker: text"`` (a
shared photo's caption appended as ``[photo: ...]``) said at its session's time plus a
minute per turn, in a thread per session. Questions of categories 1-4 are asked (5,
adversarial, has no evidence to recall) through the public API with the bundled static
embedder (or ``--embedder``'s), each at 2,000 / 4,000 / 8,000 bytes (``--budgets``
says others: a budget over 8,000 bytes scales the default limits' counts with it) with
the default limits and at 8,000 bytes with ``Limits.classic()``, gate off and on, in a
rotating order on one store.

Reported per setting: evidence recall overall, per category and over every category but
single-hop (*beyond one turn*: more than half of LoCoMo's questions are single-hop, while
the real chats of issue 41 were reported without any), prepare p50 (ms) and the
process's CPU time per prepare (us; user + system, steadier than wall time).
Then, at 8,000 bytes with the gate on, where the missed evidence went, from
``explain_context``: *budget* (retrieved and committed, but left out for room), *floor*
(retrieved below the admission floor), or *unranked* (not among the best candidates left
out: never retrieved, or ranked too far down). Writes JSON (``--out``, default
``bench/results/locomo.json``) and prints Markdown tables.

``--together N`` keeps every N conversations in one scope (each still in its own
threads), as a group chat of 2N people, or one person's chats with several, is kept:
names held by a fraction of the turns and twice the turns to search.

``--no-threads`` writes the turns without their sessions' threads, as a messaging app
keeps a chat: one conversation per scope, in time order.

``--exported android|iphone`` writes each conversation as that app's WhatsApp exports a
chat ("08/05/2023, 13:56 - Caroline: ...", "[5/8/23, 1:56:00 PM] Caroline: ...") and
reads it back as ``satchel ingest --chat`` does, stopping if a message comes back
otherwise: what a user importing their export gets (no threads, Android's times to the
minute).

``--chat-spellings`` types the turns as people text each other: every other use of a
word people often shorten or stretch is typed so ("bday", "pics", "fam", "sooo", "u";
``TYPED``), the questions written as released.

``--misspellings FILE`` types every tenth use of each word FILE says people misspell
as they do (``wrong->right`` lines, codespell's ``dictionary.txt`` format: a list of
misspellings found in real text, which this repository does not carry), the next of
its misspellings each time; the questions written as released.

``--messages`` cuts each turn into messages of about 14 words (its sentences grouped,
five seconds apart, a shared photo's caption with the last), as people write in a
messaging app; a turn counts as delivered when one of its messages is, and the column
*every message* counts each evidence turn by the share of its messages delivered (as a
chat whose every message of the turn were evidence would count it).

``--media-omitted`` adds the line a messaging app's export writes for a shared photo:
after each turn that shares one, its speaker's ``"<Media omitted>"``, five seconds
later (the caption stays with the turn, so the chat only gains the placeholders).

``--labels STYLE`` labels each speaker as a chat export may (``LABELS``): with a
surname ("Caroline Smith"), an emoji, in lower case, by a name the questions never say
(the name rotated thirteen letters), as an export labels everyone not saved as a
contact, by a phone number ("+44 7700 912345"), by a user name ("caroline_42"), as
an anonymised dataset does, by a placeholder and a number ("User 4821"), or, the first
speaker only, as an export may label its exporter's own messages, "Me" (``me``).
``--lower-questions`` types the questions in lower case.

``--no-vocatives`` takes out of each turn the other person's name and its short forms
(its first two and three letters: "Hey Mel! Thanks, Melanie." becomes "Hey! Thanks."):
LoCoMo's people call each other by name in a third of their turns, people texting
rarely do.

``--fillers`` adds, after three turns in ten, the other person's filler ("ok", "lol",
"haha": ``FILLERS``), twenty seconds later: people's chats hold many messages that say
nothing. ``--fillers typed`` types them as people do (``TYPED_FILLERS``: laughter of any
length, a last letter doubled, "gotcha", "brb").

``--links`` adds, after one turn in ten, a link its speaker shares ten seconds later
(``with_link``: a video, a post, a song, an article, a place; half of them as long as
an app's share button makes them): people's chats hold links that say nothing by
themselves.

``--reactions`` adds, after one turn in ten, the other person's reaction as a phone
writes it when the other phone lacks its app ("Loved “...”", quoting the turn's last
message: ``with_reaction``) fifteen seconds later.

``--names FILE`` asks every question with the people it names called otherwise: FILE
is a JSON object from a name to the one the question says instead (``{"Melanie": "Mel",
"Nate": "Nathan"}``), each whole word replaced. A chat labels people as its app knows
them; a question says the name its asker uses.

``--references N`` measures instead what searching more scopes costs: the questions of
the first conversation (its first 120) asked of its scope alone and with N other
conversations as references (gate on, 8,000 bytes, the default limits), in chunks of
``RATIO_CHUNK`` questions, the two arms alternated in one process after a warm-up pass
of each (``--repeat`` rounds of chunks over the questions, 12 by default here). Reported:
each arm's CPU time per prepare at the chunks' first quartile and median, and their
ratio. A single run's CPU per prepare moves by a third on a shared machine; the chunks
of both arms share its moments, and their quartiles say what the code costs.

Run: ``python -m bench locomo PATH [--repeat 1] [--conversations N]`` (a few minutes).
"""

from __future__ import annotations

import argparse
import codecs
import hashlib
import json
import random
import re
import statistics
import string
import tempfile
import time
import zipfile
import zlib
from collections import Counter, defaultdict
from contextlib import AsyncExitStack
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, cast

import anyio
import attrs
import threadpoolctl

import satchel
from bench import orchestrator
from bench._citations import citation_key, delivered_citations
from bench.recall import rotations
from satchel._workload import WorkloadEntry, read_chat_export, read_queries
from satchel.embedders import SPEC_HELP, check_spec, from_spec
from satchel.stores import SqliteStore
from satchel.vocabulary._families import citation
from satchel.vocabulary._requests import MAX_MAX_BYTES, MIN_MAX_BYTES

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping, Sequence

    from satchel._workload import WorkloadQuery
    from satchel.vocabulary import Family

RESULTS: Final = orchestrator.RESULTS
#: LoCoMo's question categories (the release numbers them); 5 is adversarial.
CATEGORIES: Final = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
#: The recall column of every question but the single-hop ones (``buckets``).
BEYOND_ONE_TURN: Final = "beyond one turn"
BUDGETS: Final = (2000, 4000, 8000)
CLASSIC_BYTES: Final = 8000
#: Questions asked per chunk of one arm in ``--references`` mode, and at most how many
#: of the first conversation's questions are asked.
RATIO_CHUNK: Final = 20
RATIO_QUESTIONS: Final = 120
#: Rounds of chunks over the questions in ``--references`` mode unless ``--repeat`` says.
RATIO_ROUNDS: Final = 12
#: How a session's time is written: "1:56 pm on 8 May, 2023".
SESSION_TIME: Final = "%I:%M %p on %d %B, %Y"


# -- reading the release ------------------------------------------------------------------


def conversations(path: Path) -> list[dict[str, Any]]:
    """Every conversation at ``path`` (zip, folder or wrapped JSON), each as
    ``{"id", "conversation", "qa"}``, in a stable order.

    Raises:
        ValueError: ``path`` holds no LoCoMo conversation.
    """
    found = sorted(_samples(path), key=lambda sample: sample["id"])
    if not found:
        raise ValueError(f"{path} holds no LoCoMo conversation (see python -m bench locomo -h)")
    return found


def _samples(path: Path) -> Iterator[dict[str, Any]]:
    if path.is_dir():
        for file in sorted(path.rglob("*.json")):
            yield from _parsed(file.stem, json.loads(file.read_text(encoding="utf-8")))
    elif zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as archive:
            for name in sorted(archive.namelist()):
                if name.endswith(".json") and "__MACOSX" not in name:
                    yield from _parsed(Path(name).stem, json.loads(archive.read(name)))
    else:
        yield from _parsed(path.stem, json.loads(path.read_text(encoding="utf-8")))


def _parsed(name: str, data: Any) -> Iterator[dict[str, Any]]:
    """One file's conversations: a wrapped list, or one conversation (its sessions at
    the top level beside ``qa``, or under ``conversation``)."""
    if isinstance(data, list):
        for number, sample in enumerate(data):
            if isinstance(sample, dict):
                yield from _parsed(str(sample.get("sample_id", f"{name}-{number}")), sample)
    elif isinstance(data, dict) and isinstance(data.get("qa"), list):
        sessions = data.get("conversation", data)
        if isinstance(sessions, dict) and "session_1" in sessions:
            yield {
                "id": str(data.get("sample_id", name)),
                "conversation": sessions,
                "qa": data["qa"],
            }


def workload(
    samples: Sequence[dict[str, Any]],
    folder: Path,
    names: Mapping[str, str] | None = None,
    together: int = 1,
    threads: bool = True,
    chat_spellings: bool = False,
    messages: bool = False,
    media_omitted: bool = False,
    fillers: str | None = None,
    labels: str | None = None,
    lower_questions: bool = False,
    vocatives: bool = True,
    exported: str | None = None,
    links: bool = False,
    reactions: bool = False,
    misspellings: Mapping[str, Sequence[str]] | None = None,
) -> Path:
    """Write the conversations as a workload folder (``entries.jsonl``,
    ``queries.jsonl``), each question's names called as ``names`` says, every
    ``together`` conversations in one scope, each session a thread unless ``threads``
    is false, the turns typed as :func:`texting` does when ``chat_spellings``, cut
    as :func:`cut_into_messages` does when ``messages``, and each shared photo's
    placeholder added (:func:`with_media_omitted`) when ``media_omitted``, a filler
    of the ``fillers`` style (``FILLER_STYLES``) after three turns in ten
    (:func:`with_filler`) when one is given, a link after one turn in ten
    (:func:`with_link`) when ``links``, a reaction after another one in ten
    (:func:`with_reaction`) when ``reactions``, each speaker
    labelled as :func:`labelled` does in the ``labels`` style, the questions in lower
    case when ``lower_questions``, and without the other person's name (:func:`uncalled`)
    unless ``vocatives``, every tenth use of a word ``misspellings`` lists typed as
    :func:`misspelling` does; each conversation written out as the ``exported`` app
    exports a chat and read back as ``satchel ingest --chat`` reads it
    (:func:`as_exported`), when asked; return it."""
    folder.mkdir(parents=True, exist_ok=True)
    called = _renaming(names or {})
    groups = [samples[first : first + together] for first in range(0, len(samples), together)]
    scopes = {
        sample["id"]: "locomo:" + "+".join(str(each["id"]) for each in group)
        for group in groups
        for sample in group
    }
    with (
        (folder / "entries.jsonl").open("w", encoding="utf-8") as entries,
        (folder / "queries.jsonl").open("w", encoding="utf-8") as queries,
    ):
        for sample in samples:
            scope, name = scopes[sample["id"]], f"locomo:{sample['id']}"
            typed = texting() if chat_spellings else None
            misspelt = misspelling(misspellings) if misspellings else None
            others = {} if vocatives else _others(sample["conversation"])
            speakers = sample["conversation"]
            relabel = relabelled(speakers, labels) if labels is not None else {}
            if relabel:
                speakers = {
                    **speakers,
                    **{k: relabel[speakers[k]] for k in SPEAKERS if speakers.get(k) in relabel},
                }
            written: list[dict[str, Any]] = []
            for place, entry in enumerate(_entries(scope, name, sample["conversation"])):
                if not threads:
                    del entry["thread"]
                if others:
                    speaker, said = entry["text"].split(": ", 1)
                    if speaker in others:
                        entry["text"] = f"{speaker}: {uncalled(said, others[speaker])}"
                if relabel:
                    speaker, said = entry["text"].split(": ", 1)
                    entry["text"] = f"{relabel.get(speaker, speaker)}: {said}"
                if typed is not None:
                    speaker, said = entry["text"].split(": ", 1)
                    entry["text"] = f"{speaker}: {typed(said)}"
                if misspelt is not None:
                    speaker, said = entry["text"].split(": ", 1)
                    entry["text"] = f"{speaker}: {misspelt(said)}"
                said = cut_into_messages(entry) if messages else [entry]
                if media_omitted:
                    said = with_media_omitted(said)
                if reactions and place % 10 == REACTED:
                    said = with_reaction(said, speakers, place)
                if links and place % 10 == LINKED:
                    said = with_link(said, f"{name}/{place}")
                if fillers is not None and place % 10 in FILLED:
                    said = with_filler(said, speakers, place, FILLER_STYLES[fillers])
                written.extend(said)
            if exported is not None:
                written = as_exported(written, exported, folder / f"{name}.txt".replace(":", "-"))
            for each in written:
                entries.write(json.dumps(each, ensure_ascii=False) + "\n")
            for number, qa in enumerate(sample["qa"]):
                category = CATEGORIES.get(qa.get("category"))
                evidence = [f"{name}/{d}" for d in _dia_ids(qa.get("evidence", []))]
                if category is None or not evidence:
                    continue
                query = {
                    "id": f"{name}/q{number}", "scopes": [scope],
                    "query": called(qa["question"]).lower() if lower_questions
                    else called(qa["question"]),
                    "expected": evidence, "category": category,
                }  # fmt: skip
                queries.write(json.dumps(query, ensure_ascii=False) + "\n")
    return folder


#: How people often type a word to each other ("bday" for "birthday"), for ``texting``.
TYPED: Final = {
    "birthday": "bday", "picture": "pic", "pictures": "pics", "family": "fam",
    "favorite": "fave", "conversation": "convo", "tomorrow": "tmrw", "vacation": "vacay",
    "business": "biz", "people": "ppl", "message": "msg", "video": "vid",
    "weekend": "wknd", "tonight": "tonite", "university": "uni", "love": "luv",
    "so": "sooo", "good": "goood", "you": "u", "your": "ur",
}  # fmt: skip


def texting() -> Callable[[str], str]:
    """A conversation's turns typed as people text: every other use of a word of
    ``TYPED`` (whole words, any case, counted over the conversation) spelled as people
    type it."""
    used: Counter[str] = Counter()
    word = re.compile(r"\b(" + "|".join(TYPED) + r")\b", re.IGNORECASE)

    def typed(found: re.Match[str]) -> str:
        said = found.group()
        used[said.lower()] += 1
        return TYPED[said.lower()] if used[said.lower()] % 2 == 0 else said

    return lambda text: word.sub(typed, text)


#: One use in this many of a word a list of misspellings holds is typed misspelt.
MISSPELT_EVERY: Final = 10


def misspelling(table: Mapping[str, Sequence[str]]) -> Callable[[str], str]:
    """A conversation's turns typed with the misspellings of ``table`` (a lowercase
    word to the ways people misspell it, :func:`read_misspellings`): every
    ``MISSPELT_EVERY``-th use of such a word (whole words, any case, counted over the
    conversation) typed as the next of its misspellings, a capital kept."""
    used: Counter[str] = Counter()
    word = re.compile(r"[A-Za-z]+")

    def typed(found: re.Match[str]) -> str:
        said = found.group()
        wrong = table.get(said.lower())
        if not wrong:
            return said
        used[said.lower()] += 1
        count = used[said.lower()]
        if count % MISSPELT_EVERY:
            return said
        typo = wrong[(count // MISSPELT_EVERY - 1) % len(wrong)]
        return typo.capitalize() if said[0].isupper() else typo

    return lambda text: word.sub(typed, text)


def read_misspellings(path: Path) -> dict[str, list[str]]:
    """A list of misspellings as ``wrong->right`` lines (codespell's dictionary
    format: a line naming several corrections, or a word other than lowercase letters,
    is left out): each right word, lowercase, to its misspellings in the file's order."""
    table: dict[str, list[str]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        wrong, arrow, right = line.partition("->")
        rights = [each.strip() for each in right.split(",") if each.strip()]
        if not arrow or len(rights) != 1:
            continue
        wrong, right = wrong.strip(), rights[0].lower()
        if wrong.isascii() and wrong.isalpha() and wrong.islower() and right.isalpha():
            table.setdefault(right, []).append(wrong)
    return table


def _misspellings(text: str) -> dict[str, list[str]]:
    path = Path(text)
    if not path.is_file():
        raise argparse.ArgumentTypeError(f"{text} is not a file")
    table = read_misspellings(path)
    if not table:
        raise argparse.ArgumentTypeError(f"{text} holds no 'wrong->right' line")
    return table


def _others(speakers: Mapping[str, Any]) -> dict[str, str]:
    """Each of a conversation's two speakers, to the other."""
    one, other = (speakers.get(key) for key in SPEAKERS)
    return {one: other, other: one} if isinstance(one, str) and isinstance(other, str) else {}


def uncalled(said: str, other: str) -> str:
    """What a turn ``said`` without the name of the ``other`` person of a chat of two,
    nor its short forms (its first two and three letters, for a name of five letters
    or more: "Mel", "Jo"), with the comma that set it off: "Hey Mel! Thanks, Melanie."
    becomes "Hey! Thanks.". LoCoMo's people call each other by name in a third of their
    turns; people texting rarely do."""
    forms = {other, other[:3], other[:2]} if len(other) >= 5 else {other}
    alternatives = "|".join(re.escape(form) for form in sorted(forms, key=len, reverse=True))
    said = re.sub(rf"(?:,\s*)?\b(?:{alternatives})\b(?:\s*,)?", "", said)
    said = re.sub(r"\s+([!.?])", r"\1", said)
    return re.sub(r"^[\s,!.]+", "", said).replace("  ", " ").strip()


#: How a messaging app's export may label a person, for ``labelled``: as the exporter
#: saved them, with a surname (``full``), an emoji (``emoji``), in lower case
#: (``lower``), under a name the questions never say (``unsaid``), or, not saved at all,
#: by their phone number (``phone``).
LABELS: Final = ("full", "emoji", "lower", "unsaid", "phone", "handle", "user", "me")
#: A conversation's two speakers (``labelled`` renames them everywhere a name is read).
SPEAKERS: Final = ("speaker_a", "speaker_b")
SURNAMES: Final = ("Smith", "Garcia", "Nguyen", "Okafor", "Rossi", "Khan", "Silva", "Novak")


def relabelled(speakers: Mapping[str, Any], style: str) -> dict[str, str]:
    """Each of a conversation's two ``speakers``' (``speaker_a``, ``speaker_b``) label
    in ``style``: :func:`labelled`, or for ``me`` the first one "Me", as an export may
    label its exporter's own messages, and the other by name."""
    names = [name for k in SPEAKERS if isinstance(name := speakers.get(k), str)]
    if style == "me":
        return {name: "Me" if at == 0 else name for at, name in enumerate(names)}
    return {name: labelled(name, style) for name in names}


def labelled(name: str, style: str) -> str:
    """``name`` as a chat export of ``style`` (``LABELS``) labels its turns: the same
    label for the same name every time; ``unsaid`` is the name rotated thirteen letters
    ("Caroline": "Pnebyvar"), so no two people share one."""
    pick = int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big")
    if style == "full":
        return f"{name} {SURNAMES[pick % len(SURNAMES)]}"
    if style == "emoji":
        return f"{name} {chr(0x1F338 + pick % 40)}"
    if style == "lower":
        return name.lower()
    if style == "unsaid":
        return codecs.encode(name, "rot13")
    if style == "phone":
        return f"+44 7700 9{pick % 100_000:05d}"
    if style == "handle":
        return f"{name.lower()}_{pick % 90 + 10}"
    if style == "user":
        return f"User {pick % 9000 + 1000}"
    styles = ", ".join(label for label in LABELS if label != "me")  # "me": relabelled's
    raise ValueError(f"labels must be one of {styles}, not {style!r}")


#: Words a message of ``cut_into_messages`` holds at least, when its turn has more.
MESSAGE_WORDS: Final = 14
#: Where a turn's sentences end: after ., ! or ? and the spaces that follow.
_SENTENCE_END: Final = re.compile(r"(?<=[.!?])\s+")


def cut_into_messages(entry: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A turn as the messages a messaging app would hold: its sentences grouped until a
    message has ``MESSAGE_WORDS`` words, each ``"Speaker: ..."``, five seconds after the
    one before, its id the turn's with ``#k`` (:func:`turn_of` reads it back)."""
    speaker, said = entry["text"].split(": ", 1)
    said, photo, caption = said.partition(" [photo: ")
    groups: list[list[str]] = [[]]
    for sentence in filter(None, _SENTENCE_END.split(said.strip())):
        if sum(len(s.split()) for s in groups[-1]) >= MESSAGE_WORDS:
            groups.append([])
        groups[-1].append(sentence)
    texts = [" ".join(group) for group in groups]
    texts[-1] = (texts[-1] + photo + caption).strip()
    out = []
    for k, text in enumerate(texts):
        message = {**entry, "id": f"{entry['id']}#{k}", "text": f"{speaker}: {text}"}
        if "created_at" in entry:
            said_at = datetime.fromisoformat(entry["created_at"]) + timedelta(seconds=5 * k)
            message["created_at"] = said_at.isoformat()
        out.append(message)
    return out


#: What an English messaging-app export writes for a photo it left out.
MEDIA_OMITTED: Final = "<Media omitted>"


def with_media_omitted(said: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The messages of one turn, and after them, when the turn shares a photo, its
    speaker's :data:`MEDIA_OMITTED` five seconds after the last: an id of its own
    (``...~media``), never a turn's evidence."""
    last = said[-1]
    if " [photo: " not in last["text"]:
        return list(said)
    speaker = last["text"].split(": ", 1)[0]
    return [*said, said_after(last, "media", f"{speaker}: {MEDIA_OMITTED}", 5)]


def said_after(last: dict[str, Any], kind: str, text: str, seconds: int) -> dict[str, Any]:
    """A message of ``text`` said ``seconds`` after ``last`` (a turn's last message), in
    its thread, under an id of its own (``...~kind``) that is never a turn's evidence."""
    message = {**last, "id": f"{turn_of(last['id'])}~{kind}", "text": text}
    if "created_at" in last:
        said_at = datetime.fromisoformat(last["created_at"]) + timedelta(seconds=seconds)
        message["created_at"] = said_at.isoformat()
    return message


def other_speaker(speakers: Mapping[str, Any], speaker: str) -> Any:
    """The other of a conversation's two ``speakers`` (``speaker_a``, ``speaker_b``)."""
    return speakers["speaker_b"] if speaker == speakers.get("speaker_a") else speakers["speaker_a"]


#: What the other person answers when they say nothing, for ``with_filler``.
FILLERS: Final = ("ok", "lol", "haha", "yeah", "omg", "nice", "Thanks!", "true", "hahaha", "ikr")
#: The same kind of answer as people type it: laughter of any length, a last letter
#: doubled, what chats abbreviate.
TYPED_FILLERS: Final = (
    "hahahaha", "okk", "lolol", "yess", "sounds good", "gotcha", "hahah", "alright",
    "ahaha", "yeahh", "lmaooo", "hbu?", "oof", "okie", "omgg", "brb", "hmmm", "sorry!",
    "heyy", "yup yup",
)  # fmt: skip
#: ``--fillers``' styles: the words themselves, or as people type them.
FILLER_STYLES: Final = {"plain": FILLERS, "typed": TYPED_FILLERS}
#: The turns of a conversation (counted from 0, by their place modulo 10) a filler follows.
FILLED: Final = frozenset({2, 5, 8})


def with_filler(
    said: Sequence[dict[str, Any]],
    speakers: Mapping[str, Any],
    number: int,
    fillers: Sequence[str] = FILLERS,
) -> list[dict[str, Any]]:
    """The messages of the conversation's ``number``-th turn, and after them a filler
    (of ``fillers``, in turn) said by the other of the conversation's two ``speakers``
    (``speaker_a``, ``speaker_b``) twenty seconds after the last: an id of its own
    (``...~filler``), never a turn's evidence."""
    last = said[-1]
    other = other_speaker(speakers, last["text"].split(": ", 1)[0])
    return [*said, said_after(last, "filler", f"{other}: {fillers[number % len(fillers)]}", 20)]


#: The turns of a conversation (by their place modulo 10) its speaker follows with a link.
LINKED: Final = 4
#: What a shared link looks like: where it points, then its id (``with_link``).
LINK_SHAPES: Final = (
    "https://youtu.be/{id}",
    "https://www.instagram.com/reel/{id}/?igsh={tail}",
    "https://vm.tiktok.com/{id}/",
    "https://open.spotify.com/track/{id}?si={tail}",
    "https://www.nytimes.com/2023/05/08/well/{id}.html?smid=nytcore-ios-share&referringSource={tail}",
    "https://maps.app.goo.gl/{id}",
)


def with_link(said: Sequence[dict[str, Any]], seed: str) -> list[dict[str, Any]]:
    """The messages of a turn, and after them a link its speaker shares ten seconds after
    the last (one of ``LINK_SHAPES``, its id drawn from ``seed``): an id of its own
    (``...~link``), never a turn's evidence."""
    last = said[-1]
    draw = random.Random(zlib.crc32(seed.encode()))
    letters = string.ascii_letters + string.digits
    shape = draw.choice(LINK_SHAPES)
    url = shape.format(
        id="".join(draw.choices(letters, k=11)), tail="".join(draw.choices(letters, k=22))
    )
    speaker = last["text"].split(": ", 1)[0]
    return [*said, said_after(last, "link", f"{speaker}: {url}", 10)]


#: The turns of a conversation (by their place modulo 10) the other person reacts to.
REACTED: Final = 7
#: How a phone writes a reaction to a phone without its app, in turn (``with_reaction``).
REACTIONS: Final = ("Loved", "Liked", "Laughed at", "Emphasized", "Reacted \U0001f602 to")


def with_reaction(
    said: Sequence[dict[str, Any]], speakers: Mapping[str, Any], number: int
) -> list[dict[str, Any]]:
    """The messages of the conversation's ``number``-th turn, and after them the other of
    its two ``speakers``' reaction to the last of them fifteen seconds later, as a
    message quoting it (``REACTIONS``, in turn: "Loved “...”"): an id of its own
    (``...~reaction``), never a turn's evidence."""
    last = said[-1]
    speaker, message = last["text"].split(": ", 1)
    verb = REACTIONS[number % len(REACTIONS)]
    text = f"{other_speaker(speakers, speaker)}: {verb} \u201c{message}\u201d"
    return [*said, said_after(last, "reaction", text, 15)]


def turn_of(entry_id: str | None) -> str | None:
    """The turn an entry of the workload holds: itself, or the turn a message was cut from."""
    return entry_id.partition("#")[0] if entry_id else entry_id


def _renaming(names: Mapping[str, str]) -> Callable[[str], str]:
    """A question with each whole word that is a key of ``names`` replaced by its value."""
    if not names:
        return lambda question: question
    word = re.compile(r"\b(" + "|".join(map(re.escape, names)) + r")\b")
    return lambda question: word.sub(lambda found: names[found.group()], question)


#: The apps ``--exported`` writes a chat as, each with the date order its lines use.
EXPORTS: Final = {"android": "dmy", "iphone": "mdy"}


def export_line(text: str, said: datetime, app: str) -> str:
    """A message as ``app`` exports it: Android's "08/05/2023, 13:56 - Caroline: ..."
    or the iPhone's "[5/8/23, 1:56:00 PM] Caroline: ..." (a narrow space before PM)."""
    if app == "android":
        return f"{said:%d/%m/%Y, %H:%M} - {text}"
    hour = said.hour % 12 or 12
    half = "\N{NARROW NO-BREAK SPACE}" + ("PM" if said.hour >= 12 else "AM")
    return f"[{said.month}/{said.day}/{said:%y}, {hour}:{said:%M:%S}{half}] {text}"


def as_exported(entries: list[dict[str, Any]], app: str, path: Path) -> list[dict[str, Any]]:
    """``entries`` (a conversation's, in time order) written to ``path`` as ``app``
    exports a chat and read back by ``satchel._workload.read_chat_export``: the entries
    a user importing that export gets (Android's times to the minute), under the
    workload's own ids. Refuses to go on when the reading lost or changed a message."""
    said = [datetime.fromisoformat(entry["created_at"]) for entry in entries]
    lines = [export_line(e["text"], at, app) for e, at in zip(entries, said, strict=True)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    scope = entries[0]["scope"]
    chat = read_chat_export(path, scope, date_order="dmy" if app == "android" else "mdy")
    read = [_memory(item) for item in chat.items if isinstance(item, WorkloadEntry)]
    # Android's lines hold the minute, the iPhone's the second.
    shown = [at.replace(second=0) if app == "android" else at for at in said]
    want = [(e["text"], at.replace(microsecond=0)) for e, at in zip(entries, shown, strict=True)]
    if len(chat.items) != len(entries) or [(r.text, r.created_at) for r in read] != want:
        raise SystemExit(f"python -m bench locomo: {path.name} did not read back as written")
    return [
        {"id": entry["id"], "scope": scope, "text": record.text, "kind": record.kind,
         "created_at": record.created_at.isoformat()}  # type: ignore[union-attr]
        for entry, record in zip(entries, read, strict=True)
    ]  # fmt: skip


def _memory(item: WorkloadEntry) -> satchel.MemoryEntry:
    assert isinstance(item.record, satchel.MemoryEntry)
    return item.record


def _entries(scope: str, name: str, sessions: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    number = 1
    while isinstance(sessions.get(f"session_{number}"), list):
        said = _session_time(sessions.get(f"session_{number}_date_time"))
        for turn, item in enumerate(sessions[f"session_{number}"]):
            text = f"{item['speaker']}: {item.get('text', '')}"
            if item.get("blip_caption"):
                text += f" [photo: {item['blip_caption']}]"
            entry: dict[str, Any] = {
                "id": f"{name}/{item['dia_id']}", "scope": scope, "text": text,
                "kind": "dialog", "thread": f"{name}/session-{number}",
            }  # fmt: skip
            if said is not None:
                entry["created_at"] = (said + timedelta(minutes=turn)).isoformat()
            yield entry
        number += 1


def _session_time(text: object) -> datetime | None:
    try:
        return datetime.strptime(str(text), SESSION_TIME).replace(tzinfo=UTC)
    except ValueError:
        return None


def _dia_ids(evidence: object) -> list[str]:
    """The ``dia_id``s an evidence list names (a few entries of the release hold two,
    separated by ``;``)."""
    if not isinstance(evidence, list):
        return []
    ids = [part.strip() for item in evidence for part in str(item).split(";")]
    return [d for d in ids if d.startswith("D")]


# -- asking -------------------------------------------------------------------------------


@attrs.frozen
class Setting:
    """One way of asking: gate on or off, default or classic limits, a budget."""

    gate: bool
    classic: bool
    max_bytes: int

    @property
    def name(self) -> str:
        limits = "classic" if self.classic else str(self.max_bytes)
        return f"gate {'on' if self.gate else 'off'} / {limits}"


def settings(budgets: Sequence[int] = BUDGETS) -> list[Setting]:
    out = []
    for gate in (False, True):
        out += [Setting(gate, False, budget) for budget in budgets]
        out.append(Setting(gate, True, CLASSIC_BYTES))
    return out


async def evaluate(
    db: Path,
    folder: Path,
    owners: Mapping[Any, str],
    repeat: int,
    fusion: satchel.FusionWeights | None = None,
    embedder: satchel.Embedder | None = None,
    budgets: Sequence[int] = BUDGETS,
) -> dict[str, Any]:
    """Every question in every setting, interleaved, on one store; then the misses."""
    queries = [q for q in read_queries(folder / "queries.jsonl")[0] if q.expected]
    cut = messages_of(folder)
    plan = settings(budgets)
    seconds: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    cpu: dict[str, list[float]] = defaultdict(list)
    recall: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    whole: dict[str, list[float]] = defaultdict(list)
    store = await SqliteStore.open(str(db))
    async with AsyncExitStack() as stack:
        stack.push_async_callback(store.aclose)
        runtimes = await _open(
            stack, store, fusion or satchel.FusionWeights(), embedder or satchel.StaticEmbedder()
        )
        for rep, query, order in rotations(queries, plan, repeat):
            for setting in order:
                rt = runtimes[setting.gate, setting.classic]
                started = time.process_time()
                elapsed, context = await orchestrator.timed(
                    rt, orchestrator.request(query, setting.max_bytes)
                )
                if rep:  # pass 0 warms every runtime up
                    seconds[setting.name][query.id].append(elapsed)
                    cpu[setting.name].append(time.process_time() - started)
                if rep == 1:
                    value = _recall(query, owners, context.content)
                    for category in buckets(query.category):
                        recall[setting.name][category].append(value)
                    if cut:
                        whole[setting.name].append(
                            _messages_recall(query, owners, context.content, cut)
                        )
        misses = await _misses(runtimes[True, False], queries, owners)
    return {
        "settings": {
            setting.name: {
                "recall": {c: statistics.fmean(v) for c, v in _ordered(recall[setting.name])},
                "p50_ms": statistics.median(
                    statistics.median(v) for v in seconds[setting.name].values()
                )
                * 1e3,
                # The process's CPU time (user + system) per prepare: the machine's
                # other work moves it far less than wall time.
                "cpu_us": statistics.fmean(cpu[setting.name]) * 1e6,
                **({"messages_recall": statistics.fmean(whole[setting.name])} if cut else {}),
            }
            for setting in plan
        },
        "misses_8000_gate_on": misses,
        "questions": len(queries),
    }


async def _open(
    stack: AsyncExitStack,
    store: SqliteStore,
    fusion: satchel.FusionWeights,
    embedder: satchel.Embedder,
) -> dict[tuple[bool, bool], satchel.Runtime]:
    runtimes = {}
    for gate in (False, True):
        for classic in (False, True):
            runtime = satchel.open_runtime(
                store=store,
                embedder=embedder,
                limits=satchel.Limits.classic() if classic else satchel.Limits(),
                recall_policy=satchel.RecallSufficiencyPolicy() if gate else None,
                fusion=fusion,
            )
            runtimes[gate, classic] = await stack.enter_async_context(runtime)
    return runtimes


async def _misses(
    rt: satchel.Runtime, queries: Sequence[WorkloadQuery], owners: Mapping[Any, str]
) -> dict[str, int]:
    """Where each piece of missed evidence went at 8,000 bytes, gate on."""
    counts: Counter[str] = Counter()
    for query in queries:
        explained = await rt.explain_context(orchestrator.request(query, 8000))
        got = _delivered(owners, explained.context.content)
        omitted = {
            turn_of(owners.get(citation_key(_spelled(o.citation)))): o.cause
            for o in reversed(explained.omitted)
        }
        for expected in query.expected:
            if expected not in got:
                cause = omitted.get(expected, "")
                counts[cause if cause in ("budget", "floor") else "unranked"] += 1
    counts["evidence"] = sum(len(q.expected) for q in queries)
    return dict(counts)


def _spelled(cited: satchel.Citation) -> dict[str, Any]:
    """A citation with its family's own field names, as ``citation_key`` reads them."""
    return citation(cast("Family", cited.family), cited.scope, cited.id, cited.version)


def _cited(owners: Mapping[Any, str], content: str | None) -> set[str | None]:
    """The entries (a turn, or one of its messages) a pack delivered."""
    return {owners.get(citation_key(c)) for c in delivered_citations(content)}


def _delivered(owners: Mapping[Any, str], content: str | None) -> set[str | None]:
    """The turns a pack delivered, one of their messages at least."""
    return {turn_of(entry) for entry in _cited(owners, content)}


def _recall(query: WorkloadQuery, owners: Mapping[Any, str], content: str | None) -> float:
    return len(_delivered(owners, content) & set(query.expected)) / len(query.expected)


def messages_of(folder: Path) -> dict[str, list[str]]:
    """Each turn's messages, when the workload's turns were cut into several
    (``--messages``); else empty."""
    said: dict[str, list[str]] = defaultdict(list)
    for line in (folder / "entries.jsonl").read_text(encoding="utf-8").splitlines():
        entry_id = json.loads(line)["id"]
        if "#" in entry_id:
            said[entry_id.partition("#")[0]].append(entry_id)
    return dict(said) if any(len(ids) > 1 for ids in said.values()) else {}


def _messages_recall(
    query: WorkloadQuery,
    owners: Mapping[Any, str],
    content: str | None,
    cut: Mapping[str, list[str]],
) -> float:
    """The mean over a question's evidence turns of the share of each one's messages
    delivered: a turn whose sentences a chat holds as three messages counts a third for
    each (an evidence turn the workload lacks counts none)."""
    got = _cited(owners, content)
    shares = [
        sum(message in got for message in cut[turn]) / len(cut[turn]) if cut.get(turn) else 0.0
        for turn in query.expected
    ]
    return sum(shares) / len(shares)


def buckets(category: str) -> tuple[str, ...]:
    """The recall columns a question of ``category`` counts in: all, its own and, but
    for a single-hop question, *beyond one turn*: several turns, a date, an inference
    (841 of LoCoMo's 1,536 questions are single-hop and recalled best, while the real
    chats of issue 41 were reported without any)."""
    if category == CATEGORIES[4]:
        return ("all", category)
    return ("all", BEYOND_ONE_TURN, category)


def _ordered(values: Mapping[str, list[float]]) -> list[tuple[str, list[float]]]:
    order = {c: i for i, c in enumerate(("all", BEYOND_ONE_TURN, *CATEGORIES.values()))}
    return sorted(values.items(), key=lambda item: (order.get(item[0], len(order)), item[0]))


async def scope_ratio(
    db: Path, folder: Path, references: int, rounds: int, embedder: satchel.Embedder
) -> dict[str, Any]:
    """CPU per prepare of the first conversation's questions asked of its scope alone
    and with ``references`` other conversations' scopes as references, in alternated
    chunks (see the module); the arms' first quartile and median, and their ratios."""
    queries = [q for q in read_queries(folder / "queries.jsonl")[0] if q.expected]
    scopes = list(dict.fromkeys(q.scopes[0] for q in queries))
    if len(scopes) < 1 + references:
        raise ValueError(
            f"--references {references} needs {1 + references} conversations, not {len(scopes)}"
        )
    own, others = scopes[0], tuple(scopes[1 : 1 + references])
    mine = [q for q in queries if q.scopes[0] == own][:RATIO_QUESTIONS]
    arms = {1: (), 1 + references: others}
    cpu: dict[int, list[float]] = {count: [] for count in arms}
    store = await SqliteStore.open(str(db))
    policy = satchel.RecallSufficiencyPolicy()
    async with AsyncExitStack() as stack:
        stack.push_async_callback(store.aclose)
        rt = await stack.enter_async_context(
            satchel.open_runtime(store=store, embedder=embedder, recall_policy=policy)
        )

        def asked(query: WorkloadQuery, refs: tuple[str, ...]) -> satchel.PrepareContextRequest:
            return satchel.PrepareContextRequest(
                scope_id=own, query=query.query, references=refs, max_bytes=8000
            )

        for refs in arms.values():  # the warm-up: every read once in both arms
            for query in mine:
                await rt.prepare_context(asked(query, refs))
        chunks = max(1, -(-len(mine) // RATIO_CHUNK))
        for index in range(rounds * chunks):
            start = (index % chunks) * RATIO_CHUNK
            chunk = mine[start : start + RATIO_CHUNK]
            order = list(arms.items()) if index % 2 == 0 else list(arms.items())[::-1]
            for count, refs in order:
                started = time.process_time()
                for query in chunk:
                    await rt.prepare_context(asked(query, refs))
                cpu[count].append((time.process_time() - started) / len(chunk) * 1e6)
    quartiles = {count: _quartile(values) for count, values in cpu.items()}
    medians = {count: statistics.median(values) for count, values in cpu.items()}
    many = 1 + references
    return {
        "scopes": [own, *others],
        "questions": len(mine),
        "chunks": len(cpu[1]),
        "cpu_us_p25": {str(count): value for count, value in quartiles.items()},
        "cpu_us_median": {str(count): value for count, value in medians.items()},
        "ratio_p25": quartiles[many] / quartiles[1],
        "ratio_median": medians[many] / medians[1],
    }


def _quartile(values: Sequence[float]) -> float:
    """The first quartile (``statistics.quantiles``' inclusive method; one value alone
    is its own)."""
    if len(values) < 2:
        return values[0]
    return statistics.quantiles(values, n=4, method="inclusive")[0]


def ratio_report(result: Mapping[str, Any]) -> str:
    many = str(len(result["scopes"]))
    p25, median = result["cpu_us_p25"], result["cpu_us_median"]
    return "\n".join(
        [
            f"| CPU us per prepare | 1 scope | {many} scopes | ratio |",
            "|---|---:|---:|---:|",
            f"| chunks' first quartile | {p25['1']:,.0f} | {p25[many]:,.0f}"
            f" | {result['ratio_p25']:.2f} |",
            f"| chunks' median | {median['1']:,.0f} | {median[many]:,.0f}"
            f" | {result['ratio_median']:.2f} |",
        ]
    )


# -- the command --------------------------------------------------------------------------


async def run(
    path: Path,
    count: int | None,
    repeat: int,
    fusion: satchel.FusionWeights | None = None,
    embedder: str = "static",
    names: Mapping[str, str] | None = None,
    together: int = 1,
    threads: bool = True,
    chat_spellings: bool = False,
    messages: bool = False,
    references: int = 0,
    budgets: Sequence[int] = BUDGETS,
    media_omitted: bool = False,
    fillers: str | None = None,
    labels: str | None = None,
    lower_questions: bool = False,
    vocatives: bool = True,
    exported: str | None = None,
    links: bool = False,
    reactions: bool = False,
    misspellings: Mapping[str, Sequence[str]] | None = None,
) -> dict[str, Any]:
    samples = conversations(path)[:count]
    model = from_spec(embedder)
    with tempfile.TemporaryDirectory(prefix="satchel-locomo-") as directory:
        folder = workload(
            samples, Path(directory) / "workload", names, together, threads, chat_spellings,
            messages, media_omitted, fillers, labels, lower_questions, vocatives, exported,
            links, reactions, misspellings,
        )  # fmt: skip
        db = Path(directory) / "locomo.db"
        owners = await orchestrator.ingest_workload(db, folder, model)
        if references:
            result = await scope_ratio(db, folder, references, repeat, model)
        else:
            result = await evaluate(db, folder, owners, repeat, fusion, model, budgets)
    result["conversations"] = len(samples)
    result["turns"] = len(owners)
    return result


def report(result: Mapping[str, Any]) -> str:
    rows = result["settings"]
    categories = list(next(iter(rows.values()))["recall"])
    cut = all("messages_recall" in values for values in rows.values())
    extra = " every message |" if cut else ""
    lines = [
        "| setting | " + " | ".join(categories) + " |" + extra + " p50 ms | CPU us |",
        "|---|" + "---:|" * (len(categories) + 2 + cut),
    ]
    for name, values in rows.items():
        cells = " | ".join(f"{values['recall'].get(c, float('nan')):.3f}" for c in categories)
        shown = f" {values['messages_recall']:.3f} |" if cut else ""
        lines.append(
            f"| {name} | {cells} |{shown} {values['p50_ms']:.2f} | {values['cpu_us']:.0f} |"
        )
    misses = dict(result["misses_8000_gate_on"])
    evidence = misses.pop("evidence")
    missed = sum(misses.values())
    lines += [
        "",
        f"Missed evidence at 8,000 bytes, gate on: {missed} of {evidence} turns",
        "| cause | turns | share of missed |",
        "|---|---:|---:|",
    ]
    for cause in ("budget", "floor", "unranked"):
        share = misses.get(cause, 0) / missed if missed else 0.0
        lines.append(f"| {cause} | {misses.get(cause, 0)} | {share:.2f} |")
    return "\n".join(lines)


def parser() -> argparse.ArgumentParser:
    out = argparse.ArgumentParser(
        prog="python -m bench locomo",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    out.add_argument("path", type=Path, help="locomo10.zip, its unzipped folder, or locomo10.json")
    out.add_argument("--conversations", type=int, help="only the first N conversations")
    out.add_argument(
        "--repeat",
        type=int,
        help="timed passes after the warm-up (default 1; with --references, rounds of"
        f" chunks, default {RATIO_ROUNDS})",
    )
    out.add_argument(
        "--fusion",
        type=_fusion,
        default=satchel.FusionWeights(),
        help="round 0's fusion weights to try, as NAME=VALUE,... of satchel.FusionWeights"
        " (e.g. named_speaker=0,neighbour_share=0.5); default: the shipped weights",
    )
    out.add_argument(
        "--embedder",
        type=_embedder,
        default="static",
        metavar=SPEC_HELP,
        help="the embedder of the store and the questions (default: static, the bundled"
        " model; st:PATH needs the sentence-transformers extra)",
    )
    out.add_argument(
        "--together",
        type=int,
        default=1,
        metavar="N",
        help="every N conversations in one scope, as a group chat is (default 1)",
    )
    out.add_argument(
        "--no-threads",
        dest="threads",
        action="store_false",
        help="the turns without their sessions' threads, as a messaging app keeps a chat",
    )
    out.add_argument(
        "--exported",
        choices=tuple(EXPORTS),
        help="each conversation written out as the app exports a chat and read back as"
        " 'satchel ingest --chat' reads it (no threads, as an export has none)",
    )
    out.add_argument(
        "--names",
        type=_names,
        default={},
        metavar="FILE",
        help='a JSON object of names to call otherwise in the questions ({"Melanie": "Mel"})',
    )
    out.add_argument(
        "--chat-spellings",
        action="store_true",
        help='the turns typed as people text: every other "birthday" a "bday", "so" a'
        ' "sooo", "you" a "u" (bench.locomo.TYPED)',
    )
    out.add_argument(
        "--misspellings",
        type=_misspellings,
        default=None,
        metavar="FILE",
        help="every tenth use of a word FILE's 'wrong->right' lines misspell typed so (say,"
        " codespell's dictionary.txt: real people's misspellings)",
    )
    out.add_argument(
        "--messages",
        action="store_true",
        help="each turn cut into messages of about 14 words, as a messaging app holds a chat",
    )
    out.add_argument(
        "--media-omitted",
        action="store_true",
        help='after each turn sharing a photo, its speaker\'s "<Media omitted>", the line'
        " a messaging app's export writes for it",
    )
    out.add_argument(
        "--fillers",
        nargs="?",
        const="plain",
        choices=tuple(FILLER_STYLES),
        help='after three turns in ten, the other person\'s filler ("ok", "lol", "haha");'
        ' typed: as people type them ("hahahaha", "okk", "gotcha")',
    )
    out.add_argument(
        "--links",
        action="store_true",
        help="after one turn in ten, a link its speaker shares (a video, a song, an article)",
    )
    out.add_argument(
        "--reactions",
        action="store_true",
        help='after one turn in ten, the other person\'s reaction quoting it ("Loved “...”")',
    )
    out.add_argument(
        "--labels",
        choices=LABELS,
        help="each speaker labelled as a chat export may: with a surname, an emoji, in"
        " lower case, by a name the questions never say, by a phone number, by a user"
        ' name ("caroline_42"), by a placeholder and a number ("User 4821"), or the'
        ' first speaker as the exporter, "Me"',
    )
    out.add_argument(
        "--lower-questions",
        action="store_true",
        help="the questions typed in lower case (their names unseen: proper names are"
        " told by their capitals)",
    )
    out.add_argument(
        "--no-vocatives",
        dest="vocatives",
        action="store_false",
        help='each turn without the other person\'s name or its short forms ("Hey Mel!"'
        ' becomes "Hey!"): people texting rarely call each other by name',
    )
    out.add_argument(
        "--references",
        type=int,
        default=0,
        metavar="N",
        help="measure instead the CPU of the first conversation's questions asked with N"
        " other conversations as references against alone",
    )
    out.add_argument(
        "--budgets",
        type=_budget,
        nargs="+",
        default=list(BUDGETS),
        metavar="BYTES",
        help="the budgets asked at with the default limits, each"
        f" {MIN_MAX_BYTES}..{MAX_MAX_BYTES} (default:"
        f" {' '.join(map(str, BUDGETS))}; the classic limits are asked at"
        f" {CLASSIC_BYTES:,} bytes besides)",
    )
    out.add_argument("--out", type=Path, default=RESULTS / "locomo.json", help="JSON results")
    return out


def _budget(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of bytes, got {text!r}") from None
    if not MIN_MAX_BYTES <= value <= MAX_MAX_BYTES:
        raise argparse.ArgumentTypeError(
            f"a budget must be {MIN_MAX_BYTES}..{MAX_MAX_BYTES} bytes, got {value}"
        )
    return value


def _names(text: str) -> dict[str, str]:
    try:
        names = json.loads(Path(text).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise argparse.ArgumentTypeError(f"expected a JSON file of names: {exc}") from None
    if not isinstance(names, dict) or not all(
        isinstance(k, str) and isinstance(v, str) and k for k, v in names.items()
    ):
        raise argparse.ArgumentTypeError("expected a JSON object from names to names")
    return names


def _fusion(text: str) -> satchel.FusionWeights:
    try:
        pairs = [part.split("=", 1) for part in text.split(",") if part.strip()]
        return satchel.FusionWeights(**{name.strip(): float(value) for name, value in pairs})
    except (TypeError, ValueError, satchel.InvalidRequestError) as exc:
        raise argparse.ArgumentTypeError(
            f"expected NAME=VALUE,... of FusionWeights: {exc}"
        ) from None


def _embedder(text: str) -> str:
    try:
        return check_spec(text)
    except satchel.InvalidRequestError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def main(argv: list[str] | None = None) -> None:
    args = parser().parse_args(argv)
    if args.together < 1:
        parser().error(f"--together must be at least 1, got {args.together}")
    if args.references < 0:
        parser().error(f"--references must be at least 0, got {args.references}")
    if args.repeat is None:
        repeat = RATIO_ROUNDS if args.references else 1
    else:
        repeat = max(1, args.repeat)
    if not args.path.exists():
        raise SystemExit(f"python -m bench locomo: {args.path} does not exist")
    started = time.perf_counter()
    with threadpoolctl.threadpool_limits(limits=1, user_api="blas"):
        result = anyio.run(
            run, args.path, args.conversations, repeat, args.fusion, args.embedder,
            args.names, args.together, args.threads, args.chat_spellings, args.messages,
            args.references, tuple(dict.fromkeys(args.budgets)), args.media_omitted,
            args.fillers, args.labels, args.lower_questions, args.vocatives, args.exported,
            args.links, args.reactions, args.misspellings,
        )  # fmt: skip
    result["fusion"] = attrs.asdict(args.fusion)
    result["embedder"] = args.embedder
    result["names"] = args.names
    result["together"] = args.together
    result["threads"] = args.threads
    result["chat_spellings"] = args.chat_spellings
    result["misspellings"] = sum(map(len, (args.misspellings or {}).values()))
    result["messages"] = args.messages
    result["media_omitted"] = args.media_omitted
    result["fillers"] = args.fillers
    result["links"] = args.links
    result["reactions"] = args.reactions
    result["labels"] = args.labels
    result["lower_questions"] = args.lower_questions
    result["vocatives"] = args.vocatives
    result["exported"] = args.exported
    result["references"] = args.references
    result["budgets"] = list(dict.fromkeys(args.budgets))
    result["seconds"] = time.perf_counter() - started
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    if args.references:
        print(ratio_report(result))
        print(
            f"\n{result['questions']} questions of {result['scopes'][0]}, {result['chunks']}"
            f" chunks an arm, {result['seconds']:.0f} s; written to {args.out}"
        )
        return
    print(report(result))
    print(
        f"\n{result['questions']} questions over {result['turns']} turns of"
        f" {result['conversations']} conversations, {result['seconds']:.0f} s; written to"
        f" {args.out}"
    )


if __name__ == "__main__":
    main()
