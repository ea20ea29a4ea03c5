"""A harder synthetic conversational workload, as hard as real multi-session chat data.

``bench/_conversations.py`` is too kind: its questions reuse their evidence's words, its
small talk is short and never touches the planted topics, and satchel scored 0.83 on it
where a real multi-session corpus gave 0.735. This generator writes the same format
(docs/workload.md: memory entries of kind ``dialog``, ``created_at``, one thread per
session, ids like ``conv-3/S4:12``) with what makes real chats hard:

- every turn starts with its speaker's name and most questions name a speaker, so a
  name matches half the scope and buys nothing;
- most turns are small talk of realistic length (~80-200 characters) that reuses the
  planted questions' words in other senses ("buy" in "I need to buy birthday cards",
  "catch" in "we should do a proper catch-up"), relative days ("yesterday was grey")
  the time channel cannot tell from events, running themes per speaker (a workplace, a
  saga) repeated in unrelated turns, ~3% typos, emoji and short acknowledgements;
- each planted row brings decoy turns that reuse its question's words in another sense.

Question categories (``expected`` holds the evidence turns):

- ``single-hop``: a fact stated once; the question paraphrases it and shares at most
  one content word with it besides the speaker's name.
- ``reply``: one speaker asks, the other answers in the next turn; the question targets
  the answer, which shares no stemmed word with it (but maybe a name), and shares words
  with the asking turn only. ``expected`` is the answer turn alone.
- ``word-forms``: the evidence uses an irregular form ("bought", "mice", "better") and
  the question the base form ("buy", "mouse", "good"), which a Snowball stemmer keeps
  apart; the question shares no other content word with the evidence.
- ``multi-session``: a list question whose 2-4 items sit in different sessions, each
  phrased differently and sharing at most one word with the question.
- ``absolute-date``: an event told relative to its session ("yesterday", "last
  Friday", "a fortnight ago", some phrases no date parser resolves); the question
  names its absolute date or month and a paraphrased hint of what happened.
- ``relative-in-memory``: a turn places an event "last month", "next week", "last
  year"...; the question names that month or year (the turn was said in another).
- ``relative-question``: the question says "last week", "recently", "a few days ago"
  relative to the scope's newest session, where the evidence sits among small talk.
- ``temporal-noise``: about a turn said long before the newest session, with a relative
  phrase ("last time", "the other day", "earlier this year") that must not be what
  finds it.
- ``open-domain``: an inference about a speaker ("Would Maya likely enjoy a weekend of
  hiking?", "What might Leo's stance be on working from home?") that two or three of
  their own turns in different sessions imply; together these share at most the name
  and one topic word with the question, while the other speaker says things on the
  same topic (with its word, or the opposite stance) that answer nothing about them.

All text is invented here (no real dataset). Deterministic for a seed: one
``random.Random``, no clock. ``python -m bench._hard_conversations OUT_DIR`` writes a
folder; ``python -m bench recall`` evaluates satchel on it.
"""

from __future__ import annotations

import argparse
import functools
import itertools
import random
import re
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import attrs

from bench._conversations import (
    MONTHS,
    Conversation,
    Session,
    claim,
    date_text,
    print_counts,
    row_of,
    write_rows,
)

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

SEED: Final = 29
FIRST_DAY: Final = date(2022, 1, 3)
#: Sessions per conversation the per-category counts below are meant for.
SESSIONS: Final = 24
CATEGORIES: Final = (
    "single-hop",
    "reply",
    "word-forms",
    "multi-session",
    "absolute-date",
    "relative-in-memory",
    "relative-question",
    "temporal-noise",
    "open-domain",
)
#: Questions per conversation and category at ``SESSIONS`` sessions (scaled otherwise).
PER_CONVERSATION: Final = {
    "single-hop": 4,
    "reply": 4,
    "word-forms": 5,
    "multi-session": 3,
    "absolute-date": 4,
    "relative-in-memory": 3,
    "relative-question": 3,
    "temporal-noise": 3,
    "open-domain": 3,
}
TYPO_SHARE: Final = 0.03
EMOJI_SHARE: Final = 0.1
ACK_SHARE: Final = 0.12
TAIL_SHARE: Final = 0.8
OPENER_SHARE: Final = 0.2
#: Of the small-talk turns that go on, the share that goes on with a second line.
PAIR_SHARE: Final = 0.4


@attrs.frozen
class Fact:
    """A fact stated once: ``text`` (holding ``{x}``, one of ``values``, when it has
    values), its question naming the speaker as ``{name}`` (and ``{phrase}`` for the
    relative categories), and decoys reusing the question's words in other senses."""

    text: str
    question: str
    decoys: tuple[str, ...]
    values: tuple[str, ...] = ("",)


@attrs.frozen
class Exchange:
    """A ``reply`` pair: the asker's turn, the other speaker's answer (no word of the
    query), the query naming the asker as ``{asker}``, and decoys on the query's words."""

    ask: str
    answer: str
    query: str
    decoys: tuple[str, ...]


@attrs.frozen
class Irregular:
    """A ``word-forms`` fact: ``forms`` pairs each irregular form in ``text`` with the
    base form the question uses instead."""

    text: str
    question: str
    forms: tuple[tuple[str, str], ...]
    decoys: tuple[str, ...]


@attrs.frozen
class Topic:
    """A ``multi-session`` list: the question naming ``{name}`` and items to spread."""

    query: str
    items: tuple[str, ...]
    decoys: tuple[str, ...]


@attrs.frozen
class Event:
    """A dated event: ``text`` holds ``{when}`` (``future`` too, told ahead of time, when
    the category has it); the question names ``{name}`` and ``{date}``."""

    text: str
    question: str
    decoys: tuple[str, ...]
    future: str = ""


@attrs.frozen
class Inference:
    """An ``open-domain`` question naming ``{name}``: ``evidence`` are that speaker's own
    turns implying the answer (some of them are planted), ``other`` the other speaker's
    turns on the same topic, which say nothing about ``{name}``."""

    question: str
    evidence: tuple[str, ...]
    other: tuple[str, ...]


NAMES: Final = (
    "Maya", "Leo", "Ines", "Theo", "Amara", "Jonas", "Priya", "Callum", "Noor", "Elif",
    "Ruben", "Saoirse", "Kenji", "Lotte", "Dario", "Femi", "Greta", "Hugo", "Yara", "Anouk",
    "Ottilie", "Ravi", "Mirela", "Tobias",
)  # fmt: skip

SINGLE_HOP: Final = (
    Fact("We picked up a tabby kitten from the shelter on Saturday, she's called {x} and "
         "she already owns the sofa.", "What is the name of {name}'s new cat?",
         ("I can never remember the name of that new bakery by the station, the one with "
          "the blue awning.",
          "The new guy at work has a cat on every single mug he owns, it's become a whole "
          "personality."),
         ("Juniper", "Pickle", "Mochi", "Clementine", "Biscuit")),
    Fact("My little sister got into veterinary college in {x}, she starts in the autumn and "
         "is already buying stethoscopes.",
         "Which city is {name}'s sibling going to study animal medicine in?",
         ("This city never sleeps, there was a leaf blower going outside at six this "
          "morning.",
          "I need to study the new timetable properly, they changed every single train."),
         ("Leeds", "Utrecht", "Bologna", "Galway", "Lyon")),
    Fact("Finally treated myself to a secondhand {x} hatchback, dark green with one dodgy "
         "wing mirror.", "What model of hatchback did {name} purchase?",
         ("That model railway shop on the high street is closing down, so sad.",
          "My uncle wants to purchase a sailing boat, which is a terrible idea for a man "
          "who gets seasick."),
         ("Skoda", "Mazda", "Peugeot", "Honda", "Fiat")),
    Fact("I've started {x} lessons at the community hall on Tuesday evenings, my fingertips "
         "are in pieces.", "Which musical instrument is {name} learning to play?",
         ("My nephew is learning to tie his shoes, it's the cutest struggle you've ever "
          "seen.",
          "Play something cheerful while you cook, it makes the washing up bearable."),
         ("cello", "ukulele", "trumpet", "accordion", "banjo")),
    Fact("The offer came through, I'll be doing {x} for a solar panel company from the "
         "first of the month.", "What role did {name} accept at the renewable power firm?",
         ("The power went off twice last night, I reset the clocks in my pyjamas.",
          "My role at home is apparently chief finder of the remote control."),
         ("payroll", "customer support", "quality control", "logistics", "graphic design")),
    Fact("We've booked the honeymoon, ten days in {x} and I'm counting the sleeps already.",
         "Where is {name} going after the wedding?",
         ("My cousin's wedding playlist is apparently three hours of ABBA, send help.",
          "Where is everyone going with those giant umbrellas, is there a festival on?"),
         ("Sardinia", "Madeira", "Crete", "the Azores", "Sicily")),
    Fact("Turns out I react badly to {x}, my whole face puffed up at the dinner party on "
         "Friday.", "What food is {name} allergic to?",
         ("I'm allergic to spreadsheets on a Friday afternoon, honestly.",
          "Food at the canteen was weirdly decent today, some kind of lentil thing."),
         ("peanuts", "shellfish", "kiwi", "sesame", "mustard")),
    Fact("Gran's {x}th birthday is coming up, the whole family is hiring the village hall "
         "and a ceilidh band.", "How old is {name}'s gran turning?",
         ("How old is that bread? It's gone all weird and blue at one end.",
          "My grandmother's recipe book fell apart so I'm photographing every page."),
         ("90", "85", "95", "80")),
    Fact("I signed up for the {x} half marathon in the spring, the training plan is stuck "
         "to the fridge.", "Which marathon did {name} enter?",
         ("The rat race at work is really getting to me this month.",
          "My brother entered a pie-eating contest and came dead last, very proud.",
          "Film marathon on Sunday, eleven hours of hobbits and I regret nothing."),
         ("Bristol", "Valencia", "Cardiff", "Berlin", "Porto")),
    Fact("Our new flat overlooks the canal on {x} Road, the ducks wake us up at dawn.",
         "What street does {name} live on now?",
         ("Street parking round here is a nightmare on market days.",
          "I could honestly live on toast and tea if nobody stopped me."),
         ("Mill", "Quarry", "Elm", "Victoria", "Tanner")),
    Fact("My parrot {x} has learned to copy the microwave beep, it's driving us all up the "
         "wall.", "What is {name}'s bird called?",
         ("Bird song at four in the morning is lovely for about two minutes.",
          "The new manager is called something like Brent or Trent, I keep getting it "
          "wrong."),
         ("Captain", "Mango", "Rio", "Ziggy", "Pesto")),
    Fact("My brother retrained and works as {x} up in Aberdeen now, he loves it.",
         "What is {name}'s sibling's occupation in Scotland?",
         ("Scotland is on my list, everyone says the islands are unreal.",
          "My main occupation today was staring at the kettle waiting for it to boil."),
         ("a firefighter", "a pharmacist", "a carpenter", "an electrician", "a midwife")),
    Fact("Took {x} place in the office chili cook-off, the trophy is a spray-painted "
         "ladle.", "Where did {name} finish in the spicy stew competition?",
         ("Did you finish that series? The ending really annoyed me.",
          "The competition for parking spaces at work is fierce, people arrive at seven."),
         ("first", "second", "third")),
    Fact("Decided on {x} for the spare room walls, it looks like a swimming pool in there.",
         "What colour is {name} painting the guest room?",
         ("Colour me surprised, the bus actually turned up on time.",
          "I'm painting my nails again, the results are very wonky.",
          "There's no room in the fridge for anything, who bought six melons?"),
         ("teal", "mint", "sage", "duck-egg blue", "terracotta")),
    Fact("Our book club picked {x} for this round and I'm already three chapters behind.",
         "Which novel is {name}'s reading group doing?",
         ("Group chats are too much, forty messages about one barbecue.",
          "The novel thing about this cafe is they let you bring dogs in."),
         ("Middlemarch", "Rebecca", "Beloved", "Circe", "Persuasion")),
)  # fmt: skip

