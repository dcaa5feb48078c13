from collections.abc import Callable
from typing import Any

#: Bumped on any change of the functions, the constructors' arguments or the hot tuple's layout.
ABI: int

def plain_registration(name: Any, toolset: Any, schema: Any, handler: Any, /) -> bool:
    """True only when toolreg's ``check_registration`` certainly accepts these; False is
    "not certain". Reads exact types only and runs none of the arguments' code."""

class HotDispatch:
    def __new__(
        cls,
        hot: dict[str, tuple[Any, Any, Any, Any, Checks | None]],
        slow: Callable[..., Any],
        failed: Callable[[str, BaseException], Any],
        finish: Callable[[Any, Any], Any],
        internal: Callable[[Any, BaseException], Any],
    ) -> HotDispatch: ...
    def __call__(self, name: Any, args: Any, /, **kwargs: Any) -> Any: ...
    @property
    def slow(self) -> Callable[..., Any]: ...

class Checks:
    """A tool's argument checks, compiled from its check program."""

    def __new__(cls, program: tuple[bool, tuple[tuple[Any, ...], ...]]) -> Checks: ...
    def accepts(self, arguments: Any, /) -> bool: ...

class EntryMaker:
    """A plain registration's entry, made in C (entry.c)."""

    def __new__(cls, entry_type: type, fields: tuple[str, ...], /) -> EntryMaker: ...
    def __call__(self, *register_arguments: Any) -> Any: ...
    def from_spec(self, spec: Any, /) -> Any: ...

class HostReload:
    """ToolTable.add for a plain entry, with a host reloading its own tool written in C."""

    def __new__(
        cls,
        add: Callable[[Any, bool, Any], Any],
        maker: EntryMaker,
        table: Any,
        state: Any,
        callers: Any,
        book: Any,
        log: Any,
        lock: Any,
        host: Any,
        now: Callable[[], float],
        options: Any,
        /,
    ) -> HostReload: ...
    def __call__(self, entry: Any, override: bool, /) -> Any: ...
