"""A deterministic generator of a realistic sample memory tree.

The tree belongs to one synthetic persona, Nadia Rahman, an accessibility researcher at
the Kansai Institute of Inclusive Design in Osaka, and follows the memory tree of
docs/ARCHITECTURE.md.  It exists so that tests, demos and benchmarks have a corpus that
looks like months of real agent sessions without shipping anybody's data::

    GUIDE.md                               standing instructions (type: guide)
    rules/<slug>.md                        four strict rules (type: rule)
    sessions/index.md                      "- <session-id> | <YYYY-MM-DD> | <title>", newest last
    sessions/<session-id>/transcript.md    frontmatter + "# <title>" + one paragraph per turn
    sessions/<session-id>/summary.md       frontmatter (type: summary) + key facts with anchors
    notes/<topic>/<slug>.md                one memory card per fact (fact|preference|decision|correction)
    knowledge/INDEX.md                     "- [[<slug>]] — <one-line summary>", grouped by type
    knowledge/<slug>.md                    one page per subject, [[wikilinks]] and [cite:N]

Formats other code relies on (all lines are ``\\n``-terminated UTF-8):

* A transcript turn is one paragraph matching ``^\\[D(\\d+):(\\d+)\\] ([^:]+): ``; the first
  number is the session's 1-based ordinal in ``sessions/index.md``, the second the turn
  number (1..n, consecutive).  Speakers alternate ``Nadia`` (odd turns) and ``Assistant``.
* A citation source is ``sessions/<id>/transcript.md#D<s>:<t>``.  Every ``[cite:N]`` in a
  knowledge page resolves to item N-1 of its ``sources`` list, and the cited turn states
  the claim (the claim and the turn are generated from the same slot values).  Every
  ``[[slug]]`` names an existing ``knowledge/<slug>.md``.
* A card whose fact was later corrected is kept; the newer card (``type: correction``)
  names it with ``supersedes: notes/<topic>/<slug>.md``.  A card's body is the claim, a
  blank line and ``Source: sessions/<id>/transcript.md#D<s>:<t>``.  Topics are
  ``people``, ``organizations``, ``places``, ``research``, ``preferences``, ``personal``
  and one folder per project slug.
* A knowledge page is ``# <title>``, a paragraph of what holds now (one cited claim per
  attribute), then ``## History`` (dated, cited: earlier values, corrections, events),
  ``## Mentioned with`` (cited claims of other pages that name this subject) and
  ``## Related`` (``- [[slug]] (kind)``).  The first mention of another page inside a
  claim reads ``Name ([[slug]])``.
* Summaries mention their key facts with the turn anchor in brackets, mid-sentence:
  ``... is due on 3 July 2026 [D12:5].``

Sizes: the non-fixed files are split about 15 % knowledge pages, 22 % cards and 63 %
session files (two per session); the average file is ~4.5-5 KB.

The rare word
-------------
:data:`RARE_WORD` (``quillfeather``, always lower case) is the codename of the braille
label printer prototype of the *Tactile Transit Maps* project.  Nadia names it once (the
assistant's reply echoes it), in one session about 60 % of the way through the timeline,
and the word therefore appears in
exactly four files, at every size: that session's ``transcript.md`` and ``summary.md``,
the card ``notes/tactile-transit-maps/tactile-transit-maps-codename.md`` and the page
``knowledge/tactile-transit-maps.md``.  No template contains it; :func:`generate` reports
the list by scanning what it wrote, so the claim is checked rather than assumed.

Determinism: one ``random.Random(seed)`` drives everything, no set or hash order is ever
iterated, so the same ``(files, seed)`` always yields byte-identical trees.
"""

from __future__ import annotations

import bisect
import datetime as _dt
import itertools
import json
import math
import os
import pathlib
import random
import re
from dataclasses import dataclass, field
from typing import Any, Callable, NamedTuple

from brainfs.cache.layout import (GUIDE_PATH, INDEX_PATH, SESSIONS_INDEX, page_path, summary_path,
                                  transcript_path, turn_ref)
from brainfs.cache.search.text import slug_words

__all__ = ["SIZES", "RARE_WORD", "generate"]

SIZES: dict[str, int] = {"demo": 200, "2000": 2000, "20000": 20000}
"""Named target file counts (``--size`` on the command line)."""

RARE_WORD: str = "quillfeather"
"""A token that occurs in exactly four files of every generated tree (see module doc)."""

USER = "Nadia"
USER_FULL = "Nadia Rahman"
ASSISTANT = "Assistant"
#: The timeline ends here; it starts up to three years earlier depending on size.
END_DATE = _dt.date(2026, 5, 29)
TZ = "+09:00"  # Nadia lives in Osaka
#: Below this the fixed files, the rare-word chain and a minimal wiki no longer fit.
MIN_FILES = 40
#: GUIDE.md, sessions/index.md, knowledge/INDEX.md and the rules.
N_RULES = 4
FIXED_FILES = 3 + N_RULES
#: Share of the non-fixed files given to knowledge pages and to note cards; the rest
#: (about 55 %) are sessions, two files each.  Chosen so the average file is ~5 KB.
PAGE_SHARE = 0.15
CARD_SHARE = 0.22

# --------------------------------------------------------------------------------------
# Vocabulary.  Slot fillers are kept plentiful so that grep and search benchmarks see
# varied text rather than the same sentence repeated.
# --------------------------------------------------------------------------------------

MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December"]
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]

FIRST_NAMES = [
    "Kenji", "Aiko", "Tomás", "Priya", "Hiroshi", "Mei", "Oluwaseun", "Sofia", "Daniel",
    "Yuki", "Farah", "Lars", "Amara", "Haruto", "Chiara", "Rafael", "Sakura", "Imran",
    "Elena", "Kwame", "Noor", "Takeshi", "Ingrid", "Mateo", "Ayesha", "Jun", "Leila",
    "Marcus", "Hana", "Diego", "Ren", "Fatima", "Jonas", "Keiko", "Samir", "Aurora",
    "Daisuke", "Zainab", "Pieter", "Naomi", "Arjun", "Emi", "Tariq", "Lucía", "Kaito",
    "Rosa", "Ibrahim", "Misaki", "Anders", "Chloe", "Sora", "Kofi", "Yasmin", "Ryo",
    "Beatriz", "Hamid", "Nanami", "Oskar", "Adaeze", "Shun", "Valentina", "Rashid",
    "Mariko", "Henrik", "Esi", "Kazuki", "Lina", "Bilal", "Ayaka", "Felix", "Rania",
    "Akira", "Camila", "Sebastian", "Yui", "Karim", "Astrid", "Tendai", "Chihiro",
    "Nikhil", "Asuka", "Gabriel", "Sana", "Jakob", "Mina", "Obinna", "Haruka", "Omar",
    "Clara", "Reza",
]
LAST_NAMES = [
    "Watanabe", "Mori", "Herrera", "Iyer", "Tanaka", "Lin", "Adeyemi", "Rossi", "Okafor",
    "Sato", "Haddad", "Nilsson", "Mensah", "Kobayashi", "Bianchi", "Costa", "Yamamoto",
    "Chowdhury", "Petrova", "Asante", "Khan", "Ito", "Larsen", "Fernández", "Siddiqui",
    "Nakamura", "Nasser", "Becker", "Fujita", "Morales", "Kato", "Rahimi", "Jansen",
    "Suzuki", "Malik", "Lindqvist", "Hayashi", "Abubakar", "de Vries", "Ogawa", "Reddy",
    "Shimizu", "Aziz", "Romero", "Takahashi", "Silva", "Ahmed", "Inoue", "Andersen",
    "Dubois", "Kimura", "Boateng", "Karimi", "Matsumoto", "Pereira", "Hosseini", "Yoshida",
    "Eriksson", "Nwosu", "Kondo", "Moretti", "Qureshi", "Saito", "Wagner", "Owusu",
    "Hashimoto", "Castillo", "Baig", "Ueda", "Fischer", "Hamdan", "Murata", "Ortiz",
    "Schmidt", "Ishikawa", "Moyo", "Chen", "Park", "Kapoor", "Arai", "Novak", "Yilmaz",
    "Sasaki", "Mendes", "Farouk", "Endo", "Keller", "Nguyen", "Tran", "Goto",
]
ROLES = [
    "hardware engineer", "program officer", "postdoctoral researcher", "PhD student",
    "UX researcher", "city planner", "occupational therapist", "sign language interpreter",
    "accessibility consultant", "product manager", "data scientist", "station manager",
    "ethics board coordinator", "community organizer", "lecturer", "research engineer",
    "project coordinator", "transit planner", "speech-language therapist",
    "software developer", "audiologist", "orientation and mobility instructor",
    "journalist", "grant manager", "lab manager", "designer", "civil engineer",
    "librarian", "nurse", "policy advisor", "visiting professor",
]

# (name, city, focus)
CORE_ORGS = [
    ("Kansai Institute of Inclusive Design", "Osaka", "inclusive design research and teaching"),
    ("Sora City Lab", "Kyoto", "urban sensing and civic technology"),
    ("Sapphir Mobility Coop", "Sendai", "community-run accessible transport"),
    ("Hikari Transit Authority", "Osaka", "commuter rail operations in Kansai"),
    ("Blue Heron Foundation", "Tokyo", "grants for disability-led research"),
    ("Tessellate Labs", "Fukuoka", "small-batch hardware and 3D printing"),
    ("Nagoya Deaf Community Center", "Nagoya", "Deaf community services and JSL classes"),
    ("Kobe City Digital Office", "Kobe", "municipal web and counter services"),
    ("Miyagi Rehabilitation Hospital", "Sendai", "rehabilitation medicine and outpatient therapy"),
    ("Open Access Maps Collective", "Sapporo", "open geodata for step-free routing"),
]
# (first, last, role, index into CORE_ORGS, city)
CORE_PEOPLE = [
    ("Kenji", "Watanabe", "hardware engineer", 5, "Fukuoka"),
    ("Aiko", "Mori", "program officer", 4, "Tokyo"),
    ("Tomás", "Herrera", "postdoctoral researcher", 0, "Osaka"),
    ("Priya", "Iyer", "PhD student", 0, "Osaka"),
    ("Hiroshi", "Tanaka", "station manager", 3, "Osaka"),
    ("Mei", "Lin", "UX researcher", 1, "Kyoto"),
    ("Oluwaseun", "Adeyemi", "data scientist", 9, "Sapporo"),
    ("Sofia", "Rossi", "accessibility consultant", 1, "Kyoto"),
    ("Daniel", "Okafor", "software developer", 2, "Sendai"),
    ("Yuki", "Sato", "sign language interpreter", 6, "Nagoya"),
    ("Farah", "Haddad", "occupational therapist", 8, "Sendai"),
    ("Lars", "Nilsson", "visiting professor", 0, "Osaka"),
    ("Amara", "Mensah", "community organizer", 2, "Sendai"),
    ("Haruto", "Kobayashi", "city planner", 7, "Kobe"),
    ("Chiara", "Bianchi", "designer", 5, "Fukuoka"),
    ("Rafael", "Costa", "research engineer", 1, "Kyoto"),
    ("Sakura", "Yamamoto", "ethics board coordinator", 0, "Osaka"),
    ("Imran", "Chowdhury", "lecturer", 0, "Osaka"),
    ("Elena", "Petrova", "grant manager", 4, "Tokyo"),
    ("Kwame", "Asante", "transit planner", 3, "Osaka"),
    ("Noor", "Khan", "product manager", 7, "Kobe"),
    ("Takeshi", "Ito", "orientation and mobility instructor", 8, "Sendai"),
    ("Ingrid", "Larsen", "audiologist", 6, "Nagoya"),
    ("Mateo", "Fernández", "PhD student", 0, "Osaka"),
    ("Ayesha", "Siddiqui", "speech-language therapist", 8, "Sendai"),
    ("Jun", "Nakamura", "lab manager", 0, "Osaka"),
    ("Leila", "Nasser", "policy advisor", 7, "Kobe"),
    ("Marcus", "Becker", "civil engineer", 9, "Sapporo"),
    ("Hana", "Fujita", "project coordinator", 2, "Sendai"),
    ("Diego", "Morales", "research engineer", 5, "Fukuoka"),
]
ORG_PREFIXES = [
    "Aozora", "Kestrel", "Lumen", "Harbor", "Cedar", "Tsubame", "Northgate", "Mirai",
    "Willow", "Kumo", "Hoshi", "Riverside", "Granite", "Meridian", "Yamabuki", "Tidewater",
    "Kirin", "Lantern", "Hibari", "Orchard", "Midori", "Beacon", "Asahi", "Compass",
    "Kaede", "Summit", "Umi", "Heron", "Pinecone", "Kaze", "Juniper", "Nami", "Alder",
    "Fern", "Tsuki", "Marigold", "Iwa", "Sparrow", "Koyo", "Trellis", "Bramble", "Shiro",
    "Seiran", "Otter", "Wakaba", "Larch",
]
ORG_KINDS = [
    ("Design Studio", "service design for public bodies"),
    ("Transit Lab", "transit operations research"),
    ("Foundation", "grants for community projects"),
    ("Disability Alliance", "advocacy led by disabled people"),
    ("Hospital", "rehabilitation and outpatient care"),
    ("Library", "public library services"),
    ("Maker Space", "community fabrication and repair"),
    ("Research Center", "applied accessibility research"),
    ("Cooperative", "member-run mobility services"),
    ("City Office", "municipal digital services"),
    ("Access Collective", "access audits and consulting"),
    ("School for the Blind", "education for blind and low-vision students"),
    ("Deaf Association", "Deaf community services"),
    ("Software", "assistive software products"),
    ("Bus Company", "regional bus services"),
    ("Museum", "exhibitions and public programmes"),
]

# (name, city, what kind of place)
CORE_PLACES = [
    ("Kyoto Station", "Kyoto", "the main rail hub"),
    ("Sendai Mediatheque", "Sendai", "a public library and media centre"),
    ("Umeda Station", "Osaka", "a busy interchange station"),
    ("Kobe Harborland", "Kobe", "a waterfront shopping district"),
    ("Tenjin Underground Mall", "Fukuoka", "an underground shopping street"),
    ("Sapporo Chikagai", "Sapporo", "an underground pedestrian concourse"),
    ("Nakanoshima Library", "Osaka", "a historic public library"),
    ("Aoba Community Hall", "Sendai", "a ward community hall"),
    ("Hakata Port Terminal", "Fukuoka", "a ferry terminal"),
    ("Nishiki Market", "Kyoto", "a narrow covered market"),
]
DISTRICTS = [
    ("Shijo", "Kyoto"), ("Gion", "Kyoto"), ("Demachi", "Kyoto"), ("Aoba-dori", "Sendai"),
    ("Izumi", "Sendai"), ("Nagamachi", "Sendai"), ("Namba", "Osaka"), ("Tennoji", "Osaka"),
    ("Shin-Osaka", "Osaka"), ("Kitahama", "Osaka"), ("Sannomiya", "Kobe"),
    ("Motomachi", "Kobe"), ("Hakata", "Fukuoka"), ("Ohori", "Fukuoka"), ("Sakae", "Nagoya"),
    ("Kanayama", "Nagoya"), ("Odori", "Sapporo"), ("Susukino", "Sapporo"),
    ("Shibuya", "Tokyo"), ("Ueno", "Tokyo"), ("Shinagawa", "Tokyo"), ("Kichijoji", "Tokyo"),
    ("Minatomirai", "Yokohama"), ("Kannai", "Yokohama"), ("Korinbo", "Kanazawa"),
    ("Higashiyama", "Kanazawa"), ("Naramachi", "Nara"), ("Saidaiji", "Nara"),
    ("Hondori", "Hiroshima"), ("Ujina", "Hiroshima"), ("Korakuen", "Okayama"),
    ("Furumachi", "Niigata"), ("Suidocho", "Kumamoto"), ("Kokura", "Kitakyushu"),
    ("Omiya", "Saitama"), ("Makuhari", "Chiba"), ("Dogo", "Matsuyama"),
    ("Hamamatsucho", "Tokyo"), ("Koshien", "Nishinomiya"), ("Uji", "Uji"),
]
PLACE_TYPES = [
    ("Station", "a railway station"), ("Library", "a public library"),
    ("Community Hall", "a community hall"), ("Park", "a city park"),
    ("Museum", "a museum"), ("Convention Center", "a convention centre"),
    ("Market", "a market"), ("Civic Center", "a civic centre"),
    ("Bus Terminal", "a bus terminal"), ("Sports Center", "a sports centre"),
    ("Art Center", "an arts centre"), ("Ward Office", "a ward office"),
    ("Shopping Arcade", "a covered shopping arcade"), ("Welfare Center", "a welfare centre"),
    ("Plaza", "a public plaza"),
]