REPLY: Final = (
    Exchange("Any tips for the Dolomites? I've never done proper mountains before.",
             "Pack layers and set off before sunrise, the storms there roll in fast and "
             "nasty.",
             "What advice did {asker} get about the hiking trip to the Dolomites?",
             ("I watched a documentary about the Dolomites, the cliffs looked fake.",
              "My work trip got cancelled, honestly I'm relieved.",
              "They're hiking the rent again, so no trip anywhere this year, advice welcome.",
              "Postcard from my aunt in the Dolomites: 'wish you were here', she never has.")),
    Exchange("Gas or induction hob for the new place, what would you do?",
             "The magnetic kind, no question. Boils water in half the time and wipes clean "
             "in seconds.",
             "What was {asker} told about choosing a hob for the new kitchen?",
             ("The kitchen tap is dripping again, I need to find someone who fixes them.",
              "Choosing a sandwich took me ten minutes today, I'm not okay.",
              "Choosing new kitchen tiles is the most boring argument we've ever had.",
              "I told the landlord the kitchen light flickers, he said it has character.")),
    Exchange("How do I stop my basil dying out on the balcony? It's flopping over.",
             "Water only when the soil feels dry, and pinch off any flowers as soon as they "
             "appear.",
             "What did {asker} learn about keeping basil alive on the balcony?",
             ("The balcony next door has a full trampoline on it, no idea how.",
              "Keeping the kitchen tidy is a losing battle in this flat.",
              "Keeping myself alive on coffee and biscuits this week, learn from my mistakes.",
              "Basil, the landlord's dog, barked at me from his balcony again.")),
    Exchange("Can you recommend something to read on the way to Singapore? Thirteen hours!",
             "Pachinko by Min Jin Lee. It swallowed a whole weekend for me.",
             "Which book was recommended to {asker} for the long flight to Singapore?",
             ("Singapore keeps coming up in the news lately, doesn't it?",
              "My flight home was delayed four hours, I know that airport too well now.",
              "Can you recommend someone to book for the long weekend? Our dog sitter is away.",
              "The flight of stairs up to my flat feels longer every single day.")),
    Exchange("My bread starter has gone all funky, it reeks of varnish, is it dead?",
             "It's hungry. Feed it twice a day for a while and it'll calm down.",
             "What did {asker} hear about the sourdough starter smelling like nail polish?",
             ("The nail salon on my street has closed down.",
              "Something in the fridge smells odd and I'm scared to find out what.",
              "The starter at that tapas place smelled like feet, I'll never hear the end of it.",
              "The Polish bakery upstairs makes the whole stairwell smell like heaven.")),
    Exchange("What on earth do I buy my parents for their fortieth?",
             "Frame a print of the newspaper front page from their wedding day.",
             "What gift idea did {asker} get for the parents' fortieth anniversary?",
             ("We forgot our own anniversary dinner booking, almost a disaster.",
              "My parents have discovered podcasts and now quote them at me.",
              "No idea what to get anyone for Christmas, gift shopping is my nemesis.",
              "It's the fortieth anniversary of the village fete, bunting on every lamppost.")),
    Exchange("The cat is shredding the new couch, how do I make her quit?",
             "Double-sided tape on the arms, they hate the sticky feel, plus a post right "
             "next to it.",
             "What was {asker} told about stopping the cat from scratching the sofa?",
             ("Our neighbour's cat sleeps on our doormat every single day.",
              "The sofa cushions have gone flat, it's like sitting on cardboard.",
              "Told myself to stop scrolling at midnight, did not stop, obviously.",
              "Starting the sofa hunt from scratch, the cat has claimed the old one for good.")),
    Exchange("Which laptop should I buy for cutting videos on a budget?",
             "A refurbished MacBook Air, those are a steal right now.",
             "What laptop advice did {asker} get for video editing?",
             ("My laptop fan sounds like a jet engine these days.",
              "The video of the cat and the cucumber still makes me cry laughing.",
              "The video of the wedding speech needs a serious edit, my uncle rambled for ages.",
              "Best advice I ever got about my laptop bag: stop carrying bricks around in it.")),
    Exchange("What's the fastest way to get Spanish verbs into my head?",
             "Flashcards every morning, ten minutes, plus podcasts on the commute.",
             "How was {asker} told to learn Spanish verbs quickly?",
             ("Spanish omelette for dinner tonight, ridiculously proud of it.",
              "I learn something new about my boiler every week, none of it good.",
              "Verbs of the day at my nephew's school, he told me every one of them, quickly.",
              "Spanish football is on at the pub tonight if you fancy it.")),
    Exchange("What do I need for a weekend camping in Snowdonia?",
             "A warm sleeping bag and proper waterproof boots, it rains sideways up there.",
             "What packing advice did {asker} get for camping in Snowdonia?",
             ("Camping chairs are on offer at the hardware shop, weirdly.",
              "Packing for a weekend away takes me longer than the actual weekend.",
              "Packing up the office for the move, my advice: never volunteer to label boxes.",
              "My cousin once got lost camping in Snowdonia, it's family legend now.")),
    Exchange("Is my old bike worth saving or should I just get a new one?",
             "Replace the chain and brake pads first, that's cheap and usually enough.",
             "What did {asker} hear about fixing the old bike?",
             ("Someone left an old bike locked to our fence for months.",
              "Fixing the shelf took three attempts and one very bad word.",
              "Did you hear they're fixing the old bridge at last? Only took a decade.",
              "Bike lanes on the high street are finally finished, they look great.")),
    Exchange("How do you get any rest after a run of night shifts? I'm a zombie.",
             "Blackout curtains and a strict wind-down routine helped me loads.",
             "What did {asker} learn about sleeping after hospital night shifts?",
             ("Visited a friend in hospital, she's doing fine, just bored.",
              "Night buses are an experience, a man serenaded the whole top deck.",
              "The night shift porter at the hospital car park waves at me every morning.",
              "I learn more about sleeping from my cat than from any app.")),
    Exchange("Which game would an eight-year-old like for his birthday? It's my nephew.",
             "Ticket to Ride. Easy rules, short rounds, and kids love the trains.",
             "Which board game was suggested for {asker}'s nephew's birthday?",
             ("The board meeting ran for three hours, I nearly cried.",
              "Game night at my cousin's got competitive, someone flipped the table.",
              "My nephew suggested we skip his birthday cake and just eat the icing.",
              "The board outside the pub says the quiz is back, game on.")),
    Exchange("Any tips for my driving test on Thursday? I'm a wreck.",
             "Practise the roundabouts near the centre, examiners love those.",
             "What advice did {asker} get about preparing for the driving test?",
             ("Test results from the clinic came back fine, phew.",
              "Preparing dinner for eight people in my tiny kitchen was chaos.",
              "Preparing for the fire safety test at work, advice: the answer is always run.",
              "Driving rain all day, my umbrella gave up by lunchtime.")),
)  # fmt: skip

