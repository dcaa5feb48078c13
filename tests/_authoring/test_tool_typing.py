"""``@tool``, ``@tool(...)`` and ``@registry.tool(...)`` keep the function's type for mypy --strict.

mypy itself reads a snippet (``make typecheck`` reads docs/examples/typed_tools.py
the same way): a right call passes, a wrong one is rejected, and no decorated
function turns into ``Any``.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from dists import REPO

mypy_api = pytest.importorskip("mypy.api")

SNIPPET = """
from collections.abc import Coroutine, Mapping
from typing import Any, Literal

from typing_extensions import assert_type

from toolreg import ToolRegistry, strict_arguments, tool

registry = ToolRegistry()


@tool
def bare(text: str) -> int:
    return len(text)


@tool(toolset="units")
def called(celsius: float, to: Literal["F", "K"] = "F") -> float:
    return celsius


@registry.tool
def method_bare(name: str) -> str:
    return name


@registry.tool(name="area")
async def method_called(width: float, height: float) -> float:
    return width * height


assert_type(bare("x"), int)
assert_type(called(1.0, "K"), float)
assert_type(method_bare("Ada"), str)
area = method_called(1.0, 2.0)
assert_type(area, Coroutine[Any, Any, float]).close()
assert_type(registry.dispatch_many([("bare", {"text": "x"})]), list[str | dict[str, Any]])
assert_type(strict_arguments("bare", '{"text": "x"}'), Mapping[str, Any] | str)
assert_type(strict_arguments("bare", None), None)
bare(3)  # WRONG 1
called(1.0, to="C")  # WRONG 2
method_bare()  # WRONG 3
method_called("wide", 2.0).close()  # WRONG 4
tool(name=3)  # WRONG 5
registry.dispatch_many([("bare", {})], "eight")  # WRONG 6
registry.dispatch_many([("bare", {})], progress=len)  # WRONG 7
"""


def test_mypy_keeps_each_decorated_functions_signature(tmp_path: Path) -> None:
    (tmp_path / "snippet.py").write_text(SNIPPET)
    limit = sys.getrecursionlimit()
    try:
        out, err, status = mypy_api.run(
            [
                "--strict",
                "--follow-imports=silent",
                "--no-error-summary",
                "--cache-dir", str(tmp_path / "cache"),
                str(tmp_path / "snippet.py"),
            ]
        )  # fmt: skip
    finally:
        # mypy raises the recursion limit for its own run; the tests after this one
        # check what deep input does at the interpreter's usual limit.
        sys.setrecursionlimit(limit)
    assert status == 1, err or out
    lines = SNIPPET.splitlines()
    flagged = {}
    for match in re.finditer(r"snippet\.py:(\d+): error: (.*)", out):
        flagged[int(match[1])] = match[2]
    wrong = {n + 1 for n, text in enumerate(lines) if "# WRONG" in text}
    assert set(flagged) == wrong, out  # every wrong call, and nothing else (assert_type passed)
    assert 'incompatible type "int"; expected "str"' in out
    assert 'Missing positional argument "name"' in out


def test_the_typed_example_runs() -> None:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO / "src"), os.environ.get("PYTHONPATH", "")]),
    }
    done = subprocess.run(
        [sys.executable, str(REPO / "docs" / "examples" / "typed_tools.py")],
        capture_output=True, text=True, timeout=60, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[:5] == [
        "3 212.0 Hello, Ada!",
        "4",
        "273.15",
        "Hello, Ada.",
        "7.0",
    ]
    assert '"error_type": "invalid_arguments"' in done.stdout


def test_make_typecheck_reads_the_typed_example() -> None:
    """``make typecheck`` runs mypy --strict over a folder holding a file that defines
    ``@tool`` functions and dispatches them: dropping either breaks this."""
    import re

    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    recipe = makefile.split("\ntypecheck:", 1)[1].split("\n\n", 1)[0]
    mypy = next(line for line in recipe.splitlines() if "mypy" in line)
    assert "--strict" in mypy and "docs/examples" in mypy.split()
    example = (REPO / "docs" / "examples" / "typed_tools.py").read_text(encoding="utf-8")
    assert re.search(r"^@(registry\.)?tool\b", example, re.M)
    assert "dispatch" in example
