"""``toolreg serve`` asks a 2026-07-28 client's user with an ``InputRequiredResult``.

A real ``toolreg serve`` (stdio, stateful and stateless HTTP) with ``ask =
["hold", "whoami"]`` and ``deny = ["greet"]``; a real SDK client in its default
(2026-07-28) mode. ``Client.call_tool`` answers the embedded elicitation with
its ``elicitation_callback`` and retries; the attacks drive the rounds by hand
with ``client.session.call_tool(..., allow_input_required=True)``. The ``hold``
tool writes ``start TAG``/``end TAG`` to its log, so the tests see whether it ran;
SIGHUP reloads changed rules between two rounds.
"""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Callable
from pathlib import Path
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

import anyio  # noqa: E402
import mcp_types as types  # noqa: E402
from mcp import Client  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402

from toolreg._mcp_serve.server_approval import INPUT_KEY  # noqa: E402
from toolreg.serve import ToolServer  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
posix_only = pytest.mark.skipif(not hasattr(signal, "SIGHUP"), reason="SIGHUP is POSIX-only")

RULES = '[permissions]\nask = ["hold", "whoami"]\ndeny = ["greet"]\n'


APPROVED = {INPUT_KEY: types.ElicitResult(action="accept", content={"approve": True})}


@pytest.fixture
def asking(serve_setup: ServeSetup) -> ServeSetup:
    return with_rules(serve_setup, RULES)


TRANSPORTS = ["stdio", "http", "stateless"]


async def first_round(client: Client, name: str, arguments: dict[str, Any]) -> Any:
    """The server's question for a call, without answering it."""
    asked = await client.session.call_tool(name, arguments, allow_input_required=True)
    assert isinstance(asked, types.InputRequiredResult), asked
    assert asked.request_state
    assert asked.input_requests is not None and set(asked.input_requests) == {INPUT_KEY}
    return asked


async def answer(
    client: Client,
    name: str,
    arguments: dict[str, Any],
    state: str | None,
    responses: Any = APPROVED,
) -> Any:
    return await client.session.call_tool(
        name,
        arguments,
        input_responses=responses,
        request_state=state,
        allow_input_required=True,
    )


def refused(exc: MCPError) -> None:
    """The SDK's boundary refused the state: the call never reached dispatch."""
    assert exc.error.code == types.INVALID_PARAMS
    assert "requestState" in exc.error.message


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_an_approved_round_trip_runs_the_tool(
    transport: str, asking: ServeSetup, http_server: Callable[..., HttpServer]
) -> None:
    user = User(accept())
    target = approval_target(transport, asking, http_server)

    async def session() -> None:
        async with Client(target, elicitation_callback=user) as client:
            assert client.protocol_version >= "2026-07-28"
            result = await client.call_tool("hold", {"tag": "yes"})
            assert not result.is_error, text_of(result)
            assert text_of(result) == "released yes"

    run(session)
    assert asking.holds() == ["start yes", "end yes"]
    [params] = user.asked
    assert_asked_to_approve_hold(params, '{"tag": "yes"}')


@pytest.mark.parametrize("transport", ["stdio", "stateless"])
def test_a_declined_round_trip_is_denied_with_the_reason(
    transport: str, asking: ServeSetup, http_server: Callable[..., HttpServer]
) -> None:
    user = User(decline())
    target = approval_target(transport, asking, http_server)

    async def session() -> None:
        async with Client(target, elicitation_callback=user) as client:
            error = error_of(await client.call_tool("hold", {"tag": "no"}))
            assert error["code"] == "denied"
            assert error["rule"] == "hold"
            assert "the user declined the call" in error["error"]
            user.answer = accept(approve=False)
            error = error_of(await client.call_tool("hold", {"tag": "unticked"}))
            assert error["code"] == "denied"
            assert "did not approve" in error["error"]

    run(session)
    assert asking.holds() == []
    assert len(user.asked) == 2


@pytest.mark.parametrize("transport", ["stdio", "stateless"])
def test_a_2026_07_28_client_without_elicitation_gets_approval_required(
    transport: str, asking: ServeSetup, http_server: Callable[..., HttpServer]
) -> None:
    target = approval_target(transport, asking, http_server)

    async def session() -> None:
        async with Client(target) as client:
            result = await client.session.call_tool(
                "hold", {"tag": "unasked"}, allow_input_required=True
            )
            assert isinstance(result, types.CallToolResult)
            error = error_of(result)
            assert error["code"] == "approval_required"
            assert error["rule"] == "hold"

    run(session)
    assert asking.holds() == []


