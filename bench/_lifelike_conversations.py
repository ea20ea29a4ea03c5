"""Conversations shaped like real chats in what costs a prepare time (``bench peer``'s).

Real multi-session chats (10 of them, ~590 turns each) have turns of 26.8 words on
average (p95 57, longest 98) and ~1,770 distinct words per scope, and their questions
run to ~10 words; the synthetic conversations had 8.8 words a turn (p95 13) and ~640
distinct words per scope (``bench/_conversations.py``), the hard ones 18 (p95 34) and
~1,300 (``bench/_hard_conversations.py``). A prepare reads, fuses, fits and renders
more text per candidate on real chats, so a bench on short turns flatters whoever
spends most per byte. This generator keeps the hard conversations' sessions, planted
questions and evidence (:func:`bench._hard_conversations.planted`: the same eight
categories, the same decoys, every question answerable from its ``expected`` turns)
and changes what takes time:

- every turn is written to a length drawn from a log-normal distribution (``MU``,
  ``SIGMA``, at most ``LONGEST`` words; a short draw is an acknowledgement), small
  talk from several lines: the hard conversations' filler, stories of people, places,
  pastimes and food, and shared photos; an evidence or decoy turn is padded to its
  length with stories that share no word (in any form satchel or a stemmer matches)
  with any question of its scope and name no day, month or year, so each category's
  relation between question and evidence holds as it did;
- ``PHOTO_SHARE`` of the small-talk turns share a photo and describe it
  (``[shares a photo of ...]``);
- most questions are framed as asked about a chat: they name the other speaker, and
  those whose evidence sits in one session and whose category carries no date of its
  own name that session's month ("Talking to Leo in March 2022, what boat did Maya
  buy?"), which is true of the evidence.

:func:`shape` measures all of it on a written workload (``bench peer`` prints it every
run). All text is invented here. Deterministic for a seed: one ``random.Random``.
``python -m bench._lifelike_conversations OUT_DIR`` writes a folder.
"""

from __future__ import annotations

import argparse
import collections
import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import numpy as np
import Stemmer

from bench import _hard_conversations as hard
from bench._conversations import MONTHS, print_counts, row_of, write_rows
from satchel.vocabulary import analyse
from satchel.vocabulary._analysis import _STOPWORDS as STOPWORDS

if TYPE_CHECKING:
    import random
    from collections.abc import Callable, Iterable, Sequence

    from bench._conversations import Conversation, Session

SEED: Final = 41
#: Sessions per conversation: ~600 turns, as many as a real chat of the comparison.
SESSIONS: Final = 25
#: Words per turn, the speaker's name included: ``exp(N(MU, SIGMA))``, at most LONGEST.
#: A turn is written in whole lines, as near its drawn length as they come; a small-talk
#: turn is one line at least (~17 words) unless it is an acknowledgement, drawn below
#: SHORTEST. These give a mean of ~27 words and a p95 of ~57.
MU: Final = 3.13
SIGMA: Final = 0.56
LONGEST: Final = 100
SHORTEST: Final = 8
PHOTO_SHARE: Final = 0.08
STORY_SHARE: Final = 0.5
#: Of the questions in categories without a date, the share that also names the month
#: of their evidence; of all questions, the share that names the other speaker.
MONTH_SHARE: Final = 0.45
OTHER_SHARE: Final = 0.35
#: Categories whose question carries its own date or relative phrase: framed with the
#: other speaker only, never a month.
DATED: Final = frozenset(
    {"absolute-date", "relative-in-memory", "relative-question", "temporal-noise"}
)
#: Framings of a question (``{q}``, its first letter lowered): with a month, with the
#: other speaker, with both.
MONTH_FRAMES: Final = ("In {month}, {q}", "Back in {month}, {q}")
OTHER_FRAMES: Final = ("Talking to {other}, {q}", "In a chat with {other}, {q}")
BOTH_FRAMES: Final = (
    "Talking to {other} in {month}, {q}",
    "When {name} and {other} spoke in {month}, {q}",
)

