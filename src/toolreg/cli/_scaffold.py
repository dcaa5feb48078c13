"""``toolreg new PACK_NAME``: write a tool-pack project that builds, installs and tests.

The project is the layout docs/plugins.md describes: hatchling, a ``src``
package registering one ``@tool`` function, tests on the pytest plugin's
fixtures, a README and a .gitignore. Nothing is written unless the name is
usable and the target directory is new or empty.
"""

from __future__ import annotations

import argparse
import keyword
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from string import Template

from packaging.version import Version

from toolreg import __version__
from toolreg._contract.names import MAX_PROVIDER_TOOL_NAME, MCP_PREFIX, is_mcp
from toolreg._core.ownership import reserved_label
from toolreg._discovery.dist_info import DISTRIBUTION
from toolreg._policy.admission import RESERVED_PACK_NAMESPACES
from toolreg._policy.config import plugin_id as canonical_id

from ._errors import EXIT_OK, EXIT_USAGE, CliError

# PEP 508 / the core metadata spec: what pip accepts as a distribution name.
_DIST_NAME = re.compile(r"[A-Z0-9]|[A-Z0-9][A-Z0-9._-]*[A-Z0-9]", re.IGNORECASE)

_PYPROJECT = """\
[build-system]
requires = ["hatchling>=1.21"]
build-backend = "hatchling.build"

[project]
name = "${dist}"
version = "0.1.0"
description = "toolreg tool pack: ${toolset} tools for LLM agents."
readme = "README.md"
requires-python = ">=3.10"
# MIT is a default, not a requirement: change it (and LICENSE) as you see fit.
license = "MIT"
license-files = ["LICENSE"]
authors = [{ name = "The ${dist} authors" }]
keywords = ["toolreg", "llm", "agents", "tools"]
classifiers = [
    "Programming Language :: Python :: 3",
    "Operating System :: OS Independent",
]
# toolreg's distribution is toolreg-core ("toolreg" on PyPI is another project).
# Bounded above: the loader refuses the pack ("incompatible") outside this range.
dependencies = ["${requirement}"]

[project.urls]
# Point these at your repository once it exists.
Homepage = "https://pypi.org/project/${dist}/"

[project.optional-dependencies]
test = ["pytest>=8"]

[project.entry-points."toolreg.tools"]
${toolset} = "${module}"

[tool.hatch.build.targets.wheel]
packages = ["src/${module}"]

[tool.pytest.ini_options]
testpaths = ["tests"]
"""

_INIT = '''\
"""${dist}: a toolreg tool pack.

toolreg imports this module when it loads the pack, and every ``@tool``
function here is registered then: in toolset TOOLSET, owned by the pack.
"""

from toolreg import tool

TOOLSET = "${toolset}"


@tool(toolset=TOOLSET)
def ${tool}(name: str) -> str:
    """Greet someone by name.

    Args:
        name: Who to greet.
    """
    return f"Hello, {name}!"
'''

_TEST = '''\
"""${dist}, loaded by the real toolreg loader as an agent host would load it.

``tool_registry`` and ``load_pack`` come from toolreg's pytest plugin, which is
active wherever toolreg is installed. Install this project first:
``pip install -e ".[test]"``.
"""

from toolreg import is_tool_error
from toolreg.testing import (
    assert_dispatches,
    assert_no_override_without_consent,
    assert_valid_schema,
)

PLUGIN_ID = "${plugin_id}"
HELLO = "${tool}"


def test_loads(tool_registry, load_pack):
    outcome = load_pack(PLUGIN_ID)[PLUGIN_ID]
    assert (outcome.status, outcome.reason) == ("loaded", "")
    # Every tool the pack registered, so a tool you add is checked too.
    assert HELLO in outcome.tools_added
    assert all(tool_registry.get_owner(name) == PLUGIN_ID for name in outcome.tools_added)


def test_schemas_suit_every_provider(tool_registry, load_pack):
    outcome = load_pack(PLUGIN_ID)[PLUGIN_ID]
    for name in outcome.tools_added:
        assert_valid_schema(tool_registry, name)


def test_hello(tool_registry, load_pack):
    load_pack(PLUGIN_ID)
    assert assert_dispatches(tool_registry, HELLO, {"name": "Ada"}) == "Hello, Ada!"


def test_bad_arguments_reach_the_model_as_an_error(tool_registry, load_pack):
    load_pack(PLUGIN_ID)
    assert is_tool_error(tool_registry.dispatch(HELLO, {}))  # "name" is required


def test_overrides_nothing_without_consent():
    assert_no_override_without_consent(PLUGIN_ID)
'''