WORD_FORMS: Final = (
    Irregular("Finally bought a secondhand kayak off a guy at the climbing wall, it's bright "
              "orange.", "What boat did {name} buy?", (("bought", "buy"),),
              ("I need to buy birthday cards for half the office this month.",
               "Don't buy the cheap bin bags, they split the moment you look at them.")),
    Irregular("We went to that tiny Georgian restaurant behind the library, the dumplings "
              "were unreal.", "Where did {name} go for dinner?", (("went", "go"),),
              ("I'm not sure I can go to the gym tonight, my legs are jelly.",
               "Go on then, tell me all the gossip from dinner.")),
    Irregular("Ran ten kilometres along the river path without stopping once, a personal "
              "record!", "How far can {name} run now?", (("ran", "run"),),
              ("We're about to run out of milk again, how does it go so fast?",
               "The printer at work won't run unless you kick it twice.")),
    Irregular("Ate the most incredible octopus at the harbour place, charred and smoky.",
              "What seafood did {name} eat at the port?", (("ate", "eat"),),
              ("I eat way too many crisps when I'm stressed about work.",
               "Do you want to eat out on Friday or stay in with a film?")),
    Irregular("Wrote a short story about a lighthouse keeper and sent it off to a magazine.",
              "What did {name} write for the publication?", (("wrote", "write"),),
              ("Write down your password somewhere safe, you always forget it.",
               "Can you write me a reference for the flat? No rush at all.")),
    Irregular("Drove all the way to Cornwall in one go, nine hours with two toilet stops.",
              "Where did {name} drive to?", (("drove", "drive"),),
              ("Traffic on the drive home was bumper to bumper again.",
               "My cousin wants to learn to drive but is terrified of roundabouts.")),
    Irregular("Taught my niece to ride a bike over the weekend, lots of grazed knees but "
              "she's got it.", "What skill did {name} teach a relative?",
              (("taught", "teach"),),
              ("Teach me how to fold fitted sheets, I'm begging you.",
               "They should teach tax returns at school instead of algebra.")),
    Irregular("Caught a huge trout at the reservoir, then let it go because I felt guilty.",
              "What fish did {name} catch?", (("caught", "catch"),),
              ("Did you catch the match on Saturday? What a finish.",
               "I always catch a cold the week before a holiday, every time.")),
    Irregular("The children next door built an entire fort out of cardboard boxes in their "
              "garden.", "What did {name} see the neighbour's child build?",
              (("children", "child"), ("built", "build")),
              ("They're going to build flats where the old petrol station was.",
               "My friend's child asked me why I don't have a real job, brutal.")),
    Irregular("We've got mice in the loft again, I can hear them scratching away at night.",
              "Where does {name} have a mouse problem?", (("mice", "mouse"),),
              ("My computer mouse died halfway through a meeting, of course.",
               "Quiet as a mouse, that's me before the first coffee.")),
    Irregular("Our new neighbour bakes sourdough that's better than anything from the bakery.",
              "Whose bread does {name} think is really good?", (("better", "good"),),
              ("Good grief, the queue at the post office was out the door.",
               "Is that new pizza place any good or is it all hype?")),
    Irregular("Swam across the whole lake at the summer camp, my arms are like jelly.",
              "Where did {name} swim?", (("swam", "swim"),),
              ("My head starts to swim when I look at all these forms.",
               "Sink or swim, that's how they train new starters at my place.")),
    Irregular("Sold my old turntable and half my records to a collector in town.",
              "What music gear did {name} sell?", (("sold", "sell"),),
              ("Those lemon cakes at the market sell out by ten every week.",
               "He could sell ice to a penguin, that guy from the phone shop.")),
    Irregular("Lost my grandad's watch in the sea at the weekend, I'm absolutely gutted.",
              "What keepsake did {name} lose?", (("lost", "lose"),),
              ("Don't lose your temper with the printer, it can smell fear.",
               "I always lose at Monopoly, it's basically a family tradition.")),
    Irregular("Flew to Oslo for an interview, the flight was shorter than my commute.",
              "Where did {name} fly to for a job?", (("flew", "fly"),),
              ("A fly got into the car and I nearly swerved into a hedge.",
               "The weeks fly by when the garden needs weeding.")),
    Irregular("Grew a proper beard over the winter, my mum absolutely hates it.",
              "What facial hair did {name} grow?", (("grew", "grow"),),
              ("Kids grow up so fast, my niece is taller than me now.",
               "I'm trying to grow my fringe out, it's an awkward phase.")),
    Irregular("Our team won the pub quiz thanks to my useless knowledge of capital cities.",
              "What contest did {name} win?", (("won", "win"),),
              ("You win some, you lose some, that's what my dad always says.",
               "It's a win for everyone if the bins get collected on time.")),
    Irregular("Broke my wrist falling off a skateboard, forty years old and still an idiot.",
              "Which bone did {name} break?", (("broke", "break"),),
              ("Let's take a break and get a coffee, my eyes are going square.",
               "Don't break the bank on decorations, nobody looks at them.")),
    Irregular("My feet are wrecked from standing at the craft fair stall for nine hours.",
              "Why does {name}'s foot hurt?", (("feet", "foot"),),
              ("I put my foot down about the washing-up rota, finally.",
               "Foot traffic at the shop is way up since the roadworks finished.")),
    Irregular("Met my favourite author at a bookshop signing, I was a babbling mess.",
              "Which writer did {name} meet?", (("met", "meet"),),
              ("Let's meet halfway next time, that train journey is a trek.",
               "The Monday meet at work is pointless, it could be an email.")),
)  # fmt: skip

MULTI_SESSION: Final = (
    Topic("Which cities has {name} visited?",
          ("Just got back from Porto, the tiles on every building were gorgeous and the "
           "custard tarts even better.",
           "Kyoto was a magical city, temples round every corner and tiny quiet gardens.",
           "Four days in Vienna eating cake and walking until my legs gave up, zero "
           "regrets.",
           "Marrakech was loud and colourful and chaotic, I loved every single minute.",
           "Krakow is such a cheap and beautiful city, we're already talking about going back.",
           "Montreal in deep winter is no joke, my ears froze solid on the first morning."),
          ("My aunt visited on Sunday and reorganised my entire kitchen without asking.",
           "The city council dug up our road again, third time since spring.")),
    Topic("What sports has {name} tried?",
          ("Did my first fencing lesson, the mask is so claustrophobic but I loved the "
           "footwork.",
           "Bouldering with friends after work, my fingers are completely shredded.",
           "Surfing is the hardest sport ever, I mostly swallowed seawater for two hours.",
           "Had a go at archery on a hen do and actually hit the target once!",
           "Rowing club taster session at dawn, brutal sport but weirdly fun.",
           "Played squash for an hour with Dan from work, my knees are complaining."),
          ("I tried calling the bank but gave up after an hour on hold.",
           "Sports day at my niece's school was pure chaos, the egg and spoon was savage.")),
    Topic("Which books has {name} read?",
          ("Finished Station Eleven on the train, weirdly comforting in the end.",
           "Project Hail Mary is the funniest book, I laughed out loud in a quiet waiting room.",
           "The Remains of the Day in one sitting, that ending wrecked me.",
           "Halfway through Wolf Hall, the sentences are so dense I reread every page.",
           "Revisited The Hobbit for comfort, still a perfect book, still want a round door."),
          ("Did you read that article about the bridge closing for a year?",
           "I read somewhere that octopuses dream, I think about it a lot.")),
    Topic("What dishes has {name} cooked?",
          ("Made a proper Thai green curry from scratch, the paste alone took ages.",
           "My first homemade lasagne came out surprisingly well, eight layers, what a dish!",
           "Attempted beef Wellington for the in-laws, the pastry was soggy but tasty.",
           "Did a huge pot of lamb tagine for the neighbours, there's still loads left.",
           "Dumplings from scratch with my flatmate, we folded about fifty for one dish.",
           "Paella on the barbecue, smoky and amazing, the crispy bottom bit especially."),
          ("The dishes have been piling up all week, I'm genuinely ashamed.",
           "Cooked the numbers... kidding, the spreadsheet just hates me.")),
    Topic("Which concerts has {name} been to?",
          ("Saw a tiny jazz trio in a basement bar, unforgettable, the drummer was grinning "
           "the whole time.",
           "The Radiohead concert was worth queueing in the rain for three hours.",
           "Heard the symphony do Mahler at the big hall, I cried a bit, not ashamed.",
           "That folk duo at the arts centre was magic, proper goosebumps.",
           "Front row at a punk concert, my ears are still ringing two days later.",
           "The choir's winter performance in the cathedral was stunning."),
          ("The school concert was two hours of recorders, bless them all.",
           "My concert tickets app keeps crashing, I hate it so much.")),
    Topic("What languages has {name} been studying?",
          ("A hundred-day streak in Korean on my phone, feeling smug.",
           "Italian evening classes, so far I mostly know food words.",
           "Trying to get the Arabic alphabet down, such a beautiful language to write.",
           "Practised my Dutch with the baker and she answered in English, crushed.",
           "Japanese kanji are breaking my brain, what a language, there are just so many."),
          ("My little nephew speaks fluent dinosaur, it's his first language.",
           "Studying the train map like it's an exam, the lines all changed.")),
    Topic("Which museums has {name} been to?",
          ("The Rijksmuseum was packed but the Vermeers were worth the elbows.",
           "An afternoon with the dinosaur skeletons at the Natural History museum, pure joy.",
           "The Tate museum had a weird installation with giant spiders, my skin crawled.",
           "Finally saw the Prado, my legs were destroyed by the end.",
           "The Louvre queues were awful and the Mona Lisa is tiny behind all the phones."),
          ("My gran calls my bedroom a museum because of all the clutter.",
           "Museum-quality mess in the office fridge today, someone's yoghurt from June.")),
    Topic("What has {name} been growing in the garden?",
          ("My tomatoes are finally turning red after weeks of glaring at them!",
           "The courgettes in the garden are out of control, I've got twelve and counting.",
           "Put strawberries in along the fence, fingers crossed the slugs don't notice.",
           "The sunflowers are taller than the shed now, they look smug.",
           "The chillies in the garden somehow survived the frost, tiny fiery heroes.",
           "Dug up my first potatoes, tiny but mine."),
          ("My pile of unanswered emails keeps growing, I may have to move house.",
           "The garden centre cafe does a surprisingly decent scone.")),
    Topic("Which films has {name} watched lately?",
          ("Saw Dune on the giant screen, my seat was literally shaking.",
           "Paddington 2 again, still perfect, I will not be taking questions.",
           "Parasite was an even sharper film the second time round.",
           "The new Wes Anderson film is very pretty and very strange.",
           "Rewatched Spirited Away with my niece, she adored the soot sprites."),
          ("My cousin watched our flat while we were away, the plants survived.",
           "Film night at work was cancelled because nobody could agree on anything.")),
)  # fmt: skip