PHOTO_LEADS: Final = (
    "Look what I found!", "Had to share this one.", "Check this out.",
    "This made me think of you straight away.", "Proof that I do leave the house sometimes.",
    "Couldn't resist taking a picture of this.", "Behold.", "The view from where I'm sitting:",
    "Okay, how cute is this?", "Not a bad spot, right?", "My latest masterpiece, be kind.",
    "Guess where I am.", "So this happened.", "Tell me this isn't gorgeous.",
)  # fmt: skip
PHOTO_SUBJECTS: Final = (
    "a ginger cat curled up", "a golden retriever puppy asleep", "a lemon drizzle cake",
    "a lopsided clay vase", "a pile of secondhand paperbacks", "a row of colourful beach huts",
    "a mossy stone bridge", "a bowl of steaming noodles", "a hand-drawn treasure map",
    "a vintage typewriter", "a half-finished jigsaw puzzle", "a tray of cinnamon buns",
    "a knitted scarf in progress", "a narrowboat painted red and green",
    "a white lighthouse", "a heron standing in the reeds", "a chalk drawing of a whale",
    "a wooden rowing dinghy", "a tall stack of pancakes", "a crowded shelf of houseplants",
    "a mural of a giant squid", "a misty mountain ridge", "a frosty cobweb",
    "a toddler in yellow wellies", "a rusty old tractor", "a lopsided snowman",
    "a neon sign that says open late", "a patchwork quilt", "a cluster of wild mushrooms",
    "a watercolour of fishing boats", "a cosy reading nook", "a pyramid of ripe peaches",
    "a double rainbow", "a bicycle with a wicker basket", "an elaborate sandcastle",
    "a stained glass window", "a tiny hedgehog", "a crackling campfire",
    "a packed dance floor", "a cable car", "a thatched cottage", "a plate of dumplings",
    "a jar of homemade plum jam", "a sleepy tortoise", "a hot air balloon",
    "a bonsai tree", "a vintage camper van", "a chess game in progress",
)  # fmt: skip
PHOTO_SETTINGS: Final = (
    "on a windowsill", "in the back garden", "at the harbour", "on a hillside at dusk",
    "on the kitchen table", "beside a frozen pond", "outside a tiny bakery",
    "under a cherry tree in blossom", "in a busy street market", "on a pebble beach",
    "at the top of a steep hill", "in a greenhouse", "beside a waterfall",
    "in an old warehouse", "on a rooftop terrace", "at a village fete", "in the drizzle",
    "next to a roaring fire", "inside a huge cathedral", "along a canal towpath",
    "in a field of poppies", "on a station platform", "at a craft fair",
    "in a walled garden", "on a narrow cobbled lane", "at the edge of a pine forest",
    "on a sailing boat", "in a cluttered workshop",
)  # fmt: skip
PHOTO_DETAILS: Final = (
    "with fairy lights behind it", "with long shadows across the grass",
    "with a sleepy dog in the corner", "covered in frost", "with hills on the horizon",
    "surrounded by wildflowers", "under a pink and orange sky", "in soft golden light",
    "with seagulls circling overhead", "with steam rising off it", "dusted with snow",
    "with a queue of people behind", "reflected in a puddle", "with bunting strung above",
)  # fmt: skip