_README = """\
# ${dist}

A [toolreg](https://pypi.org/project/toolreg-core/) tool pack: ${toolset} tools for
LLM agents. Installed next to toolreg, it is found through its
`toolreg.tools` entry point and loaded as plugin `${plugin_id}`.

## Tools

| tool | toolset | what it does |
|---|---|---|
| `${tool}` | `${toolset}` | Greet someone by name. |

## Install

```sh
pip install ${dist}
toolreg plugins                    # ${plugin_id}: loaded
toolreg call ${tool} '{"name": "Ada"}'
```

## Develop and test

```sh
python -m venv .venv && . .venv/bin/activate
pip install -e ".[test]"
python -m pytest
```

Until toolreg-core is published on PyPI, `pip` cannot find it (and `toolreg`
on PyPI is an unrelated project): in the venv, install toolreg from a checkout
of its repository first, `pip install path/to/checkout`, then the steps above.
The Install steps above need it too.

The tests use toolreg's pytest plugin: the `tool_registry` and `load_pack`
fixtures, and the helpers in `toolreg.testing`.

## Publish

```sh
pip install build twine
python -m build          # dist/*.tar.gz and dist/*.whl
twine upload dist/*
```
"""

_LICENSE = """\
MIT License

Copyright (c) The ${dist} authors

Permission is hereby granted, free of charge, to any person obtaining a copy
of this software and associated documentation files (the "Software"), to deal
in the Software without restriction, including without limitation the rights
to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
SOFTWARE.
"""

_GITIGNORE = """\
__pycache__/
*.py[cod]
.venv/
build/
dist/
*.egg-info/
.pytest_cache/
.ruff_cache/
"""


@dataclass(frozen=True)
class PackNames:
    """The names a new pack is known by."""

    dist: str  # as given: the project name and the directory
    plugin_id: str  # canonical: what operators write in config
    module: str  # the import package, and the pack's namespace
    toolset: str
    tool: str  # the example tool


def pack_names(name: str) -> PackNames:
    """Check ``name`` and derive the others from it; ``CliError`` (exit 2) when unusable."""
    if not _DIST_NAME.fullmatch(name):
        raise CliError(
            f"{name!r} is not a valid distribution name: use letters, digits, '-', '_' "
            "and '.', starting and ending with a letter or digit",
            EXIT_USAGE,
        )
    module = name.replace("-", "_")
    if not module.isidentifier() or keyword.iskeyword(module):
        raise CliError(
            f"{name!r} cannot be a pack name: its module name {module!r} is not a Python "
            "identifier (use letters, digits, '-' and '_', starting with a letter)",
            EXIT_USAGE,
        )
    if module.lower() in RESERVED_PACK_NAMESPACES:
        raise CliError(
            f"{name!r} cannot be a pack name: its module {module!r} is a namespace "
            "reserved by toolreg, and the loader refuses packs that claim it",
            EXIT_USAGE,
        )
    if module in sys.stdlib_module_names:
        raise CliError(
            f"{name!r} cannot be a pack name: its module {module!r} would shadow the "
            "standard library's",
            EXIT_USAGE,
        )
    owner = _installed_owner(module)
    if owner is not None:
        raise CliError(
            f"{name!r} cannot be a pack name: its module {module!r} would shadow {owner}; "
            f"choose another name (e.g. 'toolreg-{name}')",
            EXIT_USAGE,
        )
    plugin_id = canonical_id(name)
    if plugin_id in (DISTRIBUTION, "toolreg"):
        raise CliError(
            f"{name!r} cannot be a pack name: it is toolreg's own distribution name "
            f"({DISTRIBUTION!r}) or the unrelated project that holds 'toolreg' on PyPI",
            EXIT_USAGE,
        )
    if reserved_label(plugin_id) is not None:
        raise CliError(
            f"{name!r} cannot be a pack name: {plugin_id!r} is an owner label toolreg "
            "reserves for its own tools, and the loader refuses packs named so",
            EXIT_USAGE,
        )
    toolset = plugin_id.removeprefix("toolreg-")
    if is_mcp(toolset):
        raise CliError(
            f"{name!r} would name toolset {toolset!r}: toolsets starting with {MCP_PREFIX!r} "
            "belong to MCP servers",
            EXIT_USAGE,
        )
    tool = toolset.replace("-", "_") + "_hello"
    if len(tool) > MAX_PROVIDER_TOOL_NAME:
        raise CliError(
            f"{name!r} is too long: its example tool {tool!r} would exceed the "
            f"{MAX_PROVIDER_TOOL_NAME} characters providers allow in a tool name",
            EXIT_USAGE,
        )
    return PackNames(name, plugin_id, module, toolset, tool)