ABSOLUTE_DATE: Final = (
    Event("Did a pottery workshop {when} and came home with a very wonky bowl.",
          "What craft class did {name} attend {date}?",
          ("My craft drawer is a crime scene, glitter everywhere.",
           "There's a class on sourdough at the library, tempting.")),
    Event("Assembled the wardrobe {when}, only one screw left over, which is worrying.",
          "What furniture did {name} put together {date}?",
          ("Putting together a playlist for the drive, any requests?",
           "The furniture shop maze is designed to break people.")),
    Event("Fixed the leaking tap all by myself {when}, no plumber needed!",
          "What household repair did {name} manage {date}?",
          ("I can barely manage my inbox, never mind anything else.",
           "The household accounts spreadsheet is my nemesis.")),
    Event("Got a tiny fox tattoo on my ankle {when}, my mum doesn't know yet.",
          "What body art did {name} get {date}?",
          ("The art gallery cafe is my secret quiet spot.",
           "Body clock is all over the place after the clocks changed.")),
    Event("Had a surprise picnic by the lake {when}, someone brought a whole cheese wheel.",
          "Where did {name} eat outdoors {date}?",
          ("I eat lunch outdoors whenever the sun shows up, which is rarely.",
           "Outdoors people are so smug about cold showers.")),
    Event("Passed my lifeguard certificate {when}, the underwater bit nearly finished me.",
          "What qualification did {name} earn {date}?",
          ("I earn my biscuits by doing the office tea round.",
           "Qualification paperwork at work is endless, forms for the forms.")),
    Event("Locked myself out of the flat {when} and had to pay a locksmith eighty quid.",
          "What mishap did {name} have at home {date}?",
          ("Home is where the laundry pile is, apparently.",
           "Minor mishap with the blender, the ceiling is now orange.")),
    Event("Spotted a wild deer strolling down the high street {when}, nobody believed me.",
          "What animal did {name} see in town {date}?",
          ("Town centre is dead these days, half the shops are empty.",
           "I see you've changed your profile picture, very mysterious.")),
    Event("Got my hair chopped really short {when}, my head feels so light now.",
          "What change did {name} make to their look {date}?",
          ("Make sure you look at the forecast before you set off.",
           "Change is good, they say, but not at the self-service till.")),
    Event("Gave blood {when} and they handed me a very fancy biscuit afterwards.",
          "What did {name} donate {date}?",
          ("We should donate all those old coats to the charity shop.",
           "The donation box at work is full of foreign coins.")),
    Event("Cleared out the garage {when} and found my old skateboard under a tarp.",
          "What space did {name} tidy {date}?",
          ("Tidy desk, tidy mind, apparently, so my mind is a disaster.",
           "I need some space from the group chat, it's relentless.")),
    Event("Volunteered at the animal shelter {when} and walked six dogs one after another.",
          "Where did {name} help out {date}?",
          ("Help, the recipe says 'a knob of butter', how big is a knob?",
           "Can you help me move the sofa at some point? No rush.")),
    Event("Repainted the front door bright yellow {when}, the neighbours have opinions.",
          "What DIY project did {name} finish {date}?",
          ("The project at work keeps growing legs, it's a monster.",
           "Finish your tea before it goes cold, my mum always says.")),
    Event("Went ice skating for the first time {when}, stayed upright for almost a minute.",
          "What winter activity did {name} try {date}?",
          ("Winter coats are so expensive this year, it's daylight robbery.",
           "Activity tracker says I did eleven steps today, sounds right.")),
)  # fmt: skip

#: Day-precise phrases: how many days before it was said.
OPEN_DOMAIN: Final = (
    Inference(
        "Would {name} likely enjoy a weekend hiking in the mountains?",
        (
            "Spent all of Saturday up on the fells again, came home soaked and grinning "
            "like an idiot.",
            "Finally bought proper walking boots, my trainers had no grip left on the ridge paths.",
            "Nothing clears my head like a long day outdoors with a flask and a map.",
        ),
        (
            "The mountains of laundry in this flat are getting out of hand, send help.",
            "I'd rather eat glass than go hiking, my idea of nature is a garden centre cafe.",
        ),
    ),
    Inference(
        "What might {name}'s stance be on working from home?",
        (
            "I get twice as much done at my kitchen table as I ever did in that open-plan office.",
            "Not commuting has given me back an hour a day, I'm never going back to that train.",
            "They hinted we might all be called back in, so I've started updating my CV.",
        ),
        (
            "Working late again, the home stretch of this project is killing me.",
            "I miss the office gossip so much, video calls are just not the same.",
        ),
    ),
    Inference(
        "Would {name} be interested in adopting a rescue dog?",
        (
            "I stop to say hello to every single spaniel in the park, it's embarrassing.",
            "Volunteered at the animal shelter again, walked four greyhounds and nearly "
            "cried leaving.",
            "If our lease allowed pets I'd have a house full of mutts by now.",
        ),
        (
            "The dog next door barked from five until seven this morning.",
            "Rescue me from this meeting, it's been going on for three hours.",
        ),
    ),
    Inference(
        "Is {name} likely to enjoy a cooking class?",
        (
            "Made fresh pasta from scratch on Sunday, flour everywhere but so worth it.",
            "I've been working through that big Ottolenghi book one recipe a week.",
            "Spent an hour at the market choosing spices, I could live in that aisle.",
        ),
        (
            "The class reunion is in June and I'm already dreading it.",
            "My idea of cooking is pressing start on the microwave, no shame.",
        ),
    ),
    Inference(
        "What would {name} think about moving to a big city?",
        (
            "I love that I hear nothing but owls at night out here.",
            "Every time I go into town the crowds make me want to turn straight back.",
            "Our village has one shop and one pub and honestly that's all I need.",
        ),
        (
            "Moving the sofa up three flights of stairs nearly ended our friendship.",
            "I'd live right in the centre tomorrow if I could afford it, I love the buzz.",
        ),
    ),
    Inference(
        "Would {name} probably go to a heavy metal concert?",
        (
            "Played that Metallica album front to back on the drive, windows down.",
            "My ears were ringing for two days after that gig, best night of the year.",
            "Dug my old band t-shirts out of the loft, they still fit, just about.",
        ),
        (
            "The concert hall is being refurbished so the orchestra plays in a church now.",
            "Loud music gives me a migraine, I'm strictly a podcast person.",
        ),
    ),
    Inference(
        "How does {name} probably feel about flying?",
        (
            "My palms sweat the whole way through take-off, every single time.",
            "We took the train all the way to Vienna just so I wouldn't have to get on a plane.",
            "I booked the ferry again, twelve hours at sea beats two in the air for me.",
        ),
        (
            "Time is flying this year, it's nearly the end of term already.",
            "I love airports, I could spend a whole day people-watching at the gate.",
        ),
    ),
    Inference(
        "Would {name} enjoy a quiet night in with a board game?",
        (
            "Spent the whole evening playing Catan with the neighbours, lost and still loved it.",
            "My favourite Friday is a takeaway, a blanket and a jigsaw on the coffee table.",
            "We've got a shelf of puzzles now, the cupboard door won't shut.",
        ),
        (
            "The game last night went to penalties and I nearly lost my voice.",
            "I get bored after ten minutes of anything with dice, I need to be out dancing.",
        ),
    ),
    Inference(
        "What might {name} think of a career in teaching?",
        (
            "Helping my nephew with his fractions was the best part of my week, he finally got it.",
            "I run the Saturday coding club at the library now, the kids ask brilliant questions.",
            "Explaining things to the new starters is honestly my favourite part of the job.",
        ),
        (
            "My career advisor at school told me to be an accountant, so that went well.",
            "I could never stand in front of thirty teenagers, I'd freeze on the spot.",
        ),
    ),
    Inference(
        "Is {name} likely to care about climate change?",
        (
            "Sold the car and bought a cargo bike, the school run is my favourite workout.",
            "We've gone vegetarian at home and started composting everything.",
            "I've been writing to the council about the bus lanes again.",
        ),
        (
            "The climate in our office is tropical, someone keeps the heating on 26.",
            "I can't be bothered with recycling, it all ends up in the same lorry.",
        ),
    ),
)

DAYS_BACK: Final = {
    "this morning": 0,
    "yesterday": 1,
    "the day before yesterday": 2,
    "the night before last": 2,
    "three days ago": 3,
    "a fortnight ago": 14,
}
WEEKDAY_PHRASES: Final = {"last Friday": 4, "last Saturday": 5, "last Sunday": 6}
WEEK_PHRASES: Final = {"last week": 1, "two weeks ago": 2}
DATE_PHRASES: Final = (*DAYS_BACK, *WEEKDAY_PHRASES, *WEEK_PHRASES, "over the weekend")

RELATIVE_IN_MEMORY: Final = (
    Event("Did a weekend first-aid course {when}, I can now bandage absolutely anything.",
          "What training did {name} complete {date}?",
          ("Training the puppy next door to sit is going badly for everyone.",
           "Complete chaos at the station, every train was cancelled."),
          "Doing a weekend first-aid course {when}, so I'll finally know what to do."),
    Event("My cousin got married in a castle {when}, there was a bagpiper and everything.",
          "Whose wedding did {name} attend {date}?",
          ("Attend one meeting and suddenly you're on the committee.",
           "The wedding venue next to my work has fireworks every Saturday."),
          "My cousin gets married in a castle {when}, there's going to be a bagpiper."),
    Event("We moved house {when} and we're still living out of boxes.",
          "What happened with {name}'s housing {date}?",
          ("Housing prices round here are absolutely wild.",
           "What happened to the nice weather? It lasted a day."),
          "We're moving house {when}, there are boxes everywhere already."),
    Event("Started at the aquarium {when}, I now smell permanently of fish food.",
          "Where did {name} begin working {date}?",
          ("Working from the kitchen table is doing my back no favours.",
           "Begin as you mean to go on, my gran says, usually about biscuits."),
          "I start at the aquarium {when}, new place, new commute."),
    Event("Had my wisdom teeth out {when}, lived on soup for days.",
          "What dental procedure did {name} have {date}?",
          ("The dental receptionist remembers everyone's birthday, it's eerie.",
           "There's a procedure for everything at work, even for the kettle."),
          "Getting my wisdom teeth out {when}, I'm already dreading it."),
    Event("My sister had her baby {when}, a little girl called Ada.",
          "What family news did {name} have {date}?",
          ("Family group chat is all photos of dinners, every day.",
           "No news is good news, as they say about the boiler."),
          "My sister's baby is due {when}, we're all on standby."),
    Event("We adopted a rescue greyhound {when}, he sleeps twenty hours a day.",
          "What pet did {name} bring home {date}?",
          ("Bring a jumper, the pub garden gets chilly after dark.",
           "My pet hate is people who don't return trolleys."),
          "We're collecting a rescue greyhound {when}, his bed is already in the hall."),
    Event("Did a charity skydive {when}, I screamed the entire way down.",
          "What daring stunt did {name} do for a cause {date}?",
          ("The cause of the flood was a sock in the drain, apparently.",
           "That stunt double in the film looked nothing like the actor."),
          "Doing a charity skydive {when}, somebody please talk me out of it."),
    Event("Got promoted to shift supervisor {when}, same pay for a while, apparently.",
          "What career step did {name} take {date}?",
          ("Step one of my plan: find the biscuits. There is no step two.",
           "Career fairs at the uni are just free pens and awkward chats."),
          "My promotion to shift supervisor kicks in {when}, nervous."),
    Event("Hosted my first dinner party {when}, nobody got food poisoning, a triumph.",
          "What social gathering did {name} throw {date}?",
          ("Throw that old rug out, it's been dead for years.",
           "Social media is a swamp, I'm deleting the apps again."),
          "Hosting my first dinner party {when}, the menu is still undecided."),
)  # fmt: skip
PAST_PHRASES: Final = ("last month", "earlier this month", "last year")
FUTURE_PHRASES: Final = ("next week", "next month", "later this month")

