"""The toolreg wheel as pip sees it: name, version source, license, Python range."""

from __future__ import annotations

import email
import zipfile

import toolreg


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
