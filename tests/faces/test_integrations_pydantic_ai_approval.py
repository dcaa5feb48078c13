"""An operator's ``ask`` through pydantic-ai's own human-in-the-loop approval.

A call the rules ask about raises ``ApprovalRequired``: the run ends with
``DeferredToolRequests`` naming the call and its arguments. Resumed with
``DeferredToolResults``, an approved call runs and the model reads its result;
a denied one does not run and the model reads the denial. A ``deny`` rule is
never deferred, and no approval makes it run.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic_ai import Agent, DeferredToolRequests, DeferredToolResults, ToolApproved, ToolDenied
from pydantic_ai.exceptions import UserError
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from conftest import approval_registry
from toolreg import ToolRegistry
from toolreg.integrations import pydantic_ai


class Scripted:
    """Calls write_file once, then answers "done"; keeps the tool results it read."""

    def __init__(self, path: str = "a.txt") -> None:
        self.path = path
        self.read: list[Any] = []

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        returned = [
            p for m in messages for p in m.parts
            if p.part_kind in ("tool-return", "retry-prompt")
        ]  # fmt: skip
        if not returned:
            call = ToolCallPart("write_file", {"path": self.path}, tool_call_id="call_1")
            return ModelResponse(parts=[call])
        self.read = [p.content for p in returned]
        return ModelResponse(parts=[TextPart("done")])


def agent_for(registry: ToolRegistry, model: Scripted) -> Agent[None, str | DeferredToolRequests]:
    return Agent(
        FunctionModel(model),
        tools=pydantic_ai.tools(registry),
        output_type=[str, DeferredToolRequests],  # type: ignore[arg-type]
    )


def test_an_ask_ends_the_run_with_deferred_tool_requests() -> None:
    registry, ran = approval_registry(ask=["write_file"])
    model = Scripted()
    result = agent_for(registry, model).run_sync("write it")
    requests = result.output
    assert isinstance(requests, DeferredToolRequests)
    [call] = requests.approvals
    assert (call.tool_name, call.args_as_dict()) == ("write_file", {"path": "a.txt"})
    assert requests.metadata["call_1"] == {"toolreg": {"tool": "write_file", "rule": "write_file"}}
    assert ran == [] and model.read == []


def test_approved_the_call_runs_and_the_model_reads_its_result() -> None:
    registry, ran = approval_registry(ask=["write_file"])
    model = Scripted()
    agent = agent_for(registry, model)
    first = agent.run_sync("write it")
    approvals = DeferredToolResults(approvals={"call_1": ToolApproved()})
    second = agent.run_sync(message_history=first.all_messages(), deferred_tool_results=approvals)
    assert second.output == "done"
    assert ran == ["a.txt"] and model.read == ["wrote a.txt"]
    [asked] = [d for d in registry.decisions() if d.action == "asked"]
    assert asked.reason == "allowed by the approver"


def test_denied_the_call_does_not_run_and_the_model_reads_the_denial() -> None:
    registry, ran = approval_registry(ask=["write_file"])
    model = Scripted()
    agent = agent_for(registry, model)
    first = agent.run_sync("write it")
    denials = DeferredToolResults(approvals={"call_1": ToolDenied("not today")})
    agent.run_sync(message_history=first.all_messages(), deferred_tool_results=denials)
    assert ran == [] and model.read == ["not today"]


def test_a_call_the_rules_allow_is_not_deferred() -> None:
    registry, ran = approval_registry(ask=["write_file(path=/etc/*)"])
    model = Scripted("a.txt")
    assert agent_for(registry, model).run_sync("write it").output == "done"
    assert ran == ["a.txt"]
    model = Scripted("/etc/passwd")
    assert isinstance(agent_for(registry, model).run_sync("w").output, DeferredToolRequests)
    assert ran == ["a.txt"]


def test_a_deny_is_never_deferred_and_no_approval_makes_it_run() -> None:
    registry, ran = approval_registry(deny=["write_file"])
    model = Scripted()
    assert agent_for(registry, model).run_sync("write it").output == "done"
    assert ran == [] and json.loads(model.read[0])["code"] == "denied"
    # Approved while the rule asked; the operator denies it before the run resumes.
    registry, ran = approval_registry(ask=["write_file"])
    model = Scripted()
    agent = agent_for(registry, model)
    first = agent.run_sync("write it")
    registry.set_permissions({"deny": ["write_file"]})
    approvals = DeferredToolResults(approvals={"call_1": True})
    agent.run_sync(message_history=first.all_messages(), deferred_tool_results=approvals)
    assert ran == [] and json.loads(model.read[0])["code"] == "denied"


def test_without_deferred_tool_requests_pydantic_ai_fails_the_run() -> None:
    # pydantic-ai's own rule: a deferred call needs somewhere to go. Never a silent allow.
    registry, ran = approval_registry(ask=["write_file"])
    agent = Agent(FunctionModel(Scripted()), tools=pydantic_ai.tools(registry))
    with pytest.raises(UserError, match="DeferredToolRequests"):
        agent.run_sync("write it")
    assert ran == []


def test_approval_approver_leaves_the_ask_to_the_registrys_approver() -> None:
    registry, ran = approval_registry(ask=["write_file"])
    model = Scripted()
    agent = Agent(FunctionModel(model), tools=pydantic_ai.tools(registry, approval="approver"))
    assert agent.run_sync("write it").output == "done"  # no approver: a tool error
    assert ran == [] and json.loads(model.read[0])["code"] == "approval_required"
    registry.set_approver(lambda name, args, rule: "allow")
    assert agent.run_sync("write it").output == "done"
    assert ran == ["a.txt"]


def test_approval_takes_only_its_two_words() -> None:
    registry, _ = approval_registry()
    with pytest.raises(ValueError, match="approval"):
        pydantic_ai.tools(registry, approval="yes")  # type: ignore[arg-type]


def test_a_tool_parameter_named_ctx_reaches_the_handler() -> None:
    registry = ToolRegistry()
    registry.register(
        "echo", "t",
        {"name": "echo", "description": "Echo.",
         "parameters": {"type": "object", "properties": {"ctx": {"type": "string"}}}},
        lambda args: f"got {args['ctx']}",
    )  # fmt: skip
    read: list[Any] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(parts=[ToolCallPart("echo", {"ctx": "x"}, tool_call_id="c")])
        read.extend(p.content for p in messages[-1].parts)
        return ModelResponse(parts=[TextPart("done")])

    Agent(FunctionModel(model), tools=pydantic_ai.tools(registry)).run_sync("go")
    assert read == ["got x"]


def test_approved_with_override_args_the_rules_judge_the_new_arguments() -> None:
    # The host's approval rewrites the arguments: a deny rule still holds for them.
    registry, ran = approval_registry(ask=["write_file"], deny=["write_file(path=/etc/*)"])
    model = Scripted("a.txt")
    agent = agent_for(registry, model)
    first = agent.run_sync("write it")
    override = ToolApproved(override_args={"path": "/etc/passwd"})
    approvals = DeferredToolResults(approvals={"call_1": override})
    agent.run_sync(message_history=first.all_messages(), deferred_tool_results=approvals)
    assert ran == [] and json.loads(model.read[0])["code"] == "denied"
    # Arguments no rule denies run as overridden.
    model = Scripted("a.txt")
    agent = agent_for(registry, model)
    first = agent.run_sync("write it")
    override = ToolApproved(override_args={"path": "b.txt"})
    approvals = DeferredToolResults(approvals={"call_1": override})
    agent.run_sync(message_history=first.all_messages(), deferred_tool_results=approvals)
    assert ran == ["b.txt"] and model.read == ["wrote b.txt"]
