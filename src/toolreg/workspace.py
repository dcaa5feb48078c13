"""The workspace jail: open files inside one directory, and nothing outside it.

The built-in file and terminal tools and any pack that touches files use this
module. The root is ``$TOOLREG_WORKSPACE`` when set, else the current
directory. It is read on every call rather than at import, so a host (or a
test) can point the tools somewhere else without re-importing them.

A path that is checked and then opened by name can be swapped in between (a
directory replaced by a symlink to ``/etc``), so nothing here opens a path by
name. Each component is opened relative to its parent's descriptor with
``O_NOFOLLOW``; a symlink is read and its target walked the same way under the
same rules, so a link may lead anywhere inside the root but never out of it.
``..`` steps back along the descriptors already held and stops at the root.
Only directories and regular files are opened; a FIFO, socket or device is
refused without waiting on it. Every opener returns an :class:`Opened` whose
descriptor the caller closes (``open(opened.fd, ...)`` takes it over).
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple, TypeVar

if TYPE_CHECKING:
    from pathlib import Path

__all__ = [
    "DIR_FLAGS",
    "FILE_FLAGS",
    "MAX_SYMLINKS",
    "WORKSPACE_ENV",
    "Opened",
    "WorkspaceError",
    "create_or_truncate",
    "kind_of",
    "open_directory",
    "open_file_or_directory",
    "open_regular_file",
    "supports_descriptor_paths",
    "workspace_root",
    "workspace_warning",
]

WORKSPACE_ENV = "TOOLREG_WORKSPACE"
MAX_SYMLINKS = 40  # what Linux allows in one path lookup

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_COMMON = _NOFOLLOW | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _COMMON
#: A FIFO opened with O_NONBLOCK does not wait for a writer, so fstat can refuse it.
FILE_FLAGS = os.O_RDONLY | _COMMON

T = TypeVar("T")


class WorkspaceError(ValueError):
    """A path the tools must not touch: outside the root, missing, or malformed."""


class Opened(NamedTuple):
    """An open descriptor inside the workspace; the caller closes ``fd``."""

    fd: int
    rel: str  # root-relative, '/'-separated, "." for the root itself
    st: os.stat_result
    created: bool = False


def supports_descriptor_paths() -> bool:
    """Whether this platform can open files relative to a directory descriptor (POSIX can)."""
    return bool(_NOFOLLOW) and os.open in os.supports_dir_fd and os.scandir in os.supports_fd


def workspace_root() -> Path:
    """The resolved workspace root (symlinks such as macOS's /tmp followed)."""
    from pathlib import Path  # with the first file a tool touches, not at registration

    raw = os.environ.get(WORKSPACE_ENV) or os.getcwd()
    root = Path(raw).expanduser().resolve()
    if not root.is_dir():
        raise WorkspaceError(f"workspace root {raw!r} (from ${WORKSPACE_ENV}) is not a directory")
    return root


def workspace_warning() -> str | None:
    """A warning when nothing set the root and it fell back to ``/`` or the home directory."""
    if os.environ.get(WORKSPACE_ENV):
        return None
    from pathlib import Path

    try:
        cwd = Path.cwd().resolve()
        home = Path.home().resolve()
    except (OSError, RuntimeError):
        return None
    if cwd != Path(cwd.anchor) and cwd != home:
        return None
    return (
        f"${WORKSPACE_ENV} is not set, so the file and terminal tools work in the current "
        f"directory, {str(cwd)!r}: every file under it is theirs to read and write. Set "
        f"{WORKSPACE_ENV} to the project directory the tools should see."
    )


def kind_of(mode: int) -> str:
    """A file type in words, for errors about things that are not regular files."""
    for test, name in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISLNK, "a symbolic link"),
    ):
        if test(mode):
            return name
    return "not a regular file"


# -- opening by descriptor --------------------------------------------------------------

#: Called with the directory holding the last component and its name (None when the
#: path ends at a directory: the root, "." or ".."). An OSError from it about a name
#: that turns out to be a symlink makes the walk follow the link and call it again.
Last = Callable[[int, "str | None", str], T]


def open_regular_file(path: str, *, writable: bool = False) -> Opened:
    """An existing regular file, for reading (or reading and writing)."""
    flags = (os.O_RDWR if writable else os.O_RDONLY) | _COMMON

    def last(dir_fd: int, name: str | None, rel: str) -> Opened:
        if name is None:
            raise WorkspaceError(f"{path} is a directory, not a file")
        _refuse_irregular(path, os.stat(name, dir_fd=dir_fd, follow_symlinks=False))
        return _opened(path, os.open(name, flags, dir_fd=dir_fd), rel)

    return _walk(path, last)


