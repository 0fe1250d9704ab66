"""Tastes: what a person habitually uses, drinks, eats, plays or likes — an editor, a notes
app, a font, a coffee, a diet, a sport, a seat on a plane — read by its *kind*, so a later
value of the same kind can replace it ("I use VS Code for everything" → "moved to neovim
last month"; "I'm an Earl Grey tea person" → "coffee person now").

A sentence model cannot tell a taste's kind (all-MiniLM-L6-v2 puts Neovim and VS Code at
cosine 0.19, tea and running at 0.31), and the words around a taste rarely name it ("I love
dark roast coffee"), so the kinds are closed lists of the members people name. A taste the
lists do not know is read only in the strongest frames ("X is my thing", "I love X podcasts"),
keyed by its head noun ("true crime podcasts" → podcasts), and replaced only by a value with
the same head ("history podcasts").

Pure regular expressions: no model, reproducible. Used by :mod:`.relations` (a first
statement) and :mod:`.retold` (a later value of a taste held).
"""

from __future__ import annotations

import re

#: Members of each kind, as people name them. Names that are also everyday words ("Bear",
#: "Linear", "Word", "Inter", "Teams") count only with their capital.
_KINDS: dict[str, str] = {
    "editor": r"vs\s?code|visual\s+studio(?:\s+code)?|neovim|n?vim|emacs|sublime\s+text|(?-i:Sublime)|intellij|pycharm|webstorm|"
              r"xcode|notepad\+\+|rstudio|eclipse|jetbrains|(?-i:Atom|Zed|Cursor|Helix)",
    "notes": r"notion|obsidian|evernote|onenote|logseq|roam(?:\s+research)?|apple\s+notes|google\s+keep|joplin|"
             r"simplenote|notability|goodnotes|(?-i:Bear|Craft)",
    "tasks": r"trello|asana|jira|todoist|ticktick|clickup|basecamp|notion|microsoft\s+to\s+do|(?-i:Linear|Things|Monday)",
    "spreadsheet": r"excel|google\s+sheets|libreoffice(?:\s+calc)?|airtable|(?-i:Numbers)",
    "documents": r"google\s+docs|libreoffice\s+writer|scrivener|latex|overleaf|ms\s+word|microsoft\s+word|(?-i:Word|Pages)",
    "chat": r"slack|microsoft\s+teams|discord|whatsapp|telegram|imessage|google\s+chat|(?-i:Teams|Signal)",
    "browser": r"chrome|firefox|vivaldi|(?-i:Safari|Brave|Edge|Arc|Opera)",
    "phone": r"iphone|android|pixel|(?:samsung\s+)?galaxy(?:\s+phone)?|samsung",
    "computer": r"macos|mac\s?book|arch\s+linux|linux|ubuntu|fedora|chromebook|chromeos|(?-i:Windows|Mac)(?!\s+and\s+cheese)",
    "passwords": r"1password|bitwarden|lastpass|dashlane|keepass(?:xc)?|proton\s+pass",
    "music": r"spotify|apple\s+music|youtube\s+music|deezer|(?-i:Tidal)",
    "design": r"figma|canva|photoshop|illustrator|indesign|affinity\s+\w+|gimp|procreate|(?-i:Sketch)",
    "citations": r"zotero|mendeley|endnote",
    "font": r"(?:eb\s+)?garamond|helvetica(?:\s+neue)?|arial|times\s+new\s+roman|roboto|futura|calibri|cambria|open\s+sans|"
            r"lato|baskerville|caslon|comic\s+sans|verdana|avenir|gill\s+sans|palatino|source\s+sans(?:\s+pro)?|montserrat|"
            r"merriweather|poppins|segoe(?:\s+ui)?|courier\s+new|proxima\s+nova|didot|bodoni|raleway|nunito|"
            r"ibm\s+plex(?:\s+(?:sans|serif|mono))?|fira\s+(?:sans|code)|playfair(?:\s+display)?|(?-i:Inter)",
    "drink": r"(?:dark|light|medium)\s+roasts?(?:\s+coffee)?|(?:black|iced|filter|instant|turkish|greek)\s+coffee|decaf(?:\s+coffee)?|coffee|"
             r"(?:earl\s+grey|green|black|herbal|mint|peppermint|chamomile|jasmine|oolong|english\s+breakfast|builder['’]s|"
             r"masala)\s+tea|earl\s+grey|tea|matcha(?:\s+lattes?)?|rooibos|chai(?:\s+lattes?)?|hot\s+chocolate|yerba\s+mat[eé]|"
             r"kombucha|espressos?|(?:(?:oat|soy|almond)(?:\s+milk)?\s+|(?:iced|black|hot|double|decaf)\s+)?(?:flat\s+whites?|lattes?|cappuccinos?|cortados?|"
             r"macchiatos?|americanos?|mochas?)|cold\s+brew",
    "milk": r"(?:oat|almond|soy|whole|skim(?:med)?|semi[-\s]skimmed|lactose[-\s]free|coconut|cow['’]s)\s+milk",
    "seat": r"(?:aisle|window|middle)\s+seats?|aisle",
    "display": r"(?:dark|light)\s+(?:mode|theme)",
    "diet": r"vegan|vegetarian|veggie|pescatarian|pescetarian|keto|paleo|gluten[-\s]free|dairy[-\s]free|plant[-\s]based|"
            r"flexitarian|carnivore|low[-\s]carb|halal|kosher|omnivore|intermittent\s+fasting",
    "exercise": r"running|jogging|cycling|swimming|yoga|pilates|(?:rock\s+)?climbing|bouldering|tennis|football|soccer|"
                r"basketball|crossfit|weightlifting|powerlifting|lifting|rowing|hiking|boxing|spinning|padel|badminton|"
                r"squash|golf|skiing|surfing|zumba|karate|judo|jiu[-\s]jitsu|bjj|triathlons?|netball|rugby|volleyball|"
                r"parkrun",
    "commute": r"(?:walking|cycling|biking|driving|running|scootering)\s+to\s+work|(?:taking\s+)?the\s+(?:bus|train|tube|metro)\s+to\s+work",
    "reading": r"kindle|e-?books|audiobooks|paperbacks|hardbacks|audible",
}
_MEMBER = {k: re.compile(rf"(?<![\w-])(?:{v})(?![\w-])", re.I) for k, v in _KINDS.items()}
#: Any member of any kind, the longest first where two begin together ("dark roast coffee"
#: before "dark roast").
_ANY = re.compile(r"(?<![\w-])(?:" + "|".join(f"(?:{v})" for v in _KINDS.values()) + r")(?![\w-])", re.I)

