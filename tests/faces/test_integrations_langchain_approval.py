"""An operator's ``ask`` in toolreg.integrations.langchain, outside a LangGraph run.

There langchain-core has no approval of its own, so an ask goes to the registry's
approver, and with none the model reads ``approval_required`` in an error
``ToolMessage``. Inside a graph: test_integrations_langchain_interrupt.py.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from langchain_core.messages import ToolMessage

from conftest import approval_registry
from toolreg import ToolRegistry
from toolreg.integrations import langchain


@pytest.fixture(params=["invoke", "ainvoke"])
def run(request: pytest.FixtureRequest) -> Any:
    def run(registry: ToolRegistry) -> ToolMessage:
        [tool] = langchain.tools(registry)
        call = {"type": "tool_call", "id": "c1", "name": "write_file", "args": {"path": "a.txt"}}
        if request.param == "ainvoke":
            return asyncio.run(tool.ainvoke(call))
        return tool.invoke(call)

    return run


def test_no_approver_the_model_reads_approval_required(run: Any) -> None:
    registry, ran = approval_registry(ask=["write_file"])
    message = run(registry)
    assert message.status == "error" and ran == []
    assert json.loads(message.content)["code"] == "approval_required"


def test_the_registrys_approver_answers_with_the_tool_and_arguments(run: Any) -> None:
    registry, ran = approval_registry(ask=["write_file"])
    shown: list[tuple[str, dict[str, Any], str | None]] = []
    registry.set_approver(lambda name, args, rule: shown.append((name, args, rule)) or "allow")
    assert run(registry).content == "wrote a.txt"
    assert shown == [("write_file", {"path": "a.txt"}, "write_file")] and ran == ["a.txt"]
    registry.set_approver(lambda name, args, rule: ("deny", "not today"))
    refused = run(registry)
    assert refused.status == "error" and "not today" in refused.content and ran == ["a.txt"]


def test_no_approver_makes_a_denied_call_run(run: Any) -> None:
    registry, ran = approval_registry(deny=["write_file"])
    registry.set_approver(lambda name, args, rule: "allow")
    assert json.loads(run(registry).content)["code"] == "denied" and ran == []
