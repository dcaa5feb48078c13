"""The policy gate a plugin passes before any of its code runs.

Is it enabled, does it fit this toolreg and the operator's version pin, may it claim its
name and module namespace? Each check reads metadata only; nothing here imports the plugin.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, NamedTuple

from .._core.ownership import reserved_label
from .config import Config
from .config import plugin_id as canonical_id

if TYPE_CHECKING:
    from packaging.specifiers import SpecifierSet

PLUGINS_ENV = "TOOLREG_PLUGINS"
DISABLE_AUTOLOAD_ENV = "TOOLREG_DISABLE_PLUGIN_AUTOLOAD"

#: Module namespaces no pack may claim (``builtin_tools`` is the built-ins' folder in
#: a checkout, importable wherever the checkout's root is on sys.path).
RESERVED_PACK_NAMESPACES = frozenset({"toolreg", "builtin_tools", "toolreg_local"})


# A NamedTuple, not a frozen dataclass: this module is imported with the first pack.
class NotAdmitted(NamedTuple):
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
        verdict = _check_requirement(requires_toolreg, toolreg_version)
        if verdict is not None:
            return verdict
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


# A requirement that is a name and version specifiers, nothing else: the form a
# pack's requirement on toolreg has. Extras, URLs, markers and parentheses are not.
_PLAIN_REQUIREMENT = re.compile(
    r"[ \t]*[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?"
    r"([\t\x20-\x27\x2a-\x3a\x3c-\x3f\x41-\x5a\x5c\x5e-\x7e]*)"  # printable, not ()[];@
)


# Packs share a handful of requirement strings: each is read once per process.
@functools.lru_cache(maxsize=256)
def _check_requirement(requires_toolreg: str, toolreg_version: str) -> NotAdmitted | None:
    """Whether ``toolreg_version`` satisfies the pack's requirement on toolreg.

    A plain requirement is read by ``SpecifierSet`` alone, as packaging's own
    requirement parser reads that part: importing the whole requirement
    grammar (markers, extras, URLs) costs more than loading a dozen packs.
    Anything else goes to ``Requirement``.
    """
    plain = _PLAIN_REQUIREMENT.fullmatch(requires_toolreg)
    specifiers = _specifier_set(plain.group(1)) if plain is not None else None
    if specifiers is None:
        return _check_full_requirement(requires_toolreg, toolreg_version)
    return _check_specifiers(specifiers, toolreg_version)


def _specifier_set(text: str) -> SpecifierSet | None:
    """``text`` as a SpecifierSet, or None where packaging's requirement grammar might differ."""
    from packaging.specifiers import SpecifierSet

    try:
        specifiers = SpecifierSet(text)
    except ValueError:  # InvalidSpecifier: Requirement says what is wrong with it
        return None
    # SpecifierSet skips empty items (">=1,,<2", a trailing comma); the grammar may not.
    items = text.count(",") + 1 if text.strip() else 0
    return specifiers if len(specifiers) == items else None


def _check_full_requirement(requires_toolreg: str, toolreg_version: str) -> NotAdmitted | None:
    try:
        from packaging.requirements import Requirement

        requirement = Requirement(requires_toolreg)
    except ValueError as exc:  # packaging's InvalidRequirement
        return NotAdmitted("incompatible", f"unreadable requirement {requires_toolreg!r}: {exc}")
    if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
        return None
    return _check_specifiers(requirement.specifier, toolreg_version)


def _check_specifiers(specifiers: SpecifierSet, toolreg_version: str) -> NotAdmitted | None:
    if specifiers.contains(toolreg_version, prereleases=True):
        return None
    return NotAdmitted(
        "incompatible",
        f"requires toolreg{specifiers}, but toolreg {toolreg_version} is installed",
    )


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


def check_entry_modules(
    plugin_id: str,
    distribution: str,
    located: Iterable[tuple[str, str, Iterable[tuple[str, str, str]]]],
    files: frozenset[str] | None,
    editable: bool = False,
    realpath: Callable[[str], str] = os.path.realpath,
) -> PermissionError | None:
    """A pack's entry points may name only modules its own distribution installed.

    ``located``: per entry point, its name, the module it names, and where the
    import system finds that module and each package above it (``(name,
    kind, file)``, see ``_loaders.pack_modules.locate_module``); importing it
    runs each of those files, so each must be one of ``files``, the real paths
    its ``RECORD`` lists. ``None`` where the RECORD cannot say: for a
    distribution without one, the standard library is refused; for an
    ``editable`` install, whose code is its checkout's, site-packages too.
    Nothing is imported to decide.
    """
    for entry_point, module, chain in located:
        for name, kind, file in chain:
            if kind == "namespace" or kind == "missing":
                continue  # a folder runs no code; a missing module fails the import
            if kind == "file":
                real = realpath(file)
                if files is not None and real in files:
                    continue
                if files is None and not _in_library(real, sites=editable):
                    continue
                where = f"its code, {real}, is not"
            else:
                where = f"it is {file or 'not a file'}, not"
            return PermissionError(
                f"pack {plugin_id!r}: entry point {entry_point!r} names module {module!r}, "
                f"and importing it runs module {name!r}, but {where} among the files "
                f"distribution {distribution!r} installed (its RECORD); a pack's entry "
                "points name its own modules, never the standard library's or another "
                "distribution's"
            )
    return None


@functools.lru_cache(maxsize=1)
def _library_folders() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The standard library's folders, and the site folders that may lie inside them."""
    import site
    import sysconfig

    paths = sysconfig.get_paths()
    stdlib = {os.path.realpath(paths[k]) for k in ("stdlib", "platstdlib") if k in paths}
    sites = {os.path.realpath(paths[k]) for k in ("purelib", "platlib") if k in paths}
    sites.update(map(os.path.realpath, getattr(site, "getsitepackages", list)()))
    return tuple(p + os.sep for p in stdlib), tuple(p + os.sep for p in sites)


def _in_library(real: str, sites: bool) -> bool:
    """Whether ``real`` is the standard library's (or, with ``sites``, site-packages')."""
    stdlib, site_folders = _library_folders()
    if real.startswith(site_folders):
        return sites
    return real.startswith(stdlib)


def environ() -> Mapping[str, str]:
    return os.environ