#: Members that are as often something else (a state, a word, a name): a taste only in a
#: sentence that speaks of their kind ("Inter for the slides", "Linear for tickets").
_AMBIGUOUS = frozenset("""inter bear craft things linear monday mac windows opera edge arc safari tidal sublime signal teams
word pages numbers sketch cursor zed helix atom pixel galaxy chrome brave""".split())
_CONTEXT = {
    "font": r"fonts?|typeface|type|serif|sans|headings?|documents?|docs|slides|deck|style|text",
    "editor": r"cod(?:e|ing)|editor|ide|programming|dev|extensions?|plugins?|keybindings?|lsp|python|rust|go|react|java\w*",
    "notes": r"notes?|app|journal\w*|pkm|second\s+brain",
    "tasks": r"tasks?|tickets?|board|kanban|sprints?|app|to-?dos?|projects?|issues",
    "chat": r"chat|messages?|messaging|team|work|channels?|app|colleagues",
    "browser": r"browser|tabs?|extensions?|web|internet|bookmarks?",
    "computer": r"laptop|computer|desktop|os|machine|operating|apps?|keyboard|shortcuts?",
    "music": r"music|playlists?|songs|streaming|app|albums?",
    "design": r"design\w*|mock-?ups?|prototypes?|app|wireframes?|ui",
    "documents": r"documents?|docs|writing|write|drafts?|essays?|reports?|files?",
    "spreadsheet": r"spreadsheets?|sheets|formulas?|budget\w*|tables?|data|pivot",
    "phone": r"phones?|mobile|android|ios|apps?|calls?",
}
#: What may follow a taste named for itself (a word of a clause, not a noun it qualifies:
#: "VS Code for everything", not "running shoes" or "coffee cake").
_FOLLOWS = frozenset("""for in on with and or but now these every all to at from over because so as when since is are was
the a an my our too only mostly always person people fan fans drinker drinkers user users lover lovers girl guy nerd addict
devotee loyalist kind instead anymore any more no not then than this that full ever everyday daily first last lately
recently nowadays please pls plz thanks though i we you it they he she by via through each per lol haha which who whenever
while until after before myself if unless really very just also entirely completely totally exclusively religiously
mainly fully again forever time these since mostly full-time convert converts fanboy fangirl twice three four five
most several daily weekly every each everywhere tbh fyi dont altogether""".split())


def _alone(text: str, end: int) -> bool:
    """Is the member ending at ``end`` named for itself, not as a modifier of the next noun
    ("running shoes", "Samsung TVs", "Boxing Day") nor as an owner ("Jira's new bug")?"""
    if re.match(r"['’]s\b|\s+(?!I\b)[A-Z]|\s+\w+['’]s\b", text[end:]):
        return False
    if text[:end].lower().endswith("ing") and re.match(r"\s+(?:the|a|an|my|our|his|her|their|this|that|errands|into)\b", text[end:], re.I):
        return False  # "running the meetings": a verb with its object
    nxt = re.match(r"\s+([a-z][a-z\-]*)", text[end:])
    return nxt is None or nxt.group(1) in _FOLLOWS


def _in_context(member: str, text: str) -> bool:
    """An ambiguous member ("Inter", "Linear") counts only with a word of one of its kinds."""
    if member.lower() not in _AMBIGUOUS:
        return True
    return any(re.search(rf"\b(?:{_CONTEXT[k]})\b", text, re.I) for k in kinds_of(member) if k in _CONTEXT)


