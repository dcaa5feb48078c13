"""The layer map of docs/architecture.md, enforced: imports only point down.

Every ``import`` in ``src/toolreg`` is read with ``ast``, function-level ones
included (a deferred import is still a dependency); only imports under
``if TYPE_CHECKING:`` are left out, since they never run.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "toolreg"

#: Bottom to top. A module may import its own layer and the ones below it.
LAYERS = (
    ("hookspecs",),  # the hook contract: pluggy only
    ("_contract",),
    ("_schemas",),
    ("_authoring",),
    ("_core",),
    ("_dispatch", "_definitions", "_search"),  # side by side: none imports another
    ("_registry",),
    ("_policy",),
    ("_discovery",),
    ("_mcp",),
    ("_mcp_serve",),
    ("_loaders",),
    # the faces
    (
        *("", "__main__", "cli", "integrations", "testing", "workspace"),
        *("pytest_plugin", "_pack_loader", "serve"),
    ),
)

#: Upward edges that are deliberate, each with its reason. All read the name
#: ``toolreg.registry``: packs register into it with ``from toolreg import
#: registry``, so the code that loads a pack points it at the registry being
#: loaded, and ``@tool`` without ``registry=`` reads it when it decorates.
ALLOWED_UPWARD = {
    ("_authoring.decorator", ""),
    ("_loaders.pack_modules", ""),
    ("_loaders.api", ""),
    ("_loaders.isolated_child", ""),
}


def layer_of(module: str) -> int:
    top = module.split(".")[0]
    for index, names in enumerate(LAYERS):
        if top in names:
            return index
    raise AssertionError(f"module toolreg.{module} is in no layer: add it to docs/architecture.md")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports(path: Path) -> set[str]:
    """Modules under toolreg that ``path`` imports ('' for the package itself)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    module = module_name(path)
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped |= {id(n) for child in node.body for n in ast.walk(child)}
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found |= {
                a.name.removeprefix("toolreg").lstrip(".")
                for a in node.names
                if a.name == "toolreg" or a.name.startswith("toolreg.")
            }
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            elif node.module == "toolreg" or (node.module or "").startswith("toolreg."):
                target = node.module.removeprefix("toolreg").lstrip(".")
            else:
                continue
            found.add(target)
            for alias in node.names:  # "from toolreg._core import gate" names a module
                candidate = f"{target}.{alias.name}".lstrip(".")
                if (SRC / candidate.replace(".", "/")).with_suffix(".py").exists():
                    found.add(candidate)
    found.discard(module)
    return found


MODULES = sorted(p for p in SRC.rglob("*.py"))


def test_every_module_has_a_layer():
    for path in MODULES:
        layer_of(module_name(path))


@pytest.mark.parametrize("path", MODULES, ids=lambda p: module_name(p) or "toolreg")
def test_imports_point_down(path):
    module = module_name(path)
    mine = layer_of(module)
    upward = sorted(
        target
        for target in imports(path)
        if layer_of(target) > mine and (module, target) not in ALLOWED_UPWARD
    )
    assert not upward, f"toolreg.{module} (layer {mine}) imports upward: {upward}"


def test_subpackages_form_no_cycle():
    edges: dict[str, set[str]] = {}
    for path in MODULES:
        module = module_name(path)
        for target in imports(path):
            if (module, target) in ALLOWED_UPWARD:
                continue
            source, top = module.split(".")[0], target.split(".")[0]
            if top != source:
                edges.setdefault(source, set()).add(top)

    def reaches(start: str, goal: str, seen: set[str]) -> bool:
        for nxt in edges.get(start, ()):
            if nxt == goal or (nxt not in seen and reaches(nxt, goal, seen | {nxt})):
                return True
        return False

    cyclic = sorted(pkg for pkg in edges if reaches(pkg, pkg, {pkg}))
    assert not cyclic, f"subpackages on an import cycle: {cyclic}"


def test_the_allowed_upward_edges_are_all_still_needed():
    found = {(module_name(p), t) for p in MODULES for t in imports(p)}
    assert found >= ALLOWED_UPWARD, ALLOWED_UPWARD - found


@pytest.mark.parametrize("path", MODULES, ids=module_name)
def test_no_class_is_assembled_from_mixins(path):
    """The registry is composed of plain objects; a base-class order decides nothing."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    mixins = [
        node.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef) and node.name.endswith("Mixin")
    ]
    assert not mixins, f"{module_name(path)} defines {mixins}"


@pytest.mark.parametrize(
    "path",
    [p for p in MODULES if "_registry" not in p.relative_to(SRC).parts],
    ids=lambda p: module_name(p) or "toolreg",
)
def test_no_module_above_the_registry_reaches_its_private_parts(path):
    """Host-only actions go through ``_registry/host_only.py``, the one internal protocol."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    reached = sorted(
        ast.unparse(node)
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and node.attr.startswith("_")
        and not node.attr.startswith("__")
        and ast.unparse(node.value).split(".")[-1] in {"registry", "reg", "_registry"}
    )
    assert not reached, f"toolreg.{module_name(path)} reaches into a registry: {reached}"