FRIENDS: Final = (
    "my friend Tamsin", "Oskar from the pottery studio", "my neighbour Bernadette", "Declan",
    "my old flatmate Rosalind", "Imogen", "Bartek from upstairs", "Auntie Marguerite",
    "Wilhelmina", "Cosmo", "my mate Fergus", "Henrietta", "Lavinia", "Percival", "Tallulah",
    "Ignatius", "Araminta", "Rufus", "Philippa", "Lucinda", "Barnaby", "Horatio",
    "Clementine's dad", "Ezra from the allotments", "Mirabel", "Thaddeus", "Gwendolyn",
    "my landlady Ottoline", "Cornelius", "Agatha from the choir", "Leopold", "Seraphina",
    "Jemima", "Montgomery", "Winifred", "Bertrand",
)  # fmt: skip
VENUES: Final = (
    "the climbing centre", "the botanical gardens", "the flea market", "the repair cafe",
    "the community orchard", "the lido", "the observatory", "the model railway exhibition",
    "the craft brewery", "the antique shop on the hill", "the reptile sanctuary",
    "the jazz cafe", "the ceramics studio", "the cider farm", "the roller disco",
    "the vintage fair", "the zine library", "the marina", "the sculpture park",
    "the butterfly house", "the salsa class", "the pumpkin patch", "the farm shop",
    "the planetarium", "the cathedral cloisters", "the seaside arcade", "the ferry terminal",
    "the skate park", "the lavender farm", "the puppet theatre", "the city farm",
    "the ice rink", "the record fair", "the windmill", "the velodrome", "the maritime festival",
    "the crazy golf course", "the petting zoo", "the greyhound track", "the steam railway",
    "the pier", "the orangery",
)  # fmt: skip
PASTIMES: Final = (
    "restoring a rocking chair", "juggling", "foraging for wild garlic",
    "building a birdhouse", "practising calligraphy", "sketching strangers on the tram",
    "making candles", "repotting succulents", "brewing ginger beer", "tracing our ancestry",
    "weaving baskets", "sanding down an old dresser", "collecting sea glass", "birdwatching",
    "doing crosswords in pen", "building a terrarium", "embroidering cushions",
    "card tricks", "stargazing", "whittling spoons", "pressing wildflowers",
    "making kombucha", "the harmonica", "upcycling junk", "planting tulip bulbs",
    "photographing old doors", "sign language", "writing haiku", "origami",
    "baking macarons", "orienteering", "beekeeping", "bookbinding", "mosaics",
    "glassblowing", "fly fishing", "topiary", "puppetry", "lino printing", "metal detecting",
    "ballroom dancing", "falconry",
)  # fmt: skip
THINGS: Final = (
    "a brass telescope", "a box of tarnished cutlery", "a velvet armchair",
    "a shoebox of postcards", "a cast-iron kettle", "an enamel bread bin",
    "a ceramic owl", "a wicker hamper", "a mahogany chessboard", "a battered trombone case",
    "a jar of marbles", "a lava lamp", "a rusty anchor", "a cuckoo clock",
    "an embroidered waistcoat", "a teapot shaped like a cabbage", "a carved walking stick",
    "a globe with countries that no longer exist", "a stuffed pheasant", "a jukebox",
    "a rocking horse", "a tin of buttons", "a barometer", "a sewing machine from the fifties",
    "a harpsichord stool", "a taxidermy badger", "a pewter tankard", "a gramophone",
    "a chandelier missing half its crystals", "a deckchair with a parrot print",
)  # fmt: skip
TREATS: Final = (
    "roasted chestnuts", "cardamom buns", "churros", "jam doughnuts", "smoked mackerel",
    "sticky toffee pudding", "baklava", "honeycomb", "mulled cider", "garlic flatbread",
    "pistachio gelato", "crumpets", "pierogi", "jerk chicken", "samosas", "crepes",
    "halloumi fries", "arancini", "bao buns", "Welsh cakes", "kimchi pancakes",
    "fish tacos", "gyoza", "bubble tea", "treacle tart", "spanakopita", "empanadas",
    "bramble crumble", "katsu curry", "ceviche", "eclairs", "flapjacks",
)  # fmt: skip
VERDICTS: Final = (
    "surprisingly brilliant", "a complete shambles", "weirdly relaxing", "chaotic but fun",
    "the best decision in ages", "more tiring than it sounds", "absolutely magical",
    "a bit underwhelming", "ridiculous in the best way", "oddly emotional",
    "hilarious from start to finish", "exactly as bonkers as it sounds",
    "worth every penny", "not for the faint-hearted",
)  # fmt: skip
REASONS: Final = (
    "I needed something that isn't a screen", "my physio suggested it",
    "it's cheaper than therapy", "I lost a bet", "the flat needed brightening up",
    "I wanted an excuse to get outside", "my hands need something to do",
    "someone at the pub dared me", "it keeps my mind off things",
)  # fmt: skip
SCENES: Final = (
    "a seagull stealing a whole pasty", "a goat standing on a trampoline",
    "a toddler conducting an imaginary orchestra", "two otters holding hands",
    "a cat riding a robot hoover", "ducklings crossing a roundabout",
    "a squirrel raiding a bird feeder", "a parrot singing opera", "a horse in pyjamas",
    "a dachshund in a tiny raincoat",
)  # fmt: skip
SHOPS: Final = (
    "record shop", "bookbindery", "cheese shop", "tea room", "plant shop", "haberdashery",
    "board game cafe", "bike workshop", "chocolatier", "ice cream parlour",
)  # fmt: skip
GOODS: Final = (
    "handmade notebooks", "rare cacti", "Danish pastries", "seventies vinyl",
    "hand-dyed wool", "loose-leaf tea", "retro arcade machines", "fancy stationery",
    "sheep's cheese", "artisan marmalade",
)  # fmt: skip
TRIVIA: Final = (
    "octopuses have three hearts", "honey never goes off", "wombats have cube-shaped poo",
    "a group of flamingos is called a flamboyance", "sloths can hold their breath longer "
    "than dolphins", "bananas are berries but strawberries aren't", "sea otters have a "
    "favourite pebble", "cows have best friends", "a snail can sleep for three years",
    "koalas have fingerprints", "the Eiffel Tower grows in hot weather",
)  # fmt: skip
TRIPS: Final = (
    "Bruges", "the Peak District", "Lake Como", "a Cornish fishing village", "Copenhagen",
    "the Isle of Skye", "Seville", "Ljubljana", "the Norfolk Broads", "Tallinn",
    "a Greek island with one shop", "Dubrovnik", "the Lake District", "Gdansk", "Bilbao",
    "a lighthouse cottage in Pembrokeshire", "Zermatt", "the Outer Hebrides", "Naples",
    "a yurt in Shropshire",
)  # fmt: skip
STORIES: Final = (
    "{friend} dragged me to {venue} and we ended up staying for hours, which was {verdict}.",
    "I've taken up {pastime}, mostly because {reason}.",
    "Found {thing} at {venue}, no idea where it'll go but I love it.",
    "{friend} has got really into {pastime}, it's all they talk about, honestly {verdict}.",
    "We walked past {venue} and the smell of {treat} nearly finished me off.",
    "Did you know {trivia}? {friend} told me and I can't stop thinking about it.",
    "The plan is {pastime} for a bit, then {treat} and a very long sit down.",
    "There's {thing} in the window of the {shop} near {venue} and it keeps calling to me.",
    "{friend} sent me a video of {scene}, I've watched it about twenty times.",
    "A new {shop} is opening by {venue}, apparently it sells {goods}, dangerous.",
    "{friend} and I shared {treat} at {venue}, {verdict}.",
    "Went to {venue} with {friend}, we tried {pastime} and it was {verdict}.",
    "Honestly {treat} from the {shop} by {venue} might be the best thing I've eaten, "
    "{friend} agrees.",
    "{friend} is selling {thing} to make room for {pastime}, which tells you everything.",
    "Sat outside {venue} for an hour people-watching, a man walked past with {thing}.",
    "Thinking of getting {friend} {thing} as a thank-you, is that too much?",
    "{friend} just got back from {trip}, the pictures are unreal and I'm very jealous.",
    "We're toying with a few days in {trip}, mostly for the {treat}, any tips?",
    "Someone at {venue} told me {trip} is overrated, I refuse to believe it.",
    "If I won the lottery I'd move to {trip} and take up {pastime} full time.",
    "My other half bought {thing} off a stall at {venue}, I have questions.",
    "I keep seeing adverts for {pastime} classes at {venue}, maybe it's a sign.",
    "If you're ever near {venue}, the {shop} there does amazing {goods}.",
    "{friend} won {thing} in a raffle at {venue} and has no idea what to do with it.",
    "Spent ages watching {scene} on my phone instead of sleeping, no regrets.",
    "Apparently {trivia}, which is the most useful thing I've learned all day.",
)  # fmt: skip
STORY_SLOTS: Final = {
    "friend": FRIENDS,
    "venue": VENUES,
    "pastime": PASTIMES,
    "thing": THINGS,
    "treat": TREATS,
    "verdict": VERDICTS,
    "reason": REASONS,
    "scene": SCENES,
    "shop": SHOPS,
    "goods": GOODS,
    "trivia": TRIVIA,
    "trip": TRIPS,
}
#: Words padding must never hold: each names a day, month or year, or a time relative to
#: the session, which could change what a question about dates finds.
TIME_WORDS: Final = frozenset(
    {m.lower() for m in MONTHS}
    | {"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"}
    | {"today", "tonight", "yesterday", "tomorrow", "morning", "evening", "afternoon"}
    | {"week", "weekend", "month", "year", "ago", "last", "next", "spring", "summer"}
    | {"autumn", "winter", "christmas", "fortnight", "recently", "lately", "earlier"}
)
WORD: Final = re.compile(r"[a-z0-9']+")
_STEMMER: Final = Stemmer.Stemmer("english")
DATE_IN_QUESTION: Final = re.compile(
    r"\b(" + "|".join(MONTHS) + r"|\d{4})\b|\b(today|yesterday|week|month|year|ago|recently|"
    r"last time|the other day|a while back|before)\b"
)


