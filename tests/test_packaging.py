"""The toolreg wheel as pip sees it: name, version source, license, Python range, contents."""

from __future__ import annotations

import email
import zipfile

import toolreg
from dists import REPO


def test_the_wheel_is_toolreg_core_with_one_version_and_a_license(pack_venv):
    (wheel,) = (pack_venv.root / "wheels").glob("toolreg_core-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        info = next(n for n in names if n.endswith(".dist-info/METADATA"))
        meta = email.message_from_bytes(archive.read(info))
    assert meta["Name"] == "toolreg-core"
    assert meta["Version"] == toolreg.__version__  # written once, in toolreg/_contract/version.py
    assert meta["Requires-Python"] == ">=3.10", "no upper bound on Python"
    assert meta["License-Expression"] == "MIT"
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    assert "toolreg/__init__.py" in names


def test_the_builtins_ship_inside_toolreg_and_nothing_else_is_top_level(pack_venv):
    (wheel,) = (pack_venv.root / "wheels").glob("toolreg_core-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
    top_level = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    assert top_level == {"toolreg"}
    shipped = {n.removeprefix("toolreg/builtin_tools/") for n in names}
    in_repo = {p.name for p in (REPO / "builtin_tools").glob("*.py")}
    assert in_repo <= shipped, "every file of builtin_tools/ is in toolreg/builtin_tools/"
    assert len(names) == len(set(names)), "no file twice (the folder and its symlink)"


def test_the_installed_builtins_are_found_under_toolreg(pack_venv):
    found = pack_venv.python_json(
        """
        import importlib.util, json
        import toolreg
        from toolreg import discover_builtin_tools

        spec = importlib.util.find_spec("toolreg.builtin_tools")
        print(json.dumps({
            "inside": spec.origin.startswith(toolreg.__path__[0]),
            "top_level": importlib.util.find_spec("builtin_tools") is not None,
            "modules": discover_builtin_tools(),
        }))
        """
    )
    assert found["inside"] and not found["top_level"]
    assert "toolreg.builtin_tools.file_tools" in found["modules"]


def test_the_wheel_ships_the_documentation_pages_and_nothing_else_of_docs(pack_venv):
    (wheel,) = (pack_venv.root / "wheels").glob("toolreg_core-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        shipped = {n.removeprefix("toolreg/_docs/") for n in archive.namelist() if "/_docs/" in n}
    docs = REPO / "docs"
    pages = {
        p.relative_to(docs).as_posix() for p in [*docs.glob("*.md"), *docs.glob("guides/*.md")]
    }
    assert shipped == pages - {"api.md"}, "every page but the site's generated API page"


def test_an_installed_toolreg_prints_its_pages_and_help_points_there(pack_venv):
    listing = pack_venv.run("docs")
    assert listing.returncode == 0, listing.stderr
    assert "cli  " in listing.stdout and "guides/hosts" in listing.stdout
    page = pack_venv.run("docs", "formats")
    assert page.returncode == 0, page.stderr
    assert page.stdout == (REPO / "docs" / "formats.md").read_text(encoding="utf-8")
    helped = pack_venv.run("--help")
    assert "More: toolreg docs cli" in helped.stdout  # the wheel names no Documentation URL