def test_a_deny_rule_is_never_asked(asking: ServeSetup) -> None:
    user = User(accept())

    async def session() -> None:
        async with Client(stdio_client_for(asking), elicitation_callback=user) as client:
            error = error_of(await client.call_tool("greet", {"name": "Ada"}))
            assert error["code"] == "denied"

    run(session)
    assert user.asked == []


@pytest.mark.parametrize("transport", ["stdio", "stateless"])
def test_a_tampered_state_is_refused(
    transport: str, asking: ServeSetup, http_server: Callable[..., HttpServer]
) -> None:
    target = approval_target(transport, asking, http_server)

    async def session() -> None:
        async with Client(target, elicitation_callback=User(accept())) as client:
            asked = await first_round(client, "hold", {"tag": "t"})
            state = asked.request_state
            flipped = state[:-3] + ("A" if state[-3] != "A" else "B") + state[-2:]
            for forged in (flipped, state + "x", "v1.AAAA", json.dumps({"tool": "hold"})):
                with pytest.raises(MCPError) as caught:
                    await answer(client, "hold", {"tag": "t"}, forged)
                refused(caught.value)

    run(session)
    assert asking.holds() == []


@pytest.mark.parametrize("transport", ["stdio", "stateless"])
def test_a_state_replayed_for_other_arguments_or_another_tool_is_refused(
    transport: str, asking: ServeSetup, http_server: Callable[..., HttpServer]
) -> None:
    target = approval_target(transport, asking, http_server)

    async def session() -> None:
        async with Client(target, elicitation_callback=User(accept())) as client:
            state = (await first_round(client, "hold", {"tag": "harmless"})).request_state
            for name, arguments in (
                ("hold", {"tag": "harmful"}),
                ("whoami", {}),
                ("greet", {"name": "Ada"}),
            ):
                with pytest.raises(MCPError) as caught:
                    await answer(client, name, arguments, state)
                refused(caught.value)

    run(session)
    assert asking.holds() == []


def test_an_approval_answers_one_call(asking: ServeSetup) -> None:
    async def session() -> None:
        async with Client(stdio_client_for(asking), elicitation_callback=User(accept())) as client:
            state = (await first_round(client, "hold", {"tag": "once"})).request_state
            result = await answer(client, "hold", {"tag": "once"}, state)
            assert text_of(result) == "released once"
            error = error_of(await answer(client, "hold", {"tag": "once"}, state))
            assert error["code"] == "denied"
            assert "this approval was already used" in error["error"]

    run(session)
    assert asking.holds() == ["start once", "end once"]


def test_an_answer_without_a_state_is_asked_again(asking: ServeSetup) -> None:
    async def session() -> None:
        async with Client(stdio_client_for(asking), elicitation_callback=User(accept())) as client:
            again = await answer(client, "hold", {"tag": "stateless"}, None)
            assert isinstance(again, types.InputRequiredResult)
            # A state with no answer in it is asked again too.
            state = (await first_round(client, "hold", {"tag": "blank"})).request_state
            again = await answer(client, "hold", {"tag": "blank"}, state, responses=None)
            assert isinstance(again, types.InputRequiredResult)
            assert again.request_state != state

    run(session)
    assert asking.holds() == []


def test_an_expired_state_is_refused(asking: ServeSetup) -> None:
    target = stdio_client_for(asking, "--approval-timeout", "0.5")

    async def session() -> None:
        async with Client(target, elicitation_callback=User(accept())) as client:
            state = (await first_round(client, "hold", {"tag": "late"})).request_state
            await anyio.sleep(1)
            with pytest.raises(MCPError) as caught:
                await answer(client, "hold", {"tag": "late"}, state)
            refused(caught.value)

    run(session)
    assert asking.holds() == []


def test_a_state_from_another_server_process_is_refused(
    asking: ServeSetup, http_server: Callable[..., HttpServer]
) -> None:
    """Each process seals under its own key: a replica behind a balancer refuses its peer's."""
    first = http_server("--toolset", "slow", "--stateless")
    second = http_server("--toolset", "slow", "--stateless")

    async def session() -> None:
        async with (
            Client(first.url, elicitation_callback=User(accept())) as one,
            Client(second.url, elicitation_callback=User(accept())) as other,
        ):
            state = (await first_round(one, "hold", {"tag": "elsewhere"})).request_state
            with pytest.raises(MCPError) as caught:
                await answer(other, "hold", {"tag": "elsewhere"}, state)
            refused(caught.value)

    run(session)
    assert asking.holds() == []


