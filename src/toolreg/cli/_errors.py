"""Exit codes and the one error type commands raise to stop with a message."""

from __future__ import annotations

#: The command did what was asked (``call``: the tool did not return a tool_error).
EXIT_OK = 0
#: Something named does not exist, the tool returned a tool_error, or an internal error.
EXIT_FAILURE = 1
#: The command line or its JSON arguments are malformed (argparse uses 2 as well).
EXIT_USAGE = 2


class CliError(Exception):
    """Stops a command; ``main`` prints ``toolreg: error: <message>`` and exits ``code``."""

    def __init__(self, message: str, code: int = EXIT_FAILURE) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
