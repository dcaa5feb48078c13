"""Text into search terms: words split at case and punctuation, stopwords out, stemmed.

Tool names, descriptions and questions all go through :func:`terms`, so
``get_weather``, ``getWeather`` and "the weather, please" meet on ``weather``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import snowballstemmer  # type: ignore[import-untyped]  # ships no types

#: A word longer than this is cut: no real word is, and a hostile one costs the same.
MAX_WORD_CHARS = 40

# Runs of letters and digits; underscores, dots, dashes and spaces all split.
_PIECES = re.compile(r"[^\W_]+")
# Inside an ASCII piece, case changes split: getWeather -> get Weather,
# HTTPServer -> HTTP Server, side1 -> side 1 (the number is then dropped).
_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")

#: English words that say nothing about which tool fits: a whole question from a
#: model ("Can you tell me what the weather is in Paris?") keeps only its content.
STOPWORDS = frozenset(
    """
    a about above after again against all also am an and any are as at be because been
    before being below between both but by can could did do does doing down during each
    else etc few for from further given had has have having he her here hers herself him
    himself his how i if in into is it its itself just let lets like me might more most
    must my myself need no nor not now of off on once only or other our ours ourselves
    out over own please same shall she should so some such than that the their theirs
    them themselves then there these they this those through to too under until up us
    use using very via want was we were what when where which while who whom why will
    with within would you your yours yourself yourselves
    """.split()  # noqa: SIM905 (a word list reads better as words)
)

_stemmer = snowballstemmer.stemmer("english")
# Snowball in pure Python costs tens of microseconds a word, and the words of a
# catalog and of its questions repeat: each is stemmed once. Bounded, so a stream
# of made-up words cannot grow it without end.
_stems: dict[str, str] = {}
_MAX_STEMS = 100_000


def stem(word: str) -> str:
    """The Snowball (English) stem of a lower-case word."""
    found = _stems.get(word)
    if found is not None:
        return found
    made = _stemmer.stemWord(word) if word.isalpha() and len(word) > 2 else word
    if len(_stems) >= _MAX_STEMS:
        _stems.clear()
    _stems[word] = made
    return made


def words(text: str) -> Iterator[str]:
    """The lower-case words of ``text``, split at punctuation and at case changes."""
    for piece in _PIECES.findall(text):
        if piece.isascii():
            found = _WORDS.findall(piece)
            for word in found or (piece,):
                yield word[:MAX_WORD_CHARS].lower()
        else:
            yield piece[:MAX_WORD_CHARS].lower()


def terms(text: str) -> list[str]:
    """The search terms of ``text``: its words, stopwords and bare numbers out, stemmed."""
    return [stem(w) for w in words(text) if w not in STOPWORDS and not w.isdigit()]