async def reloaded(server: HttpServer, client: Client, config: Path, rules: str) -> None:
    """Rewrite the rules, SIGHUP the server, and wait until a new ``hold`` call sees them."""
    text = config.read_text()
    config.write_text(text[: text.index("[permissions]")] + rules)
    os.kill(server.proc.pid, signal.SIGHUP)
    for _ in range(100):
        await anyio.sleep(0.1)
        try:
            probe = await client.session.call_tool(
                "hold", {"tag": "probe"}, allow_input_required=True
            )
        except MCPError:  # between unloading and loading again the tool is unknown
            continue
        asked = probe.request_state if isinstance(probe, types.InputRequiredResult) else None
        if asked is None or "hold*" in probe.input_requests[INPUT_KEY].params.message:
            return
    raise AssertionError("the server did not reload its rules")


async def asked_then_reloaded(server: HttpServer, client: Client, config: Path, rule: str) -> str:
    """The state of a question about ``hold`` ``{"tag": "now"}``, then ``rule`` the only
    permission, reloaded."""
    state = (await first_round(client, "hold", {"tag": "now"})).request_state
    await reloaded(server, client, config, f"[permissions]\n{rule}\n")
    return state


@posix_only
def test_an_approval_never_turns_a_later_deny_into_an_allow(
    asking: ServeSetup, http_server: Callable[..., HttpServer]
) -> None:
    server = http_server("--toolset", "slow", "--stateless")

    async def session() -> None:
        async with Client(server.url, elicitation_callback=User(accept())) as client:
            state = await asked_then_reloaded(server, client, asking.config, 'deny = ["hold"]')
            error = error_of(await answer(client, "hold", {"tag": "now"}, state))
            assert error["code"] == "denied"
            assert error["rule"] == "hold"

    run(session)
    assert asking.holds() == []


@posix_only
def test_an_approval_of_another_rule_is_asked_again(
    asking: ServeSetup, http_server: Callable[..., HttpServer]
) -> None:
    server = http_server("--toolset", "slow", "--stateless")

    async def session() -> None:
        async with Client(server.url, elicitation_callback=User(accept())) as client:
            state = await asked_then_reloaded(server, client, asking.config, 'ask = ["hold*"]')
            again = await answer(client, "hold", {"tag": "now"}, state)
            assert isinstance(again, types.InputRequiredResult)
            assert "'hold*'" in again.input_requests[INPUT_KEY].params.message

    run(session)
    assert asking.holds() == []


@posix_only
def test_a_call_an_allow_rule_now_allows_runs_without_the_answer(
    asking: ServeSetup, http_server: Callable[..., HttpServer]
) -> None:
    server = http_server("--toolset", "slow", "--stateless")

    async def session() -> None:
        async with Client(server.url, elicitation_callback=User(accept())) as client:
            state = await asked_then_reloaded(server, client, asking.config, 'allow = ["hold"]')
            result = await answer(client, "hold", {"tag": "now"}, state, responses=None)
            assert isinstance(result, types.CallToolResult)
            assert text_of(result) == "released now"

    run(session)
    assert asking.holds()[-2:] == ["start now", "end now"]


@pytest.mark.parametrize(
    "response",
    [types.ListRootsResult(roots=[]), types.ElicitResult(action="cancel")],
    ids=["not-an-elicitation", "cancel"],
)
def test_an_answer_that_is_no_approval_is_denied(response: Any) -> None:
    """In process: a retry whose answer is another kind of result, or a cancel, denies;
    a cancel is an answer, so its state approves nothing after it."""
    registry, ran = approval_registry(ask=["write_file"])

    async def session() -> None:
        async with Client(
            ToolServer(registry).server, elicitation_callback=User(accept())
        ) as client:
            arguments = {"path": "x"}
            state = (await first_round(client, "write_file", arguments)).request_state
            error = error_of(
                await answer(client, "write_file", arguments, state, {INPUT_KEY: response})
            )
            assert error["code"] == "denied"
            if isinstance(response, types.ElicitResult):
                assert "the user cancelled the approval" in error["error"]
                error = error_of(await answer(client, "write_file", arguments, state))
                assert "this approval was already used" in error["error"]
            else:
                assert "not an elicitation result" in error["error"]

    run(session)
    assert ran == []
