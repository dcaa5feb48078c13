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