RELATIVE_QUESTION: Final = (
    Fact("Big news, they made me team lead, I'll be managing people from Monday!",
         "What work news did {name} share {phrase}?",
         ("Work experience kid fixed my spreadsheet in two minutes.",
          "Share the bill app keeps crashing, so I owe everyone money.")),
    Fact("We're expecting a baby in the autumn, I can't stop grinning like an idiot.",
         "What family announcement did {name} make {phrase}?",
         ("Announcement at the station was pure static, nobody knew anything.",
          "My family can't make a decision about anything, including lunch.")),
    Fact("Handed in my notice at the bank, I'm done with spreadsheets for good.",
         "What did {name} quit {phrase}?",
         ("I quit caffeine for a day and have never been so grumpy.",
          "Quit while you're ahead, that's my approach to karaoke.")),
    Fact("Got accepted onto the evening photography course, portfolio and all!",
         "Which programme did {name} get into {phrase}?",
         ("Get into the habit of stretching, my physio says, every single time.",
          "The programme about volcanoes was brilliant last night.")),
    Fact("We're relocating to Ghent in the spring, the paperwork is a nightmare.",
         "What relocation plan did {name} reveal {phrase}?",
         ("My plan for the weekend is to do nothing and enjoy it.",
          "The big reveal on that baking show was a cake shaped like a shoe.")),
    Fact("The council picked my photo of the pier for the cover of their calendar!",
         "What honour did {name} mention {phrase}?",
         ("Scouts' honour, I didn't eat the last biscuit.",
          "Did I mention the boiler is making that noise again?")),
    Fact("I'm standing for the parish council, the leaflets are already printed.",
         "What political step did {name} announce {phrase}?",
         ("Mind the step on the way in, everyone trips on it.",
          "They announce the delays after you've already boarded, every time.")),
    Fact("Sold the motorbike and picked up an electric scooter instead, so quiet.",
         "What vehicle swap did {name} make {phrase}?",
         ("We should swap books sometime, my shelves are overflowing.",
          "The vehicle in front of me had a sticker saying 'powered by crisps'.")),
    Fact("We got engaged, the ring was hidden inside a croissant!",
         "What romantic news did {name} share {phrase}?",
         ("Romantic comedies are my guilty pleasure, no shame.",
          "The news this morning was so grim I switched it off.")),
    Fact("Booked a solo trek across Iceland for the summer, terrified and thrilled.",
         "What adventure did {name} plan {phrase}?",
         ("Adventure for me is trying a new sandwich at lunch.",
          "Plan for tonight: sofa, blanket, soup.")),
)  # fmt: skip

TEMPORAL_NOISE: Final = (
    Fact("The roof started leaking over the landing, there's a bucket collecting drips.",
         "What did {name} say {phrase} about the roof?",
         ("Prices at the corner shop have gone through the roof lately.",
          "The house down the road has been for sale for a year.",
          "Repairs on the bridge mean a forty-minute detour, lovely.")),
    Fact("My boss announced the office is going fully remote, I'm weirdly sad about it.",
         "What did {name} mention {phrase} about changes at the office?",
         ("The office plant has died again, that's three this year.",
          "Workplace first-aider training was mostly about paper cuts.",
          "Small changes, my gran says, like putting biscuits on a higher shelf.")),
    Fact("The vet found a lump on the dog's leg, it turned out to be harmless, thank god.",
         "What health scare with {name}'s dog came up {phrase}?",
         ("Health kick starts Monday, just like last Monday.",
          "My pet theory is that the printer is haunted.")),
    Fact("I've given up sugar for Lent and I'm absolutely climbing the walls.",
         "What change involving sugar did {name} talk about {phrase}?",
         ("Sugar in tea is non-negotiable for my dad, three spoons.",
          "Diet coke is the only thing keeping me going this week.",
          "Talk about bad timing, the train left as I reached the platform.")),
    Fact("Our landlord is selling the building, we might have to find somewhere else.",
         "What worry about the landlord did {name} bring up {phrase}?",
         ("Worry about it tomorrow, that's my whole philosophy.",
          "Bring up the washing basket when you come, there's a pile down here.")),
    Fact("Dad's been struggling with his hearing, he finally booked a check-up.",
         "What did {name} say {phrase} about their dad's health?",
         ("Parent evening at my niece's school was a whole saga.",
          "The health app says I sleep five hours a night, rude but fair.")),
    Fact("Someone keyed the side of my car in the supermarket car park.",
         "What vandalism to {name}'s car came up {phrase}?",
         ("Describe your ideal weekend in three words: sofa, snacks, silence.",
          "The graffiti on the underpass is actually quite beautiful.")),
    Fact("I started volunteering for a charity helpline on Thursday nights.",
         "What charity work did {name} take on {phrase}?",
         ("Take on too much and you end up like me, eating cereal for dinner.",
          "Charity shop find of the year: a velvet jacket for four pounds.")),
    Fact("My best friend from school moved to New Zealand and I miss her already.",
         "Which friend emigrated, according to what {name} said {phrase}?",
         ("Friend of a friend says the new gym is a rip-off.",
          "According to the forecast it will rain for ever.")),
    Fact("We've been fighting over the thermostat all winter, I want it at twenty-one.",
         "What did {name} say {phrase} about the thermostat?",
         ("The thermostat at work is locked in a plastic box like a museum piece.",
          "Household name brands are so overpriced compared to the own brand.",
          "Disagreement at the office about whether a hot dog is a sandwich.")),
)  # fmt: skip
NOISE_PHRASES: Final = ("last time", "the other day", "a while back", "recently", "before")