def open_directory(path: str) -> Opened:
    """An existing directory."""

    def last(dir_fd: int, name: str | None, rel: str) -> Opened:
        if name is None:
            fd = os.dup(dir_fd)
        else:
            st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
            if not stat.S_ISDIR(st.st_mode):
                _refuse_symlink(st)
                raise WorkspaceError(f"{path} is not a directory")
            fd = os.open(name, DIR_FLAGS, dir_fd=dir_fd)
        return Opened(fd, rel, os.fstat(fd))

    return _walk(path, last)


def open_file_or_directory(path: str) -> Opened:
    """An existing directory or regular file (never a FIFO, socket or device)."""

    def last(dir_fd: int, name: str | None, rel: str) -> Opened:
        if name is None:
            fd = os.dup(dir_fd)
            return Opened(fd, rel, os.fstat(fd))
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        if stat.S_ISDIR(st.st_mode):
            fd = os.open(name, DIR_FLAGS, dir_fd=dir_fd)
            return Opened(fd, rel, os.fstat(fd))
        _refuse_irregular(path, st)
        return _opened(path, os.open(name, FILE_FLAGS, dir_fd=dir_fd), rel)

    return _walk(path, last)


def create_or_truncate(path: str) -> Opened:
    """A regular file for writing, created (with missing parent directories) if need be.

    Not truncated yet: the caller does that once it holds the descriptor, so a
    FIFO or device that was swapped in is refused before anything happens to it.
    """
    create = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _COMMON

    def last(dir_fd: int, name: str | None, rel: str) -> Opened:
        if name is None:
            raise WorkspaceError(f"{path} is a directory; give a file path")
        try:
            return _opened(path, os.open(name, create, 0o666, dir_fd=dir_fd), rel, created=True)
        except FileExistsError:
            pass
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        if stat.S_ISDIR(st.st_mode):
            raise WorkspaceError(f"{path} is a directory; give a file path")
        _refuse_irregular(path, st)
        return _opened(path, os.open(name, os.O_WRONLY | _COMMON, dir_fd=dir_fd), rel)

    return _walk(path, last, make_parents=True)


def _refuse_symlink(st: os.stat_result) -> None:
    if stat.S_ISLNK(st.st_mode):  # the walk catches this, reads the link and follows it
        raise OSError(getattr(os, "ELOOP", 40), "is a symbolic link")


def _refuse_irregular(path: str, st: os.stat_result) -> None:
    _refuse_symlink(st)
    if stat.S_ISDIR(st.st_mode):
        raise WorkspaceError(f"{path} is a directory, not a file")
    if not stat.S_ISREG(st.st_mode):
        raise WorkspaceError(f"{path} is {kind_of(st.st_mode)}; only regular files are used")


def _opened(path: str, fd: int, rel: str, *, created: bool = False) -> Opened:
    """Check, on the descriptor itself, that what was opened is a regular file."""
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise WorkspaceError(f"{path} is {kind_of(st.st_mode)}; only regular files are used")
    except BaseException:
        os.close(fd)
        raise
    return Opened(fd, rel, st, created)


def _components(path: str) -> tuple[bool, list[str]]:
    """(absolute?, components) of a model-supplied path, or WorkspaceError."""
    if not isinstance(path, str) or not path.strip():
        raise WorkspaceError("path must be a non-empty string")
    if "\x00" in path:
        raise WorkspaceError(f"path {path!r} contains a NUL byte")
    if path.startswith("~"):
        # Expanding "~" means "~/x" is refused as outside the workspace instead of
        # silently creating a directory literally named "~".
        expanded = os.path.expanduser(path)
        if expanded == path:
            user = path[1:].split("/", 1)[0]
            raise WorkspaceError(f"path {path!r}: cannot expand '~{user}' (no such user)")
        path = expanded
    return path.startswith("/"), [p for p in path.split("/") if p and p != "."]


def _walk(path: str, last: Last[T], *, make_parents: bool = False) -> T:
    if not supports_descriptor_paths():
        raise WorkspaceError("the file tools need POSIX descriptor-relative file access")
    absolute, parts = _components(path)
    raw_root = os.environ.get(WORKSPACE_ENV) or os.getcwd()
    try:
        root_fd = os.open(os.path.expanduser(raw_root), DIR_FLAGS & ~_NOFOLLOW)
    except OSError:
        raise WorkspaceError(
            f"workspace root {raw_root!r} (from ${WORKSPACE_ENV}) is not a directory"
        ) from None
    walk = _Walk(path, root_fd)
    try:
        if absolute:
            walk.restart_at_slash()
        return walk.run(deque(parts), last, make_parents)
    finally:
        walk.close()