def generate(
    folder: Path, *, conversations: int = 10, sessions: int = SESSIONS, seed: int = SEED
) -> None:
    """Write ``entries.jsonl`` and ``queries.jsonl`` into ``folder``.

    Args:
        folder: created if missing; both files are replaced.
        conversations: number of scopes ``conv-0`` ... ``conv-{n-1}``.
        sessions: sessions per conversation (~24 turns each); the questions per
            category scale with them as in the hard conversations.
        seed: the one source of randomness.

    Raises:
        ValueError: if there are fewer than four sessions or no conversation.
    """
    rng, convs = hard.planted_conversations(conversations, sessions, seed)
    for conv in convs:
        _frame_questions(rng, conv)
    folder.mkdir(parents=True, exist_ok=True)
    write_rows(folder / "entries.jsonl", [row for conv in convs for row in _entries(rng, conv)])
    write_rows(folder / "queries.jsonl", [q for conv in convs for q in conv.queries])


def _frame_questions(rng: random.Random, conv: Conversation) -> None:
    """Frame questions as asked about a chat: naming the other speaker, the month of
    their evidence's session (when it is one session and the category has no date)."""
    for query in conv.queries:
        named = [n for n in conv.names if re.search(rf"\b{n}\b", query["query"])]
        name = named[0] if named else conv.names[0]
        other = conv.names[1 - conv.names.index(name)]
        sessions = {int(e.split("/S")[1].split(":")[0]) for e in query["expected"]}
        dated = query["category"] in DATED or len(sessions) != 1
        with_month = not dated and rng.random() < MONTH_SHARE
        with_other = rng.random() < OTHER_SHARE
        if with_month and with_other:
            frames: Sequence[str] = BOTH_FRAMES
        elif with_month:
            frames = MONTH_FRAMES
        elif with_other:
            frames = OTHER_FRAMES
        else:
            continue
        day = conv.sessions[min(sessions) - 1].day
        question = query["query"]
        query["query"] = rng.choice(frames).format(
            month=f"{MONTHS[day.month - 1]} {day.year}",
            name=name,
            other=other,
            q=question[:1].lower() + question[1:],
        )


