"""The words and shapes every module of relation patterns shares: a name as written
(:data:`NAME`), the months (:data:`MONTHS`), kin (:data:`KIN`), and the words that are never
part of a subject's name (:data:`NOT_SUBJECT_WORDS`) or a value (:data:`BAD_VALUES`)."""

from __future__ import annotations

#: A name: capitalised words ("Tessellate Labs", "St Aldric Hospital", "AORC"), allowing
#: "of"/"the"/"for"/"&" inside ("Royal College of Nursing").
NAME = (r"(?:[A-ZÀ-ÖØ-Þ][\w'’\-]*|[A-Z]{2,})(?:\s+(?:(?:of|the|for|and|de|&|von|van|der|den|da|di|du|del|dos|le|ter)\s+)?"
        r"(?:(?!I(?:['’][a-z]+)?\b)[A-ZÀ-ÖØ-Þ][\w'’\-]*|\d+))*")
#: Lower-case words inside a person's surname ("Ilse de Vries", "Anna van der Berg").
PARTICLES = frozenset("de van von der den da di du del dos das le la ter ten bin al el".split())
#: The months and their abbreviations, as alternatives of a pattern.
MONTHS = ("january|february|march|april|may|june|july|august|september|october|november|"
          "december|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec")
#: Greetings a speaker opens with, in the languages people greet an assistant in ("hola,
#: sofia ramirez", "Talofa, Sina Faleolo"), as alternatives of a pattern (lower case).
GREETINGS = (r"hi|hey|hello|hiya|yo|morning|evening|good\s+(?:morning|afternoon|evening|day)|hola|buenas|ciao|salve|salut|"
             r"bonjour|bonsoir|hallo|moin|servus|gr[üu]ezi|hej|hei|oi|ol[aá]|namaste|namaskar|kia\s+ora|talofa|"
             r"malo\s+e\s+lelei|sawubona|salaam|salam|assalamu\s+alaikum|merhaba|selam|konnichiwa|annyeong(?:haseyo)?|"
             r"ni\s+hao|jambo|habari|shalom|ahoj|cze[sś][cć]|privet|zdravo|vanakkam|sat\s+sri\s+akal|mingalaba|kamusta|"
             r"xin\s+ch[aà]o|sawasdee|sa\s+wat\s+dee|aloha|g['’]day|howdy|greetings")
#: Kin, as alternatives of a pattern ("my sister Lena"; "my daughter's deadline" is not the
#: speaker's).
KIN = (r"husband|wife|partner|fianc[eé]e?|spouse|boyfriend|girlfriend|son|daughter|sister|brother|"
       r"mother|father|mum|mom|dad|grandmother|grandfather|cousin|aunt|uncle|niece|nephew")

#: Words a capitalised run at a sentence's start holds that are never part of a subject's name.
NOT_SUBJECT_WORDS = frozenset("if when unless so but and because once since while though although "
                              "whether after before as maybe i i'm i’m i'd i’d i've i’ve i'll i’ll "
                              # adverbs that open a sentence whose subject is left out ("Just
                              # joined X", "Finally moved to Y")
                              "just finally also now then today yesterday recently actually well oh ok "
                              "okay anyway btw still already officially we we've we’ve we're we’re we'd we’d "
                              "we'll we’ll they they're they’re you".split())

#: Words the value patterns catch that are never a value ("I'm on it", "my manager is away").
BAD_VALUES = frozenset("""
it this that there here them him her they we you me i my our your his its their now then
today tomorrow yesterday monday tuesday wednesday thursday friday saturday sunday the a an
he she leave holiday vacation away sick call board track time fire break lunch one ones
same only other first last best next main right key part
""".split())
