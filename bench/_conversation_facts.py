"""The text tables of the synthetic conversational workload (``bench/_conversations.py``).

Pure data: planted facts with their questions, the small talk around them and the decoys
that reuse a fact's words in another sense. Each table row is written so that its query
category holds: a ``reply`` answer shares no content word with its query, a ``date``
event names only a relative day, and a ``multi-session`` item shares at most one content
word with its list question. The planted topics are kept apart (no date event is a dish
cooked or a sport tried), so a query's expected turns are its only true answers.
"""

from __future__ import annotations

from typing import Final

import attrs


@attrs.frozen
class Fact:
    """A ``single-hop`` fact: ``text`` holds ``{x}``, one of ``values``; the question
    names the speaker as ``{name}`` and reuses a few of the fact's words."""

    text: str
    question: str
    values: tuple[str, ...]
    decoy: str


@attrs.frozen
class Exchange:
    """A ``reply`` pair: the asker's question, the other speaker's answer (no word of the
    query), the query naming the asker as ``{asker}``, and a decoy on the question's topic."""

    question: str
    answer: str
    query: str
    decoy: str


@attrs.frozen
class Topic:
    """A ``multi-session`` list: the question naming ``{name}`` and the items to spread."""

    query: str
    items: tuple[str, ...]
    decoy: str


NAMES: Final = (
    "Alice", "Bob", "Priya", "Mateo", "Sofia", "Jun", "Lena", "Kofi", "Aiko", "Bruno",
    "Nadia", "Tomas", "Ingrid", "Omar", "Clara", "Dev", "Hana", "Felix", "Zara", "Luca",
)  # fmt: skip

SINGLE_HOP: Final = (
    Fact("I adopted a beagle last month, we named him {x}.", "What did {name} name the beagle?",
         ("Pixel", "Biscuit", "Waffles", "Noodle", "Pepper"),
         "I can never remember the name of that new bakery near work."),
    Fact("My sister just started medical school in {x}.",
         "Which city is {name}'s sister going to medical school in?",
         ("Leeds", "Dublin", "Utrecht", "Bologna", "Glasgow"),
         "Our school reunion is coming up and I'm oddly nervous about it."),
    Fact("I finally bought a car, a second-hand {x} in dark green.", "What car did {name} buy?",
         ("Volvo", "Skoda", "Mazda", "Peugeot", "Subaru"),
         "The car alarm outside went off at three in the morning again."),
    Fact("I started learning the {x} at the community centre.",
         "Which instrument is {name} learning at the community centre?",
         ("cello", "ukulele", "trumpet", "accordion", "harp"),
         "The community centre is hosting a quiz night on Thursday."),
    Fact("My new job is at a {x} startup, I begin on Monday.",
         "What kind of startup is {name}'s new job at?",
         ("robotics", "fintech", "solar energy", "biotech", "gaming"),
         "Job interviews make me nervous even when I'm just watching them on TV."),
    Fact("We booked our honeymoon, two weeks in {x}!", "Where is {name} going on honeymoon?",
         ("Sardinia", "Bali", "Iceland", "Patagonia", "Crete"),
         "My cousin's honeymoon photos are all over my feed, it's a bit much."),
    Fact("My favourite author lately is {x}, I'm completely hooked.",
         "Who is {name}'s favourite author?",
         ("Ursula Le Guin", "Toni Morrison", "Zadie Smith", "Elena Ferrante", "Octavia Butler"),
         "My favourite part of the week is Friday evening, no contest."),
    Fact("I'm allergic to {x}, found out the hard way at a wedding.",
         "What is {name} allergic to?", ("peanuts", "shellfish", "kiwi", "sesame", "penicillin"),
         "I think I'm allergic to Mondays, honestly."),
    Fact("My grandmother turns {x} next week, we're throwing her a party.",
         "How old is {name}'s grandmother turning?",
         ("ninety", "eighty-five", "ninety-two", "one hundred"),
         "My grandmother's soup recipe is still the best thing I've ever eaten."),
    Fact("I signed up for the {x} marathon in the spring.",
         "Which marathon did {name} sign up for?",
         ("Berlin", "Boston", "Tokyo", "Chicago", "London"),
         "We had a movie marathon, nine hours of wizards straight."),
    Fact("Our new flat is on {x} Street, right next to the river.",
         "Which street is {name}'s new flat on?", ("Elm", "Baker", "Mill", "Station", "Victoria"),
         "The street food market was packed, we gave up after an hour."),
    Fact("I'm training my parrot, {x}, to whistle the Tetris theme.",
         "What is the name of {name}'s parrot?", ("Captain", "Mango", "Rio", "Ziggy", "Polly"),
         "Someone called me a parrot at work for repeating everything the boss says."),
    Fact("My brother works as a {x} in Edinburgh now.",
         "What is {name}'s brother's job in Edinburgh?",
         ("firefighter", "pharmacist", "carpenter", "architect", "vet"),
         "My brother-in-law keeps sending me terrible puns."),
    Fact("I won {x} place in the office chili cook-off.",
         "What place did {name} win in the chili cook-off?", ("first", "second", "third"),
         "Chili flakes on pizza, yes or no? I say yes."),
)  # fmt: skip

