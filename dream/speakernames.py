"""Who the speakers are: the assistant told from the user by role or by how it speaks (a
named speaker whose turns open like service replies), and the user's name as the
conversation gives it (what they call themselves, what the assistant calls them, how a draft
is signed)."""

from __future__ import annotations

import re

from .patternwords import GREETINGS

from .subjectnames import USER_ROLES, clean_name, is_assistant, is_role


_SERVICE_RE = re.compile(r"^(?:sure|of course|certainly|noted|got it|understood|okay,? (?:saved|noted|done)|"
                         r"here(?:'s| is| are)|happy to help|i can|i'll|i will|done|absolutely|"
                         r"great question|no problem|will do|updated|saved)\b", re.I)


def service_counts(turns: list[tuple[str, str]]) -> dict[str, list[int]]:
    """Per speaker: [turns, turns opening like a service reply ("Sure, noted.", "Here is …")]."""
    out: dict[str, list[int]] = {}
    for spk, text in turns:
        c = out.setdefault(spk, [0, 0])
        c[0] += 1
        c[1] += bool(_SERVICE_RE.match(text.strip()))
    return out


def named_assistants(counts: dict[str, list[int]]) -> set[str]:
    """Speakers with a person's name who act as the assistant ("Aria: Sure, noted."): at
    least 3 turns, at least half of them opening like a service reply, and someone else to
    serve. Their turns state no facts; their name gets no page."""
    if len(counts) < 2:
        return set()
    return {spk for spk, (n, k) in counts.items() if not is_role(spk) and n >= 3 and 2 * k >= n}


_SELF_NAME_RE = re.compile(r"\b(?:my name is|I'm|I am|call me|this is)\s+((?-i:[A-Z][a-z]+(?:\s+[A-Z][a-z]+)?))\b", re.I)
_GREETED_RE = re.compile(r"\b(?:nice to meet you|hi|hello|hey|welcome(?: back)?|thanks|thank you|good (?:morning|afternoon|evening)),?\s+"
                         r"((?-i:[A-Z][a-z]+))\b(?!\s+[A-Z])", re.I)
#: The assistant addressing someone at the end of a sentence of its own ("Happy to help,
#: Darnell."); a sentence with a colon quotes a draft ("Sure: Hi Gail, … Cheers, Darnell").
_SIGNED_RE = re.compile(r"\b(?i:best|cheers|regards|best wishes|all the best|thanks|yours faithfully|"
                        r"yours sincerely|yours|sincerely|warmly|love),\s+((?-i:[A-Z][a-z]+(?:\s+[A-Z][a-z]+)?))\s*[.!]?$")
_VOCATIVE_RE = re.compile(r"^[^:\"“]*?,\s+((?-i:[A-Z][a-z]+))\s*[.!]$")


#: A self-introduction written in lower case: "mateo ruiz here", "i'm mateo ruiz", "im mateo
#: ruiz", "this is mateo ruiz", "mateo ruiz, welder".
_W = r"[a-z][a-z'’\-]+"
_LOWER_SELF_RE = re.compile(
    rf"(?:(?:^|[.,!:;]\s*|\b(?i:{GREETINGS})\b[\s,.!]*)(?P<first>{_W})\s+(?P<last>{_W})\s+here\b"
    rf"|\b(?:[Ii]['’]?m|[Ii]\s+am|[Mm]y\s+name\s+is|[Tt]his\s+is)\s+(?P<first2>{_W})\s+(?P<last2>{_W})(?=\s*[.,!]|\s*$)"
    # the name alone opening what the speaker says, then what they do ("ravi sethi, support
    # engineer", "nadia el-amin. data engineer at X")
    rf"|^(?:(?i:{GREETINGS})\b[\s,.!]*)?(?P<first3>{_W})\s+(?P<last3>{_W})(?=\s*[.,:;!–—]))")
#: Words that follow a name without being a surname ("mateo again here", "mateo from x").
_NOT_SURNAME = frozenset("""
again here back from also just still now too and or but the a an at in on with of is was
""".split())


def self_names(turns: list[tuple[str, str]], common: set[str]) -> dict[str, str]:
    """Role speaker ("User") → the name the conversation gives them: what they call themselves
    ("my name is Mara Lind", "I'm Mara"), else what the assistant calls them ("Nice to meet
    you, Mara"); a speaker with one name ("Mateo") → the full name they write in lower case
    ("hi, mateo ruiz here"). ``turns``: (speaker, sentence); ``common``: words the session writes in
    lower case ("I'm Happy" is no name)."""
    out: dict[str, str] = {}
    for spk, sent in turns:
        # a speaker known by one name who writes their full name in lower case ("hi, mateo
        # ruiz here", "i'm mateo ruiz"): the words after their own name are their surname
        if spk in out or is_role(spk) or " " in spk.strip():
            continue
        for m in _LOWER_SELF_RE.finditer(sent):
            first = m.group("first") or m.group("first2") or m.group("first3")
            last = m.group("last") or m.group("last2") or m.group("last3")
            if first.lower() == spk.strip().lower() and last not in common and \
                    last not in _NOT_SURNAME and clean_name(last.capitalize()):
                out[spk] = f"{spk.strip()} {last.capitalize()}"
                break
    users = {s for s, _t in turns if s.strip().lower() in USER_ROLES}
    if not users:
        return out
    for spk, sent in turns:
        if spk in users and spk not in out:
            m = _SELF_NAME_RE.search(sent)
            if m and clean_name(m.group(1)) and m.group(1).split()[0].lower() not in common:
                out[spk] = m.group(1)
    if len(users) == 1:
        (u,) = users
        for spk, sent in turns:
            if u not in out and is_assistant(spk):
                # a greeting that opens the assistant's own sentence, not one inside a letter
                # it drafts ("Sure: Hi Gail, …" greets Gail, not the user)
                m = _GREETED_RE.match(sent)
                if m and clean_name(m.group(1)) and m.group(1).lower() not in common:
                    out[u] = m.group(1)
                    continue
                # a user who writes their own name in lower case ("darnell here") still
                # is "Darnell" to the assistant: a vocative is not checked against case
                m = _VOCATIVE_RE.match(sent)
                if m and clean_name(m.group(1)):
                    out[u] = m.group(1)
        # a draft the assistant writes for the user is signed with the user's name
        # ("… All the best, Darnell Whitfield"): the longest such signature names them
        signed = [m.group(1) for spk, sent in turns if is_assistant(spk)
                  for m in [_SIGNED_RE.search(sent)] if m and clean_name(m.group(1))]
        first = out.get(u, "").split()[:1]
        signed = [n for n in signed if not first or n.split()[0] == first[0]]
        if signed:
            best = max(signed, key=lambda n: (len(n.split()), n))
            if len(best.split()) > len(out.get(u, "").split()):
                out[u] = best
    return out