# (name, blurb, lead index, partner org index, site place index)
CORE_PROJECTS = [
    ("Tactile Transit Maps", "3D-printed tactile maps of busy train stations", 0, 3, 2),
    ("Quiet Routes", "a wayfinding app that suggests low-noise, low-crowd walking routes", 5, 1, 0),
    ("Caption Commons", "volunteer-corrected live captions for community meetings", 9, 6, 6),
    ("Ramp Ledger", "crowdsourced data on step-free entrances to shops and clinics", 6, 9, 5),
    ("EasyRead Clinic", "plain-language versions of hospital forms", 10, 8, 7),
    ("Haptic Crosswalk", "a pilot of vibrating crosswalk buttons", 8, 2, 1),
    ("Signbridge", "remote sign language interpretation at city service counters", 13, 7, 3),
    ("Screen Reader Latency Study",
     "a measurement study of how long screen readers take to announce changes", 2, 5, 4),
]
PROJECT_A = [
    "Open", "Quiet", "Bright", "Gentle", "Step-Free", "Clear", "Shared", "Plain", "Civic",
    "Calm", "Safe", "Easy", "Kind", "Wide", "Warm", "Steady", "Together", "Tactile",
    "Audible", "Visible", "Low-Floor", "Slow", "Near", "Local", "Silent", "Signed",
    "Spoken", "Guided",
]
PROJECT_B = [
    "Routes", "Maps", "Signals", "Forms", "Captions", "Kiosks", "Timetables", "Menus",
    "Ballots", "Platforms", "Libraries", "Clinics", "Crossings", "Stations", "Buses",
    "Ferries", "Museums", "Markets", "Queues", "Tickets", "Parks", "Schools", "Counters",
    "Elevators",
]
BENEFICIARIES = [
    "blind and low-vision travellers", "wheelchair users", "Deaf signers", "older adults",
    "autistic visitors", "people with intellectual disabilities", "hard-of-hearing residents",
    "people with chronic fatigue", "families with small children", "first-time visitors",
]

# (name, meaning, method)
CORE_CONCEPTS = [
    ("target size", "the smallest touch area a control can have before people with tremor miss it"),
    ("caption latency", "the delay between speech and the caption appearing on screen"),
    ("tactile legibility", "how reliably a raised symbol is recognised by touch alone"),
    ("cognitive load", "the mental effort a task demands while the person is also navigating"),
    ("step-free routing", "route planning that avoids every stair, escalator-only link and gap over 3 cm"),
    ("plain language", "text that the intended reader can find, understand and use the first time"),
    ("sensory overload", "the point at which noise, light or crowding makes a space unusable"),
    ("screen reader verbosity", "how much a screen reader says per element before the useful part"),
    ("haptic vocabulary", "a small set of vibration patterns that people can learn and tell apart"),
    ("participatory design", "design where disabled people hold decision power, not just give feedback"),
]
CONCEPT_MODS = [
    ("haptic", "touch and vibration cues"), ("auditory", "sound cues"),
    ("tactile", "raised surfaces and textures"), ("cognitive", "memory and attention demands"),
    ("low-vision", "residual vision and magnification"),
    ("multimodal", "combined sound, touch and visual cues"), ("social", "help from staff and strangers"),
    ("temporal", "timing and delays"), ("bilingual", "Japanese and English side by side"),
    ("rush-hour", "rush-hour crowding"), ("night-time", "low light after dark"),
    ("wheelchair", "wheelchair users' routes"), ("older-adult", "people over 65"),
    ("signed", "Deaf signers' communication"), ("neurodivergent", "autistic and ADHD travellers"),
    ("rural", "sparse rural services"), ("indoor", "indoor spaces without GPS"),
    ("emergency", "evacuations and incidents"), ("mobile", "phone-based tools"),
    ("collaborative", "groups travelling together"), ("wayside", "street furniture and kerbs"),
    ("seasonal", "snow, rain and summer heat"), ("outpatient", "hospital visits"),
    ("counter-side", "service counters"),
]
CONCEPT_BASES = [
    ("wayfinding", "how people find and follow a route"),
    ("landmark salience", "which landmarks people notice and remember"),
    ("error recovery", "how people get back on track after a mistake"),
    ("route memory", "what people remember of a route a week later"),
    ("alert fatigue", "when repeated alerts start being ignored"),
    ("signage legibility", "how readable a sign is from a realistic distance"),
    ("turn-taking", "how speakers hand over the floor in a meeting"),
    ("form completion", "how people get through a long form without help"),
    ("queue anxiety", "stress while waiting in lines and at gates"),
    ("trust calibration", "how much people rely on an assistive tool"),
    ("information scent", "how well labels suggest what lies behind them"),
    ("platform safety", "risk at the platform edge"),
    ("door-to-door time", "total journey time including assistance"),
    ("help-seeking", "when and how people ask for assistance"),
    ("feedback latency", "the delay before a system confirms an action"),
    ("map literacy", "how well people read and use maps"),
    ("consent comprehension", "how well participants understand what they agree to"),
    ("notification timing", "when reminders arrive relative to the task"),
    ("crowd navigation", "moving through dense crowds"),
    ("menu depth", "how many levels a menu has before people get lost"),
    ("orientation", "knowing where one is and which way one faces"),
    ("fatigue budgeting", "how people ration energy across a day out"),
]

CITIES = ["Osaka", "Kyoto", "Sendai", "Kobe", "Fukuoka", "Sapporo", "Nagoya", "Tokyo",
          "Yokohama", "Kanazawa", "Nara", "Hiroshima", "Okayama", "Niigata", "Kumamoto",
          "Matsuyama"]
DOCS = ["ethics amendment", "interview guide", "consent form", "information sheet",
        "camera-ready paper", "grant report", "poster abstract", "methods section",
        "workshop proposal", "recruitment flyer", "data management plan", "progress report",
        "literature review", "accessibility statement", "pilot protocol", "debrief notes"]
TOOLS = ["Zotero", "Atlas.ti", "NVivo", "Otter", "Whisper", "R", "Python", "Figma",
         "Qualtrics", "Overleaf", "Miro", "Jitsi", "Notion", "Obsidian", "Excel", "SPSS",
         "Dovetail", "LimeSurvey", "Google Sheets", "Airtable"]
SCREEN_READERS = ["VoiceOver", "TalkBack", "NVDA", "JAWS", "PC-Talker", "Narrator"]
VENUES = ["CHI", "ASSETS", "TACCESS", "W4A", "DIS", "CSCW", "UbiComp", "MobileHCI", "ICCHP"]
TRAINS = ["Nozomi", "Hikari", "Hayabusa", "Thunderbird", "Haruka", "Kodama",
          "Hankyu limited express", "Keihan rapid express", "Sakura"]
FIGURE_DESCS = [
    "median task time per route for sighted and blind participants",
    "error counts before and after the tactile map redesign",
    "caption delay in seconds across six community meetings",
    "the share of stations with step-free access by line",
    "SUS scores for the three prototypes",
    "how often participants asked for help, by site",
    "reading time for the original and plain-language forms",
    "haptic cue recognition accuracy by pattern",
    "the number of barriers reported per kilometre of route",
    "interpreter wait times at each counter",
]
CAFES = ["Café Hitsuji", "Kissa Amber", "Bluebird Coffee", "Tsukikage Tea House", "Mado Café",
         "Kobo Bakery", "Komorebi Coffee", "Shizuka Kissa", "Lantern Books and Coffee",
         "Hatoba Café", "Niwa Tea Room", "Kumo Coffee Stand"]
ACCESS_FEATURES = [
    "step-free access from the {dir} entrance", "a quiet room on the {floor} floor",
    "tactile paving that stops short of the ticket gates",
    "an induction loop at the information desk",
    "elevators that announce floors in Japanese and English",
    "braille on the handrails of the main staircase",
    "a changing place with an adult-sized bench",
    "a ramp that is too steep for most manual wheelchairs",
    "a staffed help point that books assistance a day ahead",
    "audio beacons at every exit", "high-contrast signage on all platforms",
    "a sensory-friendly hour on weekday mornings",
    "accessible toilets only on the {floor} floor",
    "captioned announcements on every screen",
    "a lift that is out of service more often than not",
    "benches every fifty metres along the {dir} concourse",
]
DIRECTIONS = ["north", "south", "east", "west", "central"]
FLOORS = ["ground", "first", "second", "third", "basement"]
VISIT_EVENTS = ["an access audit", "a co-design workshop", "pilot sessions",
                "a site visit with the transit staff", "a community meeting",
                "a user test of the prototype", "a photo survey of the signage",
                "a walking interview with two participants", "a guided tour for the grant panel",
                "a staff training session"]
EVENTS_MET = ["the ASSETS conference", "a CHI workshop on wayfinding",
              "the Kansai accessibility meetup", "a JSL open day", "the W4A conference",
              "a transit open data meetup", "a co-design workshop", "a grant panel",
              "a summer school on inclusive design", "a disability rights rally",
              "a university open day", "a hackathon"]
CHANNELS = ["Signal", "LINE", "a phone call", "Slack", "a video call with captions on",
            "a short email with the question in the subject line", "text message", "Teams"]
PROLES = ["data steward", "co-investigator", "community liaison", "hardware lead",
          "analysis lead", "ethics contact", "interpreter coordinator", "field coordinator",
          "design lead", "advisor"]
PETS = ["dog", "cat", "shiba inu", "greyhound", "rabbit", "tabby cat", "corgi", "parrot"]
PETNAMES = ["Mochi", "Kuro", "Sesame", "Biscuit", "Hana", "Tofu", "Pickle", "Sumi", "Yuzu",
            "Daifuku", "Pepper", "Kinako", "Miso", "Nori", "Ponzu", "Azuki"]
PERSONAL_ACTS = [
    "adopted a {pet} named {petname}", "ran the {city} Marathon",
    "started learning Japanese Sign Language", "took up the shamisen",
    "moved into a flat near the river", "finished a pottery course",
    "joined a wheelchair basketball team", "passed the JLPT N2",
    "started a podcast about {topic}", "published a picture book",
    "won a local photo contest", "became a parent", "got a guide dog named {petname}",
    "is training for a triathlon", "is on parental leave until {month}",
]
EXPERTISE = ["braille production", "JSL interpretation logistics", "transit open data",
             "3D printing tactile graphics", "ethics review in Japan", "screen reader testing",
             "survey design for older adults", "caption quality metrics", "GTFS feeds",
             "wheelchair routing algorithms", "procurement rules for city offices",
             "easy-read writing", "audio description", "haptics hardware",
             "statistics for small samples"]
DELIVERABLES = ["ethics amendment", "final report", "camera-ready paper", "pilot report",
                "grant renewal", "interim report", "conference submission", "poster",
                "dataset release", "workshop proposal"]
PHASES = ["recruitment", "field sessions", "data analysis", "prototype build", "pilot",
          "evaluation", "dissemination", "co-design workshops"]
CRITERIA = ["all regular screen reader users", "half of them wheelchair users",
            "mostly Deaf signers", "all aged 65 or over",
            "a mix of blind and low-vision travellers",
            "people with intellectual disabilities and their supporters",
            "daily commuters", "caregivers and the people they support"]
TOOL_DECISIONS = [
    ("PETG", "PLA", "it survives a summer on a station platform"),
    ("Atlas.ti", "NVivo", "the licence covers everyone on the team"),
    ("Whisper", "a transcription service", "recordings must stay on our own machines"),
    ("R", "SPSS", "the analysis scripts have to be shareable"),
    ("Qualtrics", "Google Forms", "its screen reader support tested better"),
    ("Raspberry Pi", "Arduino", "we need audio output and Wi-Fi"),
    ("Figma", "Sketch", "the partners are on Windows"),
    ("Jitsi", "Zoom", "the hospital network blocks Zoom"),
    ("LimeSurvey", "Qualtrics", "the data must stay on university servers"),
    ("a paper diary", "a diary app", "several participants asked for paper"),
    ("Overleaf", "Word", "five co-authors edit at once"),
    ("Bluetooth beacons", "QR codes", "QR codes need aiming a camera"),
    ("open captions", "closed captions", "the venue screens cannot toggle captions"),
    ("Miro", "a physical whiteboard", "remote participants need the same board"),
]
MILESTONES = ["passed ethics review", "finished the first pilot round",
              "got the prototype working end to end", "submitted the paper to {venue}",
              "shipped version {v} of the app", "printed the first full set of maps",
              "closed recruitment", "finished coding the interviews",
              "presented the results to the city council", "delivered the interim report",
              "ran the last field session", "published the dataset"]
AGREEMENTS = ["data-sharing agreement", "memorandum of understanding", "venue booking contract",
              "non-disclosure agreement", "subcontract for interpretation",
              "equipment loan agreement"]
INDICATORS = ["task abandonment", "the error rate", "help requests", "missed cues",
              "wrong turns", "re-reads per page"]
METHODS = ["a think-aloud protocol with timed tasks", "NASA-TLX after each route",
           "the System Usability Scale", "diary entries over two weeks",
           "video coding of hesitations", "eye tracking on the signage",
           "a five-point confidence scale after each task",
           "counting assistance requests per session", "log data from the app",
           "structured observation with two coders"]
HOBBIES = ["bouldering", "pottery classes", "sourdough baking",
           "early-morning cycling along the Yodo River", "ikebana",
           "a choir that meets on Thursday evenings", "open-water swimming",
           "birdwatching at the Yodo marshes", "the tabla", "trail running in the Rokko mountains"]
HOODS = [("Nakazakicho", "Osaka"), ("Tanimachi", "Osaka"), ("Demachiyanagi", "Kyoto"),
         ("Kitahama", "Osaka"), ("Shukugawa", "Nishinomiya"), ("Okazaki", "Kyoto")]
LANGS = ["Japanese Sign Language", "Korean", "Portuguese", "business Japanese", "Italian"]
RELATIVES = ["sister", "brother", "mother", "father", "cousin", "aunt"]
RELATIVE_NAMES = ["Sabrina", "Tariq", "Rumana", "Farid", "Lubna", "Imtiaz"]
HOME_CITIES = ["Dhaka", "London", "Toronto", "Kuala Lumpur", "Melbourne", "Chittagong"]

# --------------------------------------------------------------------------------------
# Conversation templates.  Slots are filled lazily per turn (see _Slots), so one turn
# talks about one person/project consistently while successive turns vary.
# --------------------------------------------------------------------------------------