#: Nouns a taste the lists do not know may end with ("true crime podcasts", "morning runs").
_TASTE_NOUNS = (r"podcasts?|novels|books|audiobooks|films|movies|documentaries|shows|series|music|songs|albums|bands|"
                r"games|anime|manga|comics|food|cuisine|wines?|beers?|cocktails|chocolate|cheese|runs|rides|walks|swims|"
                r"workouts|classes|sessions|meetings|seats|roasts?|playlists|radio|youtube|journaling|baking|knitting|"
                r"gardening|painting|photography|gaming|fiction|poetry|jazz|rock|metal|techno|hip[-\s]hop|k-?pop")
_NOUN_HEADED = re.compile(rf"(?P<v>(?:[a-z][\w\-]*\s+){{0,2}}?(?:{_TASTE_NOUNS}))(?![\w-])", re.I)


#: Kinds whose members are everyday words, written in lower case when they open a sentence.
_COMMON_KINDS = frozenset("drink milk seat display diet exercise commute".split())


def names_one(text: str) -> bool:
    """Does ``text`` name a member of any kind ("light roasts", "neovim")?"""
    return _ANY.search(text) is not None


def kinds_of(value: str) -> set[str]:
    """The kinds ``value`` names a member of ("dark roast coffee" → {"drink"})."""
    return {k for k, rx in _MEMBER.items() if rx.search(value)}


def key_of(value: str, whole: bool = False) -> str | None:
    """The key a taste ``value`` is kept under: "preference " and its kind (the first of
    several: Notion is notes before tasks), or None for a value of no known kind. ``whole``:
    only when the value is the member itself, with its kind's noun at most ("Earl Grey tea",
    not "monthly reports as Word documents")."""
    for k, rx in _MEMBER.items():
        m = rx.search(value)
        if m and (not whole or _extend(value, m) == value.strip()):
            return "preference " + k
    return None


def is_taste(value: str, key: str) -> bool:
    """Is (``value``, ``key``) a taste this module keeps ("hiking" under "preference
    exercise", "true crime podcasts" under "preference podcast")?"""
    return key == key_of(value) or (key == "preference " + _head(value) and _NOUN_HEADED.fullmatch(value) is not None)


def _head(value: str) -> str:
    """The last word of ``value`` less a plural "s" ("true crime podcasts" → "podcast")."""
    words = re.findall(r"[a-z][\w\-]*", value.lower())
    return re.sub(r"(?<=[^s])s$", "", words[-1]) if words else ""


# --------------------------------------------------------------------------- first statement
_I = r"(?:^|(?<=[\s,;(]))(?:I|we|i)\s+"
_ADVERBS = r"(?:(?:only|mostly|always|usually|just|exclusively|really|absolutely|basically|pretty\s+much|honestly|totally)\s+)*"
#: The speaker's habit with a member named right after it: "I use VS Code for everything",
#: "I only drink dark roast", "I take all my notes in Notion", "I do my budget in Excel",
#: "I'm doing keto", "I'm a tea person", "I'm team Garamond". The longer verb phrases come
#: first: an alternation takes the first that fits, and "I take all my notes in" must win over
#: "I take".
_HABIT = re.compile(
    _I + _ADVERBS + r"(?:"
    r"never\s+(?:fly|travel|go|code|work|write)\s+without|"
    r"(?:listen\s+to|read|watch)\s+(?:everything|all\s+my\s+\w+|my\s+\w+|music|podcasts|books)\s+(?:on|in|with)|"
    r"organi[sz]e\s+(?:everything|my\s+(?:whole\s+)?(?:life|work|day|week|stuff|notes|tasks))\s+in|"
    r"(?:take|keep|write|make|do|plan|track|run|manage|store|sync|organi[sz]e)\s+(?:all\s+|everything\s+|most\s+)?(?:of\s+)?"
    r"(?:my|our)\s+(?:[\w\-]+\s+){0,2}?[\w\-]+\s+(?:in|on|with)|"
    r"(?P<tool>(?:write|code|work|draft|live|type)\s+(?:everything\s+|mostly\s+|only\s+)?in)|am\s+(?:doing|on|drinking|using|eating)|"
    r"(?:['’]ve|\s+have)?\s*been\s+(?:using|drinking|on|doing|eating)|"
    r"love|adore|like|enjoy|prefer|swear\s+by|live\s+on|rely\s+on|drink|use|buy|eat|order|play|practi[sc]e|"
    r"fly|book|take|run|go\s+(?:to\s+)?|browse\s+(?:with|on|in)|(?:can['’]?t|couldn['’]?t)\s+live\s+without|do)\s+"
    r"(?:my\s+|the\s+|an?\s+)?(?=(?P<at>\S))"
    r"|(?:^|(?<=[\s,;(]))(?:(?:I['’]?m|im|I\s+am)\s+|(?:I['’]ve\s+|I\s+have\s+)?been\s+(?=an?\s|(?:" + _KINDS["diet"] + r")\b)|as\s+(?=an?\s))" + _ADVERBS
    + r"(?:(?:doing|on|into|all\s+about|hooked\s+on|obsessed\s+with|a\s+(?:big\s+|huge\s+)?fan\s+of)\s+"
    r"|team\s+|(?:more\s+of\s+)?(?:a|an)\s+(?:(?:big|huge|total|real|massive|strict|die-hard|diehard|proper|hardcore|keen|"
    r"loyal|lifelong|committed)\s+)?(?=\S+(?:\s+\S+){0,2}\s+"
    r"(?:person|girl|guy|fan|drinker|user|devotee|addict|nerd|lover|loyalist|kind\s+of))|(?:a\s+|an\s+)?(?:strict\s+)?(?=(?:"
    + _KINDS["diet"] + r")\b))(?=(?P<at2>\S))"
    r"|(?:(?:^|[,;]\s*|\band\s+)(?:always|usually|normally)\s+(?:prefer|go\s+for|pick|choose|book|ask\s+for)\s+"
    r"|^\W*(?:big|huge)\s+fan\s+of\s+|(?:^|(?<=\s))my\s+(?:phone|editor|browser|laptop|computer|font|drink|"
    r"daily\s+driver|go-to(?:\s+\w+)?|\w+(?:\s+\w+)?\s+of\s+choice)\s+is\s+)(?:an?\s+|the\s+)?(?=(?P<at3>\S))",
    re.I)