class Lines:
    """Where a conversation's turns take their lines from: the hard conversations'
    filler (a shuffled deck, dealt again when it runs out) and stories; ``neutral``
    lines for padding share no word with ``avoid``."""

    def __init__(self, rng: random.Random, conv: Conversation, cast: hard.Cast) -> None:
        self.rng = rng
        self.conv = conv
        self.cast = cast
        self.deck: list[str] = []
        questions = " ".join(q["query"] for q in conv.queries)
        self.avoid = forms(questions) | forms(" ".join(TIME_WORDS))

    def slots(self, speaker: int) -> dict[str, str]:
        rng = self.rng
        return {
            "other": self.conv.names[1 - speaker],
            "job": self.cast.jobs[speaker],
            "saga": self.cast.sagas[speaker],
            "activity": rng.choice(hard.ACTIVITIES),
            "weather": rng.choice(hard.WEATHER),
            "food": rng.choice(hard.FOODS),
            "show": rng.choice(hard.SHOWS),
            "place": rng.choice(hard.PLACES),
            "relative": rng.choice(hard.RELATIVES),
            "word": rng.choice(hard._question_words()),
        }

    def filler(self, speaker: int) -> str:
        if not self.deck:
            self.deck = self.rng.sample(hard.FILLER, len(hard.FILLER))
        return self.deck.pop().format(**self.slots(speaker))

    def story(self) -> str:
        rng = self.rng
        text = rng.choice(STORIES).format(**{k: rng.choice(v) for k, v in STORY_SLOTS.items()})
        return text[:1].upper() + text[1:]

    def photo(self) -> str:
        rng = self.rng
        caption = f"{rng.choice(PHOTO_SUBJECTS)} {rng.choice(PHOTO_SETTINGS)}"
        if rng.random() < 0.5:
            caption = f"{caption} {rng.choice(PHOTO_DETAILS)}"
        return f"{rng.choice(PHOTO_LEADS)} [shares a photo of {caption}]"

    def line(self, speaker: int) -> str:
        return self.story() if self.rng.random() < STORY_SHARE else self.filler(speaker)

    def neutral(self) -> str | None:
        """A story sharing no word (in any of its :func:`forms`) with any question of
        the scope, nor naming a time; None if fifty tries find none."""
        for _ in range(50):
            text = self.story()
            if not forms(text) & self.avoid:
                return text
        return None