# Small talk: most turns, written to sound like two friends and to reuse the planted
# questions' words in unrelated senses.
GREETINGS: Final = (
    "Hey {other}! How have you been? Feels like ages since we last talked properly.",
    "Hi {other}, long time no chat, what's new with you these days?",
    "Morning {other}! Got a minute for a quick catch-up before work?",
    "Evening {other}, are you around? I've been meaning to message all week.",
    "Hiya {other}! Sorry I went quiet, it's been a mad couple of weeks.",
    "Oi {other}, you alive? Haven't heard from you in forever.",
    "Hello hello {other}, how's life treating you?",
)
CLOSINGS: Final = (
    "Anyway, I should get back to it. Talk soon!",
    "Gotta run, catch you later {other}!",
    "Speak soon {other}, take care of yourself.",
    "Let's chat again at the weekend, yeah? Night!",
    "Okay, bedtime for me. Night {other}!",
    "Right, dinner's ready, speak soon!",
    "I'd better go, my battery's about to die. Bye for now!",
)
ACKS: Final = (
    "haha yes", "totally", "omg same", "ha, fair", "right?!", "oh no", "lol true", "100%",
    "yesss", "ahh nice", "no way", "hahaha", "honestly same", "ugh, the worst",
    "oh that's lovely", "wait really?", "ha, classic {other}", "aww", "that's amazing, {other}!",
    "oof", "love that", "fair enough", "mood", "same tbh", "so true", "hmm maybe",
    "ha, I know the feeling", "oh wow", "nooo", "ha! brilliant",
)  # fmt: skip
TAILS: Final = (
    "Anyway, how are you?", "Anyway, enough about me.", "Honestly.", "Classic.", "Send help.",
    "It is what it is.", "Long story.", "Don't ask.", "Typical.", "What a week.",
    "Story of my life.", "Such is life.", "I'll tell you properly later.", "Anyway, I digress.",
    "We'll see how it pans out.", "Wish me luck.", "What would you do?", "Fingers crossed.",
    "Never again.", "Ugh.", "Whatever, it's fine.", "I'm not even joking.",
    "Still laughing about it.", "Small victories.", "Life, eh?",
)  # fmt: skip
FILLER: Final = (
    "Work has been relentless this week, I got home at eight every night and just stared at "
    "the wall.",
    "How was your weekend, {other}? Did you manage to do anything fun or was it all chores?",
    "Pretty quiet weekend here, mostly {activity}, which honestly was exactly what I needed.",
    "The weather has been so {weather} lately, I can't decide whether to bring a coat or "
    "sunglasses.",
    "Had {food} for lunch at my desk again, I really need to start taking proper breaks.",
    "Have you watched {show}? Everyone at {job} keeps talking about it and I feel left out.",
    "Not yet, is it actually good or just one of those things people pretend to like?",
    "We should grab a coffee at {place} soon, it feels like ages since we properly caught up.",
    "Definitely, I'm free most evenings, just not Wednesdays because of {saga}.",
    "My manager moved our team meeting for the third time today, I'm starting to take it "
    "personally.",
    "I can't believe how fast this year is going, it was January about five minutes ago.",
    "Traffic on the way to {job} was awful this morning, a lorry had shed a load of cabbages.",
    "I've been trying to drink more water, two litres a day, and now I basically live in the loo.",
    "Update on {saga}: no progress whatsoever, I'm starting to think it will outlive us all.",
    "Oh god, {saga} again? You have the patience of a saint, I'd have lost it by now.",
    "I'm thinking of painting the hallway something warm, any colour suggestions?",
    "I'm so tired today, the upstairs neighbours were moving furniture around at midnight.",
    "My phone battery is dying so fast these days, I carry a charger around like a lifeline.",
    "The coffee machine at {job} broke again, there was nearly a riot by ten o'clock.",
    "Did you end up going to {place} in the end? I remember you were umming and ahhing.",
    "Yeah it was nice, a bit crowded though, we ended up standing by the door the whole time.",
    "I need a holiday so badly, even a long weekend somewhere with a sea view would do.",
    "Same here, work is dragging this month, every day somehow feels like a Thursday.",
    "What are you up to this weekend? Anything planned or are you keeping it free?",
    "Not much, maybe a long walk if the weather holds, then a ridiculous amount of sleep.",
    "My {relative} rang for an hour yesterday to tell me about their new printer, bless them.",
    "How's your {relative} doing, by the way? Last time you said they were a bit under the "
    "weather.",
    "Doing much better, thanks for asking, back to bossing everyone around already.",
    "Today was one of those days where nothing works: the printer, the wifi, my brain.",
    "I really need to get back into a routine, I keep going to bed at two and regretting it.",
    "My inbox at {job} is a disaster right now, four hundred unread and counting.",
    "I'm craving {food} so badly right now, is it too late to order something?",
    "Any plans for the bank holiday? I was thinking of doing absolutely nothing, aggressively.",
    "Ugh, Mondays at {job} are the worst, everyone is grumpy and the kettle is always empty.",
    "Random question, do you still have that big cool box? We might need it at some point.",
    "Yes, it's in the loft somewhere behind the Christmas decorations, I'll dig it out.",
    "The bus was twenty minutes late again, I've started recognising all the other regulars.",
    "I tried a new recipe last night and it was fine, just fine, not worth the washing up.",
    "We finally sorted the recycling rota in the flat, only took three months of passive "
    "aggression.",
    "I saw a dog in a raincoat today and it genuinely made my whole week.",
    "Did you see the sunset yesterday? The whole sky went pink over the rooftops.",
    "I've started listening to podcasts while {activity}, it makes everything less boring.",
    "My neighbour keeps leaving passive aggressive notes about the bins, it's like a soap opera.",
    "Honestly I'm just happy it's nearly Friday, this week has been about a month long.",
    "I'm trying to read before bed instead of scrolling, day three and it's going okay.",
    "The cafe on the corner changed owners and now the flat whites are twice the price.",
    "Did you hear they're closing the old cinema on the high street? End of an era.",
    "My back is killing me, I think I slept funny, or maybe I'm just getting old.",
    "I keep forgetting to reply to messages, sorry about that, my brain is a sieve lately.",
    "No worries at all, I'm just as bad, I found a text from ages ago I never answered.",
    "We should plan something for when the evenings get lighter, a picnic or something.",
    "I'm in, just tell me when and where and I'll bring the snacks.",
    "The supermarket rearranged all the aisles and I wandered around lost for twenty minutes.",
    "I'm trying to cut back on takeaways but the pizza place keeps sending me vouchers.",
    "My plants are all slowly dying, I think my flat is cursed, or I'm just bad at watering.",
    "I fell asleep on the sofa at nine last night and woke up at three completely confused.",
    "Can you believe it's already getting dark at five? Winter is coming for us all.",
    "The heating at {job} is either off or tropical, there's no in between.",
    "Saw an old school friend at the station and we had the most awkward chat ever.",
    "I'm so behind on life admin, I have three forms to fill in and I keep avoiding them.",
    "We had a power cut for an hour last night, I played cards by candlelight like a Victorian.",
    "My {relative} sent me a forty-second voice note that was just breathing and then 'ok bye'.",
    "I've decided to stop checking my emails after seven, revolutionary, I know.",
    "Is it just me or is everyone ill at the moment? Half of {job} is off sick.",
    "I spent my whole lunch break queueing at the post office to send one parcel.",
    "Those new neighbours have a very enthusiastic dog, it howls every time the bin lorry comes.",
    "I think I need new glasses, I've been squinting at my screen all week.",
    "Rained the second I stepped outside, obviously, and I'd left my umbrella at {job}.",
    "The washing machine is making a noise like a jet engine, I'm scared to go near it.",
    "I have so many tabs open on my laptop that it sounds like it's about to take off.",
    "We binged three episodes of {show} last night, zero regrets, slight regrets.",
    "My weekend plans got cancelled so I'm going to potter around and tidy the drawers.",
    "The landlord says someone will come and look at the damp 'soon', whatever that means.",
    "Is it weird that I enjoy doing the weekly shop? It's like a little adventure.",
    "I found a tenner in my old coat pocket today, best thing that's happened all week.",
    "Got stuck behind a tractor on the way home, twenty minutes at nine miles an hour.",
    "The new series of {show} is out, no spoilers please, I'm only on the first episode.",
    "I'm trying this thing where I write a to-do list every morning, so far I've written two.",
    "My {relative} has discovered emoji and now every message is a row of aubergines, help.",
    "Went for a wander around {place} after work, it was surprisingly peaceful.",
    "I need to run to the shop before it closes, back in ten minutes.",
    "Back, they'd run out of bread so I came home with crisps and a melon, don't ask.",
    "The printer at {job} jammed again and somehow it's my fault, apparently.",
    "We should really do a proper catch-up soon, not just these messages at midnight.",
    "I'm going to try to eat more vegetables this month, wish me luck.",
    "Reading the terms and conditions for once and I regret everything.",
    "The town has put the festive lights up already, it's barely autumn, madness.",
    "I keep meaning to call my {relative} back and then it's suddenly eleven at night.",
    "There's a new bakery near {place}, their cinnamon buns are dangerously good.",
    "I've been going to bed earlier and I feel like a new person, a slightly boring one.",
    "We had a fire drill at {job} and nobody knew where the assembly point was.",
    "I finally cleaned the oven, I don't want to talk about what I found in there.",
    "It's been a really long week, I'm counting down the hours until I can lie down.",
    "I'm thinking of taking up something new, maybe knitting, maybe pottery, who knows.",
    "The queue at the doctor's was out the door, I read an entire magazine about caravans.",
    "My {relative} wants to drive up and visit next month, I need to tidy everything.",
    "I just realised I've been wearing my jumper inside out all day and nobody told me.",
    "Do you ever sit in the car for ten minutes before going inside? Just me?",
    "The kids next door have learned the recorder, so that's my evenings sorted.",
    "Nothing exciting to report, just work, sleep, repeat, you know how it is.",
    "I'm going to teach myself to make decent coffee at home, the cafe is bankrupting me.",
    "We should go to that quiz at the pub some time, we'd be terrible but it'd be fun.",
    "I'm trying to be quicker at replying, clearly it's going really well.",
    "There's a man on my street who walks his cat on a lead, I've never seen anything like it.",
    "Got caught in the rain on the way back and now my shoes are making squelching noises.",
    "I should probably go to bed but I'm watching videos of people restoring old tools.",
    "My {relative} keeps sending me articles about the housing market, I think it's a hint.",
    "Apparently there's going to be a heatwave next week, my flat is already an oven.",
    "I had the weirdest dream that I was late for an exam in a subject I never studied.",
    "Yesterday was a total write-off, I did absolutely nothing and I'm not sorry.",
    "Last Friday I fell asleep at my desk for five minutes, nobody noticed, I think.",
    "My {relative} turned up unannounced on Sunday with a lasagne the size of a suitcase.",
    "Honestly {saga} is taking over my life, I dream about it now.",
    "Everyone at {job} is off on holiday at the same time, so I'm doing three jobs.",
    "The lift at {job} is broken again, five flights of stairs, I'm basically an athlete.",
    "I've started taking the long way home past {place}, it's much nicer than the main road.",
    "Did I tell you about {saga}? Another letter came, another form to fill in.",
    "I keep seeing the word '{word}' everywhere this week, is that a sign of something?",
    "My nephew has started saying '{word}' about literally everything, no idea why.",
    "My {relative} has started a book club and it's mostly wine and gossip, sounds ideal.",
    "I left my keys in the door overnight again, the neighbour knocked at seven to tell me.",
    "The new manager at {job} sends emails at 11pm, is that a power move or a cry for help?",
    "Honestly the highlight of my day was a really good sandwich, that's where I'm at.",
    "The dishwasher has started making a grinding noise, I'm choosing to ignore it.",
    "We went round in circles for an hour picking a takeaway and ended up with toast.",
    "I booked a dentist appointment, finally, only two years overdue.",
    "My umbrella flipped inside out on the bridge and a pigeon looked at me with pity.",
    "Got a parking ticket outside {place}, I was there for four minutes, four!",
    "The kettle at {job} has a queue now, we've had to make a rota.",
    "I'm on hold with the energy company again, the music is burned into my brain.",
    "Spent the morning untangling fairy lights, I don't even like fairy lights.",
    "There's a fox that sleeps on our shed roof every afternoon, I've named him Gerald.",
    "My {relative} is convinced the microwave is spying on them, I've stopped arguing.",
    "I've watched every cooking video on the internet and I still can't make an omelette.",
    "We've run out of teabags and it feels like a national emergency in this flat.",
    "I cleaned my trainers with a toothbrush last night, very satisfying, slightly gross.",
    "The self-checkout said unexpected item in the bagging area, it was my hand.",
    "I've been sleeping terribly, I keep waking up at four thinking about emails.",
    "My {relative} sent a photo of their dinner with no context, just a plate of beans.",
    "The wifi dropped mid-call and I froze mid-sentence with my mouth wide open.",
    "We're trying a no-phones-at-dinner rule, it lasted exactly one dinner.",
    "It's been so windy, the bins have been rolling down the street like tumbleweed.",
    "Someone at {job} microwaved fish again, there will be consequences.",
    "I bought the wrong size bin bags and now nothing fits, a small daily tragedy.",
    "My step count today is embarrassing, I basically moved from the bed to the desk.",
    "Have you noticed the days getting longer? I left work and it was still light!",
    "I put a wash on and forgot about it for two days, so that's being washed again.",
    "The post office lost my parcel, then found it, and then lost it again.",
    "The dog next door has figured out how to open their gate, he visits us daily now.",
)
#: Ways into a small-talk line ("Honestly, work has been...").
OPENERS: Final = (
    "Honestly,", "Ugh,", "So", "Okay so", "Random, but", "Not gonna lie,", "Oh, and", "Btw",
    "Also", "Right,", "Anyway,", "Tbh",
)  # fmt: skip

