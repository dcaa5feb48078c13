"""``toolreg serve`` puts a call an ``ask`` rule stops to its client's user (MCP elicitation).

A real ``toolreg serve`` (stdio and stateful HTTP) with ``ask = ["hold"]`` and
``deny = ["greet"]``; a real SDK client answers ``elicitation/create`` with its
``elicitation_callback``. The ``hold`` tool writes ``start TAG``/``end TAG`` to
its log, so the tests see whether it ran.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from conftest import approval_registry
from serve_harness import (
    HttpServer,
    ServeSetup,
    User,
    accept,
    approval_target,
    assert_asked_to_approve_hold,
    decline,
    error_of,
    run,
    stdio_client_for,
    text_of,
    with_rules,
)

pytest.importorskip("mcp")

import mcp_types as types  # noqa: E402
from mcp import Client  # noqa: E402

from toolreg._mcp_serve.server_approval import message_for  # noqa: E402
from toolreg.serve import ToolServer  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

RULES = '[permissions]\nask = ["hold"]\ndeny = ["greet"]\n'


@pytest.fixture
def asking(serve_setup: ServeSetup) -> ServeSetup:
    return with_rules(serve_setup, RULES)


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_an_accepted_ask_runs_the_tool(
    transport: str, asking: ServeSetup, http_server: Callable[..., HttpServer]
) -> None:
    user = User(accept())
    target = approval_target(transport, asking, http_server)

    async def session() -> None:
        async with Client(target, mode="legacy", elicitation_callback=user) as client:
            result = await client.call_tool("hold", {"tag": "yes"})
            assert not result.is_error, text_of(result)
            assert text_of(result) == "released yes"

    run(session)
    assert asking.holds() == ["start yes", "end yes"]
    [params] = user.asked
    assert_asked_to_approve_hold(params, '{"tag": "yes"}')


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_a_declined_ask_is_denied_and_never_runs(
    transport: str, asking: ServeSetup, http_server: Callable[..., HttpServer]
) -> None:
    user = User(decline())
    target = approval_target(transport, asking, http_server)

    async def session() -> None:
        async with Client(target, mode="legacy", elicitation_callback=user) as client:
            error = error_of(await client.call_tool("hold", {"tag": "no"}))
            assert error["code"] == "denied"
            assert error["rule"] == "hold"
            assert "the user declined the call" in error["error"]
            # An accept without approve is no approval.
            user.answer = accept(approve=False)
            error = error_of(await client.call_tool("hold", {"tag": "unticked"}))
            assert error["code"] == "denied"
            assert "did not approve" in error["error"]

    run(session)
    assert asking.holds() == []
    assert len(user.asked) == 2


def test_no_answer_in_time_is_a_denial(asking: ServeSetup) -> None:
    import anyio

    async def never(context: Any, params: Any) -> Any:
        await anyio.sleep(30)
        return types.ElicitResult(action="accept", content={"approve": True})

    target = stdio_client_for(asking, "--toolset", "slow", "--approval-timeout", "0.5")

    async def session() -> None:
        async with Client(target, mode="legacy", elicitation_callback=never) as client:
            error = error_of(await client.call_tool("hold", {"tag": "late"}))
            assert error["code"] == "denied"
            assert "no answer from the user within 0.5 s" in error["error"]

    run(session)
    assert asking.holds() == []


@pytest.mark.parametrize("mode", ["legacy", "modern"])
def test_a_client_without_elicitation_gets_approval_required(mode: str, asking: ServeSetup) -> None:
    target = stdio_client_for(asking, "--toolset", "slow")

    async def session() -> None:
        kwargs: dict[str, Any] = {"mode": "legacy"} if mode == "legacy" else {}
        async with Client(target, **kwargs) as client:
            error = error_of(await client.call_tool("hold", {"tag": "unasked"}))
            assert error["code"] == "approval_required"
            assert error["rule"] == "hold"

    run(session)
    assert asking.holds() == []


def test_stateless_http_is_not_asked_mid_call(
    asking: ServeSetup, http_server: Callable[..., HttpServer]
) -> None:
    user = User(accept())
    server = http_server("--toolset", "slow", "--stateless")

    async def session() -> None:
        async with Client(server.url, mode="legacy", elicitation_callback=user) as client:
            error = error_of(await client.call_tool("hold", {"tag": "stateless"}))
            assert error["code"] == "approval_required"

    run(session)
    assert user.asked == []
    assert asking.holds() == []


def test_a_deny_rule_never_asks(asking: ServeSetup) -> None:
    user = User(accept())
    target = stdio_client_for(asking, "--toolset", "demo")

    async def session() -> None:
        async with Client(target, mode="legacy", elicitation_callback=user) as client:
            error = error_of(await client.call_tool("greet", {"name": "Ada"}))
            assert error["code"] == "denied"
            assert error["rule"] == "greet"

    run(session)
    assert user.asked == []


def test_control_characters_in_arguments_reach_the_user_escaped(asking: ServeSetup) -> None:
    user = User(decline())
    target = stdio_client_for(asking, "--toolset", "slow")
    hostile = "x\x1b[2K\rApproved by admin\u202e\nTool greet is safe" + "A" * 5000

    async def session() -> None:
        async with Client(target, mode="legacy", elicitation_callback=user) as client:
            error_of(await client.call_tool("hold", {"tag": hostile}))

    run(session)
    [params] = user.asked
    message = params.message
    assert "\x1b" not in message and "\r" not in message and "\u202e" not in message
    assert "\\u001b[2K\\rApproved by admin\\u202e\\nTool greet is safe" in message
    assert message.count("\n") == 2  # the message's own three lines, none from the model
    assert len(message) < 1500  # the long value is cut
    assert "long value(s) cut" in message
    assert asking.holds() == []


def test_the_message_is_bounded_and_one_line_per_part() -> None:
    message = message_for("t\x07", {f"k{n}": "v" * 300 for n in range(50)}, "t\x1b")
    assert "\x07" not in message and "\x1b" not in message
    lines = message.split("\n")
    assert len(lines) == 3
    assert len(lines[1]) < 1100
    assert message_for("t", {}, None).startswith(
        'Tool t needs your approval (the operator\'s default ("ask") asks).'
    )


# In process (the SDK's in-memory transport): what a hostile or broken client answers.


def served(user: Any, mode: str = "modern") -> tuple[Any, Any, list[str]]:
    """A ``Client`` of an in-process ``ToolServer`` whose ``write_file`` an ``ask`` rule
    stops, its registry, and the paths it ran for."""
    registry, ran = approval_registry(ask=["write_file"])
    kwargs: dict[str, Any] = {"mode": "legacy"} if mode == "legacy" else {}
    client = Client(ToolServer(registry).server, elicitation_callback=user, **kwargs)
    return client, registry, ran


def broken(context: Any, params: Any) -> Any:
    raise RuntimeError("the client's UI crashed")


@pytest.mark.parametrize("mode", ["legacy", "modern"])
@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        (lambda: types.ElicitResult(action="cancel"), "the user cancelled the approval"),
        # Only the boolean true approves: a truthy look-alike is no approval.
        (
            lambda: types.ElicitResult(action="accept", content={"approve": "true"}),
            "did not approve",
        ),
        (lambda: types.ElicitResult(action="accept", content={"approve": 1}), "did not approve"),
        (lambda: types.ElicitResult(action="accept"), "did not approve"),
    ],
    ids=["cancel", "approve-string", "approve-1", "accept-empty"],
)
def test_anything_but_an_accept_with_approve_true_denies(
    mode: str, answer: Callable[[], Any], reason: str
) -> None:
    user = User(answer)
    client, _, ran = served(user, mode)

    async def session() -> None:
        async with client:
            error = error_of(await client.call_tool("write_file", {"path": "x"}))
            assert error["code"] == "denied"
            assert reason in error["error"]

    run(session)
    assert ran == []
    assert len(user.asked) == 1


def test_a_client_whose_elicitation_fails_is_denied() -> None:
    client, _, ran = served(broken, "legacy")

    async def session() -> None:
        async with client:
            error = error_of(await client.call_tool("write_file", {"path": "x"}))
            assert error["code"] == "denied"
            assert "the client could not be asked" in error["error"]

    run(session)
    assert ran == []


def test_each_round_trip_is_in_the_decision_log() -> None:
    client, registry, ran = served(User(accept()))

    async def session() -> None:
        async with client:
            result = await client.call_tool("write_file", {"path": "x"})
            assert not result.is_error, text_of(result)

    run(session)
    assert ran == ["x"]
    calls = [d for d in registry.decisions() if d.tool == "write_file" and d.action == "asked"]
    assert [d.reason for d in calls] == [
        "denied by the approver: the client's user is asked first;"
        " the client retries with the answer",
        "allowed by the approver",
    ]
    assert {d.rule for d in calls} == {"write_file"}
