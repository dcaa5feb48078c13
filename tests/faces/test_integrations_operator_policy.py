"""The integrations' ``tools()`` under operator policy: what it cannot offer is left out
and logged, never raised, so a host keeps running whatever the operator decided.

The packs are real packages on disk, loaded by a real PluginHost under a real config.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import pytest

from conftest import pack_record, schema
from toolreg import ToolRegistry, apply_config, parse_config
from toolreg._loaders.plugins import PluginHost
from toolreg.integrations import langchain, llm, openai_agents, pydantic_ai

SANDBOX = """
from toolreg import registry

registry.register(
    "terminal", "sandbox",
    {"parameters": {"type": "object", "properties": {"command": {"type": "string"}}}},
    lambda args: "sandboxed", override=True,
)
"""

ALLOW_SANDBOX = """
[plugins.entries.policy-sandbox]
allow_tool_override = true
"""

INTEGRATIONS: dict[str, Callable[..., list[Any]]] = {
    "langchain": langchain.tools,
    "llm": llm.tools,
    "openai_agents": openai_agents.tools,
    "pydantic_ai": pydantic_ai.tools,
}


@pytest.fixture(params=sorted(INTEGRATIONS))
def tools(request: pytest.FixtureRequest) -> Callable[..., list[Any]]:
    return INTEGRATIONS[request.param]


@pytest.fixture(autouse=True)
def autoload(monkeypatch: pytest.MonkeyPatch) -> None:
    """The suite turns pack autoload off; these tests hand the host their packs."""
    monkeypatch.delenv("TOOLREG_DISABLE_PLUGIN_AUTOLOAD", raising=False)


@pytest.fixture
def builtins(reg: ToolRegistry) -> ToolRegistry:
    reg.register(
        "terminal", "terminal", schema("terminal", command={"type": "string"}), lambda a: "host"
    )
    reg.register(
        "read_file", "file", schema("read_file", path={"type": "string"}), lambda a: "text"
    )
    return reg


def names(made: list[Any]) -> list[str]:
    return sorted(tool.name for tool in made)


def test_a_toolset_a_pack_replaced_is_left_out_and_logged(
    builtins: ToolRegistry, make_package, tools, caplog: pytest.LogCaptureFixture
) -> None:
    make_package("policy_sandbox", SANDBOX, load=False)
    host = PluginHost(builtins, parse_config(ALLOW_SANDBOX))
    report = host.load_all(packs=[pack_record("policy_sandbox")])
    assert report["policy-sandbox"].status == "loaded", report["policy-sandbox"].reason
    assert builtins.get_toolset_for_tool("terminal") == "sandbox"
    with caplog.at_level(logging.WARNING, logger="toolreg.integrations"):
        assert names(tools(builtins, toolsets=["terminal", "file"])) == ["read_file"]
    assert "Toolset 'terminal' is left out: its tool terminal is now in toolset 'sandbox'" in (
        caplog.text
    )
    assert names(tools(builtins, names=["terminal"])) == ["terminal"]  # the sandbox's
    host.unload_all()


def test_a_toolset_the_config_turned_off_is_left_out_and_logged(
    builtins: ToolRegistry, tools, caplog: pytest.LogCaptureFixture
) -> None:
    apply_config(parse_config('[toolsets]\ndisabled = ["terminal"]\n'), builtins)
    with caplog.at_level(logging.WARNING, logger="toolreg.integrations"):
        made = tools(builtins, names=["terminal", "read_file"], toolsets=["terminal"])
    assert names(made) == ["read_file"]
    assert "Tool 'terminal' is left out: it was removed by host" in caplog.text
    assert "Toolset 'terminal' is left out: its tools were removed by host" in caplog.text


def test_a_pack_the_operator_turned_off_leaves_its_names_out_with_close_names(
    builtins: ToolRegistry, make_package, tools, caplog: pytest.LogCaptureFixture
) -> None:
    make_package("policy_sandbox", SANDBOX, load=False)
    config = parse_config('[plugins]\ndisabled = ["policy-sandbox"]\n' + ALLOW_SANDBOX)
    report = PluginHost(builtins, config).load_all(packs=[pack_record("policy_sandbox")])
    assert report["policy-sandbox"].status == "disabled"
    with caplog.at_level(logging.WARNING, logger="toolreg.integrations"):
        assert names(tools(builtins, toolsets=["sandbox", "fiel"], names=["read_fle"])) == []
    assert "Toolset 'sandbox' is left out: no toolset has that name" in caplog.text
    assert "Toolset 'fiel' is left out: no toolset has that name" in caplog.text
    assert "did you mean 'file'?" in caplog.text
    assert "Tool 'read_fle' is left out: no tool has that name" in caplog.text
    assert "did you mean 'read_file'?" in caplog.text


def test_an_unavailable_tool_is_left_out_and_logged(
    builtins: ToolRegistry, tools, caplog: pytest.LogCaptureFixture
) -> None:
    builtins.register(
        "deploy", "file", schema("deploy"), lambda a: "ok", requires_env="TOOLREG_TEST_UNSET"
    )
    with caplog.at_level(logging.INFO, logger="toolreg.integrations"):
        assert names(tools(builtins, toolsets=["file"])) == ["read_file"]
    assert "Tool deploy is left out: " in caplog.text
    assert "TOOLREG_TEST_UNSET" in caplog.text


def test_a_selection_that_is_not_a_list_of_strings_is_still_an_error(
    builtins: ToolRegistry, tools
) -> None:
    # A host's own mistake, not the operator's: no policy makes None a name.
    with pytest.raises(TypeError, match="toolsets must be a list of strings; got None"):
        tools(builtins, toolsets=["file", None])


DEFERRED: dict[str, Callable[..., list[Any]]] = {
    "langchain": lambda reg, *, always_loaded, toolsets: langchain.tools(
        session=reg.session(always_loaded=always_loaded, toolsets=toolsets)
    ),
    "llm": lambda reg, *, always_loaded, toolsets: llm.tools(
        session=reg.session(always_loaded=always_loaded, toolsets=toolsets)
    ),
    "openai_agents": lambda reg, **selection: openai_agents.tools(reg, defer=True, **selection),
    "pydantic_ai": lambda reg, **selection: pydantic_ai.tools(reg, defer=True, **selection),
}


@pytest.mark.parametrize("integration", sorted(DEFERRED))
def test_deferred_tools_take_what_the_operator_left(
    builtins: ToolRegistry, integration: str
) -> None:
    apply_config(parse_config('[toolsets]\ndisabled = ["terminal"]\n'), builtins)
    builtins.register(
        "deploy", "file", schema("deploy"), lambda a: "ok", requires_env="TOOLREG_TEST_UNSET"
    )
    made = DEFERRED[integration](
        builtins,
        always_loaded=["terminal", "deploy", "toolset:terminal", "toolset:nope"],
        toolsets=["terminal", "file"],
    )
    offered = {getattr(tool, "name", None) for tool in made}
    assert not offered & {"terminal", "deploy"}
    assert offered <= {"read_file", "tool_search"}
