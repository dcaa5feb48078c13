"""``toolreg install`` and ``toolreg uninstall``: pip, for the interpreter toolreg runs in.

A pack installed with another interpreter's pip is invisible to this toolreg;
running ``sys.executable -m pip`` puts it where this toolreg looks. pip's own
output goes straight to the terminal.
"""

from __future__ import annotations

import argparse
import sys

from ._errors import EXIT_FAILURE, EXIT_OK, EXIT_USAGE, CliError

# Switches passed to pip as they are: (flags, dest, help).
_INSTALL_SWITCHES: tuple[tuple[tuple[str, ...], str, str], ...] = (
    (("-U", "--upgrade"), "upgrade", "upgrade the packs (and what they need) to the newest"),
    (("--no-deps",), "no_deps", "do not install the packs' dependencies"),
    (("--pre",), "pre", "allow pre-release and development versions"),
    (("--force-reinstall",), "force_reinstall", "reinstall even when up to date"),
    (("--no-cache-dir",), "no_cache_dir", "do not use pip's cache"),
    (("--no-index",), "no_index", "use no package index: only local files and --find-links"),
)


def add_install_parser(sub: argparse._SubParsersAction, parent: argparse.ArgumentParser) -> None:
    """The ``install`` subcommand."""
    p = sub.add_parser(
        "install",
        parents=[parent],
        help="install tool packs with pip, into the environment toolreg runs in",
        description=f"Run '{sys.executable} -m pip install' for the packs named.",
    )
    p.add_argument(
        "packages", metavar="NAME", nargs="*", help="a pack's name, requirement, wheel or folder"
    )
    p.add_argument(
        "-e",
        "--editable",
        metavar="PATH",
        action="append",
        default=[],
        help="install the project at PATH in editable mode (repeatable)",
    )
    for flags, dest, text in _INSTALL_SWITCHES:
        p.add_argument(*flags, dest=dest, action="store_true", help=text)
    p.add_argument(
        "-f",
        "--find-links",
        metavar="URL",
        action="append",
        default=[],
        help="look for archives at this URL or in this folder (repeatable)",
    )


def add_uninstall_parser(sub: argparse._SubParsersAction, parent: argparse.ArgumentParser) -> None:
    """The ``uninstall`` subcommand."""
    p = sub.add_parser(
        "uninstall",
        parents=[parent],
        help="uninstall tool packs with pip, without asking",
        description=f"Run '{sys.executable} -m pip uninstall --yes' for the packs named.",
    )
    p.add_argument("packages", metavar="NAME", nargs="+", help="a pack's distribution name")


def pip_install_argv(args: argparse.Namespace) -> list[str]:
    """The pip command ``toolreg install`` runs for ``args``."""
    if not args.packages and not args.editable:
        raise CliError("install needs at least one NAME or -e PATH", EXIT_USAGE)
    argv = [sys.executable, "-m", "pip", "install"]
    argv += [flags[-1] for flags, dest, _ in _INSTALL_SWITCHES if getattr(args, dest)]
    for link in args.find_links:
        argv += ["--find-links", link]
    for path in args.editable:
        argv += ["--editable", path]
    return argv + list(args.packages)


def pip_uninstall_argv(args: argparse.Namespace) -> list[str]:
    """The pip command ``toolreg uninstall`` runs; toolreg itself is refused, nothing is run.

    Each NAME is read as a requirement (``packaging``), so ``toolreg-core>=0``,
    ``toolreg_core[mcp]`` and every other spelling of toolreg's own name are
    refused, and pip gets only the distribution names, after ``--``: nothing
    typed here reaches pip as an option (``--index-url``, ``-r FILE``).
    """
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.utils import canonicalize_name

    from .._discovery.dist_info import DISTRIBUTION

    names: list[str] = []
    for text in args.packages:
        try:
            requirement = None if text.lstrip().startswith("-") else Requirement(text)
        except InvalidRequirement:
            requirement = None
        if requirement is None or requirement.url is not None:
            raise CliError(
                f"{text!r} is not a distribution name: uninstall takes the names of "
                "installed packs (as 'toolreg plugins' shows them), no pip options",
                EXIT_USAGE,
            )
        if canonicalize_name(requirement.name) == DISTRIBUTION:
            raise CliError(
                f"refusing to uninstall {text!r}: it is toolreg itself, which runs this "
                f"command. To remove toolreg, run: {sys.executable} -m pip uninstall "
                f"{DISTRIBUTION}",
                EXIT_USAGE,
            )
        names.append(requirement.name)
    return [sys.executable, "-m", "pip", "uninstall", "--yes", "--", *names]


def cmd_install(args: argparse.Namespace) -> int:
    """Install with pip, then say which tool packs appeared or changed."""
    argv = pip_install_argv(args)
    before = _installed_packs()
    _pip(argv)
    after = _installed_packs()
    changed = {pid: version for pid, version in after.items() if before.get(pid) != version}
    for pid, version in sorted(changed.items()):
        print(f"toolreg: tool pack {pid} {version} installed")
    if not changed:
        print("toolreg: no tool pack was added or changed (entry-point group toolreg.tools)")
    return EXIT_OK


def cmd_uninstall(args: argparse.Namespace) -> int:
    _pip(pip_uninstall_argv(args))
    return EXIT_OK


def _pip(argv: list[str]) -> None:
    import subprocess  # only install and uninstall start a process

    sys.stdout.flush()  # pip writes to the same terminal; keep the order
    done = subprocess.run(argv, check=False)
    if done.returncode != 0:
        raise CliError(f"pip failed (exit {done.returncode}): {' '.join(argv[1:])}", EXIT_FAILURE)


def _installed_packs() -> dict[str, str]:
    from .._discovery.entrypoints import find_packs

    return {pack.plugin_id: pack.version for pack in find_packs()}