def forms(text: str) -> set[str]:
    """The words of ``text`` as satchel indexes them (lemmatised and stemmed, stopwords
    out) and as a plain Snowball stemmer stems them: two texts sharing none share no
    word in any form either system's full-text search would match."""
    words = [w for w in WORD.findall(text.lower()) if w not in STOPWORDS]
    return set(analyse(text)) | set(_STEMMER.stemWords(words))


def _entries(rng: random.Random, conv: Conversation) -> list[dict[str, Any]]:
    jobs, sagas = rng.sample(hard.JOBS, 2), rng.sample(hard.SAGAS, 2)
    lines = Lines(rng, conv, hard.Cast((jobs[0], jobs[1]), (sagas[0], sagas[1])))
    rows: list[dict[str, Any]] = []
    for session in conv.sessions:
        for turn, text in enumerate(session.texts):
            length = turn_length(rng)
            if text is None:
                conv.put(session, turn, _small_talk(rng, lines, session, turn, length))
            else:
                conv.put(session, turn, _padded(rng, lines, text.split(": ", 1)[1], length))
            rows.append(row_of(conv.scope, session, turn))
    return rows


def turn_length(rng: random.Random) -> int:
    """A turn's length in words, its speaker's name included."""
    return min(LONGEST, max(1, round(rng.lognormvariate(MU, SIGMA))))


def words(text: str) -> int:
    return len(text.split())


def _small_talk(rng: random.Random, lines: Lines, session: Session, turn: int, length: int) -> str:
    speaker = session.speaker(turn)
    slots = lines.slots(speaker)
    if turn == 0:
        parts = [rng.choice(hard.GREETINGS).format(**slots)]
    elif turn == len(session.texts) - 1:
        return rng.choice(hard.CLOSINGS).format(**slots)
    elif length < SHORTEST:
        parts = [rng.choice(hard.ACKS).format(**slots)]
    elif rng.random() < PHOTO_SHARE:
        parts = [lines.photo()]
    else:
        text = lines.line(speaker)
        if rng.random() < hard.OPENER_SHARE:
            text = hard.opened(rng.choice(hard.OPENERS), text)
        parts = [text]
    _fill(parts, length, lambda: lines.line(speaker))
    if rng.random() < hard.TYPO_SHARE and "[shares a photo" not in parts[-1]:
        parts[-1] = hard.typo(rng, parts[-1])
    text = " ".join(parts)
    if rng.random() < hard.EMOJI_SHARE and words(text) < LONGEST - 1:
        text = f"{text} {rng.choice(hard.EMOJI)}"
    return text


def _padded(rng: random.Random, lines: Lines, utterance: str, length: int) -> str:
    """A planted utterance with neutral stories after it (one before it, sometimes) up to
    ``length`` words."""
    parts = [utterance]
    _fill(parts, length, lines.neutral)
    if len(parts) > 1 and rng.random() < 0.3:
        parts.insert(0, parts.pop())
    return " ".join(parts)


def _fill(parts: list[str], length: int, more: Callable[[], str | None]) -> None:
    """Append lines from ``more()`` while they bring the turn (with its speaker's name)
    nearer ``length`` words than it is, and keep it within ``LONGEST``."""
    count = 1 + sum(map(words, parts))
    while count < length:
        line: str | None = more()
        if line is None or count + words(line) > LONGEST or count + words(line) / 2 > length:
            return
        parts.append(line)
        count += words(line)