REPLY: Final = (
    Exchange("Any tips for my hiking trip to the Dolomites next month?",
             "Bring layers and start before sunrise, the afternoon storms are brutal.",
             "What tips did {asker} get about the hiking trip to the Dolomites?",
             "I watched a documentary about the Dolomites, the cliffs looked unreal."),
    Exchange("Should I get a gas or an induction stove for the new kitchen?",
             "The magnetic one, definitely. Water boils in half the time and wiping it is easy.",
             "What was {asker} told about choosing a stove for the new kitchen?",
             "The kitchen tap is dripping again, I need to call someone."),
    Exchange("How do I keep my basil plant alive on the balcony?",
             "Water it only when the soil feels dry, and pinch off flowers as soon as they appear.",
             "What did {asker} learn about keeping the basil plant alive on the balcony?",
             "The balcony next door has a full-size trampoline on it, no idea how."),
    Exchange("Can you recommend a novel for my long flight to Singapore?",
             "Pachinko by Min Jin Lee, it swallowed a whole weekend for me.",
             "Which novel was recommended to {asker} for the long flight to Singapore?",
             "Singapore has been in the news a lot lately, hasn't it?"),
    Exchange("My sourdough starter smells like nail polish, is that normal?",
             "That means it's hungry. Feed it twice a day for a while and it'll calm down.",
             "What did {asker} hear about the sourdough starter smelling like nail polish?",
             "The nail salon on my street closed down."),
    Exchange("Any ideas for my parents' fortieth anniversary gift?",
             "Frame a print of the newspaper front page from their wedding day.",
             "What gift idea did {asker} get for the parents' fortieth anniversary?",
             "We forgot our anniversary dinner reservation, almost a disaster."),
    Exchange("How do I stop my cat from scratching the new sofa?",
             "Put double-sided tape on the arms, they hate the sticky feeling, and add a post.",
             "What was {asker} told about stopping the cat scratching the sofa?",
             "My neighbour's cat sleeps on our doormat every single day."),
    Exchange("Which laptop should I buy for video editing under a thousand euros?",
             "A refurbished MacBook Air, those are a steal right now.",
             "What laptop advice did {asker} get for video editing?",
             "My laptop fan sounds like a jet engine lately."),
    Exchange("Do you know a good way to learn Spanish verbs quickly?",
             "Flashcards every morning, ten minutes, plus podcasts while commuting.",
             "What was suggested to {asker} for learning Spanish verbs quickly?",
             "Spanish omelette for dinner tonight, I'm ridiculously proud of it."),
    Exchange("What should I pack for the camping weekend in Snowdonia?",
             "A warm sleeping bag and waterproof boots, it rains sideways there.",
             "What packing advice did {asker} get for camping in Snowdonia?",
             "Camping chairs are on sale at the hardware store, weirdly."),
    Exchange("Is it worth fixing my old bike or should I get a new one?",
             "Replace the chain and brake pads first, that's cheap and usually enough.",
             "What did {asker} hear about fixing the old bike?",
             "Someone left an old bike chained to our fence for months."),
    Exchange("How can I sleep better after night shifts at the hospital?",
             "Blackout curtains and a strict wind-down routine helped me a lot.",
             "What did {asker} learn about sleeping better after hospital night shifts?",
             "I visited a friend in the hospital, she's doing fine."),
    Exchange("What's a good first board game for my nephew's birthday?",
             "Ticket to Ride. Easy rules, short rounds, and kids love the trains.",
             "Which board game was suggested for {asker}'s nephew's birthday?",
             "The board meeting at work ran for three hours, I nearly cried."),
    Exchange("How should I prepare for my driving test on Thursday?",
             "Practise the roundabouts near the centre, examiners love those.",
             "What advice did {asker} get about preparing for the driving test?",
             "A driving school car went the wrong way down our road, terrifying."),
)  # fmt: skip