ACTIVITIES: Final = (
    "tidying the flat", "catching up on sleep", "doing laundry", "sorting paperwork",
    "walking round the park", "batch cooking", "ironing shirts", "hoovering",
)  # fmt: skip
WEATHER: Final = ("grey", "muggy", "windy", "damp", "bright", "chilly", "changeable")
FOODS: Final = (
    "ramen", "falafel", "pho", "a burrito", "tacos", "pad thai", "lentil soup",
    "a jacket potato", "sushi", "a cheese toastie",
)  # fmt: skip
SHOWS: Final = (
    "the new detective series", "that baking show", "the documentary about deep-sea fish",
    "the space drama everyone loves", "the dating show on the island",
    "that period drama with all the horses",
)  # fmt: skip
PLACES: Final = (
    "the cafe by the station", "the farmers market", "the night market", "the bowling alley",
    "the Italian place near the park", "the bookshop on the corner", "the new food hall",
)  # fmt: skip
RELATIVES: Final = ("mum", "dad", "gran", "cousin", "flatmate", "aunt", "uncle")
JOBS: Final = (
    "the warehouse", "the dental surgery", "the call centre", "the primary school",
    "the bike shop", "the council offices", "the hotel", "the library", "the garden centre",
    "the estate agents", "the lab", "the bakery",
)  # fmt: skip
SAGAS: Final = (
    "the bathroom renovation", "the broken boiler", "the allotment waiting list",
    "the visa paperwork", "the leaky shed", "the neighbour's cockerel",
    "the kitchen extension", "the parking permit saga", "the flat hunt",
    "the car insurance claim",
)  # fmt: skip
#: Function words among the questions' longer words: no topic to repeat.
NOT_TOPICS: Final = "about after their which where whose doing going really according involving"
EMOJI: Final = ("😂", "🙈", "😅", "👍", "❤️", "🎉", "☕", "🙃", "😭", "🤞")


@attrs.frozen
class Cast:
    """What each speaker of a conversation keeps coming back to in small talk."""

    jobs: tuple[str, str]
    sagas: tuple[str, str]


def generate(
    folder: Path, *, conversations: int = 10, sessions: int = SESSIONS, seed: int = SEED
) -> None:
    """Write ``entries.jsonl`` and ``queries.jsonl`` into ``folder``.

    Args:
        folder: created if missing; both files are replaced.
        conversations: number of scopes ``conv-0`` ... ``conv-{n-1}``.
        sessions: sessions per conversation (~24 turns each); each category plants
            ``PER_CONVERSATION`` questions per conversation at 24 sessions, scaled
            with the sessions (at least one).
        seed: the one source of randomness.

    Raises:
        ValueError: if there are fewer than four sessions or no conversation.
    """
    rng, convs = planted_conversations(conversations, sessions, seed)
    folder.mkdir(parents=True, exist_ok=True)
    write_rows(folder / "entries.jsonl", [row for conv in convs for row in _entries(rng, conv)])
    write_rows(folder / "queries.jsonl", [q for conv in convs for q in conv.queries])


def planted_conversations(
    conversations: int, sessions: int, seed: int
) -> tuple[random.Random, list[Conversation]]:
    """The random source seeded with ``seed`` and ``conversations`` planted conversations
    (:func:`planted`), each starting on a day of its own, drawn from it.

    Raises:
        ValueError: if there are fewer than four sessions or no conversation.
    """
    if conversations < 1 or sessions < 4:
        raise ValueError("need at least one conversation of at least four sessions")
    rng = random.Random(seed)
    starts = rng.sample(range(max(300, conversations)), conversations)
    convs = [
        planted(rng, k, sessions, FIRST_DAY + timedelta(days=starts[k]))
        for k in range(conversations)
    ]
    return rng, convs


def planted(rng: random.Random, k: int, sessions: int, first_day: date) -> Conversation:
    """Conversation ``k``: its dated sessions with every question's evidence and decoys
    planted, the other turns still empty (``None``) for the small talk."""
    names = rng.sample(NAMES, 2)
    conv = Conversation(f"conv-{k}", (names[0], names[1]), _sessions(rng, sessions, first_day))
    counts = {
        category: max(1, round(n * sessions / SESSIONS)) for category, n in PER_CONVERSATION.items()
    }
    # Most constrained first: replies need two turns in a row, the relative categories
    # their sessions, lists distinct sessions.
    _plant_replies(rng, conv, counts["reply"])
    _plant_relative_questions(rng, conv, counts["relative-question"])
    _plant_temporal_noise(rng, conv, counts["temporal-noise"])
    _plant_lists(rng, conv, counts["multi-session"])
    _plant_absolute_dates(rng, conv, counts["absolute-date"])
    _plant_relative_in_memory(rng, conv, counts["relative-in-memory"])
    _plant_word_forms(rng, conv, counts["word-forms"])
    _plant_single_hop(rng, conv, counts["single-hop"])
    _plant_open_domain(rng, conv, counts["open-domain"])
    return conv


def _sessions(rng: random.Random, count: int, first_day: date) -> list[Session]:
    """Dated sessions of 21-27 turns; some a day or two apart (a date's window then holds
    more than one), the last three close together (the relative questions' window)."""
    day, out = first_day, []
    for number in range(1, count + 1):
        if number > 1:
            day += timedelta(days=_gap(rng, count - number))
        start = datetime(day.year, day.month, day.day, rng.randint(8, 21), rng.randrange(60))
        turns = rng.randint(21, 27)
        steps = [rng.choice((1, 1, 2, 3)) for _ in range(turns - 1)]
        minutes = list(itertools.accumulate(steps, initial=0))
        out.append(Session(number, start, rng.randrange(2), minutes, [None] * turns))
    return out


def _gap(rng: random.Random, left: int) -> int:
    """Days from one session to the next, ``left`` sessions before the newest."""
    if left == 0:
        return rng.randint(1, 4)
    if left == 1:
        return rng.randint(3, 9)
    return rng.randint(1, 2) if rng.random() < 0.2 else rng.randint(4, 22)