# Requests are tagged with a topic; the assistant answers mostly from that topic's bank
# (and shares the request's slot values), so a reply is about what was asked.
U_REQUESTS: list[tuple[str, str]] = [
    ("write", "Can you draft a short email to {person} asking whether {org} could host the {project} pilot in {month}?"),
    ("plan", "I need a one-page summary of where {project} stands for the {weekday} meeting. Can you pull it together?"),
    ("study", "What did we decide last time about the consent form wording for {project}?"),
    ("plan", "Could you check my calendar for {weekday}? I want to block two hours for analysis on {project}."),
    ("write", "Please turn my rough notes from {place} into something I can share with {person_first}."),
    ("study", "Remind me what {person_first} said about {concept} the last time we talked."),
    ("write", "Can you suggest three ways to shorten the {doc} for {project} without losing the methods detail?"),
    ("write", "I'm reviewing the {doc} tonight. Flag anything that reads as jargon to a non-specialist."),
    ("plan", "Let's plan the agenda for the {project} sync with {org}. We have {n} minutes."),
    ("study", "Could you compare {tool} and {tool2} for coding the interview transcripts?"),
    ("study", "I have {n} interview recordings from {city} to transcribe. What's the fastest way that still respects consent?"),
    ("write", "Write a polite reply to {person_first}: I can't make {weekday}, but {weekday2} after {time} works."),
    ("study", "Summarise the main accessibility barriers we saw at {place} in five bullet points."),
    ("plan", "Can you make a checklist for the {project} session at {place}? Equipment, consent, and access to the room."),
    ("write", "What's a good way to explain {concept} to the city council in two sentences?"),
    ("write", "Help me structure the related-work section around {concept} and {concept2}."),
    ("write", "Check whether the {doc} uses person-first or identity-first language consistently."),
    ("plan", "I'm travelling to {city} on {weekday}. What should I prepare for the meeting with {org}?"),
    ("write", "Draft alt text for the {project} figure showing {figure_desc}."),
    ("study", "Can you estimate how long the {project} analysis will take if we add {n_small} more participants?"),
    ("plan", "Please list the open action items for {project} from the last two weeks."),
    ("study", "What questions should I ask {person_first} before we commit to {tool} for {project}?"),
    ("write", "Can you rewrite this paragraph in plain language? It's for the {project} information sheet."),
    ("study", "Give me a reading list of five papers on {concept}, newest first."),
    ("plan", "Prepare talking points for my call with {person} about the {org} partnership."),
    ("plan", "I'd like a rough budget for the {project} workshop in {city}: venue, interpreters, travel."),
    ("study", "Could you sanity-check the numbers in the {project} {doc}? Something looks off in table {n_small}."),
    ("study", "Set up a template for field notes at {place} that works well with a screen reader."),
    ("write", "What's left before we can submit the {doc} to {venue}?"),
    ("write", "Help me write the limitations paragraph for the {project} paper."),
    ("plan", "Can you turn the {project} timeline into a table with owners and dates?"),
    ("write", "I need to explain to {person_first} why we dropped {tool}. Can you help me phrase it kindly?"),
    ("study", "How should we anonymise the {city} interview quotes before they go into the {doc}?"),
    ("study", "Draft three survey questions about {concept} that work with {sr}."),
    ("plan", "What would a fair gift-card amount be for a {minutes}-minute session with travel?"),
    ("plan", "Can you find a time next week when {person_first} and I are both free for {project}?"),
    ("study", "What should the pilot at {place} test first, given what we know about {concept}?"),
    ("write", "Turn these bullet points into a paragraph for the {project} {doc}."),
]
A_BODY: dict[str, list[str]] = {
    "write": [
        "I've kept the tone neutral and removed the two sentences that sounded like a sales pitch.",
        "I'd avoid the phrase \"suffers from\"; \"has\" or \"lives with\" reads better and matches your style.",
        "Alt text suggestion: \"{figure_desc}; the {city} site shows the largest gap.\"",
        "The related-work section leans on studies from before {year}; one or two recent papers on {concept} would help.",
        "I can also prepare a plain-language version for participants, written at roughly a sixth-grade reading level.",
        "I'd flag the {doc} section on {concept} as the part most likely to confuse a non-specialist reader.",
        "I've drafted two versions, one formal for {org} and one shorter for {person_first}.",
        "{venue} asks for an accessibility statement with the submission, so I've added a short one at the end.",
        "The draft email keeps to four sentences and puts the question in the first one.",
        "The {doc} currently runs about {n_small}00 words over the limit, so the methods paragraph is the place to trim.",
        "I've reordered the sections so the findings come before the discussion of {concept}.",
        "For the slides, I'd keep one idea per slide and describe each chart aloud for anyone who cannot see it.",
        "The quickest way to share this with {person_first} is a short summary followed by the full notes as an attachment.",
        "I'd phrase the request to {org} as a question about their timeline rather than a deadline from us.",
        "Draft: \"Dear {person_first}, thank you for the notes on {project}. Could {org} confirm the date by {weekday}? The rest can wait until we meet.\"",
        "The opening sentence now says what the {project} study found before it says how.",
        "I replaced \"utilise\" with \"use\" in four places and split the longest sentence in two.",
        "The limitations paragraph now names the small sample, the single site at {place} and the short follow-up.",
        "Each heading in the {doc} is now a real heading, so screen reader users can jump between sections.",
        "I kept {person_first}'s wording in the second paragraph; it's clearer than my version.",
        "Where the draft said \"the disabled\", I changed it to \"disabled people\" to match your preference.",
        "If the reader only sees the first line, it should be the ask: whether {org} can host in {month}.",
    ],
    "plan": [
        "For {project}, the main risk is the timeline: {n_small} of the {n} sessions still need an interpreter booked.",
        "I'd start with the {doc}, because {person_first} is waiting on it before the {org} review.",
        "If we move the {project} sync to {weekday}, {person_first} can join from {city} without changing trains twice.",
        "In the last round, sessions ran about {minutes} minutes, so book slots with at least fifteen minutes of margin for breaks.",
        "The budget line for sign language interpretation looks low: two interpreters for {hours} hours is closer to ¥{amount_k},000.",
        "Travel-wise, an early train gets you to {city} before {time}, which leaves time to check the room.",
        "If the {train} is full, the next one still arrives in time for the {project} session.",
        "Agenda: welcome and access needs, {project} progress, open questions about {concept}, then next steps.",
        "The {weekday} slot collides with {person_first}'s teaching, so {weekday2} afternoon is the safer choice.",
        "Three open items remain: book the room at {place}, confirm the interpreter, and send the pre-read to {person_first}.",
        "For the workshop in {city}, reserve a quiet room next to the main hall for anyone who needs a break.",
        "If {org} can't host, the community room at {place} is free on {weekday} and has a hearing loop.",
        "I'd send the pre-read at least {n_small} days ahead so that screen reader users have time to go through it.",
        "Costs break down roughly as venue ¥{amount_k},000, interpreters ¥{amount_k2},000 and travel for {n_small} people.",
        "If {person_first} takes the analysis, you can focus on the {doc} and the {org} meeting.",
        "There's a gap in the timeline between the pilot in {month} and the main study; a short check-in with {org} would fill it.",
        "It's worth asking {org} whether their staff could join one session; it tends to speed up fixes.",
        "{person_first} mentioned earlier that {org} prefers shared folders over email attachments, so I'd send a link.",
        "I've blocked {weekday} from {time} for {project}; nothing else is in that slot yet.",
        "Owners and dates: {person_first} has recruitment, you have the {doc}, and {org} confirms the venue by {month}.",
        "A gift card of ¥{fee} plus travel costs is in line with what {org} paid for similar sessions.",
        "Talking points: what {org} gets from the partnership, what we need from them, and the date for the next step.",
    ],
    "study": [
        "The room at {place} has worked before, but check that the induction loop is switched on before participants arrive.",
        "One option is to run the first {n_small} sessions remotely and keep the in-person slots at {place} for participants who prefer them.",
        "{tool} handles Japanese and English in the same transcript, which matters for the {city} interviews.",
        "The consent form should say plainly that participants can stop at any time and still receive the ¥{fee} gift card.",
        "A quick way to test {concept} is to ask three participants to think aloud while completing the task at {place}.",
        "For the figure, I'd plot task time against {concept} with one panel per site so {city} and {city2} are easy to compare.",
        "If reviewers ask about sample size, the justification is the saturation we reached after {n_small} interviews.",
        "Thematic analysis in {tool} will go faster if we agree on the codebook with {person_first} first.",
        "We still need written confirmation from {org} that the data stays on their servers.",
        "It may help to separate the {concept} findings from the usability findings, since they point to different fixes.",
        "The numbers in table {n_small} don't add up: the subtotals come to {n} but the total says {n2}.",
        "A qualitative design with this many participants is reasonable, but say that it is not meant to generalise.",
        "Recording with captions on from the start avoids re-captioning the {project} videos later.",
        "If the goal is to compare routes, a within-subject design is cheaper: each participant tries both the usual route and the {project} route.",
        "I'd keep the survey under {n_small}0 questions; completion drops sharply after that for screen reader users.",
        "I checked the older notes: the last time this came up was around the visit to {place}.",
        "Testing with both {sr} and {sr2} should catch most labelling problems in the {project} prototype.",
        "Data from the {city} pilot suggests that participants relied on landmarks more than on the audio prompts.",
        "Keep the raw recordings on the encrypted drive; only the anonymised transcripts go into the shared folder.",
        "We can cite the {org} report for the baseline numbers instead of re-running that survey.",
        "A pilot with {n_small} participants before the main round would catch problems with the task wording.",
        "The participant codes run from P01 to P{n}; I've checked that no real names slipped into the notes.",
        "For remote sessions, {tool} worked better last time than the alternatives because captions were reliable.",
        "One caution: the {city} data were collected in {month}, when crowding is unusual, so treat the numbers carefully.",
        "The reviewers' main complaint last round was the unclear link between {concept} and the design changes.",
        "The {project} consent wording already covers audio, but video needs an extra line.",
        "Looking back at the notes from {city}, the recurring issue was signage at transfer points.",
        "On {concept}, the clearest framing is the gap between what the route promises and what the person experiences.",
        "Adding {n_small} participants adds roughly {n_small} days of coding in {tool}, plus a day to re-check the themes.",
        "For the quotes, replace place names smaller than a ward and any job title that identifies someone at {org}.",
    ],
}
# A follow-up is a reaction plus a directive; the directive carries slots so that two
# follow-ups rarely read the same.
U_REACTIONS = ["That's close.", "Good.", "Thanks.", "Okay.", "Hmm.", "Not quite.", "Perfect.",
               "That works.", "Nice.", "Almost there.", "Fine.", "Great, that helps.",
               "I like the second option.", "Let's go with the shorter version."]
U_DIRECTIVES = [
    "Can you make it a bit warmer? {person_first} is a friend.",
    "Cut the paragraph about {concept} and keep the rest.",
    "Add it to the notes, and remind me on {weekday} morning.",
    "I'm not sure {tool} is right here; {person_first} had trouble with it at {org}.",
    "What would you do about the interpreter booking for {weekday}?",
    "Can you double-check the dates against the {project} plan?",
    "One question: does {venue} allow supplementary videos?",
    "Keep the numbers but drop the adjectives, and keep it under {n}0 words.",
    "Can you also make a version for the {project} participants, in plain language?",
    "Put the {weekday} slot on hold until {person_first} confirms.",
    "How much would that cost if {org} covers the venue?",
    "The point is about {concept}, not about speed.",
    "The room at {place} only has {n_small} power outlets. Does that change anything?",
    "Could you turn that into bullet points I can read out at the start of the {project} session?",
    "Let's park this until after the {month} deadline.",
    "Send me the short version and keep the long one for {person_first}.",
    "Move the part about {place} to the end.",
    "Add a line that {org} gets the report before anyone else.",
    "Check it with {sr} before I send it; the last draft had unlabelled links.",
    "Use {city} as the example instead; the committee knows it better.",
    "Can you estimate the time it saves us over {n_small} sessions?",
]
U_CONTEXT = ["", "", "", "{person_first} asked about this yesterday.",
             "This is for the {project} meeting on {weekday}.",
             "I only have until {time} today.", "{org} is waiting on it.",
             "It came up again in the {city} interviews.",
             "I promised {person_first} an answer by {weekday}."]
A_OPEN = ["Sure.", "Here's a first pass.", "Happy to help with that.", "Good idea.",
          "Okay, here's what I'd suggest.", "Let me break that down.",
          "Here's a draft you can edit.", "Of course.", "Right, a few thoughts.",
          "That makes sense.", "Here's how I'd approach it.", "Done; details below."]
A_TOPICS = list(A_BODY)
A_CLOSE = ["Want me to send this to {person_first} as a draft?",
           "Should I add this to the {project} notes?",
           "Does that match what you had in mind?",
           "I can tighten it further if it needs to fit on one slide.",
           "Let me know which version you prefer.",
           "Shall I put a reminder in for {weekday}?",
           "Anything you'd like me to change before it goes out?",
           "I can also prepare the {doc} next if that helps."]
ACKS_NEW = ["Got it. I've noted that {sm}.", "Noted: {sm}.", "Thanks, I'll remember that {sm}.",
            "Understood, and I've added it to your notes: {sm}.", "Okay, saved: {sm}.",
            "Good to know that {sm}; it's in the notes now."]
ACKS_CORR = ["Thanks for the correction. I had noted that {old_sm}; I've updated it so that {sm}.",
             "Understood, I'm replacing the older note ({old_sm}) with the new one: {sm}.",
             "Good catch. Updated: {sm}, instead of what I had before ({old_sm})."]
ACKS_RESTATE = ["Yes, that matches my notes: {sm}.", "Right, I still have that {sm}.",
                "Confirmed, my notes say the same: {sm}."]
FACT_PRE = ["", "", "", "Quick update: ", "Before I forget: ", "Noting this for later: ",
            "Heads up: ", "One more thing. ", "FYI: ", "Something to remember: "]
FACT_TAIL = ["", "", "", "Please keep that in mind.", "Can you note that?",
             "That affects the plan for {weekday}.", "Add it to the notes, please.",
             "Worth remembering."]
RESTATE_PRE = ["Reminder: ", "Still true: ", "Same as before: ",
               "To repeat what I said earlier: "]
TASKS = ["send the draft to {person_first}", "book interpreters for {weekday}",
         "check the room at {place}", "update the {doc}", "confirm the budget line with {org}",
         "re-run the analysis in {tool}", "reply to {person_first} about {concept}",
         "print large-type copies of the {doc}", "ask {org} for the access statement",
         "share the meeting notes with {person_first}"]

