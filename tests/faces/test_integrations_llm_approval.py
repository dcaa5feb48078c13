"""An operator's ``ask`` through llm's own approval hook, ``before_call``.

``toolreg_llm.before_call(confirm)`` puts the calls the rules ask about to
``confirm`` (llm's ``before_call`` shape): returning approves (the tool runs,
the model reads its result), ``llm.CancelToolCall`` refuses (it does not run,
the model reads ``Cancelled: ...``). A ``deny`` rule is never put to it.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import llm
from test_integrations_llm_chains import llm_models

from conftest import approval_registry
from toolreg import ToolRegistry
from toolreg.integrations import llm as toolreg_llm


class Scripted:
    def __init__(self, path: str = "a.txt") -> None:
        self.path = path
        self.results: list[llm.ToolResult] = []

    def reply(self, prompt: llm.Prompt, response: Any) -> str:
        if prompt.tool_results:
            self.results.extend(prompt.tool_results)
            return "done"
        call = llm.ToolCall(name="write_file", arguments={"path": self.path}, tool_call_id="c0")
        response.add_tool_call(call)
        return ""


SyncModel, AsyncModel = llm_models(Scripted)


class Confirm:
    """An llm before_call that records what it was shown and answers ``approve``."""

    def __init__(self, approve: bool) -> None:
        self.approve = approve
        self.shown: list[tuple[str, dict[str, Any]]] = []

    def __call__(self, tool: llm.Tool | None, call: llm.ToolCall) -> None:
        self.shown.append((call.name, call.arguments))
        if not self.approve:
            raise llm.CancelToolCall("not today")


def run(registry: ToolRegistry, confirm: Any, path: str = "a.txt") -> SyncModel:
    model = SyncModel(path)
    hook = None if confirm is None else toolreg_llm.before_call(confirm, registry)
    model.chain("go", tools=toolreg_llm.tools(registry), before_call=hook).text()
    return model


def test_an_ask_is_put_to_confirm_and_approved_the_call_runs() -> None:
    registry, ran = approval_registry(ask=["write_file"])
    confirm = Confirm(approve=True)
    model = run(registry, confirm)
    assert confirm.shown == [("write_file", {"path": "a.txt"})]
    assert ran == ["a.txt"]
    assert [r.output for r in model.results] == ["wrote a.txt"]


def test_refused_the_call_does_not_run_and_the_model_reads_it() -> None:
    registry, ran = approval_registry(ask=["write_file"])
    model = run(registry, Confirm(approve=False))
    assert ran == []
    assert [r.output for r in model.results] == ["Cancelled: not today"]


def test_a_call_the_rules_allow_is_not_put_to_confirm() -> None:
    registry, ran = approval_registry(ask=["write_file(path=/etc/*)"])
    confirm = Confirm(approve=False)
    run(registry, confirm, "a.txt")
    assert confirm.shown == [] and ran == ["a.txt"]


def test_a_deny_is_never_put_to_confirm_and_never_runs() -> None:
    registry, ran = approval_registry(deny=["write_file"])
    confirm = Confirm(approve=True)
    model = run(registry, confirm)
    assert confirm.shown == [] and ran == []
    assert json.loads(model.results[0].output.removeprefix("Error: "))["code"] == "denied"


def test_without_before_call_an_ask_is_approval_required() -> None:
    registry, ran = approval_registry(ask=["write_file"])
    model = run(registry, None)
    assert ran == []
    error = json.loads(model.results[0].output.removeprefix("Error: "))
    assert error["code"] == "approval_required"


def test_an_async_confirm_in_an_async_chain() -> None:
    registry, ran = approval_registry(ask=["write_file"])
    shown: list[str] = []

    async def confirm(tool: llm.Tool | None, call: llm.ToolCall) -> None:
        await asyncio.sleep(0)
        shown.append(call.name)

    async def main() -> AsyncModel:
        model = AsyncModel()
        hook = toolreg_llm.before_call(confirm, registry)
        await model.chain("go", tools=toolreg_llm.async_tools(registry), before_call=hook).text()
        return model

    model = asyncio.run(main())
    assert shown == ["write_file"] and ran == ["a.txt"]
    assert [r.output for r in model.results] == ["wrote a.txt"]


def test_an_approval_is_for_the_call_confirmed_only() -> None:
    # Approved once; the next call of the tool, without before_call, is asked again.
    registry, ran = approval_registry(ask=["write_file"])
    run(registry, Confirm(approve=True))
    model = run(registry, None)
    assert ran == ["a.txt"]
    assert "approval_required" in model.results[0].output


def test_an_approval_in_a_sync_chain_of_async_tools_ends_with_its_call() -> None:
    # llm's sync chain runs an async implementation with asyncio.run, in a copy of this
    # context: the approval given there must not outlive the call it was given for.
    registry, ran = approval_registry(ask=["write_file"])
    model = SyncModel("a.txt")
    hook = toolreg_llm.before_call(Confirm(approve=True), registry)
    model.chain("go", tools=toolreg_llm.async_tools(registry), before_call=hook).text()
    assert ran == ["a.txt"]
    model = SyncModel("b.txt")
    model.chain("go", tools=toolreg_llm.async_tools(registry)).text()
    assert ran == ["a.txt"]
    assert "approval_required" in model.results[0].output