#: "I'm a runner", "I swim most mornings": the sport by who does it or how often.
_DOERS = {"runner": "running", "jogger": "jogging", "cyclist": "cycling", "swimmer": "swimming", "climber": "climbing",
          "hiker": "hiking", "rower": "rowing", "boxer": "boxing", "surfer": "surfing", "skier": "skiing",
          "golfer": "golf", "yogi": "yoga", "swim": "swimming", "cycle": "cycling", "run": "running", "climb": "climbing",
          "hike": "hiking", "row": "rowing", "surf": "surfing", "ski": "skiing", "jog": "jogging", "boulder": "bouldering"}
_DOER = re.compile(r"(?:^|(?<=[\s,;(]))(?:I['’]?m|im|I\s+am)\s+" + _ADVERBS + r"(?:a|an)\s+(?:(?:keen|big|serious|daily|"
                   r"regular|lifelong|avid|committed)\s+)?(?P<doer>runner|jogger|cyclist|swimmer|climber|hiker|rower|boxer|"
                   r"surfer|skier|golfer|yogi)\b"
                   r"|" + _I + _ADVERBS + r"(?P<verb>swim|cycle|run|climb|hike|row|surf|ski|jog|boulder)\s+(?=(?:most|every|each|"
                   r"daily|\d|twice|three|four|five|six|several|a\s+lot|regularly|religiously|on\s+\w+days)\b)", re.I)
#: A taste said as a fragment: "Tea for me, always", "Window seat every time", "Firefox all the
#: way", "Dark mode everywhere", "For me, it's always the aisle seat".
_FRAGMENT = re.compile(r"(?:^|[.;!]\s+)(?:for\s+me,?\s+it['’]s\s+(?:always\s+)?(?:the\s+|an?\s+)?(?=(?P<at>\S))|"
                       r"(?=(?P<at2>\S+(?:\s+\S+){0,2}?\s+(?:for\s+me,?\s+always|every\s+(?:time|single\s+time)|all\s+the\s+way|"
                       r"everywhere|for\s+life|forever)\b)))", re.I)
#: The taste opening its sentence or clause: "Running is my thing", "Morning runs are my
#: thing", "Garamond is my go-to".
_MY_THING = re.compile(r"(?:^|[.;!,]\s+|\b(?:and|but|so)\s+)(?P<v>[\w][\w\-]*(?:\s+[\w\-]+){0,2}?)\s+(?:is|are)\s+"
                       r"(?:totally\s+|really\s+|very\s+much\s+|definitely\s+)?my\s+(?:thing|jam|go-to|fave|favou?rite|"
                       r"drink|sport|religion|happy\s+place)(?:\s+(?:font|editor|drink|app|notes\s+app|browser|sport|seat|tool|coffee|tea))?\b"
                       r"(?!\s+[a-z])", re.I)
#: What makes the habit no taste: a condition or a wish ("if I use VS Code …"), a question,
#: someone else's ("my brother loves …").
_NOT_MINE = re.compile(r"\b(?:if|unless|whether|would|could|should|might|want\s+to|wanna|thinking\s+of|considering|"
                       r"used\s+to|never(?!\s+(?:fly|travel|go|code|work|write)\s+without)|not|don['’]?t|didn['’]?t|"
                       r"(?:can['’]?t|couldn['’]?t)(?!\s+live\s+without)|when|whenever|once|after|before)\b[^.;!?]{0,25}$", re.I)


#: How the speaker takes a drink: "I drink my coffee black" (a black coffee).
_HOW_I_TAKE = re.compile(_I + _ADVERBS + r"(?:drink|take|have|like)\s+(?:my\s+)?(?P<drink>coffee|tea)\s+(?P<how>black|white|strong|sweet|iced)\b",
                         re.I)
