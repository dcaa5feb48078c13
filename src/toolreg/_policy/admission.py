"""The policy gate a plugin passes before any of its code runs.

Admission (is it enabled?), compatibility (does it fit this toolreg, and the
operator's version pin?), identity (is its name one toolreg reserves?) and
namespace admission (does it claim a reserved or another pack's module
namespace?). Each check reads metadata only; nothing here imports the plugin.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from .._core.ownership import reserved_label
from .config import Config
from .config import plugin_id as canonical_id

PLUGINS_ENV = "TOOLREG_PLUGINS"
DISABLE_AUTOLOAD_ENV = "TOOLREG_DISABLE_PLUGIN_AUTOLOAD"

#: Module namespaces no pack may claim.
RESERVED_PACK_NAMESPACES = frozenset({"toolreg", "builtin_tools", "toolreg_local"})


@dataclass(frozen=True)
class NotAdmitted:
    """Why a plugin may not load: a status and a reason naming the rule."""

    status: str
    reason: str


def check_enabled(plugin_id: str, config: Config, environ: Mapping[str, str]) -> NotAdmitted | None:
    """Operator switches: the autoload kill switch, TOOLREG_PLUGINS, enabled/disabled lists."""
    if environ.get(DISABLE_AUTOLOAD_ENV, "").strip() not in ("", "0"):
        return NotAdmitted("disabled", f"plugin autoload is off ({DISABLE_AUTOLOAD_ENV} is set)")
    if PLUGINS_ENV in environ:
        wanted = {canonical_id(p) for p in environ[PLUGINS_ENV].split(",") if p.strip()}
        if plugin_id not in wanted:
            return NotAdmitted("disabled", f"not listed in {PLUGINS_ENV}")
    elif config.plugins.enabled is not None and plugin_id not in config.plugins.enabled:
        return NotAdmitted("disabled", "not listed in plugins.enabled")
    if plugin_id in config.plugins.disabled:
        return NotAdmitted("disabled", "listed in plugins.disabled")
    return None


def check_compatible(
    plugin_id: str,
    version: str,
    requires_toolreg: str | None,
    toolreg_version: str,
    config: Config,
) -> NotAdmitted | None:
    """The pack's own ``Requires-Dist: toolreg...`` and the operator's version pin."""
    if requires_toolreg:
        try:
            from packaging.requirements import Requirement

            requirement = Requirement(requires_toolreg)
        except ValueError as exc:  # packaging's InvalidRequirement
            return NotAdmitted(
                "incompatible", f"unreadable requirement {requires_toolreg!r}: {exc}"
            )
        applies = requirement.marker is None or requirement.marker.evaluate({"extra": ""})
        if applies and not requirement.specifier.contains(toolreg_version, prereleases=True):
            return NotAdmitted(
                "incompatible",
                f"requires toolreg{requirement.specifier}, but toolreg {toolreg_version} "
                "is installed",
            )
    pin = config.plugins.entry(plugin_id).version
    if pin is not None:
        try:
            from packaging.version import Version

            inside = pin.contains(Version(version), prereleases=True)
        except ValueError:  # packaging's InvalidVersion
            inside = False
        if not inside:
            return NotAdmitted(
                "incompatible",
                f"version {version} is outside the operator pin {pin} "
                f"(plugins.entries.{plugin_id}.version)",
            )
    return None


def check_identity(plugin_id: str) -> PermissionError | None:
    """A pack may not be named like an owner toolreg labels itself (``builtin``, ``host``...)."""
    label = reserved_label(plugin_id)
    if label is None:
        return None
    return PermissionError(
        f"pack {plugin_id!r} has a reserved name: {label!r} labels toolreg's own "
        "tools in ownership and rollback, so no distribution may be called that"
    )


def check_namespaces(
    plugin_id: str, namespaces: Iterable[str], claimed: Mapping[str, str]
) -> PermissionError | None:
    """A pack may not claim a reserved namespace, nor another admitted pack's."""
    for namespace in namespaces:
        if namespace in RESERVED_PACK_NAMESPACES:
            return PermissionError(
                f"pack {plugin_id!r} claims the reserved module namespace {namespace!r}"
            )
        owner = claimed.get(namespace)
        if owner is not None and owner != plugin_id:
            return PermissionError(
                f"pack {plugin_id!r} claims module namespace {namespace!r}, "
                f"which belongs to pack {owner!r}"
            )
    return None


def environ() -> Mapping[str, str]:
    return os.environ
