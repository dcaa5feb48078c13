"""Typed tools: ``@tool`` registers a function and gives it back unchanged, type included.

Direct calls are checked by mypy against the function's own signature
(``word_count(3)`` is an error), and the model's calls reach the same function
through ``dispatch``, with JSON arguments validated against the schema made
from that signature. ``make typecheck`` checks this file with ``mypy --strict``.

Run it: ``python docs/examples/typed_tools.py``.
"""

from __future__ import annotations

from typing import Literal

import toolreg
from toolreg import ToolRegistry, is_tool_error, tool


@tool  # into toolreg.registry, the process-wide registry
def word_count(text: str) -> int:
    """Count the words in a text.

    Args:
        text: Any text.
    """
    return len(text.split())


@tool(toolset="units", description="Convert a temperature from Celsius.")
def convert(celsius: float, to: Literal["F", "K"] = "F") -> float:
    return celsius * 9 / 5 + 32 if to == "F" else celsius + 273.15


registry = ToolRegistry()  # a registry of its own, as a test or a second agent has


@registry.tool
def greet(name: str, punctuation: Literal["!", "."] = "!") -> str:
    """Greet someone by name."""
    return f"Hello, {name}{punctuation}"


@registry.tool(name="area", toolset="geometry")
async def rectangle_area(width: float, height: float) -> float:
    """The area of a rectangle."""
    return width * height


def main() -> None:
    # Your own code calls the functions as written; mypy knows their types.
    words: int = word_count("one two three")
    fahrenheit: float = convert(100.0)
    print(words, fahrenheit, greet("Ada"))

    # The model's calls go through dispatch: a JSON object in, a str out.
    print(toolreg.registry.dispatch("word_count", {"text": "to be or not"}))
    print(toolreg.registry.dispatch("convert", {"celsius": 0, "to": "K"}))
    print(registry.dispatch("greet", {"name": "Ada", "punctuation": "."}))
    print(registry.dispatch("area", {"width": 2, "height": 3.5}))

    # Arguments the schema does not allow never reach the function.
    rejected = registry.dispatch("greet", {"name": 7})
    assert is_tool_error(rejected)
    print(rejected)


if __name__ == "__main__":
    main()