#: Kinds one works in ("I write everything in Scrivener"): "I work in golf" is a trade.
_TOOL_KINDS = frozenset("editor notes tasks spreadsheet documents design computer".split())
#: A sentence that is no statement of the speaker's own: pretence, text to render, irony.
_PRETEND = re.compile(r"\b(?:pretend|imagine|let['’]s\s+say|suppose|supposing|assume|assuming|hypothetically|translate|"
                      r"proofread|said\s+no\s+one|in\s+my\s+(?:dreams|novel|story|book)|that\s+says|saying|caption|"
                      r"sticker|slogan|t-shirt|bio|profile|cv|r[ée]sum[ée]|linkedin)\b", re.I)
#: What "we" do at work is the workplace's ("We use Slack at work"), not the speaker's taste.
_AT_WORK = re.compile(r"\b(?:at\s+work|in\s+the\s+office|at\s+the\s+office|at\s+the\s+company|company|team|colleagues|"
                      r"meetings?|the\s+client)\b", re.I)
#: A taste for a while or for someone else, said after it ("vegetarian for Lent", "yoga
#: tonight", "oat milk for my flatmate", "because my boss makes me").
_FOR_A_WHILE = re.compile(r"^[^.;!?]{0,40}?\b(?:for\s+(?:lent|ramadan|today|tonight|now|the\s+(?:week|month|trip|holiday|"
                          r"challenge|screenshot|demo)|this\s+(?:week|month|trip)|a\s+(?:week|month|while|bit|few\s+\w+))|"
                          r"tonight|today|this\s+(?:morning|afternoon|evening|weekend)|forces?\s+me|makes?\s+me|"
                          r"have\s+to|had\s+to|for\s+(?:my|his|her|their)\s+(?:(?:little|big|younger|older)\s+)?(?:flatmate|roommate|housemate|"
                          r"partner|wife|husband|kids?|children|son|daughter|mum|mom|dad|mother|father|sister|brother|friends?|"
                          r"boss|colleagues?|team|guests?|clients?|parents|family|grandma|grandpa)\b|for\s+(?:him|her|them)|"
                          r"for\s+the\s+(?:kids|children|office|team|client|boss)|until|only\s+(?:when|if|at|on)|\w+\s+only(?=\s*(?:[.,;!]|$))|"
                          r"for\s+(?:\d+|two|three|four|five|six|a\s+couple\s+of|a\s+few)\s+\w+|when\s+(?:my|his|her|their|the|i['’]m\s+(?:at|with|in))|"
                          r"whenever|sometimes|"
                          r"with\s+(?:my|his|her|their)\s+\w+|on\s+(?:tv|the\s+(?:wii|telly|tv|switch|xbox|playstation)|fifa|xbox|"
                          r"playstation))\b", re.I)
#: A question about tastes, not a statement of one ("Do you use Notion?", "Should I drink tea?").
_ASKS = re.compile(r"\W*(?:do|does|did|are|is|should|would|could|can|will|shall|what|which|how|why|have|has)\b", re.I)


def stated(sentence: str) -> list[tuple[str, str]]:
    """The speaker's tastes ``sentence`` states, as (value, key): a member of a known kind
    in a habit ("I use VS Code for everything", "I'm an Earl Grey tea person", "I only drink
    dark roast", "I'm vegetarian"), or a taste opening the sentence as "my thing" ("Running
    is my thing", "Morning runs are my thing"). A question states none."""
    if _PRETEND.search(sentence):
        return []
    out: list[tuple[str, str]] = []
    for m in _HOW_I_TAKE.finditer(sentence):
        if not _NOT_MINE.search(_clause_before(sentence, m.start())):
            out.append((f"{m.group('how').lower()} {m.group('drink').lower()}", "preference drink"))
    for m in _HABIT.finditer(sentence):
        at = m.start("at") if m.group("at") else m.start("at2") if m.group("at2") else m.start("at3")
        if _NOT_MINE.search(_clause_before(sentence, m.start())) or re.match(r"[^,.;!?]*\?", sentence[at:]) \
                or _asked(sentence, m.start()):
            continue
        v = _ANY.match(sentence, at)
        if v is None:
            got = _NOUN_HEADED.match(sentence, at)
            # a taste of no known kind only after the verbs of liking ("I love true crime podcasts")
            if got is None or not re.search(r"\b(?:love|adore|into|obsessed|hooked|fan\s+of)\s+(?:my\s+|the\s+|a\s+)?$",
                                            sentence[:at], re.I) or not _alone(sentence, got.end()) \
                    or _FOR_A_WHILE.search(sentence[got.end():]):
                continue
            value = got.group("v")
            out.append((value, "preference " + _head(value)))
            continue
        value = _extend(sentence, v)
        end = v.start() + len(value)
        if not _alone(sentence, end) or not _in_context(v.group(0), sentence) or _FOR_A_WHILE.search(sentence[end:]) \
                or (m.group("tool") and not kinds_of(value) & _TOOL_KINDS) \
                or (re.search(r"\bon\s+$", sentence[m.start():at]) and not kinds_of(value) & {"diet", "drink", "phone", "computer"}) \
                or (re.match(r"\W*we\b", sentence[m.start():], re.I) and _AT_WORK.search(sentence)):
            continue
        out.append((value, key_of(value) or "preference " + _head(value)))
    for m in _DOER.finditer(sentence):
        if not _NOT_MINE.search(_clause_before(sentence, m.start())) and not _asked(sentence, m.start()):
            value = _DOERS[(m.group("doer") or m.group("verb")).lower()]
            out.append((value, key_of(value) or "preference " + value))
    for m in _FRAGMENT.finditer(sentence):
        at = m.start("at") if m.group("at") is not None else m.start("at2")
        v = _ANY.match(sentence, at)
        if v is not None and _in_context(v.group(0), sentence):
            value = _extend(sentence, v)
            key = key_of(value)
            if key and key.split()[-1] in _COMMON_KINDS:
                value = value[:1].lower() + value[1:]
            out.append((value, key or "preference " + _head(value)))
    for m in _MY_THING.finditer(sentence):
        words = m.group("v")
        # the taste is the words right before "is my thing", not who thinks so ("Dad thinks yoga")
        member = [t for t in _ANY.finditer(words) if t.end() == len(words)]
        value = member[0].group(0) if member else words
        if not member and (set(value.lower().split()) & (_NOT_MODIFIERS | _SAYERS) or not _NOUN_HEADED.fullmatch(value)):
            continue
        if re.match(r"(?:it|this|that|he|she|they|which|what|there|everything|nothing|music)$", value, re.I) \
                or not _in_context(value, sentence) or set(words.lower().split()) & _SAYERS \
                or re.search(r"\b(?:says?|said|thinks?|reckons?|everyone|everybody)\b", sentence[:m.start("v")], re.I):
            continue
        key = key_of(value)
        if key is None or key.split()[-1] in _COMMON_KINDS:
            value = value[:1].lower() + value[1:]  # "Running is my thing": a capital of the sentence's
        out.append((value, key or "preference " + _head(value)))
    seen: set[str] = set()
    return [(v, k) for v, k in out if not (k in seen or seen.add(k))]