THEME_TITLES = {
    "project": ["{P} planning", "{P} status check", "{P} draft review", "{P} budget review",
                "{P} recruitment plan", "{P} analysis sync", "{P} pilot debrief",
                "{P} ethics amendment", "{P} poster prep", "{P} field notes",
                "{P} interview guide", "{P} report writing"],
    "person": ["Call prep with {F}", "Meeting {N}", "Catch-up with {F}", "Reply to {F}"],
    "org": ["{O} partnership", "Meeting at {O}", "{O} data agreement", "{O} follow-up"],
    "place": ["{PLC} trip prep", "Notes from {PL}", "{PL} access audit", "Visit to {PL}"],
    "concept": ["Reading on {C}", "Related work on {C}", "Defining {C}", "Measuring {C}"],
    "admin": ["Weekly planning", "Inbox triage", "Teaching prep", "Week ahead"],
}
THEME_OPENERS = {
    "project": ["Morning. Let's work on {P} today, mostly the {doc}.",
                "Can we pick up {P} where we left off? I have about an hour.",
                "I want to get {P} moving again. Where are we?",
                "Quick session on {P}: I need to be ready for {weekday}."],
    "person": ["I'm meeting {N} on {weekday}. Help me prepare.",
               "Can you help me reply to {F}? Their message has been sitting in my inbox.",
               "{F} asked for a catch-up. Let's get my notes in order first."],
    "org": ["I have a meeting with {O} on {weekday}. Let's prepare.",
            "Let's go over where things stand with {O}."],
    "place": ["I'm heading to {PL} on {weekday}. Let's plan the visit.",
              "Back from {PL}. Let's go through what I saw."],
    "concept": ["I want to think through {C} for the paper.",
                "Let's do some reading on {C} today."],
    # One opener per admin title above, in the same order.
    "admin": ["Let's plan the week. {project} and the {doc} are the big items.",
              "Inbox triage time. I have {n} unread messages, mostly about {project}.",
              "I need to prepare my teaching for {weekday}. The topic is {concept}.",
              "Help me sort out my to-do list before the weekend; {person_first} is waiting on me."],
}
THEME_OVERVIEW = {
    "project": "Nadia and the assistant worked on {P}, mainly the {doc}.",
    "person": "Nadia prepared for a conversation with {N}.",
    "org": "Nadia and the assistant reviewed the relationship with {O}.",
    "place": "The session was about {PL} in {PLC}.",
    "concept": "Nadia worked through the idea of {C} for her writing.",
    "admin": "A planning session covering Nadia's week and open admin.",
}
SUMMARY_LEADS = ["Nadia noted that {sm} {a}.", "She mentioned that {sm} {a}.",
                 "It also came up that {sm} {a}.", "The assistant recorded that {sm} {a}."]

# --------------------------------------------------------------------------------------
# Data model
# --------------------------------------------------------------------------------------

KINDS = ("self", "pref", "project", "person", "org", "place", "concept")
#: How a page names another page's kind in its Related list.
KIND_LABEL = {"self": "person", "person": "person", "project": "project", "org": "organization",
              "place": "place", "concept": "concept", "pref": "preference"}
PAGE_TYPE = {"self": "entity", "person": "entity", "project": "project", "org": "organization",
             "place": "place", "concept": "concept", "pref": "preference"}
INDEX_HEADINGS = [("project", "Projects"), ("entity", "People"),
                  ("organization", "Organizations"), ("place", "Places"),
                  ("concept", "Concepts"), ("preference", "Preferences")]


@dataclass(frozen=True)
class Ref:
    """A slot value that points at another subject (rendered as name or wikilink)."""

    sid: int


@dataclass
class Subject:
    """Anything the memory can have a page about: a person, project, place, ..."""

    sid: int
    kind: str
    name: str
    slug: str
    first: str = ""
    attrs: dict[str, Any] = field(default_factory=dict)
    weight: float = 1.0

    @property
    def title(self) -> str:
        return self.name[:1].upper() + self.name[1:]


@dataclass
class KeyDef:
    """One attribute a subject can have, with everything needed to say it.

    ``mode`` is ``single`` (set once), ``mutable`` (set, then possibly corrected) or
    ``event`` (any number of distinct values).  Templates share slot names so that the
    user's turn and the wiki's claim always carry the same values.
    """

    mode: str
    gen: Callable[["_Gen", Subject, dict | None], dict]
    user: tuple[str, ...]
    claim: str
    corr_user: tuple[str, ...] = ()
    corr_claim: str = ""
    card_type: str = "fact"
    weight: float = 1.0


@dataclass
class Fact:
    """One statement made in one turn."""

    fid: int
    sid: int
    key: str
    slots: dict[str, Any]
    mode: str  # new | correction | restate
    session: int
    turn: int = 0
    prev: int | None = None  # the canonical fact a correction supersedes
    canonical: int = -1  # the first fact that stated this value


@dataclass
class Session:
    """One conversation; ``index`` is 0-based, its anchor ordinal is ``index + 1``."""

    index: int
    sid: str
    date: _dt.date
    time: str
    title: str
    theme: str
    ctx: dict[str, str]
    turns: list[tuple[str, str]] = field(default_factory=list)
    facts: list[int] = field(default_factory=list)


class _Timeline(NamedTuple):
    """When the sessions happen: each one's date and "HH:MM", and which carry a correction."""

    dates: list[_dt.date]
    times: list[str]
    corrections: set[int]


@dataclass
class _SessionProgress:
    """What :meth:`_Gen.build_sessions` carries from one session to the next."""

    #: subjects in the order they are introduced, and how many have been
    fresh: list[int]
    introduced: int = 0
    #: session ids given so far (a repeated id gets a number)
    taken_ids: dict[str, int] = field(default_factory=dict)
    #: (subject, key) of mutable facts stated so far: candidates for a correction
    mutable_done: list[tuple[int, str]] = field(default_factory=list)
    mutable_seen: set[tuple[int, str]] = field(default_factory=set)
    mutable_by_subject: dict[int, list[tuple[int, str]]] = field(default_factory=dict)


def _slugify(text: str, max_words: int | None = None) -> str:
    """File-name slug (text.slug_words) cut to ``max_words``: the generator's own limit, never
    ending on a joining word (sessions cut to characters, dream pages to 80 characters)."""
    words = slug_words(text)
    if max_words:
        words = words[:max_words]
        # A cut name should not end on a dangling "of" ("meeting-at-kansai-institute-of").
        while len(words) > 1 and words[-1] in ("of", "at", "the", "and", "on", "for", "to", "with"):
            words.pop()
    return "-".join(words)


def _cap1(text: str) -> str:
    return text[:1].upper() + text[1:]


def _long_date(d: _dt.date) -> str:
    return f"{d.day} {MONTHS[d.month - 1]} {d.year}"


def _article(noun: str) -> str:
    vowel_sound = noun[:1].lower() in "aeiou" and not noun.startswith(("UX", "uni", "use"))
    return ("an " if vowel_sound else "a ") + noun


_NADIA_VERB = re.compile(r"\bNadia(?:'s\b| (\w+))")
_TO_SECOND = {"is": "are", "has": "have", "was": "were"}


def _to_you(phrase: str) -> str:
    """Rephrase a note about Nadia for the assistant talking to her ("you prefer ...")."""
    def sub(m: re.Match) -> str:
        if m.group(1) is None:
            return "your"
        verb = m.group(1)
        if verb in _TO_SECOND:
            verb = _TO_SECOND[verb]
        elif verb.endswith("s") and not verb.endswith("ss"):
            verb = verb[:-1]
        return "you " + verb
    return _NADIA_VERB.sub(sub, phrase)


def _to_she(phrase: str) -> str:
    """Avoid "Nadia noted that Nadia ..." in summaries."""
    if phrase.startswith("Nadia's "):
        return "her " + phrase[len("Nadia's "):]
    if phrase.startswith("Nadia "):
        return "she " + phrase[len("Nadia "):]
    return phrase


_PLAIN_YAML = re.compile(r"[^\W\d_][\w .,'()&/+-]*", re.UNICODE)


def _yq(text: str) -> str:
    """Return ``text`` as a YAML scalar, quoted only when a plain scalar could misparse."""
    if _PLAIN_YAML.fullmatch(text) and not text.endswith((".", " ")) and text.lower() not in (
            "yes", "no", "true", "false", "null", "on", "off"):
        return text
    return json.dumps(text, ensure_ascii=False)


def _identity(slots: dict[str, Any]) -> tuple:
    # Slots starting with "_" are wording variants, not part of the stated value.
    return tuple(sorted((k, v if isinstance(v, Ref) else str(v))
                        for k, v in slots.items() if not k.startswith("_")))


class _Slots(dict):
    """Per-turn slot values, drawn lazily so only the slots a template uses cost a draw."""

    def __init__(self, gen: "_Gen", ctx: dict[str, str]):
        super().__init__(ctx)
        self._gen = gen

    def __missing__(self, key: str) -> str:
        self._gen._fill(self, key)
        return dict.__getitem__(self, key)


# --------------------------------------------------------------------------------------
# Attribute definitions.  Each generator returns the slot values of one statement; when
# ``old`` is given it must return a *different* value (a correction).
# --------------------------------------------------------------------------------------

def _g_role(g: "_Gen", s: Subject, old: dict | None) -> dict:
    if old is None and "org" in s.attrs:
        role, org = s.attrs["role"], s.attrs["org"]
    else:
        role, org = g.rng.choice(ROLES), g.pick("org")
    return {"role": role, "a_role": _article(role), "org": Ref(org)}


def _g_city(g: "_Gen", s: Subject, old: dict | None) -> dict:
    if old is None and "city" in s.attrs:
        return {"city": s.attrs["city"]}
    return {"city": g.rng.choice(CITIES)}


def _g_met(g: "_Gen", s: Subject, old: dict | None) -> dict:
    return {"event": g.rng.choice(EVENTS_MET), "city": g.rng.choice(CITIES),
            "year": str(g.rng.randint(2012, g.date.year - 1))}


def _g_channel(g: "_Gen", s: Subject, old: dict | None) -> dict:
    return {"channel": g.rng.choice(CHANNELS)}


def _g_prole(g: "_Gen", s: Subject, old: dict | None) -> dict:
    return {"prole": g.rng.choice(PROLES), "project": Ref(g.pick("project"))}


def _g_personal(g: "_Gen", s: Subject, old: dict | None) -> dict:
    act = g.rng.choice(PERSONAL_ACTS).format(
        pet=g.rng.choice(PETS), petname=g.rng.choice(PETNAMES), city=g.rng.choice(CITIES),
        topic=g.rng.choice(EXPERTISE), month=g.rng.choice(MONTHS))
    return {"act": act}


def _g_expertise(g: "_Gen", s: Subject, old: dict | None) -> dict:
    return {"topic": g.rng.choice(EXPERTISE)}


def _g_lead(g: "_Gen", s: Subject, old: dict | None) -> dict:
    if old is None and "lead" in s.attrs:
        return {"lead": Ref(s.attrs["lead"])}
    return {"lead": Ref(g.pick("person"))}


def _g_deadline(g: "_Gen", s: Subject, old: dict | None) -> dict:
    due = g.date + _dt.timedelta(days=g.rng.randint(14, 160))
    deliverable = old["deliverable"] if old else g.rng.choice(DELIVERABLES)
    return {"deliverable": deliverable, "due": _long_date(due)}


def _g_site(g: "_Gen", s: Subject, old: dict | None) -> dict:
    if old is None and "site" in s.attrs:
        return {"place": Ref(s.attrs["site"])}
    return {"place": Ref(g.pick("place"))}


def _g_partner(g: "_Gen", s: Subject, old: dict | None) -> dict:
    org = s.attrs["partner"] if "partner" in s.attrs and g.rng.random() < 0.4 else g.pick("org")
    return {"org": Ref(org), "phase": g.rng.choice(PHASES)}


def _g_participants(g: "_Gen", s: Subject, old: dict | None) -> dict:
    criterion = old["criterion"] if old else g.rng.choice(CRITERIA)
    return {"n": str(g.rng.randrange(8, 64, 2)), "criterion": criterion}


def _g_budget(g: "_Gen", s: Subject, old: dict | None) -> dict:
    return {"amount": f"¥{g.rng.randint(1, 14)}.{g.rng.randint(0, 9)} million"}


def _g_tool(g: "_Gen", s: Subject, old: dict | None) -> dict:
    tool, alt, reason = g.rng.choice(TOOL_DECISIONS)
    return {"tool": tool, "alt": alt, "reason": reason}


def _g_milestone(g: "_Gen", s: Subject, old: dict | None) -> dict:
    return {"milestone": g.rng.choice(MILESTONES).format(
        venue=g.rng.choice(VENUES), v=f"{g.rng.randint(1, 3)}.{g.rng.randint(0, 9)}")}


def _g_codename(g: "_Gen", s: Subject, old: dict | None) -> dict:
    return {"codename": RARE_WORD}


def _g_org_city(g: "_Gen", s: Subject, old: dict | None) -> dict:
    return {"city": s.attrs["city"]}


def _g_focus(g: "_Gen", s: Subject, old: dict | None) -> dict:
    return {"focus": s.attrs["focus"]}


def _g_contact(g: "_Gen", s: Subject, old: dict | None) -> dict:
    staff = s.attrs.get("staff", [])
    if old is None and staff:
        return {"person": Ref(staff[0])}
    return {"person": Ref(g.pick("person"))}


def _g_agreement(g: "_Gen", s: Subject, old: dict | None) -> dict:
    return {"agreement": g.rng.choice(AGREEMENTS)}


def _g_funding(g: "_Gen", s: Subject, old: dict | None) -> dict:
    return {"amount": f"¥{g.rng.randint(2, 40) * 100_000:,}", "project": Ref(g.pick("project"))}


def _g_feature(g: "_Gen", s: Subject, old: dict | None) -> dict:
    return {"feature": g.rng.choice(ACCESS_FEATURES).format(
        dir=g.rng.choice(DIRECTIONS), floor=g.rng.choice(FLOORS))}


def _g_visit(g: "_Gen", s: Subject, old: dict | None) -> dict:
    return {"visit_event": g.rng.choice(VISIT_EVENTS), "_weekday": g.rng.choice(WEEKDAYS)}


def _g_cafe(g: "_Gen", s: Subject, old: dict | None) -> dict:
    return {"cafe": g.rng.choice(CAFES)}


def _g_meaning(g: "_Gen", s: Subject, old: dict | None) -> dict:
    return {"meaning": s.attrs["meaning"]}


def _g_method(g: "_Gen", s: Subject, old: dict | None) -> dict:
    return {"method": g.rng.choice(METHODS)}


def _g_threshold(g: "_Gen", s: Subject, old: dict | None) -> dict:
    indicator = old["indicator"] if old else g.rng.choice(INDICATORS)
    return {"indicator": indicator, "pct": str(g.rng.randrange(5, 45))}


def _g_reference(g: "_Gen", s: Subject, old: dict | None) -> dict:
    return {"author": g.rng.choice(LAST_NAMES), "venue": g.rng.choice(VENUES),
            "year": str(g.rng.randint(2009, g.date.year))}


def _g_pet(g: "_Gen", s: Subject, old: dict | None) -> dict:
    return {"pet": g.rng.choice(PETS), "petname": g.rng.choice(PETNAMES)}


def _g_hobby(g: "_Gen", s: Subject, old: dict | None) -> dict:
    return {"hobby": g.rng.choice(HOBBIES)}


def _g_home(g: "_Gen", s: Subject, old: dict | None) -> dict:
    hood, city = HOODS[0] if old is None else g.rng.choice(HOODS)
    return {"hood": hood, "city": city}


def _g_language(g: "_Gen", s: Subject, old: dict | None) -> dict:
    return {"lang": g.rng.choice(LANGS), "weekday": g.rng.choice(WEEKDAYS)}


def _g_family(g: "_Gen", s: Subject, old: dict | None) -> dict:
    return {"relative": g.rng.choice(RELATIVES), "rname": g.rng.choice(RELATIVE_NAMES),
            "home": g.rng.choice(HOME_CITIES)}


