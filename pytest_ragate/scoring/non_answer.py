"""An answer that answers nothing: it says it does not know (or cannot say), or it restates
the question. Such an answer shares the gist's words, so its cosine to the gist is high ("I
don't know who chaired the budget meeting" scores 0.71-0.92 against "Alice chaired the budget
meeting"); `answer_similarity` scores it 0 instead, with the reason on its row
(items/correctness.py). An abstention the system reports (`Answer.abstained`) is scored 0
already; this catches the ones it words as an answer.

`non_answer(answer, question)` is pure and offline (no embedding): a stated ignorance or
refusal in English, German or French (IGNORANCE), or an answer none of whose content words
is new to the question (an echo: the question asked back, or restated as a sentence). An
answer that states anything besides, like "I don't know the exact day, but it was in March",
still says "I don't know" and is a non-answer: a hedge is not a gist's content. The rule is
measured in benchmarks/similarity_floor.py over the hand-labelled answers of
benchmarks/data/answer_match_*.jsonl: no answer labelled right is a non-answer there.
"""

from __future__ import annotations

import re
import unicodedata

# a stated ignorance, refusal or absence of the answer, as a language model words it
IGNORANCE = re.compile(r"""\b(?:
    i\s+(?:do\s+not|don't|dont|can\s*not|can't|could\s+not|couldn't|am\s+unable\s+to)\s+
        (?:know|tell|say|answer|find|determine|recall|be\s+sure)
  | i\s*(?:'m|\s+am)\s+(?:not\s+(?:sure|certain|able)|unsure|unable)
  | (?:no|not\s+enough)\s+(?:idea|information|data|details?|mention|record|answer)\b
  | (?:is|are|was|were)\s+not\s+(?:mentioned|specified|stated|given|provided|known|clear|
        available|discussed|recorded)
  | (?:context|transcripts?|text|documents?|meetings?|sources?|passages?|records?|minutes|
        excerpts?)\s+(?:does|do|did)\s*(?:not|n't)\s+(?:say|mention|specify|state|contain|
        provide|include|tell)
  | (?:cannot|can't|unable\s+to)\s+(?:be\s+)?(?:determined?|answered?|found|confirm(?:ed)?)
  | weiß\s+(?:ich\s+)?nicht | keine\s+(?:ahnung|angaben?|informationen?)
  | nicht\s+(?:bekannt|erwähnt|angegeben)
  | je\s+ne\s+sais\s+pas | aucune\s+(?:idée|information) | (?:n'est|ne\s+sont)\s+pas\s+
        (?:mentionnée?s?|précisée?s?|indiquée?s?)
)""", re.IGNORECASE | re.VERBOSE)

WORD = re.compile(r"[^\W_]+", re.UNICODE)
# words that carry no content: an answer made only of these and the question's words adds
# nothing to it (English, German and French function words; not yes, no and the negations,
# which answer a yes-or-no question in its own words)
_FUNCTION_WORDS = """
a an the and or but of to in on at by for with from as is are was were be been being it its
this that these those there here which what who whom whose when where why how did do does
done has have had will would shall should can could may might must all any some
each every both either neither so then than too very also just only about into over under
again further once same other such own more most few i me my we our you your he him his she
her they them their one ones s t someone somebody something anyone anybody anything
everyone everybody everything nobody nothing
der die das ein eine und oder von zu im in an auf mit für ist sind war waren wer was wann wo
wie welche welcher welches es sie er wir
le la les un une et ou de du des à au aux en dans sur avec pour est sont était qui que quoi
quand où comment quel quelle quels quelles il elle ils elles nous vous
"""
FUNCTION = frozenset(_FUNCTION_WORDS.split())


def _words(text: str) -> list[str]:
    text = unicodedata.normalize("NFKC", text).casefold()
    return [_stem(w) for w in WORD.findall(text)]


def _stem(word: str) -> str:
    """A word without a plural or possessive ending: 'meetings' and 'meeting' are one."""
    for ending in ("'s", "es", "s"):
        if len(word) > 4 and word.endswith(ending):
            return word[:-len(ending)]
    return word


def non_answer(answer: str, question: str) -> str | None:
    """Why `answer` answers nothing ("says it does not know: …", "restates the question"),
    or None for an answer that states something."""
    found = IGNORANCE.search(unicodedata.normalize("NFKC", answer).replace("’", "'"))
    if found:
        return f"says it does not know: “{found.group(0).strip()}”"
    content = [w for w in _words(answer) if w not in FUNCTION]  # a number is content
    asked = set(_words(question))
    if content and all(w in asked for w in content):
        return "restates the question"
    return None