def _installed_owner(module: str) -> str | None:
    """Who already provides the top-level ``module`` here, or None.

    A distribution whose files (or ``top_level.txt``) hold it, else any importable
    module or package by that name (an editable install lists no files). An
    empty folder that merely has the name (a namespace package) does not count:
    it may be the new pack's own directory.
    """
    from importlib.metadata import packages_distributions
    from importlib.util import find_spec

    owners = packages_distributions().get(module)
    if owners:
        return "the one the installed distribution " + ", ".join(sorted(set(owners))) + " provides"
    try:
        spec = find_spec(module)
    except (ImportError, ValueError):
        return None
    if spec is None or spec.origin in (None, "namespace"):
        return None
    return "a module of that name that is already importable here"


def toolreg_requirement(version: str = __version__) -> str:
    """``toolreg-core>=X.Y,<X.Y+1``: this toolreg's minor series, which the pack is tested with."""
    major, minor = (Version(version).release + (0,))[:2]
    return f"{DISTRIBUTION}>={major}.{minor},<{major}.{minor + 1}"


def render(names: PackNames) -> dict[str, str]:
    """Relative path → text of every file of the new project."""
    values = {
        "dist": names.dist,
        "plugin_id": names.plugin_id,
        "module": names.module,
        "toolset": names.toolset,
        "tool": names.tool,
        "requirement": toolreg_requirement(),
    }
    files = {
        "pyproject.toml": _PYPROJECT,
        "README.md": _README,
        "LICENSE": _LICENSE,
        ".gitignore": _GITIGNORE,
        f"src/{names.module}/__init__.py": _INIT,
        f"tests/test_{names.module}.py": _TEST,
    }
    return {path: Template(text).substitute(values) for path, text in files.items()}


def create_pack(names: PackNames, parent: Path) -> tuple[Path, list[str]]:
    """Write the project into ``parent/<dist>``; return its directory and the files written."""
    target = parent / names.dist
    if target.exists() and not target.is_dir():
        raise CliError(f"{target} exists and is not a directory", EXIT_USAGE)
    if target.is_dir() and any(target.iterdir()):
        raise CliError(
            f"{target} exists and is not empty; choose another name or --dir", EXIT_USAGE
        )
    files = render(names)
    for relative, text in files.items():
        path = target / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8", newline="\n")
    return target, list(files)


def cmd_new(args: argparse.Namespace) -> int:
    """``toolreg new PACK_NAME [--dir D]``."""
    parent = Path(args.dir) if args.dir else Path.cwd()
    names = pack_names(args.name)
    target, files = create_pack(names, parent)
    print(f"Created tool pack {names.dist} in {target}:")
    for relative in sorted(files):
        print(f"  {relative}")
    print(
        "\nNext steps:\n"
        f"  cd {target}\n"
        '  python -m pip install -e ".[test]"   # the pack, toolreg and pytest\n'
        "  python -m pytest                      # its tests, through the real loader\n"
        f"  toolreg plugins                       # {names.plugin_id}: loaded\n"
        f'  toolreg call {names.tool} \'{{"name": "Ada"}}\'\n'
        "Publishing: python -m build && twine upload dist/* (see README.md)."
    )
    return EXIT_OK