KEYS: dict[str, dict[str, KeyDef]] = {
    "person": {
        "role": KeyDef(
            "mutable", _g_role,
            ("{S} is {a_role} at {org}; worth knowing before we talk.",
             "For context, {S_first} works at {org} as {a_role}.",
             "{S} is {a_role} at {org}, so they're our contact for anything practical there.",
             "You should know that {S_first} is {a_role} at {org}; that's how we were introduced."),
            "{S} is {a_role} at {org}",
            ("Correction: {S_first} isn't at {old_org} anymore. They're {a_role} at {org} now.",
             "I had that wrong. {S} left {old_org} and is now {a_role} at {org}.",
             "Update on {S_first}: they moved from {old_org} to {org}, as {a_role}."),
            "{S} moved from {old_org} to {org}, where they work as {a_role}"),
        "city": KeyDef(
            "mutable", _g_city,
            ("{S_first} lives in {city}, so in-person meetings need some planning.",
             "By the way, {S} is based in {city}.",
             "{S_first} is in {city} these days; keep that in mind for travel."),
            "{S} lives in {city}",
            ("Correction: {S_first} moved from {old_city} to {city} last month.",
             "Small fix: {S} lives in {city} now, not {old_city}."),
            "{S} moved from {old_city} to {city}"),
        "met": KeyDef(
            "single", _g_met,
            ("I first met {S_first} at {event} in {city}, back in {year}.",
             "{S_first} and I go back to {event} in {city} in {year}."),
            "Nadia first met {S} at {event} in {city} in {year}"),
        "contact": KeyDef(
            "mutable", _g_channel,
            ("{S_first} prefers {channel}; email tends to sit unanswered.",
             "If you need {S_first}, use {channel}. That's what they prefer."),
            "{S} prefers to be contacted by {channel}",
            ("Update: {S_first} asked to switch from {old_channel} to {channel}.",
             "Correction: {S_first} prefers {channel} now, not {old_channel}."),
            "{S} now prefers {channel} instead of {old_channel}", weight=0.6),
        "project_role": KeyDef(
            "event", _g_prole,
            ("{S} will be the {prole} on {project}.",
             "{S_first} agreed to act as {prole} for {project}.",
             "Please add {S} to {project} as {prole}."),
            "{S} is the {prole} on {project}"),
        "personal": KeyDef(
            "event", _g_personal,
            ("Personal note: {S_first} {act}.",
             "{S_first} told me they {act}. Good to remember next time we talk.",
             "Nice news from {S_first}: they {act}."),
            "{S} {act}", weight=0.7),
        "expertise": KeyDef(
            "single", _g_expertise,
            ("{S_first} is the person to ask about {topic}.",
             "If we get stuck on {topic}, ask {S}. They know it best."),
            "{S} is the go-to person for {topic}"),
    },
    "project": {
        "lead": KeyDef(
            "mutable", _g_lead,
            ("{lead} is leading {S}.",
             "For {S}, {lead_first} is the lead, so decisions go through them.",
             "{lead} agreed to lead {S} day to day."),
            "{lead} leads {S}",
            ("Correction: {lead} leads {S} now. {old_lead_first} stepped back to an advisory role.",
             "Change on {S}: {old_lead} handed the lead over to {lead}."),
            "{lead} took over the lead of {S} from {old_lead}"),
        "deadline": KeyDef(
            "mutable", _g_deadline,
            ("The {deliverable} for {S} is due on {due}.",
             "Deadline for the {S} {deliverable}: {due}.",
             "We have until {due} for the {S} {deliverable}."),
            "The {S} {deliverable} is due on {due}",
            ("The {S} {deliverable} deadline moved from {old_due} to {due}.",
             "Correction: the {deliverable} for {S} is due on {due}, not {old_due}."),
            "The {S} {deliverable} deadline moved from {old_due} to {due}", weight=1.3),
        "site": KeyDef(
            "mutable", _g_site,
            ("The {S} field sessions will run at {place}.",
             "We're doing the {S} fieldwork at {place}.",
             "{place} said yes, so the {S} sessions will happen there."),
            "{S} field sessions run at {place}",
            ("Change of venue: {S} moved from {old_place} to {place}.",
             "Correction: the {S} sessions are at {place}, not {old_place}; the room there fell through."),
            "{S} field sessions moved from {old_place} to {place}"),
        "partner": KeyDef(
            "event", _g_partner,
            ("{org} is partnering with us on {S} for the {phase}.",
             "Good news: {org} signed on to {S}. They'll help with the {phase}."),
            "{org} partners with Nadia on {S} for the {phase}"),
        "participants": KeyDef(
            "mutable", _g_participants,
            ("For {S} we're recruiting {n} participants, {criterion}.",
             "{S} needs {n} participants: {criterion}."),
            "{S} is recruiting {n} participants, {criterion}",
            ("Correction: {S} will recruit {n} participants, not {old_n}.",
             "We're changing the {S} sample from {old_n} to {n} participants."),
            "{S} changed its sample from {old_n} to {n} participants"),
        "budget": KeyDef(
            "mutable", _g_budget,
            ("The {S} budget came in at {amount}.", "We have {amount} for {S} this year."),
            "{S} has a budget of {amount}",
            ("Budget correction: {S} has {amount}, not {old_amount}.",
             "The {S} budget was revised from {old_amount} to {amount}."),
            "The {S} budget was revised from {old_amount} to {amount}"),
        "tool": KeyDef(
            "event", _g_tool,
            ("Decision for {S}: we'll use {tool} instead of {alt}, because {reason}.",
             "Let's settle it. {S} goes with {tool} over {alt}, because {reason}."),
            "For {S}, Nadia decided to use {tool} instead of {alt} because {reason}",
            card_type="decision"),
        "milestone": KeyDef(
            "event", _g_milestone,
            ("{S} milestone: we {milestone}.", "Big day for {S}: we {milestone}.",
             "Quick win on {S}: we {milestone}."),
            "The {S} team {milestone}", weight=1.4),
        "codename": KeyDef(
            "single", _g_codename,
            ("The braille label printer prototype for {S} finally has a name: the team calls it {codename}.",),
            "The braille label printer prototype for {S} is codenamed {codename}", weight=0.0),
    },
    "org": {
        "location": KeyDef(
            "single", _g_org_city,
            ("{S} is based in {city}.", "For the record, {S} sits in {city}.",
             "The {S} office is in {city}, near the station."),
            "{S} is based in {city}"),
        "focus": KeyDef(
            "single", _g_focus,
            ("{S} mostly works on {focus}.", "What {S} does, in short: {focus}."),
            "{S} works on {focus}"),
        "contact": KeyDef(
            "mutable", _g_contact,
            ("My main contact at {S} is {person}.", "At {S}, talk to {person} first."),
            "Nadia's main contact at {S} is {person}",
            ("Correction: our contact at {S} is {person} now; {old_person_first} moved on.",
             "{S} changed contacts. It's {person} instead of {old_person}."),
            "Nadia's contact at {S} changed from {old_person} to {person}"),
        "agreement": KeyDef(
            "event", _g_agreement,
            ("We signed a {agreement} with {S} today.", "The {agreement} with {S} is signed."),
            "Nadia's team signed a {agreement} with {S}"),
        "funding": KeyDef(
            "event", _g_funding,
            ("{S} offered {amount} toward {project}.", "{S} is putting {amount} into {project}."),
            "{S} offered {amount} toward {project}", weight=0.6),
    },
    "place": {
        "location": KeyDef(
            "single", _g_org_city,
            ("{S} is in {city}, a short walk from the station.",
             "{S} is the one in {city}, in case there's any confusion."),
            "{S} is in {city}"),
        "access": KeyDef(
            "event", _g_feature,
            ("Noted at {S}: {feature}.", "Something to remember about {S}: {feature}.",
             "At {S} I found {feature}."),
            "{S} has {feature}", weight=1.5),
        "visit": KeyDef(
            "event", _g_visit,
            ("I was at {S} on {_weekday} for {visit_event}.",
             "Spent {_weekday} at {S} for {visit_event}."),
            "Nadia visited {S} for {visit_event}"),
        "tip": KeyDef(
            "single", _g_cafe,
            ("The quiet café near {S} is {cafe}. Good for interviews.",
             "If you need a quiet spot near {S}, {cafe} works."),
            "{cafe} is a quiet café near {S}, good for interviews"),
    },
    "concept": {
        "definition": KeyDef(
            "single", _g_meaning,
            ("When I say {S}, I mean {meaning}.", "Let's pin down {S}: {meaning}."),
            "In Nadia's work, {S} means {meaning}"),
        "method": KeyDef(
            "single", _g_method,
            ("We measure {S} with {method}.", "For {S}, the measure we use is {method}."),
            "Nadia's team measures {S} with {method}"),
        "threshold": KeyDef(
            "mutable", _g_threshold,
            ("We treat {S} as a problem once {indicator} passes {pct} percent.",
             "Threshold for {S}: flag it when {indicator} goes above {pct} percent."),
            "Nadia's team flags {S} when {indicator} exceeds {pct} percent",
            ("Correction on {S}: the threshold is {pct} percent {indicator}, not {old_pct}.",
             "We changed the {S} threshold from {old_pct} to {pct} percent."),
            "The {S} threshold changed from {old_pct} to {pct} percent {indicator}"),
        "reference": KeyDef(
            "event", _g_reference,
            ("The key paper on {S} is {author} et al., {venue} {year}.",
             "For {S}, start with {author} and colleagues ({venue} {year})."),
            "A key reference on {S} is {author} et al. at {venue} {year}"),
    },
    "self": {
        "home": KeyDef(
            "mutable", _g_home,
            ("I live in {hood}, {city}, so plan travel times from there.",
             "Home is {hood} in {city} now."),
            "Nadia lives in {hood}, {city}",
            ("I moved! I'm in {hood}, {city} now, not {old_hood}.",
             "Correction: home is {hood} now; I left {old_hood} last month."),
            "Nadia moved from {old_hood} to {hood}, {city}"),
        "pet": KeyDef(
            "event", _g_pet,
            ("I adopted a {pet} last weekend, named {petname}.",
             "Personal news: I adopted a {pet} called {petname}."),
            "Nadia adopted a {pet} named {petname}", weight=0.5),
        "hobby": KeyDef(
            "event", _g_hobby,
            ("I started {hobby} this month.", "Personal update: I took up {hobby}."),
            "Nadia took up {hobby}"),
        "language": KeyDef(
            "event", _g_language,
            ("I'm taking {lang} classes on {weekday}s now, so keep that evening free.",),
            "Nadia takes {lang} classes on {weekday}s"),
        "family": KeyDef(
            "event", _g_family,
            ("My {relative} {rname} is visiting from {home}, so I'll be slower to reply.",
             "Family news: my {relative} {rname} is coming over from {home}."),
            "Nadia's {relative} {rname} visited from {home}"),
    },
}

# Preferences: (title, [(key, mode, [(statement, [what Nadia says, ...]), ...])]).
# Each mutable key's alternatives are visited in order by successive corrections.
PREFS: list[tuple[str, list[tuple[str, str, list[tuple[str, list[str]]]]]]] = [
    ("Figure formats", [
        ("format", "mutable", [
            ("Nadia prefers PDF over PNG for figures", [
                "For figures, always give me PDF, not PNG. They stay sharp when the publisher rescales them.",
                "Please export figures as PDF rather than PNG from now on; PNG figures look awful in print.",
                "Reminder to self and to you: PDF over PNG for every figure."]),
            ("Nadia wants SVG for figures on the web and PDF for print", [
                "For figures on the web, use SVG; keep PDF for print figures.",
                "New rule for figures: SVG when it goes on the web, PDF when it goes to print."]),
        ]),
        ("palette", "single", [
            ("Nadia wants colour-blind-safe palettes (Okabe-Ito) in every chart", [
                "Every chart should use a colour-blind-safe palette; Okabe-Ito is my default.",
                "Use the Okabe-Ito palette in charts, please. It's colour-blind-safe."]),
        ]),
    ]),
    ("Meeting schedule", [
        ("hours", "mutable", [
            ("Nadia takes no meetings before 10:00", [
                "No meetings before 10:00, please. Mornings are for writing.",
                "Don't accept meetings before 10:00 for me."]),
            ("Nadia keeps Friday free of meetings", [
                "I'm keeping Friday free of meetings from now on; it's my writing day.",
                "Please decline meetings on Friday. Friday is for writing now."]),
            ("Nadia takes meetings only on Tuesday and Thursday afternoons", [
                "Meetings only on Tuesday and Thursday afternoons from now on.",
                "Let's batch meetings: Tuesday and Thursday afternoons only."]),
        ]),
        ("length", "single", [
            ("Nadia wants meetings capped at 45 minutes", [
                "Cap meetings at 45 minutes unless I say otherwise.",
                "Book 45 minutes, not an hour, for meetings with me."]),
        ]),
    ]),
    ("Writing style", [
        ("spelling", "mutable", [
            ("Nadia uses British spelling in drafts", [
                "Use British spelling in my drafts: colour, organise, travelled.",
                "Drafts in British spelling, please."]),
            ("Nadia uses American spelling for US venues and British spelling elsewhere", [
                "For US venues switch to American spelling; keep British spelling everywhere else.",
                "American spelling for the US venues, British spelling for the rest."]),
        ]),
        ("tone", "single", [
            ("Nadia wants short, direct replies without filler", [
                "Keep replies short and direct. No filler, no cheerleading.",
                "I prefer short, direct replies without filler."]),
        ]),
        ("language", "single", [
            ("Nadia prefers identity-first language such as \"disabled people\" unless a community asks otherwise", [
                "Use identity-first language, \"disabled people\", unless a community asks otherwise.",
                "Default to identity-first language like \"disabled people\"; follow each community's own preference."]),
        ]),
    ]),
    ("Citation style", [
        ("style", "mutable", [
            ("Nadia uses APA 7th edition for citations", [
                "Citations in APA 7th edition, please.",
                "Format my citations in APA 7th edition."]),
            ("Nadia uses the ACM reference format for conference papers and APA for journals", [
                "For conference papers use the ACM reference format; keep APA citations for journals.",
                "ACM reference format for conference papers, APA for journal papers."]),
        ]),
    ]),
    ("Travel", [
        ("mode", "single", [
            ("Nadia takes trains over flights for trips under four hours", [
                "For trips under four hours I take trains over flights.",
                "Book trains, not flights, when the trip is under four hours."]),
        ]),
        ("seat", "mutable", [
            ("Nadia wants an aisle seat", ["Always book me an aisle seat.",
                                           "Aisle seat, please, on trains and planes."]),
            ("Nadia wants a window seat on the shinkansen", [
                "On the shinkansen I'd rather have a window seat now.",
                "Book a window seat for shinkansen trips."]),
        ]),
    ]),
    ("Food and drink", [
        ("diet", "single", [
            ("Nadia is vegetarian", ["I'm vegetarian, so keep that in mind for workshop catering.",
                                     "For catering: I'm vegetarian."]),
        ]),
        ("coffee", "mutable", [
            ("Nadia drinks no coffee after 14:00", [
                "No coffee after 14:00 for me, or I don't sleep.",
                "Don't schedule coffee meetings after 14:00; I stop drinking coffee then."]),
            ("Nadia has cut out coffee and drinks genmaicha instead", [
                "I've cut out coffee entirely; genmaicha instead.",
                "No more coffee for me at all. Genmaicha is fine."]),
        ]),
    ]),
    ("Writing tools", [
        ("editor", "single", [
            ("Nadia writes papers in LaTeX on Overleaf", [
                "Papers are written in LaTeX on Overleaf, so give me LaTeX snippets.",
                "I write papers in LaTeX on Overleaf."]),
        ]),
        ("refs", "single", [
            ("Nadia keeps references in Zotero", [
                "My references live in Zotero; export BibTeX from there.",
                "Add new references to Zotero, please."]),
        ]),
    ]),
    ("Slide design", [
        ("contrast", "single", [
            ("Nadia wants high-contrast slides with text of at least 28 pt", [
                "Slides need high contrast and text of at least 28 pt.",
                "High-contrast slides, 28 pt text minimum."]),
        ]),
        ("notes", "single", [
            ("Nadia wants speaker notes that describe every image aloud", [
                "Speaker notes should describe every image aloud, for anyone who can't see the slides.",
                "Put a spoken description of every image in the speaker notes."]),
        ]),
    ]),
    ("Email handling", [
        ("drafts", "single", [
            ("Nadia wants emails prepared as drafts for her review, never sent directly", [
                "Prepare emails as drafts for my review; never send them directly.",
                "Don't send emails for me. Drafts only, I'll review them."]),
        ]),
        ("signoff", "mutable", [
            ("Nadia signs off emails with \"Best, Nadia\"", [
                "Sign off my emails with \"Best, Nadia\".",
                "Use \"Best, Nadia\" as the sign-off."]),
            ("Nadia signs off emails with \"Warmly, Nadia\"", [
                "Switch my email sign-off to \"Warmly, Nadia\".",
                "From now on sign off emails with \"Warmly, Nadia\"."]),
        ]),
    ]),
]
PREF_CORR_USER = ("Change to my preferences: {_u}", "Update, and this replaces what I said before: {_u}",
                  "I've changed my mind on this. {_u}")

