"""A pack that requires ``toolreg`` (an unrelated project on PyPI) instead of ``toolreg-core``.

It still loads, as before, but the load warns and ``toolreg plugins`` shows the
fix in the pack's reason. The pack is a real package on disk with a real
dist-info (METADATA, RECORD, entry_points.txt), found by the real discovery.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path

import pytest
from packaging.utils import canonicalize_name

from toolreg import ToolRegistry, parse_config
from toolreg._discovery.dist_info import misnamed_toolreg, misnamed_toolreg_warning
from toolreg._discovery.entrypoints import GROUP, find_packs
from toolreg._loaders.plugins import PluginHost
from toolreg.cli._commands import plugin_table

SOURCE = """
from toolreg import registry

registry.register(
    "{name}_hello",
    "{name}",
    {{"name": "{name}_hello", "description": "Say hello.", "parameters": {{"type": "object"}}}},
    lambda args: "hello",
)
"""


@pytest.fixture(autouse=True)
def _autoload_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """The suite turns pack autoload off; these tests hand the host their packs."""
    monkeypatch.delenv("TOOLREG_DISABLE_PLUGIN_AUTOLOAD", raising=False)


def installed_pack(make_package, tmp_path: Path, name: str, requires: list[str]) -> Path:
    """``name`` as pip would install it into make_package's folder; returns that folder."""
    make_package(name, SOURCE.format(name=name), load=False)
    site = tmp_path / "site"  # make_package's folder, on sys.path
    dist = site / f"{name}-1.0.dist-info"
    dist.mkdir()
    metadata = ["Metadata-Version: 2.1", f"Name: {name}", "Version: 1.0"]
    metadata += [f"Requires-Dist: {r}" for r in requires]
    (dist / "METADATA").write_text("\n".join(metadata) + "\n\nA pack.\n")
    (dist / "entry_points.txt").write_text(f"[{GROUP}]\n{name} = {name}\n")
    (dist / "RECORD").write_text(
        f"{name}/__init__.py,,\n{dist.name}/METADATA,,\n{dist.name}/RECORD,,\n"
    )
    return site


@pytest.mark.parametrize(
    ("requirement", "fixed"),
    [
        ("toolreg>=0.1,<0.2", "toolreg-core>=0.1,<0.2"),
        ("Toolreg[mcp] >=0.1", "toolreg-core[mcp] >=0.1"),
        ("toolreg", "toolreg-core"),
    ],
)
def test_a_pack_requiring_toolreg_loads_with_a_warning_naming_the_fix(
    make_package, tmp_path, caplog: pytest.LogCaptureFixture, requirement: str, fixed: str
) -> None:
    name = "misnamed_" + re.sub(r"\W", "_", requirement)
    site = installed_pack(make_package, tmp_path, name, ["pluggy>=1", requirement])
    records = find_packs(path=[str(site)], use_cache=False)
    assert [r.plugin_id for r in records] == [canonicalize_name(name)]
    with caplog.at_level(logging.WARNING, logger="toolreg.plugins"):
        report = PluginHost(ToolRegistry(), parse_config("")).load_all(packs=records)
    (outcome,) = report
    assert outcome.status == "loaded"  # a warning, not a refusal: it loaded before too
    expected = (
        f"requires {requirement!r}, but 'toolreg' on PyPI is an unrelated project; "
        f"toolreg's distribution is 'toolreg-core'. Fix the pack's dependency: {fixed!r}"
    )
    assert outcome.reason == f"warning: {expected}"
    assert f"Plugin {outcome.id} {expected}" in caplog.messages
    # toolreg plugins shows it where a reason goes.
    assert "warning: requires" in plugin_table(report, width=400)


@pytest.mark.parametrize(
    "requires", [["toolreg-core>=0.1"], ["Toolreg_Core>=0.1"], ["toolregx>=1"], []]
)
def test_other_requirements_get_no_warning(
    make_package, tmp_path, caplog: pytest.LogCaptureFixture, requires: list[str]
) -> None:
    name = "fine_" + re.sub(r"\W", "_", "_".join(requires))
    site = installed_pack(make_package, tmp_path, name, requires)
    records = find_packs(path=[str(site)], use_cache=False)
    with caplog.at_level(logging.WARNING, logger="toolreg.plugins"):
        report = PluginHost(ToolRegistry(), parse_config("")).load_all(packs=records)
    (outcome,) = report
    assert (outcome.status, outcome.reason) == ("loaded", "")
    assert not [m for m in caplog.messages if "unrelated project" in m]
    assert misnamed_toolreg(records[0].path) is None


def test_the_fix_keeps_extras_specifiers_and_markers() -> None:
    text = misnamed_toolreg_warning('toolreg[mcp]>=1 ; python_version >= "3.10"')
    assert text.endswith("""'toolreg-core[mcp]>=1 ; python_version >= "3.10"'""")
    assert misnamed_toolreg("") is None  # a pack without a dist-info (a module loaded by name)