def _recent(conv: Conversation) -> list[Session]:
    """The newest sessions, which hold the ``relative-question`` evidence alone."""
    return conv.sessions[-max(1, min(3, len(conv.sessions) // 4)) :]


def _planting(conv: Conversation) -> list[Session]:
    return conv.sessions[: len(conv.sessions) - len(_recent(conv))]


def _old(conv: Conversation) -> list[Session]:
    """The older half of the planting sessions, for ``temporal-noise``."""
    planting = _planting(conv)
    return planting[: max(1, len(planting) // 2)]


def _decoys(rng: random.Random, conv: Conversation, decoys: Sequence[str]) -> None:
    """Scatter decoy turns over any session, said by either speaker."""
    for decoy in decoys:
        conv.say(rng, rng.randrange(2), decoy, conv.sessions)


def _plant_single_hop(rng: random.Random, conv: Conversation, count: int) -> None:
    for fact in rng.sample(SINGLE_HOP, min(count, len(SINGLE_HOP))):
        speaker = rng.randrange(2)
        text = fact.text.format(x=rng.choice(fact.values))
        entry = conv.say(rng, speaker, text, _planting(conv))
        _decoys(rng, conv, fact.decoys)
        conv.ask("single-hop", fact.question.format(name=conv.names[speaker]), [entry])


def _plant_replies(rng: random.Random, conv: Conversation, count: int) -> None:
    for exchange in rng.sample(REPLY, min(count, len(REPLY))):
        asker = rng.randrange(2)
        session, turn = claim(rng, _planting(conv), asker, width=2)
        conv.put(session, turn, exchange.ask)
        answer = conv.put(session, turn + 1, exchange.answer)
        _decoys(rng, conv, exchange.decoys)
        conv.ask("reply", exchange.query.format(asker=conv.names[asker]), [answer])


def _plant_word_forms(rng: random.Random, conv: Conversation, count: int) -> None:
    for fact in rng.sample(WORD_FORMS, min(count, len(WORD_FORMS))):
        speaker = rng.randrange(2)
        entry = conv.say(rng, speaker, fact.text, _planting(conv))
        _decoys(rng, conv, fact.decoys)
        conv.ask("word-forms", fact.question.format(name=conv.names[speaker]), [entry])


def _plant_lists(rng: random.Random, conv: Conversation, count: int) -> None:
    for topic in rng.sample(MULTI_SESSION, min(count, len(MULTI_SESSION))):
        speaker = rng.randrange(2)
        entries = _said_across_sessions(rng, conv, speaker, topic.items, 4)
        _decoys(rng, conv, topic.decoys)
        conv.ask("multi-session", topic.query.format(name=conv.names[speaker]), entries)


def _said_across_sessions(
    rng: random.Random, conv: Conversation, speaker: int, texts: Sequence[str], most: int
) -> list[str]:
    """Two to ``most`` of ``texts`` said by ``speaker``, each in a planting session of its
    own (fewer if fewer are free); their entry ids."""
    open_sessions = [s for s in _planting(conv) if s.free(speaker)]
    size = min(rng.randint(2, most), len(open_sessions))
    chosen = rng.sample(open_sessions, size)
    said = rng.sample(texts, size)
    return [conv.say(rng, speaker, text, [s]) for s, text in zip(chosen, said, strict=True)]


def _plant_open_domain(rng: random.Random, conv: Conversation, count: int) -> None:
    """Inferences about a speaker from two or three of their turns in different
    sessions, beside the other speaker's turns on the same topic."""
    for inference in rng.sample(OPEN_DOMAIN, min(count, len(OPEN_DOMAIN))):
        speaker = rng.randrange(2)
        entries = _said_across_sessions(rng, conv, speaker, inference.evidence, 3)
        for text in inference.other:
            conv.say(rng, 1 - speaker, text)
        conv.ask("open-domain", inference.question.format(name=conv.names[speaker]), entries)


def _plant_absolute_dates(rng: random.Random, conv: Conversation, count: int) -> None:
    """Events told relative to their session, asked for by absolute date (or month)."""
    for event in rng.sample(ABSOLUTE_DATE, min(count, len(ABSOLUTE_DATE))):
        speaker = rng.randrange(2)
        session, turn = claim(rng, _planting(conv), speaker)
        phrase, (first, last) = _date_phrase(rng, session.day)
        entry = conv.put(session, turn, event.text.format(when=phrase))
        _decoys(rng, conv, event.decoys)
        forms = ["day", "us", "day", "us", "month"] if first == last else ["month"]
        when = date_text(first, rng.choice(forms))
        conv.ask(
            "absolute-date", event.question.format(name=conv.names[speaker], date=when), [entry]
        )


def _date_phrase(rng: random.Random, said_on: date) -> tuple[str, tuple[date, date]]:
    """A phrase for a day before ``said_on`` and the first and last day it names; a span
    of days always lies within one month."""
    while True:
        phrase = rng.choice(DATE_PHRASES)
        span = event_days(phrase, said_on)
        if span is not None and span[0].month == span[1].month:
            return phrase, span


def event_days(phrase: str, said_on: date) -> tuple[date, date] | None:
    """The first and last day an event told on ``said_on`` with ``phrase`` happened
    (None: nobody would say it that day, as "over the weekend" on a Sunday)."""
    if phrase in DAYS_BACK:
        day = said_on - timedelta(days=DAYS_BACK[phrase])
        return day, day
    if phrase in WEEKDAY_PHRASES:
        day = said_on - timedelta(days=(said_on.weekday() - WEEKDAY_PHRASES[phrase] - 1) % 7 + 1)
        return day, day
    monday = said_on - timedelta(days=said_on.weekday())
    if phrase in WEEK_PHRASES:
        start = monday - timedelta(weeks=WEEK_PHRASES[phrase])
        return start, start + timedelta(days=6)
    if phrase == "over the weekend" and said_on.weekday() < 5:
        return monday - timedelta(days=2), monday - timedelta(days=1)
    return None


def _plant_relative_in_memory(rng: random.Random, conv: Conversation, count: int) -> None:
    """Events placed "last month", "next week"... and asked for by month or year."""
    for event in rng.sample(RELATIVE_IN_MEMORY, min(count, len(RELATIVE_IN_MEMORY))):
        speaker = rng.randrange(2)
        session, turn = claim(rng, _planting(conv), speaker)
        phrase, when = _told_phrase(rng, session.day)
        template = event.future if phrase in FUTURE_PHRASES else event.text
        entry = conv.put(session, turn, template.format(when=phrase))
        _decoys(rng, conv, event.decoys)
        question = event.question.format(name=conv.names[speaker], date=when)
        conv.ask("relative-in-memory", question, [entry])


def _told_phrase(rng: random.Random, said_on: date) -> tuple[str, str]:
    """A phrase placing an event in a month or year relative to ``said_on``, and that
    month or year as a question names it ("in March 2022", "in 2021")."""
    while True:
        phrase = rng.choice((*PAST_PHRASES, *FUTURE_PHRASES))
        when = told_when(phrase, said_on)
        if when is not None:
            return phrase, when


def told_when(phrase: str, said_on: date) -> str | None:
    """The month ("in March 2022") or year ("in 2021") an event told on ``said_on`` with
    ``phrase`` falls in; None when the phrase would be odd that day or its span crosses
    a month."""
    if phrase == "last year":
        return f"in {said_on.year - 1}"
    index = said_on.year * 12 + said_on.month - 1
    shift = {"last month": -1, "next month": 1}.get(phrase)
    odd = {"earlier this month": said_on.day < 10, "later this month": said_on.day > 18}
    if odd.get(phrase, False):
        return None
    if shift is not None:
        index += shift
    elif phrase == "next week":
        monday = said_on + timedelta(days=7 - said_on.weekday())
        sunday = monday + timedelta(days=6)
        if monday.month != sunday.month:
            return None
        index = monday.year * 12 + monday.month - 1
    return f"in {MONTHS[index % 12]} {index // 12}"


def _plant_relative_questions(rng: random.Random, conv: Conversation, count: int) -> None:
    """News in the newest sessions, asked relative to the newest session's day."""
    newest, recent = conv.sessions[-1].day, _recent(conv)
    news = rng.sample(RELATIVE_QUESTION, min(count, len(RELATIVE_QUESTION)))
    for k, fact in enumerate(news):
        speaker = rng.randrange(2)
        session = recent[-1 - k % len(recent)]  # newest first, one item per session
        entry = conv.say(rng, speaker, fact.text, [session])
        _decoys(rng, conv, fact.decoys)
        phrase = rng.choice(recent_phrases(session.day, newest))
        question = fact.question.format(name=conv.names[speaker], phrase=phrase)
        conv.ask("relative-question", question, [entry])


def recent_phrases(day: date, newest: date) -> list[str]:
    """What someone on ``newest`` may call ``day`` ("recently" always)."""
    delta = (newest - day).days
    weeks = (newest - timedelta(days=newest.weekday()) - day + timedelta(days=day.weekday())).days
    months = (newest.year - day.year) * 12 + newest.month - day.month
    phrases = ["recently"]
    if delta < 2:
        phrases += (["today", "earlier today"], ["yesterday"])[delta]
    elif delta < 5:
        phrases.append("a few days ago")  # satchel reads it as three days ago, +- one
    if delta > 1 and weeks // 7 < 3:
        phrases.append(("earlier this week", "last week", "two weeks ago")[weeks // 7])
    if months == 1:
        phrases.append("last month")
    return phrases


def _plant_temporal_noise(rng: random.Random, conv: Conversation, count: int) -> None:
    """Old facts asked with a relative phrase that does not find them."""
    newest = conv.sessions[-1].day
    for fact in rng.sample(TEMPORAL_NOISE, min(count, len(TEMPORAL_NOISE))):
        speaker = rng.randrange(2)
        session, turn = claim(rng, _old(conv), speaker)
        entry = conv.put(session, turn, fact.text)
        _decoys(rng, conv, fact.decoys)
        phrases = list(NOISE_PHRASES)
        if session.day.year == newest.year and newest.month > 2:
            phrases.append("earlier this year")
        if session.day.year == newest.year - 1:
            phrases.append("last year")
        question = fact.question.format(name=conv.names[speaker], phrase=rng.choice(phrases))
        conv.ask("temporal-noise", question, [entry])


def _entries(rng: random.Random, conv: Conversation) -> list[dict[str, Any]]:
    jobs, sagas = rng.sample(JOBS, 2), rng.sample(SAGAS, 2)
    cast = Cast((jobs[0], jobs[1]), (sagas[0], sagas[1]))
    rows: list[dict[str, Any]] = []
    for session in conv.sessions:
        # A shuffled deck, so no small-talk line repeats within a session.
        deck = iter(rng.sample(FILLER, len(FILLER)))
        for turn, text in enumerate(session.texts):
            if text is None:
                conv.put(session, turn, _small_talk(rng, conv, cast, session, turn, deck))
            rows.append(row_of(conv.scope, session, turn))
    return rows


def _small_talk(
    rng: random.Random,
    conv: Conversation,
    cast: Cast,
    session: Session,
    turn: int,
    deck: Iterator[str],
) -> str:
    speaker = session.speaker(turn)
    slots = {
        "other": conv.names[1 - speaker],
        "job": cast.jobs[speaker],
        "saga": cast.sagas[speaker],
        "activity": rng.choice(ACTIVITIES),
        "weather": rng.choice(WEATHER),
        "food": rng.choice(FOODS),
        "show": rng.choice(SHOWS),
        "place": rng.choice(PLACES),
        "relative": rng.choice(RELATIVES),
        "word": rng.choice(_question_words()),
    }
    if turn == 0:
        return rng.choice(GREETINGS).format(**slots)
    if turn == len(session.texts) - 1:
        return rng.choice(CLOSINGS).format(**slots)
    if rng.random() < ACK_SHARE:
        text = rng.choice(ACKS).format(**slots)
    else:
        text = next(deck).format(**slots)
        if rng.random() < OPENER_SHARE:
            text = opened(rng.choice(OPENERS), text)
        more = next(deck).format(**slots) if rng.random() < PAIR_SHARE else rng.choice(TAILS)
        if len(text) + len(more) < 200 and rng.random() < TAIL_SHARE:
            text = f"{text} {more}"
    if rng.random() < TYPO_SHARE:
        text = typo(rng, text)
    if rng.random() < EMOJI_SHARE:
        text = f"{text} {rng.choice(EMOJI)}"
    return text


def opened(opener: str, text: str) -> str:
    """``text`` after ``opener``, its first letter lowercased unless it is "I"."""
    first = text.split(" ", 1)[0]
    if first == "I" or first.startswith("I'") or first[:1].isdigit():
        return f"{opener} {text}"
    return f"{opener} {text[:1].lower()}{text[1:]}"


def typo(rng: random.Random, text: str) -> str:
    """``text`` with one word of five letters or more misspelt: two letters swapped, one
    dropped or one doubled."""
    words = list(re.finditer(r"[a-z]{5,}", text))
    if not words:
        return text
    match = rng.choice(words)
    word, i = match.group(), rng.randrange(1, len(match.group()) - 2)
    kind = rng.randrange(3)
    if kind == 0:
        wrong = word[:i] + word[i + 1] + word[i] + word[i + 2 :]
    elif kind == 1:
        wrong = word[:i] + word[i + 1 :]
    else:
        wrong = word[:i] + word[i] + word[i:]
    return text[: match.start()] + wrong + text[match.end() :]


@functools.cache
def _question_words() -> tuple[str, ...]:
    """Content words of every planted question, for small talk that repeats them."""
    questions = [
        *(f.question for f in (*SINGLE_HOP, *RELATIVE_QUESTION, *TEMPORAL_NOISE)),
        *(e.query for e in REPLY),
        *(f.question for f in WORD_FORMS),
        *(t.query for t in MULTI_SESSION),
        *(e.question for e in (*ABSOLUTE_DATE, *RELATIVE_IN_MEMORY)),
        *(i.question for i in OPEN_DOMAIN),
    ]
    blanks = {"name": "", "asker": "", "phrase": "", "date": ""}
    text = " ".join(q.format(**blanks) for q in questions).lower()
    words = set(re.findall(r"[a-z]{5,}", text)) - set(NOT_TOPICS.split())
    return tuple(sorted(words))


def main(argv: list[str] | None = None) -> None:
    """``python -m bench._hard_conversations OUT_DIR``: write the workload, print counts."""
    parser = argparse.ArgumentParser(
        prog="python -m bench._hard_conversations",
        description="Write the hard synthetic conversational workload (entries.jsonl, "
        "queries.jsonl): " + ", ".join(CATEGORIES) + " questions.",
    )
    parser.add_argument("out", type=Path, metavar="OUT_DIR", help="folder to write into")
    parser.add_argument("--conversations", type=int, default=10, help="scopes (default 10)")
    parser.add_argument("--sessions", type=int, default=SESSIONS, help="per scope (default 24)")
    parser.add_argument("--seed", type=int, default=SEED, help=f"random seed (default {SEED})")
    args = parser.parse_args(argv)
    generate(args.out, conversations=args.conversations, sessions=args.sessions, seed=args.seed)
    print_counts(args.out)


if __name__ == "__main__":
    main()