#: Words of who holds an opinion ("Dad thinks yoga is my thing").
_SAYERS = frozenset("thinks think says said reckons knows guess guesses believes".split())


def _asked(text: str, at: int) -> bool:
    """Is the sentence piece ``at`` stands in a question ("Do you use Notion?")? A question
    before it ("Can you suggest a dinner? I'm pescatarian.") is not."""
    start = max(text.rfind(c, 0, at) for c in ".?!") + 1
    return _ASKS.match(text[start:]) is not None


def _clause_before(text: str, at: int) -> str:
    """The text of ``at``'s clause before it: a "not" in an earlier clause ("I'm not sure
    why, but I use Word") says nothing of this one."""
    head = text[max(0, at - 40):at + 1]
    return re.split(r"[,.;!?]\s|\bbut\b", head)[-1]


def _extend(sentence: str, m: re.Match[str]) -> str:
    """A member with the noun of its kind that follows it ("Earl Grey" + " tea", "aisle" + "
    seats", "Galaxy phone")."""
    more = re.match(r"\s+(?:tea|coffee|seats?|mode|theme|phone|milk)\b", sentence[m.end():], re.I)
    return sentence[m.start():m.end() + (more.end() if more else 0)]


# --------------------------------------------------------------------------- a later value
#: Words that say a taste changed, beyond a change's own ("now", "switched", "moved"):
#: "these days", "come round to", "converted", "gone off", "team X".
CHANGE = re.compile(r"\b(?:these\s+days|nowadays|come\s+round\s+to|came\s+round\s+to|converted|convert|gone\s+off|went\s+off|"
                    r"over\s+it|ditched|gave\s+up|given\s+up|rage-?quit|(?-i:team\s+[A-Z]\w*)|full[-\s]time|for\s+good|"
                    r"no\s+more|can['’]?t\s+go\s+back|went\s+(?!to\b|for\b|out\b|home\b|back\b|with\b|off\b)|became|become|made\s+the\s+(?:jump|switch|move)|"
                    r"gone\s+over|took\s+up|taken\s+up|picked\s+up)\b", re.I)
#: What comes before a member that is not in use: left, refused, broken, a topic.
_NEGATED = re.compile(r"\b(?:no\s+more|not|never|cannot|can['’]?t|no\s+longer|stopped|can['’]?t\s+stand|hate|gave\s+up(?:\s+on)?|"
                      r"given\s+up(?:\s+on)?|quit|ditched|off|from|instead\s+of|rather\s+than|than|without|away\s+from|"
                      r"done\s+with|back\s+to|anymore|any\s+more|left)\s+(?:[\w']+\s+)?$|\b(?:about|regarding)\s+(?:[\w']+\s+){0,4}$"
                      r"|\b(?:dropped|broke|broken|lost|smashed|cracked|sold|returned|uninstalled|deleted|cancell?ed)\s+"
                      r"(?:[\w']+\s+){0,2}$", re.I)


