"""What the integrations share: selecting tools, and frameworks only when asked for."""

from __future__ import annotations

import logging
import pickle
import subprocess
import sys
from typing import Any

import pytest

from conftest import schema
from toolreg import ToolRegistry
from toolreg.integrations._registry_tools import (
    ToolCallFailed,
    asks,
    available_tools,
    failure,
)

FRAMEWORKS = {
    # module: (top-level package it needs, extra)
    "openai_agents": ("agents", "openai-agents"),
    "langchain": ("langchain_core", "langchain"),
    "llm": ("llm", "llm"),
    "pydantic_ai": ("pydantic_ai", "pydantic-ai"),
}


def python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)


def test_importing_toolreg_imports_no_framework_or_provider_sdk() -> None:
    heavy = [package for package, _ in FRAMEWORKS.values()]
    heavy += ["openai", "anthropic", "google.genai"]
    done = python(
        "import sys, toolreg, toolreg.integrations\n"
        "toolreg.tool_result_message('ok', 'gemini', name='t')\n"
        f"print([m for m in {heavy!r} if m in sys.modules])"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize("module", sorted(FRAMEWORKS))
def test_a_missing_framework_names_the_extra_to_install(module: str) -> None:
    package, extra = FRAMEWORKS[module]
    # sys.modules[name] = None is how Python spells "this package is not installed".
    done = python(
        f"import sys; sys.modules[{package!r}] = None\nimport toolreg.integrations.{module}"
    )
    assert done.returncode != 0
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith(f"ImportError: toolreg.integrations.{module} needs ")
    assert f"pip install 'toolreg-core[{extra}]'" in last


def test_selection_by_names_toolsets_and_aliases(host_registry: ToolRegistry) -> None:
    host_registry.register_toolset_alias("pictures", "media")

    def names(**selection) -> list[str]:
        return [spec.name for spec in available_tools(host_registry, format="mcp", **selection)[1]]

    assert names(names=None, toolsets=None) == ["clock", "greet", "snap"]
    assert names(names=["greet"], toolsets=["pictures"]) == ["greet", "snap"]
    assert names(names=["secret"], toolsets=None) == []  # known, but unavailable


def test_a_bare_string_is_not_a_selection(host_registry) -> None:
    with pytest.raises(TypeError, match="names must be a list of strings, not the string 'greet'"):
        available_tools(host_registry, names="greet", toolsets=None)


def test_unknown_names_are_left_out_and_named_with_the_close_ones(host_registry, caplog) -> None:
    # Unknown to this registry may be the operator's doing (tests/faces/
    # test_integrations_operator_policy.py): logged, never raised.
    selection = {"names": ["greet", "gret"], "toolsets": ["txt"]}
    with caplog.at_level(logging.WARNING, logger="toolreg.integrations"):
        specs = available_tools(host_registry, **selection)[1]
    assert [spec.name for spec in specs] == ["greet"]
    assert "Tool 'gret' is left out: no tool has that name" in caplog.text
    assert "did you mean 'greet'" in caplog.text
    assert "Toolset 'txt' is left out: no toolset has that name" in caplog.text
    assert "did you mean 'text'?" in caplog.text


def test_a_failed_call_is_an_exception_that_survives_pickling(host_registry) -> None:
    failed = failure("greet", host_registry.dispatch("greet", {"name": 7}))
    assert isinstance(failed, ToolCallFailed)
    copy = pickle.loads(pickle.dumps(failed))
    assert (copy.tool, copy.result, copy.error_type) == (
        "greet",
        failed.result,
        "invalid_arguments",
    )
    assert str(copy) == failed.result
    assert failure("greet", host_registry.dispatch("greet", {"name": "Ada"})) is None


def test_with_no_rules_the_ask_preview_reads_no_entry() -> None:
    # Every integration previews each call; a registry subclass's get_entry may be costly.
    read: list[str] = []

    class Counting(ToolRegistry):
        def get_entry(self, name: str) -> Any:
            read.append(name)
            return super().get_entry(name)

    registry = Counting()
    registry.register("write_file", "files", schema("write_file"), lambda args: "wrote")
    assert asks(registry, "write_file", {"path": "a.txt"}) is None
    assert read == []
    registry.set_permissions({"ask": ["write_file"]})
    assert asks(registry, "write_file", {"path": "a.txt"}) == "write_file"
    assert read == ["write_file"]


def test_the_ask_preview_records_and_counts_nothing() -> None:
    # Only dispatch's judgment is logged and tallied: a preview per call would double them.
    registry = ToolRegistry()
    registry.register("write_file", "files", schema("write_file"), lambda args: "wrote")
    registry.set_permissions({"ask": ["write_file(path=/etc/*)"], "deny": ["write_file(path=~*)"]})
    decisions, counts = registry.decisions(), registry.permission_counts()
    assert asks(registry, "write_file", {"path": "/etc/passwd"}) == "write_file(path=/etc/*)"
    assert asks(registry, "write_file", {"path": "~/.ssh/id"}) is None  # a deny is not asked
    assert asks(registry, "write_file", {"path": "a.txt"}) is None
    assert registry.decisions() == decisions
    assert registry.permission_counts() == counts