# ``{when}`` is one of DATE_PHRASES; the rest of each event names no day or date.
DATE_EVENTS: Final = (
    "I went to a pottery class {when} and made a very wonky bowl!",
    "I finally assembled the wardrobe {when}, only one screw left over.",
    "I fixed the leaking tap all by myself {when}.",
    "I got a tattoo of a little fox {when}, my mum doesn't know yet.",
    "We had a surprise picnic by the lake {when}.",
    "I passed my lifeguard certificate {when}!",
    "I locked myself out of the flat {when} and had to call a locksmith.",
    "I saw a wild deer in the middle of town {when}.",
    "I got my hair cut really short {when}, it feels so light.",
    "I donated blood {when}, they gave me a fancy biscuit.",
    "I finally cleared out the garage {when}, found my old skateboard.",
    "I volunteered at the animal shelter {when} and walked six dogs.",
    "I met a famous chef at a signing in the bookshop {when}.",
    "I repainted the front door bright yellow {when}.",
)
DATE_PHRASES: Final = ("yesterday", "last Friday", "last Saturday", "today", "this morning")
DATE_QUERIES: Final = (
    "What did {name} do {date}?",
    "What was {name} up to {date}?",
    "What happened with {name} {date}?",
)

NEWS: Final = (
    "Big news, I got promoted to team lead!",
    "Guess what, we're expecting a baby in the autumn!",
    "I handed in my notice, I'm leaving the bank for good.",
    "I just got accepted into the evening photography course!",
    "We're moving to Lisbon in the spring, it's official.",
    "My short story got picked for the library anthology!",
    "I'm running for the local council, I signed the papers.",
    "I sold my motorbike and bought an electric scooter instead.",
    "We adopted two retired greyhounds, the house is chaos.",
    "I got engaged, the ring was hidden in a croissant!",
)
RELATIVE_QUERIES: Final = (
    "What did {name} talk about {phrase}?",
    "What news did {name} share {phrase}?",
    "What did {name} mention {phrase}?",
    "What did {name} tell {other} {phrase}?",
)

MULTI_SESSION: Final = (
    Topic("Which cities has {name} visited?",
          ("Just got back from Porto, the tiles there were gorgeous.",
           "Kyoto was magical, so many temples and quiet gardens.",
           "Spent four days in Vienna eating cake, zero regrets.",
           "Marrakech was loud and colourful, I loved every minute.",
           "Our trip to Krakow was cheap and beautiful.",
           "Montreal in winter is no joke, my ears froze."),
          "My aunt visited us on Sunday and reorganised my whole kitchen."),
    Topic("What sports has {name} tried?",
          ("Did my first fencing lesson, the mask is so claustrophobic.",
           "Went bouldering with friends, my fingers are shredded.",
           "Surfing is way harder than it looks, I mostly swallowed seawater.",
           "Tried archery at a stag do and hit the target once!",
           "Rowing club taster session at dawn, brutal but fun.",
           "Played squash for an hour, my knees are complaining."),
          "I tried to call the bank but gave up after an hour on hold."),
    Topic("Which books has {name} read recently?",
          ("Finished Piranesi, the ending gave me chills.",
           "Middlemarch took me months but it was worth it.",
           "Just read The Remains of the Day in one sitting.",
           "Circe was such a gorgeous retelling of the myths.",
           "Project Hail Mary made me laugh out loud on the train.",
           "Station Eleven was weirdly comforting, I loved it."),
          "Did you read the news about the bridge closing?"),
    Topic("What dishes has {name} cooked?",
          ("Made a proper Thai green curry from scratch, the paste took ages.",
           "My first homemade lasagne came out surprisingly well.",
           "Attempted beef Wellington, the pastry was soggy but tasty.",
           "I cooked a huge pot of lamb tagine for friends.",
           "Dumplings from scratch with my flatmate, we folded fifty.",
           "Did a paella on the barbecue, smoky and amazing."),
          "The dishes have been piling up all week, I'm ashamed."),
    Topic("Which concerts has {name} been to?",
          ("Saw Arctic Monkeys live, the crowd was insane.",
           "The Radiohead show was worth the queue in the rain.",
           "Caught a tiny jazz trio in a basement bar, unforgettable.",
           "Heard the symphony play Mahler, I cried a bit.",
           "Billie Eilish was incredible, the lights alone!",
           "A Fleetwood Mac tribute band at the pub, surprisingly good."),
          "The school concert was two hours of recorders, bless them."),
    Topic("What languages has {name} been studying?",
          ("Duolingo streak of a hundred days in Korean!",
           "My Portuguese teacher says my accent is improving.",
           "Started Italian evening classes, mostly learning food words.",
           "Trying to get the Arabic alphabet down, it's beautiful.",
           "Practised my Dutch with the baker, she answered in English.",
           "Japanese kanji are breaking my brain."),
          "My little nephew speaks the language of dinosaurs, fluently."),
    Topic("Which museums has {name} been to?",
          ("The Rijksmuseum was packed but the Vermeers were worth it.",
           "Spent an afternoon with the dinosaur skeletons at Natural History.",
           "The Tate Modern had a weird installation with giant spiders.",
           "Finally saw the Prado, my feet were destroyed.",
           "The Louvre queues were awful and the Mona Lisa is tiny."),
          "My gran calls my bedroom a museum because of all the clutter."),
    Topic("What has {name} been growing in the garden?",
          ("My tomatoes are finally turning red!",
           "The courgettes are out of control, I have twelve.",
           "Put strawberries along the fence, fingers crossed.",
           "The sunflowers are taller than the shed now.",
           "The chillies survived the frost somehow.",
           "Harvested my first potatoes, tiny but mine."),
          "My pile of unanswered emails keeps growing."),
    Topic("Which films has {name} watched lately?",
          ("Saw Dune at the IMAX, my seat was shaking.",
           "Paddington 2 again, still perfect.",
           "Parasite was even better the second time.",
           "Everything Everywhere All at Once broke my brain in a good way.",
           "The new Wes Anderson is very pretty and very strange.",
           "Rewatched Spirited Away with my niece, she loved it."),
          "My cousin watched our flat while we were away, the plants survived."),
)  # fmt: skip