class _Walk:
    """The chain of directory descriptors from the starting point to where the walk is.

    ``root_at`` is the index of the workspace root in the chain, or None while an
    absolute path has not reached it yet: nothing is opened there but directories,
    and no walk may end there.
    """

    def __init__(self, path: str, root_fd: int) -> None:
        self.path = path
        self.root_fd = root_fd
        self.root_id: tuple[int, int] | None = None
        self.chain = [root_fd]
        self.names: list[str] = [""]
        self.root_at: int | None = 0
        self.turns = 0

    def close(self) -> None:
        for fd in self.chain:
            if fd != self.root_fd:
                os.close(fd)
        os.close(self.root_fd)

    def outside(self) -> WorkspaceError:
        return WorkspaceError(
            f"path {self.path!r} is outside the workspace root {str(workspace_root())!r}"
        )

    def rel(self, name: str | None) -> str:
        assert self.root_at is not None
        parts = self.names[self.root_at + 1 :] + ([name] if name else [])
        return "/".join(parts) or "."

    def restart_at_slash(self) -> None:
        if self.root_id is None:
            st = os.fstat(self.root_fd)
            self.root_id = (st.st_dev, st.st_ino)
        for fd in self.chain:
            if fd != self.root_fd:
                os.close(fd)
        self.chain, self.names, self.root_at = [], [], None
        self._push(os.open("/", DIR_FLAGS), "")

    def _push(self, fd: int, name: str) -> None:
        self.chain.append(fd)
        self.names.append(name)
        if self.root_at is None:
            assert self.root_id is not None
            st = os.fstat(fd)
            if (st.st_dev, st.st_ino) == self.root_id:
                self.root_at = len(self.chain) - 1

    def _pop(self) -> None:
        fd = self.chain.pop()
        self.names.pop()
        if fd != self.root_fd:
            os.close(fd)

    def _up(self) -> None:
        if self.root_at is not None and len(self.chain) - 1 == self.root_at:
            raise self.outside()
        if len(self.chain) > 1:
            self._pop()  # "/.." is "/"

    def _follow(self, name: str, error: OSError, pending: deque[str]) -> None:
        """Queue the target of symlink ``name``, or re-raise ``error`` if it is not one."""
        try:
            target = os.readlink(name, dir_fd=self.chain[-1])
        except OSError:
            raise error from None
        self._count_turn("has too many levels of symbolic links (a loop?)")
        if target.startswith("/"):
            self.restart_at_slash()
        pending.extendleft(reversed([p for p in target.split("/") if p and p != "."]))

    def _count_turn(self, problem: str) -> None:
        """Bound the walk's extra turns (links followed, directories made)."""
        self.turns += 1
        if self.turns > MAX_SYMLINKS:
            raise WorkspaceError(f"path {self.path!r} {problem}")

    def run(self, pending: deque[str], last: Last[T], make_parents: bool) -> T:
        try:
            return self._run(pending, last, make_parents)
        except WorkspaceError:
            raise
        except OSError as exc:
            if self.root_at is None:
                raise self.outside() from None
            if isinstance(exc, (FileNotFoundError, NotADirectoryError)):
                raise WorkspaceError(f"path {self.path!r} does not exist") from None
            raise WorkspaceError(f"cannot open {self.path!r}: {exc.strerror}") from None

    def _run(self, pending: deque[str], last: Last[T], make_parents: bool) -> T:
        while True:
            if not pending:  # the path ends at the directory the walk stands in
                if self.root_at is None:
                    raise self.outside()
                return last(self.chain[-1], None, self.rel(None))
            name = pending.popleft()
            if name == "..":
                self._up()
                continue
            if not pending and self.root_at is not None:
                try:
                    return last(self.chain[-1], name, self.rel(name))
                except WorkspaceError:
                    raise
                except OSError as exc:
                    self._follow(name, exc, pending)
                    continue
            try:
                fd = os.open(name, DIR_FLAGS, dir_fd=self.chain[-1])
            except FileNotFoundError:
                if not (make_parents and self.root_at is not None):
                    raise
                self._count_turn("kept changing while its directories were made")
                # FileExistsError: made meanwhile by someone else; open it on the next turn.
                with contextlib.suppress(FileExistsError):
                    os.mkdir(name, dir_fd=self.chain[-1])
                pending.appendleft(name)
                continue
            except OSError as exc:
                self._follow(name, exc, pending)
                continue
            self._push(fd, name)