RULES = [
    ("no-participant-names", "Never name study participants",
     "Never write a study participant's real name into any file, message or draft. Use their "
     "participant code (P01, P02, ...) everywhere, including file names and figure captions. "
     "If a name appears in a transcript or an email, replace it before the text is stored."),
    ("confirm-before-sending", "Nothing leaves without Nadia's review",
     "Never send an email, message, calendar invitation or form response on Nadia's behalf. "
     "Prepare a draft and say where it is; Nadia sends it herself."),
    ("alt-text-required", "Every image gets alt text",
     "Every figure, chart, photo or screenshot in a document, slide or post must have alt text "
     "that states what the image shows and why it is there. A figure without alt text is not "
     "finished."),
    ("raw-data-is-read-only", "Raw study data is read-only",
     "Never delete, overwrite or edit raw study data (recordings, logs, consent forms). Work on "
     "copies in the analysis folder and keep the originals on the encrypted drive."),
]


def _pref_keydefs(spec: list[tuple[str, str, list[tuple[str, list[str]]]]]) -> dict[str, KeyDef]:
    """KeyDefs for one preference subject; the slot ``i`` indexes its alternatives."""
    defs: dict[str, KeyDef] = {}
    for key, mode, alts in spec:
        def gen(g: "_Gen", s: Subject, old: dict | None, _alts=alts) -> dict:
            idx = 0 if old is None else (int(old["i"]) + 1) % len(_alts)
            statement, variants = _alts[idx]
            return {"i": str(idx), "s": statement, "_u": g.rng.choice(variants)}
        defs[key] = KeyDef(mode, gen, ("{_u}",), "{s}", PREF_CORR_USER,
                           "{s}, replacing the earlier preference that {old_s}",
                           card_type="preference")
    return defs


# --------------------------------------------------------------------------------------
# The generator
# --------------------------------------------------------------------------------------

