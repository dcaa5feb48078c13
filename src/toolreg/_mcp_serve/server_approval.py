"""How ``toolreg serve`` answers an ``ask`` rule: it asks the calling client's user.

A call that an ``ask`` rule stops is put to the client that made it, as an MCP
form elicitation (``elicitation/create``): the tool, its arguments (bounded and
escaped: they are the model's words) and the rule. The user's accept with
``approve`` true allows the call; anything else (accept without it, decline,
cancel, no answer within ``ELICIT_TIMEOUT`` seconds, an error) denies it, with
the reason. A client that cannot be asked gets no approver, so the call is
denied with ``approval_required``: one that did not declare the elicitation
capability, a stateless HTTP request, and a 2026-07-28 request (that revision
has no server-to-client requests).
"""

from __future__ import annotations

import json
import logging
from typing import Any

import anyio
import anyio.from_thread
import anyio.lowlevel
import mcp_types as types
from mcp.server.context import ServerRequestContext

from .._contract.escaping import escape, shorten
from .._contract.results import describe_exception
from . import DEFAULT_APPROVAL_TIMEOUT

logger = logging.getLogger("toolreg.serve")

#: Seconds the server waits for the user's answer before it denies the call.
ELICIT_TIMEOUT = DEFAULT_APPROVAL_TIMEOUT
#: A string value (or key) of the arguments longer than this is cut in the message.
MAX_VALUE_CHARS = 200
#: The arguments' text in the message is cut after this many characters.
MAX_ARGUMENTS_CHARS = 1000
#: The first protocol revision without server-to-client requests.
_NO_REQUESTS_ERA = "2026-07-28"

#: What the user fills in: one boolean.
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "approve": {
            "type": "boolean",
            "title": "Approve",
            "description": "Run this tool call?",
            "default": False,
        }
    },
    "required": ["approve"],
}

_ELICITATION = types.ClientCapabilities(elicitation=types.ElicitationCapability())


def can_ask(ctx: ServerRequestContext[Any], stateless: bool) -> bool:
    """Whether the client of this request can be asked: it declared elicitation and
    the request has a way back (a handshake-era connection, not stateless HTTP)."""
    if stateless or ctx.protocol_version >= _NO_REQUESTS_ERA:
        return False
    try:
        return ctx.session.check_client_capability(_ELICITATION)
    except Exception:  # no capabilities recorded, or no session to ask
        return False


def show_arguments(arguments: Any) -> str:
    """The arguments as one line of JSON: values cut, control characters escaped, bounded."""
    cut = [0]
    try:
        text = json.dumps(
            shorten(arguments, MAX_VALUE_CHARS, cut), ensure_ascii=False, default=repr
        )
    except (TypeError, ValueError, RecursionError):
        text = repr(arguments)
    text = escape(text, keep_newlines=False)
    if len(text) > MAX_ARGUMENTS_CHARS:
        text = f"{text[:MAX_ARGUMENTS_CHARS]}… ({len(text) - MAX_ARGUMENTS_CHARS} more chars)"
    elif cut[0]:
        text += f" ({cut[0]} long value(s) cut)"
    return text


def message_for(name: str, arguments: Any, rule: str | None) -> str:
    """What the client shows its user."""
    asked = (
        f"the operator's rule {escape(repr(rule), keep_newlines=False)}"
        if rule is not None
        else 'the operator\'s default ("ask")'
    )
    return (
        f"Tool {escape(name, keep_newlines=False)} needs your approval ({asked} asks).\n"
        f"Arguments: {show_arguments(arguments)}\n"
        "Approve to run it."
    )


def read_result(result: types.ElicitResult) -> Any:
    """An approver's answer from the client's: only an accept with ``approve`` true allows."""
    if result.action == "accept":
        if (result.content or {}).get("approve") is True:
            return "allow"
        return ("deny", "the user did not approve the call")
    if result.action == "decline":
        return ("deny", "the user declined the call")
    return ("deny", "the user cancelled the approval")


class ElicitingApprover:
    """A per-call approver that asks the client of ``ctx``; called on the call's worker thread.

    ``registry.dispatch`` runs in a thread of the calls' pool (``server_calls``), so
    the approver is sync: it hands the question to the event loop and waits.
    """

    def __init__(self, ctx: ServerRequestContext[Any], timeout: float = ELICIT_TIMEOUT) -> None:
        self.ctx = ctx
        self.timeout = timeout
        self.token = anyio.lowlevel.current_token()  # made on the event loop

    def __call__(self, name: str, arguments: dict[str, Any], rule: str | None) -> Any:
        try:
            return anyio.from_thread.run(self.ask, name, arguments, rule, token=self.token)
        except Exception as exc:  # the loop has closed
            return ("deny", f"the client could not be asked ({describe_exception(exc)})")

    async def ask(self, name: str, arguments: dict[str, Any], rule: str | None) -> Any:
        message = message_for(name, arguments, rule)
        try:
            with anyio.fail_after(self.timeout):
                result = await self.ctx.session.elicit_form(
                    message, SCHEMA, related_request_id=self.ctx.request_id
                )
        except TimeoutError:
            logger.info("no approval for %s within %g s: denied", name, self.timeout)
            return ("deny", f"no answer from the user within {self.timeout:g} s")
        except Exception as exc:
            logger.info("the client could not be asked to approve %s: %s", name, exc)
            return ("deny", f"the client could not be asked ({describe_exception(exc)})")
        return read_result(result)