#: One cup or one game, not a habit ("had a coffee with Sam", "tried a matcha"), someone
#: else's ("your latte"), or the old taste kept ("I'm sticking with VS Code").
_ONCE = re.compile(r"\b(?:(?:had|grabbed|got|getting|having|ordered|drank|made|bought|brought|tried|sampled|took)\s+"
                   r"(?:a|an|one|two|some|that|this)\s+(?:quick\s+|nice\s+|big\s+|small\s+)?|(?:your|his|her|their)\s+|"
                   r"with\s+(?:my|a|an)\s+)$", re.I)
_STAYS = re.compile(r"\b(?:stick(?:ing)?\s+(?:with|to)|stay(?:ing)?\s+with|loyal\s+to|still\s+(?:use|on|love|drink|prefer))\b", re.I)
#: Once, or to see: "instead today because Chrome crashed", "by mistake", "just to try it".
_ONE_OFF = re.compile(r"\b(?:today|tonight|yesterday|right\s+now|this\s+(?:time|once|morning|afternoon|evening)|by\s+mistake|"
                      r"just\s+to\s+(?:try|test|see)|started\s+the\s+day|on\s+(?:monday|tuesday|wednesday|thursday|friday|"
                      r"saturday|sunday)|last\s+(?:night|weekend)|with\s+the\s+kids|for\s+work|too(?=\s*(?:[.,;!]|$))|as\s+well|"
                      r"at\s+(?:my|his|her|their)\s+[\w\-]+['’]s|"
                      r"(?:this|that|the\s+attached)\s+(?:[\w\-]+\s+)?(?:file|doc|document|sheet|spreadsheet|deck|presentation|page)|"
                      r"for\s+(?:the|a|my|our)\s+(?:client|customer|presentation|talk|deck|pitch|report)|"
                      r"for\s+the\s+(?:screenshot|demo|photo|video|test|trip|holiday|weekend|day)|for\s+a\s+(?:change|bit|while|day)|"
                      r"temporar\w*|for\s+now)\b", re.I)


#: Someone the speaker works for or with wants it ("the client wants Helvetica on the slides
#: now"): their taste, or a one-off of a deliverable, not the speaker's.
_THEIRS = re.compile(r"\b(?:the|my|our|a|his|her|their)\s+(?:new\s+)?(?:client|customer|publisher|editor|agency|reviewer|journal|"
                     r"venue|company|school|uni|university|team|boss|manager|teacher|professor|prof|landlord|kid|kids|son|"
                     r"daughter|wife|husband|partner)s?\s+(?:now\s+)?(?:wants?|needs?|prefers?|asked|asks|uses?|likes?|"
                     r"requires?|insists?|switched|moved|went|drinks?|loves?)\b"
                     r"|\b(?:everyone|everybody|people|my\s+friends|our\s+it|the\s+it\s+department|my\s+designer|the\s+office)\b",
                     re.I)


#: Words before a head noun that make no kind of it ("gone off camping", "love hiking").
_NOT_MODIFIERS = frozenset("""gone went off quit stopped given gave up done with no more any have had has love loved like
liked hate hated enjoy enjoyed doing did do does go going been is are was were am be miss missed tried try""".split())


#: A sentence about a thing or someone else ("The app switched to light mode", "The new
#: guy at work is obsessed with Obsidian", "New flat has a window seat").
_THIRD_OPENER = re.compile(r"^\W*(?:(?:ok|so|lol|honestly|well|funny|also|and|but)\W+)*(?:the|our|his|her|their|a|an|this|that|"
                           r"most|every|some|new|nowadays\s+most)\b", re.I)


def later(old: str, text: str) -> str | None:
    """The taste ``text`` names in place of ``old``: the one member of ``old``'s kind it
    names that is not ``old`` and not what was left ("I moved everything from Notion to
    Obsidian", "coffee person now. no more Earl Grey", "I'm team Helvetica now, Garamond
    looks fussy"); for a taste of no known kind, a phrase with its head noun ("switched to
    evening runs" after "morning runs"). None for none, or two different ones."""
    kinds = kinds_of(old)
    if _STAYS.search(text) or _THEIRS.search(text) or _ONE_OFF.search(text) or _PRETEND.search(text) \
            or _THIRD_OPENER.match(text):
        return None
    olds = {_plain(old)} | {_plain(m.group(0)) for m in _ANY.finditer(old)}
    found: list[str] = []
    if kinds:
        for k in kinds:
            for m in _MEMBER[k].finditer(text):
                v = _extend(text, m)
                p = _plain(v)
                before = text[max(0, m.start() - 30):m.start()]
                if any(p == o or p in o.split() or (o and o in p) for o in olds) or _NEGATED.search(before) \
                        or _ONCE.search(before) or not _alone(text, m.start() + len(v)) \
                        or re.match(r"\s+(?:is|are|was|has|looks|seems)\b(?!\s+(?:now\s+)?(?:my|replaced|won))", text[m.start() + len(v):]) \
                        and not before.strip():
                    continue  # "Cursor is all the rage now": the thing talked of, not taken up
                found.append(v)
    else:
        head = _head(old)
        if not head:
            return None
        for m in re.finditer(rf"(?P<v>(?:[a-z][\w\-]*\s+){{1,2}}?{re.escape(head)}s?)(?![\w-])", text, re.I):
            v = re.sub(r"^(?:(?:to|the|my|a|an|on|in|with|of|for|some|only|just|and|doing|into|now)\s+)+", "", m.group("v"), flags=re.I)
            if len(v.split()) < 2 or _plain(v) == _plain(old) or set(v.lower().split()[:-1]) & _NOT_MODIFIERS or _NEGATED.search(text[max(0, m.start() - 30):m.start("v") + len(m.group("v")) - len(v)]):
                continue
            found.append(v)
    # one taste named twice, or within a longer name of it ("neovim" … "vim motions", "green
    # tea" … "tea places"): the longest
    groups: dict[str, str] = {}
    for v in found:
        groups.setdefault(_plain(v), v)
    forms = {k: _plain(v, noun=True) for k, v in groups.items()}
    keep = [k for k in groups if not any(
        k2 != k and (re.search(rf"(?<![\w-]){re.escape(forms[k])}(?![\w-])", forms[k2]) or forms[k2].endswith(forms[k]))
        for k2 in groups)]
    return groups[keep[0]] if len(keep) == 1 else None


