"""An operator's ``ask`` through openai-agents' own approval: ``needs_approval``.

The run pauses with a ``ToolApprovalItem`` naming the tool and its arguments;
the host approves (the tool runs, the model reads its result) or rejects (it
does not run, the model reads the rejection) through ``RunState``. A ``deny``
rule is never asked about, and no SDK approval makes it run.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from agents import Agent, RunContextWrapper, Runner, ToolApprovalItem
from test_integrations_openai_agents_runs import Scripted

from conftest import approval_registry
from toolreg import ToolRegistry
from toolreg.integrations import openai_agents


async def first_run(registry: ToolRegistry, path: str = "a.txt") -> tuple[Agent, Scripted, Any]:
    model = Scripted("write_file", {"path": path})
    agent = Agent(name="a", model=model, tools=openai_agents.tools(registry))
    return agent, model, await Runner.run(agent, "write it")


@pytest.mark.anyio
async def test_an_ask_pauses_the_run_with_the_sdks_approval_item() -> None:
    registry, ran = approval_registry(ask=["write_file"])
    _, model, result = await first_run(registry)
    [item] = result.interruptions
    assert isinstance(item, ToolApprovalItem)
    assert item.tool_name == "write_file"
    assert json.loads(item.arguments) == {"path": "a.txt"}
    assert ran == [] and model.seen == []


@pytest.mark.anyio
async def test_approved_in_the_run_state_the_call_runs_and_the_model_reads_it() -> None:
    registry, ran = approval_registry(ask=["write_file"])
    agent, model, result = await first_run(registry)
    state = result.to_state()
    state.approve(result.interruptions[0])
    resumed = await Runner.run(agent, state)
    assert ran == ["a.txt"]
    assert model.seen == ["wrote a.txt"]
    assert resumed.final_output == "done"
    [asked] = [d for d in registry.decisions() if d.action == "asked"]
    assert asked.reason == "allowed by the approver"


@pytest.mark.anyio
async def test_rejected_in_the_run_state_the_call_does_not_run() -> None:
    registry, ran = approval_registry(ask=["write_file"])
    agent, model, result = await first_run(registry)
    state = result.to_state()
    state.reject(result.interruptions[0], rejection_message="not today")
    await Runner.run(agent, state)
    assert ran == []
    assert model.seen == ["not today"]


@pytest.mark.anyio
async def test_a_call_the_rules_allow_is_not_asked_about() -> None:
    registry, ran = approval_registry(ask=["write_file(path=/etc/*)"])
    _, model, result = await first_run(registry, "a.txt")
    assert result.interruptions == []
    assert ran == ["a.txt"] and model.seen == ["wrote a.txt"]


@pytest.mark.anyio
async def test_an_argument_rule_asks_for_the_matching_call_only() -> None:
    registry, ran = approval_registry(ask=["write_file(path=/etc/*)"])
    _, _, result = await first_run(registry, "/etc/passwd")
    assert [json.loads(i.arguments) for i in result.interruptions] == [{"path": "/etc/passwd"}]
    assert ran == []


@pytest.mark.anyio
async def test_a_deny_is_never_asked_and_no_approval_makes_it_run() -> None:
    registry, ran = approval_registry(deny=["write_file"])
    agent, model, result = await first_run(registry)
    assert result.interruptions == []  # denied in dispatch, not put to the host
    assert ran == []
    assert json.loads(model.seen[0])["code"] == "denied"
    # A host that approves the tool for good in the SDK still gets the deny.
    model.seen.clear()
    registry2, ran2 = approval_registry(ask=["write_file"])
    agent, model, result = await first_run(registry2)
    state = result.to_state()
    state.approve(result.interruptions[0], always_approve=True)
    registry2.set_permissions({"deny": ["write_file"]})  # the operator tightens meanwhile
    await Runner.run(agent, state)
    assert ran2 == []
    assert json.loads(model.seen[0])["code"] == "denied"


@pytest.mark.anyio
async def test_the_registrys_approver_is_not_consulted_before_the_sdk() -> None:
    # The SDK's approval answers first; the registry's approver does not see the call.
    registry, ran = approval_registry(ask=["write_file"])
    seen: list[str] = []
    registry.set_approver(lambda name, args, rule: seen.append(name) or "deny")
    agent, _, result = await first_run(registry)
    state = result.to_state()
    state.approve(result.interruptions[0])
    await Runner.run(agent, state)
    assert ran == ["a.txt"] and seen == []


@pytest.mark.anyio
async def test_approval_approver_leaves_the_ask_to_the_registrys_approver() -> None:
    registry, ran = approval_registry(ask=["write_file"])
    model = Scripted("write_file", {"path": "a.txt"})
    tools = openai_agents.tools(registry, approval="approver")
    agent = Agent(name="a", model=model, tools=tools)
    result = await Runner.run(agent, "write it")
    assert result.interruptions == []  # no approver: the model reads approval_required
    assert ran == [] and json.loads(model.seen[0])["code"] == "approval_required"
    registry.set_approver(lambda name, args, rule: "allow")
    model.seen.clear()
    await Runner.run(agent, "write it")
    assert ran == ["a.txt"] and model.seen == ["wrote a.txt"]


def test_approval_takes_only_its_two_words() -> None:
    registry, _ = approval_registry()
    with pytest.raises(ValueError, match="approval"):
        openai_agents.tools(registry, approval="yes")  # type: ignore[arg-type]


@pytest.mark.anyio
async def test_with_no_rules_needs_approval_restores_no_arguments(monkeypatch) -> None:
    # needs_approval runs before every call: with no [permissions] it answers at once.
    restored: list[Any] = []
    strict_schema = openai_agents.strict_schema

    def counting(parameters: dict[str, Any]) -> Any:
        schema, restore = strict_schema(parameters)
        return schema, lambda args: restored.append(args) or restore(args)

    monkeypatch.setattr(openai_agents, "strict_schema", counting)
    registry, _ = approval_registry()
    registry.set_permissions(None)
    [tool] = openai_agents.tools(registry)
    ctx = RunContextWrapper(context=None)
    assert await tool.needs_approval(ctx, {"path": "a.txt"}, "call_1") is False
    assert restored == []
    registry.set_permissions({"ask": ["write_file"]})  # read at each call, not at tools()
    assert await tool.needs_approval(ctx, {"path": "a.txt"}, "call_1") is True
    assert restored == [{"path": "a.txt"}]