def shape(folder: Path) -> dict[str, float]:
    """What makes a workload's prepares slow or quick, measured on its files: turns per
    scope; words per turn (whitespace-separated, the speaker's name included) mean, p95
    and max; distinct lowercased words per scope; the share of turns sharing a photo;
    words per question; the shares of questions naming a speaker and a date; the share
    of a question's terms its evidence holds (:func:`overlap`), mean over questions."""
    entries, queries = (read_rows(folder / name) for name in ("entries.jsonl", "queries.jsonl"))
    lengths = np.array([words(row["text"]) for row in entries])
    vocabulary: dict[str, set[str]] = collections.defaultdict(set)
    speakers: dict[str, set[str]] = collections.defaultdict(set)
    for row in entries:
        vocabulary[row["scope"]].update(WORD.findall(row["text"].lower()))
        speakers[row["scope"]].add(row["text"].split(":", 1)[0])
    named = [
        any(re.search(rf"\b{n}\b", q["query"]) for n in speakers[q["scopes"][0]]) for q in queries
    ]
    texts = {row["id"]: row["text"] for row in entries}
    shared = [
        overlap(q["query"], [texts[e] for e in q["expected"]], speakers[q["scopes"][0]])
        for q in queries
    ]
    return {
        "scopes": len(vocabulary),
        "turns": len(entries),
        "turns_per_scope": len(entries) / len(vocabulary),
        "turn_words_mean": float(lengths.mean()),
        "turn_words_p95": float(np.percentile(lengths, 95)),
        "turn_words_max": int(lengths.max()),
        "distinct_words_per_scope": float(np.mean([len(v) for v in vocabulary.values()])),
        "photo_share": float(np.mean(["[shares a photo of" in row["text"] for row in entries])),
        "questions": len(queries),
        "question_words_mean": float(np.mean([words(q["query"]) for q in queries])),
        "questions_naming_a_speaker": float(np.mean(named)),
        "questions_naming_a_date": float(
            np.mean([bool(DATE_IN_QUESTION.search(q["query"])) for q in queries])
        ),
        "question_terms_in_evidence": float(np.mean(shared)),
    }


def overlap(question: str, evidence: Sequence[str], names: Iterable[str]) -> float:
    """The share of a question's index terms (satchel's analysis; the speakers' names
    aside) that its evidence turns hold: how much a full-text search finds it by."""
    aside = set(analyse(" ".join(names)))
    asked = set(analyse(question)) - aside
    if not asked:
        return 0.0
    held = set(analyse(" ".join(evidence)))
    return len(asked & held) / len(asked)


def read_rows(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as lines:
        return [json.loads(line) for line in lines]


def describe(measured: dict[str, float]) -> str:
    """One line of :func:`shape`'s figures."""
    m = measured
    return (
        f"{m['scopes']:.0f} conversations, {m['turns']:,.0f} turns ({m['turns_per_scope']:.0f} "
        f"per scope); words per turn mean {m['turn_words_mean']:.1f}, p95 "
        f"{m['turn_words_p95']:.0f}, max {m['turn_words_max']:.0f}; "
        f"{m['distinct_words_per_scope']:,.0f} distinct words per scope; "
        f"{m['photo_share']:.1%} of turns share a photo; {m['questions']:.0f} questions of "
        f"{m['question_words_mean']:.1f} words, {m['questions_naming_a_speaker']:.0%} naming "
        f"a speaker, {m['questions_naming_a_date']:.0%} a date or time, "
        f"{m['question_terms_in_evidence']:.0%} of their terms in their evidence"
    )


def main(argv: list[str] | None = None) -> None:
    """``python -m bench._lifelike_conversations OUT_DIR``: write the workload, print its
    counts and shape."""
    parser = argparse.ArgumentParser(
        prog="python -m bench._lifelike_conversations",
        description="Write conversations shaped like real chats (entries.jsonl, "
        "queries.jsonl): the hard conversations' questions among turns of real length.",
    )
    parser.add_argument("out", type=Path, metavar="OUT_DIR", help="folder to write into")
    parser.add_argument("--conversations", type=int, default=10, help="scopes (default 10)")
    parser.add_argument(
        "--sessions", type=int, default=SESSIONS, help=f"per scope (default {SESSIONS})"
    )
    parser.add_argument("--seed", type=int, default=SEED, help=f"random seed (default {SEED})")
    args = parser.parse_args(argv)
    generate(args.out, conversations=args.conversations, sessions=args.sessions, seed=args.seed)
    print_counts(args.out)
    print(describe(shape(args.out)))


if __name__ == "__main__":
    main()