def _plain(v: str, noun: bool = False) -> str:
    """``v`` lower-cased, plural "s", spacing and a kind's trailing noun aside ("Earl Grey
    tea" / "Earl Grey", "light theme" / "light mode"), for comparing two mentions."""
    words = [re.sub(r"(?<=[^s])s$", "", w) for w in re.findall(r"[\w\-+']+", v.lower())]
    if not noun and len(words) > 1 and words[-1] in ("mode", "theme", "seat", "tea", "coffee", "phone"):
        words = words[:-1]
    return " ".join(words)


# --------------------------------------------------------------------------- an end
#: Words that end a taste with nothing in its place, before it ("done with running", "gave
#: up being vegetarian", "stopped drinking coffee", "cancelled Spotify") or after it
#: ("true crime is over for me", "don't do keto anymore").
_ENDS_BEFORE = (r"\b(?:done\s+with|gave\s+up(?:\s+on)?(?:\s+being)?|given\s+up(?:\s+on)?(?:\s+being)?|quit(?:\s+being)?|"
                r"stopped(?:\s+(?:using|drinking|eating|doing|playing|being))?|gone\s+off|went\s+off|no\s+more|"
                r"no\s+longer(?:\s+(?:an?|using|drinking|eating|doing|playing|into))?|cancell?ed|deleted|uninstalled|"
                r"ditched|dropped|over)\s+(?:my\s+|the\s+)?")
_ENDS_AFTER = (r"\s+(?:is|are)\s+(?:over|dead\s+to\s+me|out|done)\b"
               r"|(?<=\S)\s+(?:for\s+me\s+)?any\s*more\b")
#: Quitting a program is closing it ("I quit Excel without saving"): for good, said so.
_FOR_GOOD = re.compile(r"\b(?:for\s+good|completely|entirely|altogether|forever|for\s+ever|any\s*more|no\s+longer|"
                       r"done|over)\b", re.I)
_SOFTWARE = _TOOL_KINDS | {"chat", "browser", "passwords", "music", "citations", "phone"}


def ended(old: str, text: str) -> int | None:
    """Where ``text`` says the taste ``old`` ended with nothing in its place ("I'm done
    with running", "done with true crime" after "true crime podcasts", "gave up being
    vegetarian", "I don't do keto anymore"), or None. The taste is named whole (or as its
    member, or less its taste noun), not as the first word of something else ("quit running
    the meetings", "done with machine learning")."""
    if _ONE_OFF.search(text) or _PRETEND.search(text):
        return None
    forms = {old} | {m.group(0) for m in _ANY.finditer(old)}
    got = _NOUN_HEADED.fullmatch(old)
    if got and len(old.split()) > 1:
        forms.add(old.rsplit(None, 1)[0])  # "true crime" of "true crime podcasts"
    alts = "|".join(r"\s+".join(re.escape(w) for w in f.split()) + r"s?" for f in sorted(forms, key=len, reverse=True) if f)
    for m in re.finditer(rf"(?<![\w-])(?P<v>{alts})(?![\w-])", text, re.I):
        if not _alone(text, m.end()):
            continue
        before = text[max(0, m.start() - 40):m.start()]
        after = text[m.end():m.end() + 30]
        b = re.search(_ENDS_BEFORE + r"$", before, re.I)
        dont = re.search(r"\b(?:don['’]?t|do\s+not|not)\s+(?:use|drink|eat|do|play|doing|drinking|eating|using|playing)\s+$", before, re.I)
        a = re.match(_ENDS_AFTER, after, re.I)
        if not (b or (dont and re.match(r"\s+any\s*more\b", after, re.I)) or (a and not dont and not re.search(r"\bnot\s+$", before))):
            continue
        if b and re.search(r"\b(?:had|has|have|ran\s+out\s+of|out\s+of)\s+no\s+more\s+$", before, re.I):
            continue  # "the cafe had no more oat milk"
        if b and re.match(r"quit", b.group(0), re.I) and kinds_of(m.group("v")) & _SOFTWARE and not _FOR_GOOD.search(text):
            continue
        return m.start()
    return None
