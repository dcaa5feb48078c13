"""A typo in the operator config is named, with the closest known name, not passed over."""

from __future__ import annotations

import logging

import pytest

from conftest import schema
from toolreg import ToolRegistry, apply_toolset_config, parse_config
from toolreg._discovery.entrypoints import PackRecord
from toolreg._loaders.plugins import PluginHost


def warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "toolreg.config"]


def test_a_misspelt_plugin_id_is_named_with_the_closest_pack(caplog, monkeypatch):
    monkeypatch.delenv("TOOLREG_DISABLE_PLUGIN_AUTOLOAD", raising=False)
    record = PackRecord("toolreg-sqlite", "toolreg-sqlite", "1.0", (("s", "x"),), None, "")
    config = parse_config(
        '[plugins]\nenabled = ["toolreg-sqlte"]\ndisabled = ["toolreg-sqlite"]\n'
        "[plugins.entries.toolreg-nothing]\nallow_tool_override = false\n"
    )
    with caplog.at_level(logging.WARNING, logger="toolreg.config"):
        report = PluginHost(ToolRegistry(), config).load_all(packs=[record])
    assert report["toolreg-sqlite"].status == "disabled"  # nothing was imported
    assert warnings(caplog) == [
        "plugins.enabled: 'toolreg-sqlte' matches nothing known; did you mean 'toolreg-sqlite'?",
        "plugins.entries.toolreg-nothing: 'toolreg-nothing' matches nothing known",
    ]


def test_a_misspelt_toolset_is_named_and_mcp_servers_are_known_ahead(caplog, reg):
    reg.register("now", "time", schema("now"), lambda args: "t")
    config = parse_config(
        '[toolsets]\nenabled = ["tiem", "docs", "mcp-docs"]\n'
        '[mcp.servers.docs]\ncommand = "python"\n'
    )
    with caplog.at_level(logging.WARNING, logger="toolreg.config"):
        removed = apply_toolset_config(config, reg)
    assert removed == ["now"]  # the typo turned "time" off, which is why it is said
    assert warnings(caplog) == [
        "toolsets.enabled: 'tiem' matches nothing known; did you mean 'time'?"
    ]


def test_names_that_match_draw_no_warning(caplog, reg):
    reg.register("now", "time", schema("now"), lambda args: "t")
    with caplog.at_level(logging.WARNING, logger="toolreg.config"):
        apply_toolset_config(parse_config('[toolsets]\ndisabled = ["time"]\n'), reg)
    assert warnings(caplog) == []
