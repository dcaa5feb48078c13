"""Typed access to parsed TOML, and the error that names file, key and expectation."""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from pathlib import Path

T = TypeVar("T")


class ConfigError(ValueError):
    """A config file that cannot be used, with where and why."""

    def __init__(self, source: Path | None, key: str, problem: str) -> None:
        self.source = source
        self.key = key
        self.problem = problem
        where = str(source) if source is not None else "<config>"
        super().__init__(f"{where}: {key}: {problem}" if key else f"{where}: {problem}")


def did_you_mean(name: str, known: Collection[str]) -> str:
    """``"; did you mean 'x'?"`` naming the closest of ``known``, or ``""``."""
    import difflib  # only a name that matches nothing needs it

    close = difflib.get_close_matches(name, list(known), n=1, cutoff=0.75)
    return f"; did you mean {close[0]!r}?" if close else ""


def kind_of(value: Any) -> str:
    names = {bool: "a boolean", int: "an integer", float: "a number", str: "a string"}
    names.update({list: "an array", dict: "a table"})
    return names.get(type(value), type(value).__name__)


class Reader:
    """Typed access to parsed TOML that reports the dotted key on failure."""

    def __init__(self, source: Path | None) -> None:
        self.source = source

    def keys(self, data: dict[str, Any], where: str, allowed: set[str]) -> None:
        for key in data:
            if key not in allowed:
                dotted = f"{where}.{key}" if where else key
                expected = ", ".join(sorted(allowed))
                raise ConfigError(
                    self.source,
                    dotted,
                    f"unknown key{did_you_mean(key, allowed)}; expected one of: {expected}",
                )

    def table(self, data: dict[str, Any], dotted: str) -> dict[str, Any]:
        value = data.get(dotted.rsplit(".", 1)[-1], {})
        if not isinstance(value, dict):
            raise ConfigError(self.source, dotted, f"expected a table, got {kind_of(value)}")
        return value

    def typed(
        self, data: dict[str, Any], where: str, key: str, kind: type[T], expected: str
    ) -> T | None:
        value = data.get(key)
        if value is None:
            return None
        if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
            raise ConfigError(
                self.source, f"{where}.{key}", f"expected {expected}, got {kind_of(value)}"
            )
        return value

    def strings(self, data: dict[str, Any], where: str, key: str) -> tuple[str, ...] | None:
        value = data.get(key)
        if value is None:
            return None
        if not isinstance(value, list):
            raise ConfigError(
                self.source, f"{where}.{key}", f"expected an array of strings, got {kind_of(value)}"
            )
        for index, item in enumerate(value):
            if not isinstance(item, str) or not item:
                raise ConfigError(
                    self.source,
                    f"{where}.{key}[{index}]",
                    f"expected a non-empty string, got {kind_of(item)}",
                )
        return tuple(value)

    def string_table(self, data: dict[str, Any], where: str, key: str) -> dict[str, str]:
        table = self.table(data, f"{where}.{key}")
        for name, value in table.items():
            if not isinstance(value, str):
                raise ConfigError(
                    self.source, f"{where}.{key}.{name}", f"expected a string, got {kind_of(value)}"
                )
        return dict(table)

    def seconds(self, data: dict[str, Any], where: str, key: str, default: T) -> float | T:
        value = data.get(key)
        if value is None:
            return default
        import math  # a C extension to load: only a config file that is read needs it

        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not math.isfinite(value)
            or value <= 0
        ):
            raise ConfigError(
                self.source,
                f"{where}.{key}",
                f"expected a number of seconds > 0, got {value!r}",
            )
        return float(value)