GREETINGS: Final = (
    "Hey {other}! How have you been?",
    "Hi {other}, long time no chat!",
    "Hey {other}, got a minute?",
    "Good to hear from you, {other}!",
    "Hi {other}! How's everything going?",
)
CLOSINGS: Final = (
    "Anyway, I should get back to work. Talk soon!",
    "Gotta run, catch you later!",
    "Speak soon, {other}, take care.",
    "Let's chat again at the weekend.",
    "Okay, bedtime for me. Night, {other}!",
)
SMALL_TALK: Final = (
    "Work has been really busy this week, I'm exhausted.",
    "How was your weekend, {other}?",
    "Pretty quiet weekend, mostly {activity}.",
    "Honestly I'm just happy it's almost the weekend.",
    "The weather has been so {weather} lately.",
    "I had {food} for lunch today, really good.",
    "Have you watched {show}? Everyone at work keeps talking about it.",
    "Not yet, is it really that good?",
    "Haha, that sounds about right.",
    "That's amazing, {other}!",
    "Oh no, I'm sorry to hear that.",
    "Totally agree with you.",
    "Ha, I know the feeling.",
    "Really? I had no idea.",
    "We should grab coffee at {place} sometime.",
    "Definitely, I'm free most evenings next week.",
    "My boss moved our team meeting again today.",
    "I can't believe how fast this year is going.",
    "Traffic on the way to work was awful today.",
    "I've been trying to drink more water, it's going okay.",
    "Random thought: '{word}' would be a great name for a band.",
    "My nephew's new favourite word is '{word}', no idea where he got it.",
    "A crossword answer today was '{word}', I'd never heard of it.",
    "Did you end up going to {place}?",
    "Yeah, it was nice, a bit crowded though.",
    "I need a holiday, seriously.",
    "Same here, work is really dragging this month.",
    "The coffee machine at work broke again, total chaos.",
    "What are you up to this weekend?",
    "Not much, maybe a walk if the weather holds.",
    "I'm thinking of painting the living room, any colour suggestions?",
    "Sounds lovely, send pictures!",
    "I'm so tired today, I barely slept.",
    "Classic {other}, ha.",
    "I'll tell you all about it next time.",
    "My phone battery dies so fast these days.",
    "The neighbours are renovating again, so much drilling.",
    "I finally caught up on emails at work, feels great.",
    "Work was fine, nothing exciting.",
    "It's been a really long week.",
    "Oh nice, I love {place}.",
    "I keep forgetting to reply to messages, sorry about that.",
    "Ha, no worries at all.",
    "We should plan something for the weekend.",
    "I'm in, just tell me when.",
    "Today was one of those days where nothing works.",
    "I really need to get back into a routine.",
    "My inbox at work is a disaster right now.",
    "I'm craving {food} so badly right now.",
    "Any plans for the long weekend?",
    "Probably just resting, I really need it.",
    "By the way, how's your {relative} doing?",
    "Doing well, thanks for asking.",
    "The {weather} weather really isn't helping my mood today.",
    "Ugh, Mondays at work are the worst.",
)
SLOTS: Final = {
    "activity": (
        "tidying the flat",
        "catching up on sleep",
        "doing laundry",
        "sorting out paperwork",
        "walking around the park",
    ),
    "weather": ("grey", "warm", "windy", "rainy", "muggy", "cold"),
    "food": ("ramen", "falafel", "pho", "a burrito", "tacos", "pad thai", "lentil soup"),
    "show": (
        "the new detective series",
        "that baking show",
        "the documentary about octopuses",
        "the space drama",
    ),
    "place": (
        "the cafe on the corner",
        "the farmers market",
        "the night market",
        "the bowling alley",
        "the Italian place near work",
        "the bookshop by the station",
    ),
    "relative": ("mum", "dad", "gran", "cousin", "flatmate"),
}
