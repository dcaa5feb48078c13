"""Words, stopwords and stems: how names, descriptions and questions become terms."""

from __future__ import annotations

from toolreg._search import text
from toolreg._search.text import MAX_WORD_CHARS, terms, words


def test_snake_camel_and_dotted_names_split_into_the_same_words():
    assert list(words("get_weather")) == ["get", "weather"]
    assert list(words("getWeather")) == ["get", "weather"]
    assert list(words("weather.get-now")) == ["weather", "get", "now"]
    assert list(words("HTTPServer")) == ["http", "server"]
    assert terms("get_weather") == terms("getWeather") == terms("Get the weather")


def test_stems_meet_across_word_forms():
    assert terms("calculating") == terms("calculate") == terms("calculation")
    assert terms("cities") == terms("city")


def test_a_whole_question_keeps_only_its_content_words():
    assert terms("Can you tell me what the weather is in Paris, please?") == [
        "tell",
        "weather",
        "pari",
    ]
    # Numbers say nothing about the tool; a number glued to a word splits from it.
    assert terms("side1 is 42") == ["side"]


def test_words_and_the_stem_memo_are_bounded():
    assert all(len(w) <= MAX_WORD_CHARS for w in words("x" * 10_000))
    text._stems.clear()
    for i in range(text._MAX_STEMS + 10):
        text.stem(f"made{i}word")
    assert len(text._stems) <= text._MAX_STEMS


def test_non_ascii_words_are_kept_whole_and_lower_cased():
    assert list(words("Größe café")) == ["größe", "café"]
