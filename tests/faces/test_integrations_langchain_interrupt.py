"""An operator's ``ask`` in toolreg.integrations.langchain, inside a real LangGraph graph.

A call the rules ask about pauses the graph with ``interrupt``; ``Command(resume=...)``
answers it, and the answer reaches dispatch as that call's approver.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, create_react_agent
from langgraph.types import Command

from conftest import approval_registry
from toolreg import ToolRegistry
from toolreg.integrations import langchain

THREAD = {"configurable": {"thread_id": "t1"}}


def tool_call(path: str) -> AIMessage:
    call = {"type": "tool_call", "name": "write_file", "args": {"path": path}, "id": "c1"}
    return AIMessage("", tool_calls=[call], id="ai1")


class Graph:
    """A ToolNode in a StateGraph with a checkpointer, run with invoke or ainvoke."""

    def __init__(self, registry: ToolRegistry | None, mode: str, **options: Any) -> None:
        builder = StateGraph(MessagesState)
        builder.add_node("tools", ToolNode(langchain.tools(registry, **options)))
        builder.add_edge(START, "tools")
        builder.add_edge("tools", END)
        self.graph = builder.compile(checkpointer=InMemorySaver())
        self.mode = mode

    def run(self, value: Any) -> dict[str, Any]:
        if self.mode == "ainvoke":
            return asyncio.run(self.graph.ainvoke(value, THREAD))
        return self.graph.invoke(value, THREAD)

    def start(self, path: str = "a.txt") -> dict[str, Any]:
        return self.run({"messages": [tool_call(path)]})

    def resume(self, answer: Any) -> ToolMessage:
        out = self.run(Command(resume=answer))
        assert "__interrupt__" not in out
        message = out["messages"][-1]
        assert isinstance(message, ToolMessage)
        return message


@pytest.fixture(params=["invoke", "ainvoke"])
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def asked(registry: ToolRegistry) -> list[tuple[str, str | None]]:
    return [(d.reason, d.rule) for d in registry.decisions() if d.action == "asked"]


def test_an_ask_pauses_the_graph_naming_the_tool_its_arguments_and_the_rule(mode: str) -> None:
    registry, ran = approval_registry(ask=["write_file"])
    [pause] = Graph(registry, mode).start()["__interrupt__"]
    [action] = pause.value["action_requests"]
    assert (action["name"], action["args"]) == ("write_file", {"path": "a.txt"})
    assert "the operator's rule 'write_file'" in action["description"]
    assert pause.value["review_configs"] == [
        {"action_name": "write_file", "allowed_decisions": ["approve", "reject"]}
    ]
    assert pause.value["toolreg"]["tool"] == "write_file"
    assert pause.value["toolreg"]["rule"] == "write_file"
    # Paused before dispatch: nothing ran, and nothing is answered yet.
    assert ran == [] and asked(registry) == []


ALLOWS = ["allow", "approve", True, {"decision": "allow"}, {"decisions": [{"type": "approve"}]}]


@pytest.mark.parametrize("answer", ALLOWS)
def test_resumed_with_an_allow_the_handler_runs_once_and_its_result_flows(
    mode: str, answer: Any
) -> None:
    registry, ran = approval_registry(ask=["write_file"])
    shown: list[str] = []
    registry.set_approver(lambda name, args, rule: shown.append(name) or "deny")
    graph = Graph(registry, mode)
    graph.start()
    message = graph.resume(answer)
    assert (message.status, message.content) == ("success", "wrote a.txt")
    assert ran == ["a.txt"]
    # The interrupt answered the ask, not the registry's approver; the log says so.
    assert shown == [] and asked(registry) == [("allowed by the approver", "write_file")]


@pytest.mark.parametrize(
    "answer",
    [
        ("deny", "not today"),
        {"decision": "deny", "reason": "not today"},
        {"decisions": [{"type": "reject", "message": "not today"}]},
    ],
)
def test_resumed_with_a_deny_the_model_reads_the_denial_naming_the_rule(
    mode: str, answer: Any
) -> None:
    registry, ran = approval_registry(ask=["write_file"])
    graph = Graph(registry, mode)
    graph.start()
    message = graph.resume(answer)
    error = json.loads(message.content)
    assert message.status == "error" and ran == []
    assert (error["code"], error["rule"]) == ("denied", "write_file")
    assert "not today" in error["error"] and "'write_file' asks" in error["error"]
    assert asked(registry) == [("denied by the approver: not today", "write_file")]


@pytest.mark.parametrize(
    "answer",
    [
        "ALLOW",
        "yes",
        1,
        ("allow", "sure"),
        {"decision": "maybe"},
        {"type": "edit", "edited_action": {"name": "write_file", "args": {"path": "b.txt"}}},
        {"decisions": [{"type": "approve"}, {"type": "approve"}]},
    ],
)
def test_any_other_answer_denies(answer: Any) -> None:
    registry, ran = approval_registry(ask=["write_file"])
    graph = Graph(registry, "invoke")
    graph.start()
    message = graph.resume(answer)
    assert message.status == "error" and json.loads(message.content)["code"] == "denied"
    assert ran == []


def test_a_deny_rule_never_interrupts_and_no_answer_makes_it_run(mode: str) -> None:
    registry, ran = approval_registry(deny=["write_file"])
    registry.set_approver(lambda name, args, rule: "allow")
    out = Graph(registry, mode).start()
    assert "__interrupt__" not in out
    error = json.loads(out["messages"][-1].content)
    assert (error["code"], error["rule"]) == ("denied", "write_file") and ran == []


def test_a_call_the_rules_allow_runs_without_a_pause(mode: str) -> None:
    registry, ran = approval_registry(ask=["write_file(path=/etc/*)"])
    out = Graph(registry, mode).start("a.txt")
    assert "__interrupt__" not in out and out["messages"][-1].content == "wrote a.txt"
    assert ran == ["a.txt"]


def test_a_sessions_tools_pause_on_its_registrys_rules() -> None:
    registry, ran = approval_registry(ask=["write_file"])
    graph = Graph(None, "invoke", session=registry.session(always_loaded=["write_file"]))
    [pause] = graph.start()["__interrupt__"]
    assert pause.value["toolreg"]["rule"] == "write_file" and ran == []
    assert graph.resume("allow").content == "wrote a.txt" and ran == ["a.txt"]


def test_an_answer_bound_to_the_call_does_not_cover_changed_arguments() -> None:
    registry, ran = approval_registry(ask=["write_file"])
    graph = Graph(registry, "invoke")
    [pause] = graph.start("a.txt")["__interrupt__"]
    token = pause.value["toolreg"]["call"]
    # Between the pause and the answer, the host's state now holds other arguments.
    graph.graph.update_state(THREAD, {"messages": [tool_call("/etc/passwd")]}, as_node=START)
    message = graph.resume({"decision": "allow", "call": token})
    assert message.status == "error" and "for another call" in message.content
    assert ran == []


def test_an_answer_by_interrupt_id_does_not_cover_changed_arguments() -> None:
    registry, ran = approval_registry(ask=["write_file"])
    graph = Graph(registry, "invoke")
    [pause] = graph.start("a.txt")["__interrupt__"]
    graph.graph.update_state(THREAD, {"messages": [tool_call("/etc/passwd")]}, as_node=START)
    # The answer was for the interrupt that showed a.txt: the changed call asks anew.
    [again] = graph.run(Command(resume={pause.id: "allow"}))["__interrupt__"]
    assert again.value["action_requests"][0]["args"] == {"path": "/etc/passwd"}
    assert ran == []
    assert graph.resume("allow").content == "wrote /etc/passwd" and ran == ["/etc/passwd"]


def test_outside_a_graph_the_registrys_approver_answers() -> None:
    registry, ran = approval_registry(ask=["write_file"])
    shown: list[tuple[str, dict[str, Any], str | None]] = []
    registry.set_approver(lambda name, args, rule: shown.append((name, args, rule)) or "allow")
    [tool] = langchain.tools(registry)
    assert tool.invoke({"path": "a.txt"}) == "wrote a.txt"
    assert shown == [("write_file", {"path": "a.txt"}, "write_file")] and ran == ["a.txt"]


def test_a_graph_without_a_checkpointer_leaves_the_ask_to_the_approver() -> None:
    registry, ran = approval_registry(ask=["write_file"])
    registry.set_approver(lambda name, args, rule: ("deny", "the approver said no"))
    builder = StateGraph(MessagesState)
    builder.add_node("tools", ToolNode(langchain.tools(registry)))
    builder.add_edge(START, "tools")
    builder.add_edge("tools", END)
    out = builder.compile().invoke({"messages": [tool_call("a.txt")]})
    assert "__interrupt__" not in out and "the approver said no" in out["messages"][-1].content
    assert ran == []


def test_approval_approver_keeps_the_ask_from_langgraph(mode: str) -> None:
    registry, ran = approval_registry(ask=["write_file"])
    registry.set_approver(lambda name, args, rule: "allow")
    out = Graph(registry, mode, approval="approver").start()
    assert "__interrupt__" not in out and out["messages"][-1].content == "wrote a.txt"
    assert ran == ["a.txt"]


def test_approval_interrupt_outside_a_graph_raises_and_nothing_runs() -> None:
    registry, ran = approval_registry(ask=["write_file"])
    registry.set_approver(lambda name, args, rule: "allow")
    [tool] = langchain.tools(registry, approval="interrupt")
    with pytest.raises(RuntimeError, match="LangGraph run with a checkpointer"):
        tool.invoke({"path": "a.txt"})
    assert ran == []


def test_an_unknown_approval_mode_is_refused() -> None:
    registry, _ = approval_registry(ask=["write_file"])
    with pytest.raises(ValueError, match="approval must be"):
        langchain.tools(registry, approval="framework")  # type: ignore[arg-type]


class ToolCallingModel(FakeMessagesListChatModel):
    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self


@pytest.mark.filterwarnings("ignore:create_react_agent has been moved")
def test_an_agent_asks_per_call_and_each_answer_holds_for_its_own_call() -> None:
    registry, ran = approval_registry(ask=["write_file(path=secret*)"])
    calls = [
        {"type": "tool_call", "name": "write_file", "args": {"path": path}, "id": path}
        for path in ("a.txt", "secret1", "secret2")
    ]
    model = ToolCallingModel(responses=[AIMessage("", tool_calls=calls), AIMessage("done")])
    agent = create_react_agent(model, langchain.tools(registry), checkpointer=InMemorySaver())
    pauses = agent.invoke({"messages": [("user", "write them")]}, THREAD)["__interrupt__"]
    shown = {p.value["action_requests"][0]["args"]["path"]: p.id for p in pauses}
    assert sorted(shown) == ["secret1", "secret2"] and ran == ["a.txt"]
    answers = {shown["secret1"]: "allow", shown["secret2"]: ("deny", "not that one")}
    out = agent.invoke(Command(resume=answers), THREAD)
    # Each call ran at most once: a.txt before the pause is not run again on resume.
    assert sorted(ran) == ["a.txt", "secret1"] and out["messages"][-1].content == "done"
    results = {m.tool_call_id: m for m in out["messages"] if isinstance(m, ToolMessage)}
    assert results["secret1"].content == "wrote secret1"
    assert results["secret2"].status == "error" and "not that one" in results["secret2"].content
    assert sorted(asked(registry)) == [
        ("allowed by the approver", "write_file(path=secret*)"),
        ("denied by the approver: not that one", "write_file(path=secret*)"),
    ]