class _Gen:
    """Builds the whole tree in memory from one seeded RNG."""

    def __init__(self, files: int, seed: int):
        self.rng = random.Random(seed)
        self.files = files
        rest = files - FIXED_FILES
        self.n_pages = max(3, round(rest * PAGE_SHARE))
        n_cards = max(4, round(rest * CARD_SHARE))
        self.n_sessions = (rest - self.n_pages - n_cards) // 2
        self.n_cards = rest - self.n_pages - 2 * self.n_sessions
        self.subjects: list[Subject] = []
        self.by_kind: dict[str, list[int]] = {k: [] for k in KINDS}
        self.cum: dict[str, list[float]] = {}
        self.facts: list[Fact] = []
        self.chains: dict[tuple[int, str], list[int]] = {}
        self.seen: dict[tuple[int, str], dict[tuple, int]] = {}
        self.sessions: list[Session] = []
        self.date = END_DATE
        self.page_set: dict[int, bool] = {}
        self.rare_session = 0
        self._build_world()

    # -- world ---------------------------------------------------------------------------

    def _add(self, kind: str, name: str, first: str = "", weight: float = 1.0,
             **attrs: Any) -> Subject | None:
        slug = _slugify(name)
        if slug in self._slugs:
            return None
        self._slugs[slug] = len(self.subjects)
        subj = Subject(len(self.subjects), kind, name, slug, first, attrs, weight)
        self.subjects.append(subj)
        self.by_kind[kind].append(subj.sid)
        return subj

    def _build_world(self) -> None:
        self._slugs: dict[str, int] = {}
        # The world grows with the wiki: enough subjects of each kind to fill the pages,
        # never fewer than the hand-written core.
        want = math.ceil(self.n_pages * 1.05)
        self._add("self", USER_FULL, USER, weight=3.0)
        for title, spec in PREFS:
            self._add("pref", title, weight=2.0, keys=_pref_keydefs(spec))
        org_ids = self._add_orgs(max(10, round(want * 0.14)))
        place_ids = self._add_places(max(10, round(want * 0.12)))
        person_ids = self._add_people(max(30, round(want * 0.50)), org_ids)
        self._add_projects(max(8, round(want * 0.08)), person_ids, org_ids, place_ids)
        self._add_concepts(max(10, round(want * 0.11)))
        for kind in KINDS:
            self.cum[kind] = list(itertools.accumulate(
                self.subjects[i].weight for i in self.by_kind[kind]))
        self._fillers = self._make_fillers()

    def _add_orgs(self, n_org: int) -> list[int]:
        """The core organisations, then generated ones up to ``n_org``; the core's ids."""
        rng = self.rng
        org_ids = []
        for name, city, focus in CORE_ORGS:
            org_ids.append(self._add("org", name, weight=4.0, city=city, focus=focus, staff=[]).sid)
        combos = [(p, k) for p in ORG_PREFIXES for k in ORG_KINDS]
        rng.shuffle(combos)
        for prefix, (kind, focus) in combos:
            if len(self.by_kind["org"]) >= n_org:
                break
            self._add("org", f"{prefix} {kind}", weight=rng.uniform(0.5, 1.5),
                      city=rng.choice(CITIES), focus=focus, staff=[])
        return org_ids

    def _add_places(self, n_place: int) -> list[int]:
        """The core places, then generated ones up to ``n_place``; the core's ids."""
        rng = self.rng
        place_ids = []
        for name, city, what in CORE_PLACES:
            place_ids.append(self._add("place", name, weight=4.0, city=city, what=what).sid)
        combos2 = [(d, t) for d in DISTRICTS for t in PLACE_TYPES]
        rng.shuffle(combos2)
        for (district, city), (ptype, what) in combos2:
            if len(self.by_kind["place"]) >= n_place:
                break
            self._add("place", f"{district} {ptype}", weight=rng.uniform(0.5, 1.5),
                      city=city, what=what)
        return place_ids

    def _add_people(self, n_person: int, org_ids: list[int]) -> list[int]:
        """The core people, then generated ones up to ``n_person``, each on an
        organisation's staff; the core's ids."""
        rng = self.rng
        person_ids = []
        for first, last, role, org_i, city in CORE_PEOPLE:
            p = self._add("person", f"{first} {last}", first, weight=4.0, role=role,
                          org=org_ids[org_i], city=city)
            person_ids.append(p.sid)
            self.subjects[org_ids[org_i]].attrs["staff"].append(p.sid)
        names = [(f, l) for f in FIRST_NAMES for l in LAST_NAMES]
        rng.shuffle(names)
        all_orgs = self.by_kind["org"]
        for first, last in names:
            if len(self.by_kind["person"]) >= n_person:
                break
            org = rng.choice(all_orgs)
            p = self._add("person", f"{first} {last}", first, weight=rng.uniform(0.3, 1.2),
                          role=rng.choice(ROLES), org=org, city=self.subjects[org].attrs["city"])
            if p is not None:
                self.subjects[org].attrs["staff"].append(p.sid)
        return person_ids

    def _add_projects(self, n_project: int, person_ids: list[int], org_ids: list[int],
                      place_ids: list[int]) -> None:
        """The core projects, then generated ones up to ``n_project``."""
        rng = self.rng
        for name, blurb, lead, partner, site in CORE_PROJECTS:
            self._add("project", name, weight=5.0, blurb=blurb, lead=person_ids[lead],
                      partner=org_ids[partner], site=place_ids[site])
        combos3 = [(a, b) for a in PROJECT_A for b in PROJECT_B]
        rng.shuffle(combos3)
        people = self.by_kind["person"]
        all_orgs = self.by_kind["org"]
        for a, b in combos3:
            if len(self.by_kind["project"]) >= n_project:
                break
            self._add("project", f"{a} {b}", weight=rng.uniform(0.5, 2.0),
                      blurb=f"{a.lower()} {b.lower()} for {rng.choice(BENEFICIARIES)}",
                      lead=rng.choice(people), partner=rng.choice(all_orgs),
                      site=rng.choice(self.by_kind["place"]))

    def _add_concepts(self, n_concept: int) -> None:
        """The core concepts, then generated ones up to ``n_concept``."""
        rng = self.rng
        for name, meaning in CORE_CONCEPTS:
            self._add("concept", name, weight=3.0, meaning=meaning)
        combos4 = [(m, b) for m in CONCEPT_MODS for b in CONCEPT_BASES]
        rng.shuffle(combos4)
        for (mod, mdesc), (base, bdesc) in combos4:
            if len(self.by_kind["concept"]) >= n_concept:
                break
            self._add("concept", f"{mod} {base}", weight=rng.uniform(0.5, 1.5),
                      meaning=f"{bdesc}, looked at through {mdesc}")

    def _draw(self, kind: str) -> int:
        """Index into ``by_kind[kind]``, weighted (core subjects come up more often)."""
        cum = self.cum[kind]
        return bisect.bisect_right(cum, self.rng.random() * cum[-1], 0, len(cum) - 1)

    def pick(self, kind: str) -> int:
        """A weighted random subject id of ``kind``."""
        return self.by_kind[kind][self._draw(kind)]

    def keydefs(self, subj: Subject) -> dict[str, KeyDef]:
        return subj.attrs["keys"] if subj.kind == "pref" else KEYS[subj.kind]

    # -- slot filling ------------------------------------------------------------------

    def _make_fillers(self) -> dict[str, Callable[[], str]]:
        """Slot name -> a draw; numbers come from pre-made string lists (cheaper than str())."""
        rng = self.rng
        choice = rng.choice
        names = {k: [self.subjects[i].name for i in self.by_kind[k]] for k in KINDS}

        def named(kind: str) -> Callable[[], str]:
            return lambda: names[kind][self._draw(kind)]

        def pool(values: list[str] | tuple[str, ...]) -> Callable[[], str]:
            return lambda: choice(values)

        times = [f"{h}:{m}" for h in range(9, 18) for m in ("00", "15", "30", "45")]
        return {
            "org": named("org"), "place": named("place"), "concept": named("concept"),
            "city": pool(CITIES), "tool": pool(TOOLS), "doc": pool(DOCS), "venue": pool(VENUES),
            "month": pool(MONTHS), "weekday": pool(WEEKDAYS), "time": pool(times),
            "n": pool([str(i) for i in range(12, 61)]),
            "n_small": pool([str(i) for i in range(2, 10)]),
            "minutes": pool([str(i) for i in range(30, 120, 5)]),
            "fee": pool([f"{i},000" for i in range(1, 6)]),
            "hours": pool([str(i) for i in range(2, 9)]),
            "amount_k": pool([str(i) for i in range(20, 401)]),
            "year": pool([str(i) for i in range(2012, 2023)]),
            "train": pool(TRAINS), "sr": pool(SCREEN_READERS), "figure_desc": pool(FIGURE_DESCS),
        }

    def _fill(self, slots: _Slots, key: str) -> None:
        """Draw the value of one slot (``x2`` is a second, independent ``x``)."""
        if key in ("person", "person_first"):
            # A turn that names a person uses the same one for full and first name.
            subj = self.subjects[self.pick("person")]
            slots["person"], slots["person_first"] = subj.name, subj.first
            return
        base = key[:-1] if key[-1:] == "2" else key
        if base == "project":
            if "P" in slots and self.rng.random() < 0.7:
                slots[key] = slots["P"]
            else:
                slots[key] = self.subjects[self.pick("project")].name
            return
        value = self._fillers[base]()
        if key != base:
            # "weekday2" next to "weekday" should name another day.
            for _ in range(4):
                if value != slots.get(base):
                    break
                value = self._fillers[base]()
        slots[key] = value

    def _new_slots(self, sess: Session) -> _Slots:
        return _Slots(self, sess.ctx)

    # -- rendering -----------------------------------------------------------------------

    def _mapping(self, fact: Fact, page: int | None = None, linked: list[int] | None = None,
                 old: dict | None = None) -> dict[str, str]:
        """Template values for ``fact``; on a page, other pages are wikilinked once."""
        def name(sid: int) -> str:
            subj = self.subjects[sid]
            if page is not None and sid != page and sid in self.page_set:
                if sid not in linked:
                    linked.append(sid)
                    return f"{subj.name} ([[{subj.slug}]])"
            return subj.name

        subj = self.subjects[fact.sid]
        out = {"S": name(fact.sid), "S_first": subj.first or subj.name}
        for prefix, slots in (("", fact.slots), ("old_", old or {})):
            for k, v in slots.items():
                if isinstance(v, Ref):
                    out[prefix + k] = name(v.sid)
                    ref = self.subjects[v.sid]
                    out[prefix + k + "_first"] = ref.first or ref.name
                else:
                    out[prefix + k] = v
        return out

    def _old(self, fact: Fact) -> dict | None:
        return self.facts[fact.prev].slots if fact.prev is not None else None

    def claim(self, fact: Fact, page: int | None = None, linked: list[int] | None = None) -> str:
        """The third-person statement of ``fact`` (no final period)."""
        kd = self.keydefs(self.subjects[fact.sid])[fact.key]
        if fact.mode == "correction":
            return _cap1(kd.corr_claim.format_map(self._mapping(fact, page, linked, self._old(fact))))
        return _cap1(kd.claim.format_map(self._mapping(fact, page, linked)))

    def state_claim(self, fact: Fact, page: int | None = None,
                    linked: list[int] | None = None) -> str:
        """What ``fact`` says holds now (a correction's new value, without the history)."""
        kd = self.keydefs(self.subjects[fact.sid])[fact.key]
        return _cap1(kd.claim.format_map(self._mapping(fact, page, linked)))

    def summary_phrase(self, fact: Fact) -> str:
        kd = self.keydefs(self.subjects[fact.sid])[fact.key]
        text = kd.claim.format_map(self._mapping(fact))
        # The phrase follows "that ..." in acks and summaries; names keep their capital.
        first = text.split(" ", 1)[0]
        return text[:1].lower() + text[1:] if first in ("The", "In", "For", "A") else text

    def anchor(self, fact: Fact) -> str:
        sess = self.sessions[fact.session]
        return turn_ref(sess.sid, f"D{sess.index + 1}:{fact.turn}")

    # -- facts ---------------------------------------------------------------------------

    def _record(self, sid: int, key: str, slots: dict, mode: str, session: int,
                prev: int | None = None, canonical: int | None = None) -> Fact:
        fact = Fact(len(self.facts), sid, key, slots, mode, session, prev=prev)
        fact.canonical = fact.fid if canonical is None else canonical
        self.facts.append(fact)
        if mode != "restate":
            self.chains.setdefault((sid, key), []).append(fact.fid)
            self.seen.setdefault((sid, key), {})[_identity(slots)] = fact.fid
        return fact

    def make_fact(self, sid: int, session: int, key: str | None = None) -> Fact:
        """A new statement about subject ``sid``: new value, event, or restatement."""
        rng = self.rng
        subj = self.subjects[sid]
        defs = self.keydefs(subj)
        if key is None:
            unset = [k for k, d in defs.items()
                     if d.mode != "event" and d.weight > 0 and (sid, k) not in self.chains]
            events = [k for k, d in defs.items() if d.mode == "event"]
            if unset and ((sid, next(iter(defs))) not in self.chains or rng.random() < 0.6):
                key = unset[0] if (sid, next(iter(defs))) not in self.chains else rng.choice(unset)
            elif events and rng.random() < 0.75:
                key = rng.choices(events, weights=[defs[k].weight for k in events])[0]
            else:
                done = [k for k in defs if (sid, k) in self.chains and defs[k].weight > 0]
                key = rng.choice(done) if done else next(iter(defs))
        kd = defs[key]
        chain = self.chains.get((sid, key))
        if chain and kd.mode != "event":
            cur = self.facts[chain[-1]]
            return self._record(sid, key, dict(cur.slots), "restate", session,
                                canonical=cur.canonical)
        slots = kd.gen(self, subj, None)
        known = self.seen.get((sid, key), {}).get(_identity(slots))
        if known is not None:
            return self._record(sid, key, slots, "restate", session, canonical=known)
        return self._record(sid, key, slots, "new", session)

    def make_correction(self, sid: int, key: str, session: int) -> Fact | None:
        subj = self.subjects[sid]
        kd = self.keydefs(subj)[key]
        cur = self.facts[self.chains[(sid, key)][-1]]
        for _ in range(12):
            slots = kd.gen(self, subj, cur.slots)
            if _identity(slots) != _identity(cur.slots):
                break
        else:
            return None
        return self._record(sid, key, slots, "correction", session, prev=cur.canonical)

    # -- sessions ------------------------------------------------------------------------

    def build_sessions(self) -> None:
        n = self.n_sessions
        tl = self._timeline(n)
        # Every subject is introduced by 70 % of the timeline so that it can earn a page.
        fresh: list[int] = []
        for kind in ("project", "pref", "self", "org", "person", "place", "concept"):
            fresh.extend(self.by_kind[kind])
        prog = _SessionProgress(fresh)
        for i in range(n):
            self.date = tl.dates[i]
            sess, focus = self._open_session(i, tl.dates[i], tl.times[i], prog.taken_ids)
            self.sessions.append(sess)
            plan = self._plan_facts(i, focus, i in tl.corrections, prog)
            self._hold_session(sess, plan, prog)

    def _timeline(self, n: int) -> _Timeline:
        """Dates and times of the ``n`` sessions, and which of them carry a correction."""
        rng = self.rng
        span = min(max(150, n * 2), 1095)
        start = END_DATE - _dt.timedelta(days=span)
        offsets = sorted(rng.randrange(span + 1) for _ in range(n))
        # Corrections are spread over the later 80 % of the timeline, one per chosen
        # session, and budgeted so that every one (and what it supersedes) gets a card.
        n_corr = max(3, min(round(self.n_cards * 0.08), (self.n_cards - 2) // 3))
        corr_sessions = sorted(rng.sample(range(n // 5, n), min(n_corr, n - n // 5)))
        self.rare_session = int(n * 0.6)
        dates = [start + _dt.timedelta(days=o) for o in offsets]
        counts: dict[_dt.date, int] = {}
        for d in dates:
            counts[d] = counts.get(d, 0) + 1
        day_times: dict[_dt.date, list[int]] = {}
        for d, c in counts.items():
            day_times[d] = sorted(rng.sample(range(8 * 60, 21 * 60, 7), c))
        used_today: dict[_dt.date, int] = {}
        times = []
        for date in dates:
            k = used_today.get(date, 0)
            used_today[date] = k + 1
            minutes = day_times[date][k]
            times.append(f"{minutes // 60:02d}:{minutes % 60:02d}")
        return _Timeline(dates, times, set(corr_sessions))

    def _open_session(self, i: int, date: _dt.date, time: str,
                      taken_ids: dict[str, int]) -> tuple[Session, int]:
        """Session ``i``'s theme, title and id, and the subject it is mostly about."""
        rng = self.rng
        themes = ["project", "person", "org", "place", "concept", "admin"]
        theme_w = [42, 16, 10, 10, 10, 12]
        theme = "project" if i == self.rare_session else rng.choices(themes, theme_w)[0]
        focus, ctx = self._session_focus(i, theme)
        if "P" not in ctx:
            ctx["P"] = self.subjects[self.pick("project")].name
        t_idx = rng.randrange(len(THEME_TITLES[theme]))
        title = THEME_TITLES[theme][t_idx].format_map(ctx)
        ctx["_opener"] = str(t_idx) if theme == "admin" else ""
        base = f"{date.isoformat()}-{_slugify(title, 5)}"
        sess_id = base
        if sess_id in taken_ids:
            taken_ids[base] += 1
            sess_id = f"{base}-{taken_ids[base]}"
        taken_ids.setdefault(sess_id, 1)
        return Session(i, sess_id, date, time, title, theme, ctx), focus

    def _session_focus(self, i: int, theme: str) -> tuple[int, dict[str, str]]:
        """The subject a session of ``theme`` is about, and its title's placeholders."""
        rng = self.rng
        ctx: dict[str, str] = {}
        focus: int
        if theme == "project":
            focus = self.by_kind["project"][0] if i == self.rare_session else self.pick("project")
            ctx["P"] = self.subjects[focus].name
        elif theme == "person":
            focus = self.pick("person")
            ctx.update(N=self.subjects[focus].name, F=self.subjects[focus].first)
        elif theme == "org":
            focus = self.pick("org")
            ctx["O"] = self.subjects[focus].name
        elif theme == "place":
            focus = self.pick("place")
            ctx.update(PL=self.subjects[focus].name, PLC=self.subjects[focus].attrs["city"])
        elif theme == "concept":
            focus = self.pick("concept")
            ctx["C"] = self.subjects[focus].name
        else:
            focus = self.by_kind["self"][0] if rng.random() < 0.4 else self.pick("pref")
        return focus, ctx

    def _plan_facts(self, i: int, focus: int, correct: bool,
                    prog: _SessionProgress) -> list[tuple[str, int, str | None]]:
        """Who the facts of session ``i`` are about: (what, subject, key) in turn order."""
        rng = self.rng
        n = self.n_sessions
        due = math.ceil(len(prog.fresh) * min(1.0, (i + 1) / max(1.0, n * 0.7)))
        plan: list[tuple[str, int, str | None]] = []
        while prog.introduced < due:
            plan.append(("fresh", prog.fresh[prog.introduced], None))
            prog.introduced += 1
        for _ in range(rng.randint(1, 3)):
            plan.append(("fact", focus, None))
        for _ in range(rng.randint(0, 2)):
            kind = rng.choices(("person", "project", "org", "place", "self", "pref"),
                               (30, 25, 12, 12, 8, 13))[0]
            plan.append(("fact", self.pick(kind), None))
        if correct and prog.mutable_done:
            cands = prog.mutable_by_subject.get(focus) or prog.mutable_done
            plan.append(("corr",) + rng.choice(cands))
        if i == self.rare_session:
            plan.append(("fact", self.by_kind["project"][0], "codename"))
        # Cap the plan so facts never crowd out the conversation.
        # The rare word and corrections come first so no cap can drop them; 19 is the
        # number of user turns after the opener in a 40-turn session.
        musts = [p for p in plan if p[0] == "corr" or p[2] == "codename"]
        musts += [p for p in plan if p[0] == "fresh"]
        others = [p for p in plan if p not in musts]
        plan = (musts + others[: max(0, 12 - len(musts))])[:19]
        rng.shuffle(plan)
        return plan

    def _hold_session(self, sess: Session, plan: list[tuple[str, int, str | None]],
                      prog: _SessionProgress) -> None:
        """The session's facts at their turns, its turns written, its mutable facts noted."""
        rng = self.rng
        n_turns = max(rng.randint(10, 40), 2 * len(plan) + 4)
        n_turns = min(n_turns, 40)
        user_turns = list(range(3, n_turns + 1, 2))
        positions = sorted(rng.sample(user_turns, len(plan)))
        facts_here: list[Fact] = []
        for (what, sid, key), pos in zip(plan, positions):
            if what == "corr":
                fact = self.make_correction(sid, key, sess.index) or self.make_fact(sid, sess.index)
            else:
                fact = self.make_fact(sid, sess.index, key)
            fact.turn = pos
            facts_here.append(fact)
        sess.facts = [f.fid for f in facts_here]
        self._write_turns(sess, n_turns, {f.turn: f for f in facts_here})
        for f in facts_here:
            kd = self.keydefs(self.subjects[f.sid])[f.key]
            pair = (f.sid, f.key)
            if kd.mode == "mutable" and pair not in prog.mutable_seen:
                prog.mutable_seen.add(pair)
                prog.mutable_done.append(pair)
                prog.mutable_by_subject.setdefault(f.sid, []).append(pair)

    def _user_fact_text(self, fact: Fact, slots: _Slots) -> str:
        rng = self.rng
        kd = self.keydefs(self.subjects[fact.sid])[fact.key]
        if fact.mode == "correction":
            return _cap1(rng.choice(kd.corr_user).format_map(
                self._mapping(fact, old=self._old(fact))))
        text = _cap1(rng.choice(kd.user).format_map(self._mapping(fact)))
        if fact.mode == "restate":
            return rng.choice(RESTATE_PRE) + text
        tail = rng.choice(FACT_TAIL).format_map(slots)
        return rng.choice(FACT_PRE) + text + (" " + tail if tail else "")

    def _assistant(self, slots: _Slots, lo: int, hi: int, topic: str,
                   opener: str | None = None) -> str:
        """An assistant reply of ``lo..hi`` body sentences, mostly on ``topic``."""
        rng = self.rng
        parts = [opener if opener is not None else rng.choice(A_OPEN)]
        k = rng.randint(lo, hi)
        on_topic = min(k - k // 4, len(A_BODY[topic]))
        aside = rng.choice([t for t in A_TOPICS if t != topic])
        picked = rng.sample(A_BODY[topic], on_topic) + rng.sample(A_BODY[aside], k - on_topic)
        parts += [t.format_map(slots) for t in picked]
        if rng.random() < 0.6:
            parts.append(rng.choice(A_CLOSE).format_map(slots))
        return " ".join(parts)

    def _write_turns(self, sess: Session, n_turns: int, facts_at: dict[int, Fact]) -> None:
        rng = self.rng
        turns: list[tuple[str, str]] = []
        kind = "request"
        topic = rng.choice(A_TOPICS)
        slots = self._new_slots(sess)
        for t in range(1, n_turns + 1):
            if t % 2 == 1:
                # A new request starts fresh slots; a follow-up keeps talking about the
                # same people and things as the exchange it follows.
                if t == 1:
                    openers = THEME_OPENERS[sess.theme]
                    pick = sess.ctx["_opener"]
                    text = (openers[int(pick)] if pick else rng.choice(openers)).format_map(slots)
                elif t in facts_at:
                    slots = self._new_slots(sess)
                    text = self._user_fact_text(facts_at[t], slots)
                    kind = "fact"
                elif rng.random() < 0.65 or kind != "request":
                    slots = self._new_slots(sess)
                    topic, request = rng.choice(U_REQUESTS)
                    context = rng.choice(U_CONTEXT)
                    text = (request + (" " + context if context else "")).format_map(slots)
                    kind = "request"
                else:
                    text = f"{rng.choice(U_REACTIONS)} {rng.choice(U_DIRECTIVES)}".format_map(slots)
                    kind = "follow"
                turns.append((USER, text))
            else:
                fact = facts_at.get(t - 1)
                if fact is not None:
                    sm = _to_you(self.summary_phrase(fact))
                    if fact.mode == "correction":
                        old = Fact(-1, fact.sid, fact.key, self._old(fact), "new", fact.session)
                        ack = rng.choice(ACKS_CORR).format(
                            sm=sm, old_sm=_to_you(self.summary_phrase(old)))
                    elif fact.mode == "restate":
                        ack = rng.choice(ACKS_RESTATE).format(sm=sm)
                    else:
                        ack = rng.choice(ACKS_NEW).format(sm=sm)
                    text = self._assistant(slots, 2, 5, rng.choice(A_TOPICS), opener=ack)
                elif kind == "request":
                    text = self._assistant(slots, 8, 14, topic)
                else:
                    text = self._assistant(slots, 4, 9, topic)
                turns.append((ASSISTANT, text))
        sess.turns = turns

    # -- selection of cards and pages ----------------------------------------------------

    def select_cards(self) -> list[int]:
        """Choose which canonical facts become memory cards (exactly ``n_cards`` if possible)."""
        rng = self.rng
        chosen: dict[int, bool] = {}
        for f in self.facts:
            if f.mode == "correction":
                chosen[f.prev] = True
                chosen[f.fid] = True
            elif f.key == "codename":
                chosen[f.fid] = True
        forced = sorted(chosen)
        canon = [f.fid for f in self.facts if f.mode == "new" and f.fid not in chosen]
        pri = [fid for fid in canon
               if self.keydefs(self.subjects[self.facts[fid].sid])[self.facts[fid].key].card_type
               in ("preference", "decision")]
        pri_set = {fid: True for fid in pri}
        rest = [fid for fid in canon if fid not in pri_set]
        rng.shuffle(pri)
        rng.shuffle(rest)
        need = max(0, self.n_cards - len(forced))
        pick = (pri[: need // 3] + rest + pri[need // 3:])[:need]
        return sorted(forced + pick)

    def select_pages(self) -> list[int]:
        counts: dict[int, int] = {}
        for f in self.facts:
            if f.mode != "restate":
                counts[f.sid] = counts.get(f.sid, 0) + 1
        rare_sid = self.by_kind["project"][0]
        forced = [rare_sid] + self.by_kind["self"] + self.by_kind["pref"] + \
            [p for p in self.by_kind["project"][1:8]]
        forced = [s for s in forced if counts.get(s)]
        ranked = sorted(counts, key=lambda s: (-counts[s], s))
        # Even a small wiki should show every kind of page, so the two most discussed
        # subjects of each kind go first; the rest of the budget follows the counts.
        for kind in ("person", "org", "place", "concept"):
            forced += [s for s in ranked if self.subjects[s].kind == kind][:2]
        forced_set = {s: True for s in forced}
        others = [s for s in ranked if s not in forced_set]
        return (forced + others)[: self.n_pages]


# --------------------------------------------------------------------------------------
# Rendering of files
# --------------------------------------------------------------------------------------

def _transcript(g: _Gen, sess: Session) -> str:
    d = sess.index + 1
    out = ["---", f"session: {sess.sid}", f"date: {sess.date.isoformat()}T{sess.time}:00{TZ}",
           f"participants: [{USER}, {ASSISTANT}]", "---", f"# {sess.title}", ""]
    for t, (speaker, text) in enumerate(sess.turns, 1):
        out.append(f"[D{d}:{t}] {speaker}: {text}")
        out.append("")
    return "\n".join(out)


def _summary(g: _Gen, sess: Session) -> str:
    rng = g.rng
    d = sess.index + 1
    facts = [g.facts[fid] for fid in sess.facts]
    key = sorted(facts, key=lambda f: (f.key != "codename", f.mode != "correction",
                                       f.mode != "new", f.turn))
    chosen = sorted(key[:5], key=lambda f: f.turn)
    slots = g._new_slots(sess)
    sentences = [THEME_OVERVIEW[sess.theme].format_map(slots)]
    for f in chosen:
        a = f"[D{d}:{f.turn}]"
        if f.mode == "correction":
            old = Fact(-1, f.sid, f.key, g._old(f), "new", f.session)
            sentences.append(f"A correction came up: {g.summary_phrase(f)}, replacing the "
                             f"earlier note that {g.summary_phrase(old)} {a}.")
        elif f.mode == "restate":
            sentences.append(f"Nadia repeated that {_to_she(g.summary_phrase(f))} {a}.")
        else:
            sm = g.summary_phrase(f)
            lead = rng.choice(SUMMARY_LEADS)
            sentences.append(lead.format(sm=_to_she(sm) if lead.startswith(("Nadia", "She")) else sm, a=a))
    tasks = rng.sample(TASKS, 2)
    sentences.append(f"Open items: {tasks[0].format_map(slots)}; {tasks[1].format_map(slots)}.")
    return "\n".join([
        "---", f"session: {sess.sid}", f"date: {sess.date.isoformat()}T{sess.time}:00{TZ}",
        f"title: {_yq(sess.title)}", "type: summary", "---", f"# Summary: {sess.title}", "",
        " ".join(sentences), ""])


def _card_topic(g: _Gen, fact: Fact) -> str:
    subj = g.subjects[fact.sid]
    return {"self": "personal", "pref": "preferences", "project": subj.slug, "person": "people",
            "org": "organizations", "place": "places", "concept": "research"}[subj.kind]


def _card_scope(g: _Gen, fact: Fact) -> str:
    subj = g.subjects[fact.sid]
    if subj.kind == "project":
        return f"project:{subj.slug}"
    proj = fact.slots.get("project")
    if isinstance(proj, Ref):
        return f"project:{g.subjects[proj.sid].slug}"
    return "global"


def _cards(g: _Gen, fids: list[int]) -> list[tuple[str, str]]:
    rng = g.rng
    paths: dict[int, str] = {}
    taken: dict[str, bool] = {}
    out = []
    for fid in fids:
        f = g.facts[fid]
        subj = g.subjects[f.sid]
        kd = g.keydefs(subj)[f.key]
        topic = _card_topic(g, f)
        base = f"{subj.slug}-{_slugify(f.key)}"
        if kd.mode == "event":
            value = " ".join(str(g.subjects[v.sid].name if isinstance(v, Ref) else v)
                             for k, v in f.slots.items() if not k.startswith("_"))
            base = f"{base}-{_slugify(value, 4)}"
        elif f.mode == "correction":
            base = f"{base}-{g.sessions[f.session].date.isoformat()}"
        slug, k = base, 2
        while f"{topic}/{slug}" in taken:
            slug, k = f"{base}-{k}", k + 1
        taken[f"{topic}/{slug}"] = True
        path = f"notes/{topic}/{slug}.md"
        paths[fid] = path
        date = g.sessions[f.session].date.isoformat()
        ctype = "correction" if f.mode == "correction" else kd.card_type
        conf = rng.uniform(0.9, 0.99) if f.mode == "correction" else rng.uniform(0.55, 0.95)
        fm = ["---", f"type: {ctype}", f"scope: {_card_scope(g, f)}", f"confidence: {conf:.2f}",
              f"created: {date}", f"updated: {date}"]
        if f.mode == "correction":
            fm.append(f"supersedes: {paths[f.prev]}")
        fm.append("---")
        sess = g.sessions[f.session]
        body = g.claim(f) + "."
        if f.mode == "correction":
            body += " The older card is kept for history."
        else:
            body += f" Mentioned during the session \"{sess.title}\"."
        out.append((path, "\n".join(fm + [body, "", f"Source: {g.anchor(f)}", ""])))
    return out


def _index_summary(g: _Gen, sid: int, current: dict[str, Fact]) -> str:
    subj = g.subjects[sid]
    if subj.kind == "person":
        parts = []
        if "role" in current:
            slots = current["role"].slots
            parts.append(f"{slots['role']} at {g.subjects[slots['org'].sid].name}")
        if "city" in current:
            parts.append(f"lives in {current['city'].slots['city']}")
        return "; ".join(parts) or "someone Nadia works with"
    if subj.kind == "project":
        text = subj.attrs["blurb"]
        if "lead" in current:
            text += f"; led by {g.subjects[current['lead'].slots['lead'].sid].name}"
        return text
    if subj.kind == "org":
        return f"{subj.attrs['focus']}; based in {subj.attrs['city']}"
    if subj.kind == "place":
        return f"{subj.attrs['what']} in {subj.attrs['city']}"
    if subj.kind == "concept":
        return subj.attrs["meaning"]
    if subj.kind == "self":
        return "accessibility researcher at the Kansai Institute of Inclusive Design; whose memory this is"
    return "; ".join(f.slots["s"].removeprefix("Nadia ") for f in current.values())


class _PageLinks(NamedTuple):
    """What the pages draw on: each subject's canonical facts, the current facts of other
    subjects that mention it, and how many sessions two page subjects share."""

    own: dict[int, list[Fact]]
    mentions: dict[int, list[Fact]]
    co: dict[int, dict[int, int]]


class _Page(NamedTuple):
    """One knowledge page: its file, its section of the index and its index line."""

    path: str
    text: str
    ptype: str
    index_line: str


class _Citations:
    """A page's sources in the order first cited; calling it gives a fact's marker."""

    def __init__(self) -> None:
        self.sources: list[int] = []
        self._number: dict[int, int] = {}

    def __call__(self, f: Fact) -> str:
        if f.fid not in self._number:
            self.sources.append(f.fid)
            self._number[f.fid] = len(self.sources)
        return f"[cite:{self._number[f.fid]}]"


def _pages(g: _Gen, pages: list[int]) -> tuple[list[tuple[str, str]], str]:
    """The knowledge pages of ``pages`` and the text of knowledge/INDEX.md."""
    links = _page_links(g)
    files = []
    index_lines: dict[str, list[str]] = {}
    for sid in pages:
        page = _page(g, sid, links)
        files.append((page.path, page.text))
        index_lines.setdefault(page.ptype, []).append(page.index_line)
    idx = ["# Knowledge index", "",
           f"One line per page; {len(pages)} pages. Open a page for details and citations.", ""]
    for ptype, heading in INDEX_HEADINGS:
        lines = sorted(index_lines.get(ptype, []))
        if lines:
            idx += [f"## {heading}", ""] + lines + [""]
    return files, "\n".join(idx)


def _page_links(g: _Gen) -> _PageLinks:
    """Canonical facts by subject, "current" facts that mention each subject by Ref, and
    the sessions page subjects share."""
    own: dict[int, list[Fact]] = {}
    mentions: dict[int, list[Fact]] = {}
    co: dict[int, dict[int, int]] = {}
    superseded = {f.prev: True for f in g.facts if f.mode == "correction"}
    for f in g.facts:
        if f.mode == "restate":
            continue
        own.setdefault(f.sid, []).append(f)
        if f.fid in superseded:
            continue
        for v in f.slots.values():
            if isinstance(v, Ref) and v.sid != f.sid:
                mentions.setdefault(v.sid, []).append(f)
    for sess in g.sessions:
        subs = []
        for fid in sess.facts:
            s = g.facts[fid].sid
            if g.page_set.get(s) and s not in subs:
                subs.append(s)
        for a in subs:
            row = co.setdefault(a, {})
            for b in subs:
                if a != b:
                    row[b] = row.get(b, 0) + 1
    return _PageLinks(own, mentions, co)


def _page(g: _Gen, sid: int, links: _PageLinks) -> _Page:
    """The page of subject ``sid``: current values, history, mentions, related pages."""
    rng = g.rng
    subj = g.subjects[sid]
    defs = g.keydefs(subj)
    chains: dict[str, list[Fact]] = {}
    events: list[Fact] = []
    for f in links.own.get(sid, []):
        if defs[f.key].mode == "event":
            events.append(f)
        else:
            chains.setdefault(f.key, []).append(f)
    # Keep pages readable at any scale: all current values, the latest corrections,
    # a handful of events and of mentions from other pages.
    if len(events) > 8:
        events = sorted(rng.sample(events, 8), key=lambda f: f.fid)
    ment = [f for f in links.mentions.get(sid, []) if g.page_set.get(f.sid)]
    if len(ment) > 5:
        ment = sorted(rng.sample(ment, 5), key=lambda f: f.fid)
    c = _Citations()
    linked: list[int] = []
    current = {k: ch[-1] for k, ch in chains.items()}
    ordered_keys = [k for k in defs if k in current]
    lead = [f"{g.state_claim(current[k], sid, linked)} {c(current[k])}." for k in ordered_keys]
    history = _page_history(g, sid, [chains[k] for k in ordered_keys], events, c, linked)
    conn = [f"{g.claim(f, sid, linked)} {c(f)}." for f in ment]
    co = links.co.get(sid, {})
    related_ids = [s for s in sorted(co, key=lambda s: (-co[s], s)) if s != sid][:6]
    for s in linked:
        if s not in related_ids:
            related_ids.append(s)
    updated = max(g.sessions[g.facts[fid].session].date for fid in c.sources)
    ptype = PAGE_TYPE[subj.kind]
    fm = ["---", f"title: {_yq(subj.title)}", f"type: {ptype}", f"updated: {updated.isoformat()}",
          "sources:"] + [f"  - {g.anchor(g.facts[fid])}" for fid in c.sources] + ["---"]
    body = [f"# {subj.title}", "", " ".join(lead) if lead else
            f"{subj.title} comes up in Nadia's sessions mostly through events, listed below.", ""]
    if history:
        body += ["## History", ""] + history + [""]
    if conn:
        body += ["## Mentioned with", "", " ".join(conn), ""]
    if related_ids:
        body += ["## Related", ""]
        for s in related_ids:
            other = g.subjects[s]
            body.append(f"- [[{other.slug}]] ({KIND_LABEL[other.kind]})")
        body.append("")
    return _Page(page_path(subj.slug), "\n".join(fm + body), ptype,
                 f"- [[{subj.slug}]] — {_index_summary(g, sid, current)}")


def _page_history(g: _Gen, sid: int, chains: list[list[Fact]], events: list[Fact],
                  c: _Citations, linked: list[int]) -> list[str]:
    """The History section's lines in fact order: the last changes of each value that
    changed, and the events."""
    history: list[tuple[int, str]] = []
    for ch in chains:
        if len(ch) > 1:
            for f in ch[-3:]:
                date = g.sessions[f.session].date.isoformat()
                if f.mode == "correction":
                    history.append((f.fid, f"- {date}: corrected. {g.claim(f, sid, linked)} {c(f)}."))
                else:
                    history.append((f.fid, f"- {date}: {g.claim(f, sid, linked)} {c(f)}."))
    for f in events:
        date = g.sessions[f.session].date.isoformat()
        history.append((f.fid, f"- {date}: {g.claim(f, sid, linked)} {c(f)}."))
    history.sort()
    return [line for _, line in history]


def _guide(g: _Gen) -> str:
    lines = []
    last = g.sessions[0].date
    for sid in g.by_kind["pref"]:
        subj = g.subjects[sid]
        for key in subj.attrs["keys"]:
            chain = g.chains.get((sid, key))
            if chain:
                f = g.facts[chain[-1]]
                last = max(last, g.sessions[f.session].date)
                statement = f.slots["s"]
            else:  # never said in a session: fall back to the first alternative
                statement = next(s for t, spec in PREFS if t == subj.name
                                 for k, m, alts in spec if k == key for s, _ in alts[:1])
            lines.append(f"- {subj.title}: {statement.removeprefix('Nadia ')}.")
    return "\n".join([
        "---", "title: Standing instructions", "type: guide", f"updated: {last.isoformat()}", "---",
        "# Guide", "",
        f"You are assisting {USER_FULL}, an accessibility researcher at the Kansai Institute of "
        "Inclusive Design in Osaka. These instructions apply to every turn; the strict rules in "
        "rules/ override everything else.", "",
        "## Preferences", ""] + lines + [
        "",
        "## Working style", "",
        "- Check knowledge/INDEX.md before asking Nadia something the memory may already hold.",
        "- When a fact changes, write a new note card that supersedes the old one; never edit history.",
        "- Cite the session turn (sessions/<id>/transcript.md#D<s>:<t>) for anything you claim she said.",
        "- Dates in files are ISO 8601 (2026-03-14); in prose, write 14 March 2026.",
        "- Ask before booking anything that costs money.", ""])


def _rules(start: _dt.date) -> list[tuple[str, str]]:
    out = []
    for slug, title, text in RULES:
        out.append((f"rules/{slug}.md", "\n".join([
            "---", f"title: {_yq(title)}", "type: rule", f"updated: {start.isoformat()}", "---",
            f"# {title}", "", text, ""])))
    return out


def _build(files: int, seed: int) -> tuple[list[tuple[str, str]], int]:
    g = _Gen(files, seed)
    g.build_sessions()
    pages = g.select_pages()
    g.page_set = {s: True for s in pages}
    cards = g.select_cards()
    out: list[tuple[str, str]] = [(GUIDE_PATH, _guide(g))]
    out += _rules(g.sessions[0].date)
    index = [f"- {s.sid} | {s.date.isoformat()} | {s.title}" for s in g.sessions]
    out.append((SESSIONS_INDEX, "\n".join(index) + "\n"))
    for sess in g.sessions:
        out.append((transcript_path(sess.sid), _transcript(g, sess)))
        out.append((summary_path(sess.sid), _summary(g, sess)))
    out += _cards(g, cards)
    page_files, index_md = _pages(g, pages)
    out.append((INDEX_PATH, index_md))
    out += page_files
    return out, len(g.sessions)


def generate(dest: pathlib.Path, files: int = 200, seed: int = 7) -> dict:
    """Write a sample memory tree of about ``files`` files into ``dest``.

    ``dest`` must not exist or be an empty directory; anything else raises ValueError so
    that a user's tree is never overwritten.  The output depends only on ``(files, seed)``.

    Returns ``{"files": n, "bytes": total, "sessions": n, "rare_word_files": [paths]}``,
    paths relative to ``dest`` and sorted; ``rare_word_files`` lists every file that
    contains :data:`RARE_WORD`.
    """
    dest = pathlib.Path(dest)
    if dest.exists():
        if not dest.is_dir():
            raise ValueError(f"{dest} exists and is not a directory")
        if any(dest.iterdir()):
            raise ValueError(f"{dest} is not empty; refusing to overwrite it")
    if files < MIN_FILES:
        raise ValueError(f"files must be at least {MIN_FILES}, got {files}")
    tree, n_sessions = _build(files, seed)
    dest.mkdir(parents=True, exist_ok=True)
    made: dict[pathlib.Path, bool] = {}
    total = 0
    rare = []
    for rel, text in tree:
        path = dest / rel
        if path.parent not in made:
            path.parent.mkdir(parents=True, exist_ok=True)
            made[path.parent] = True
        data = text.encode("utf-8")
        # O_EXCL: a duplicate path is a bug, and must never overwrite anything.
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)
        total += len(data)
        if RARE_WORD in text:
            rare.append(rel)
    return {"files": len(tree), "bytes": total, "sessions": n_sessions,
            "rare_word_files": sorted(rare)}

