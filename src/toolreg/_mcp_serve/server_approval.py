"""How ``toolreg serve`` answers an ``ask`` rule: it asks the calling client's user.

A call that an ``ask`` rule stops is put to the client that made it, as an MCP
form elicitation: the tool, its arguments (bounded and escaped: they are the
model's words) and the rule. The user's accept with ``approve`` true allows the
call; anything else (accept without it, decline, cancel, no answer within
``ELICIT_TIMEOUT`` seconds, an error) denies it, with the reason.

A handshake-era client is sent ``elicitation/create`` mid-call
(``ElicitingApprover``). A 2026-07-28 client (no server-to-client requests)
gets an ``InputRequiredResult`` instead (``RoundTrips``): the question and a
``requestState`` that the SDK's ``RequestStateBoundary`` seals (AES-GCM under a
key made by this process) and binds to the tool, a digest of its arguments
and an expiry; ours adds the rule, the same digest and a nonce. The client
retries the call with the answer; that retry is judged by dispatch again, with
the answer as its approver, and a state answers one call only (its nonce is
spent). A state that fails the seal, another call's, an expired one or one
from another process is refused (by the SDK, with -32602) and the call never
runs; an answer without a state is asked again.

A client that cannot be asked gets no approver, so the call is denied with
``approval_required``: one that did not declare the elicitation capability,
or a handshake-era request over stateless HTTP (no way back for the question).
"""

from __future__ import annotations

import hashlib
import json
import logging
import secrets
import threading
import time
from typing import Any

import anyio
import anyio.from_thread
import anyio.lowlevel
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity

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
#: The key of the approval question among an ``InputRequiredResult``'s input requests.
INPUT_KEY = "toolreg/approval"
#: Who a sealed state is for: a state another service minted under a shared key is refused.
AUDIENCE = "toolreg serve"

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
    """Whether the client of this request can be sent ``elicitation/create``: it declared
    elicitation and the request has a way back (a handshake-era connection, not stateless HTTP)."""
    if stateless or ctx.protocol_version >= _NO_REQUESTS_ERA:
        return False
    try:
        return ctx.session.check_client_capability(_ELICITATION)
    except Exception:  # no capabilities recorded, or no session to ask
        return False


def can_ask_in_rounds(ctx: ServerRequestContext[Any]) -> bool:
    """Whether this is a 2026-07-28 request whose client declared form elicitation
    (a bare ``elicitation: {}`` counts as form, as the SDK counts it)."""
    if ctx.protocol_version < _NO_REQUESTS_ERA:
        return False
    try:
        capabilities = ctx.session.client_capabilities
    except Exception:  # no session to read them from
        return False
    elicitation = capabilities.elicitation if capabilities is not None else None
    return elicitation is not None and (elicitation.form is not None or elicitation.url is None)


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


def digest_of(arguments: Any) -> str:
    """A digest of the arguments as the approver sees them, the same for equal JSON."""
    text = json.dumps(arguments, sort_keys=True, separators=(",", ":"), default=repr)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class RoundTrips:
    """Approval by ``InputRequiredResult`` for 2026-07-28 clients, for one server process.

    ``install`` puts the SDK's ``RequestStateBoundary`` on the server: it seals
    every outgoing state under a key this process made (``ephemeral``), with an
    expiry of ``timeout`` seconds, and refuses an inbound one that is not
    sealed by it, has expired, or names another tool or other arguments. The
    nonces of states already answered are kept until they expire, so a state
    and its answer approve one call.
    """

    def __init__(self, timeout: float = ELICIT_TIMEOUT) -> None:
        self.timeout = timeout
        self.boundary = RequestStateBoundary(
            RequestStateSecurity.ephemeral(ttl=timeout), default_audience=AUDIENCE
        )
        self._spent: dict[str, float] = {}  # nonce: when its state expires
        self._lock = threading.Lock()

    def install(self, server: Server[Any]) -> None:
        server.middleware.append(self.boundary)

    def approver(self, params: types.CallToolRequestParams) -> RoundTripApprover:
        """The approver of one ``tools/call`` round (its state already unsealed by the boundary)."""
        return RoundTripApprover(self, params.request_state, params.input_responses)

    def spend(self, nonce: str, expires: float) -> bool:
        """Mark a state's nonce used; False if it was already."""
        now = time.time()
        with self._lock:
            if nonce in self._spent:
                return False
            for old in [n for n, until in self._spent.items() if until <= now]:
                del self._spent[old]
            self._spent[nonce] = expires
            return True


class RoundTripApprover:
    """The approver of one 2026-07-28 ``tools/call`` round; called on the call's worker thread.

    With no answer for this very call it records the question and denies (the
    call does not run); ``_call_tool`` then answers with ``input_required()``
    instead of the denial. With one, the answer decides, once.
    """

    def __init__(self, trips: RoundTrips, state: str | None, responses: Any) -> None:
        self.trips = trips
        self.state = state
        self.responses = responses or {}
        #: (name, arguments, rule) of the call to ask about (None: nothing to ask).
        self.question: tuple[str, dict[str, Any], str | None] | None = None

    def __call__(self, name: str, arguments: dict[str, Any], rule: str | None) -> Any:
        answer = self._answer(name, arguments, rule)
        if answer is None:
            self.question = (name, arguments, rule)
            return ("deny", "the client's user is asked first; the client retries with the answer")
        return answer

    def _answer(self, name: str, arguments: dict[str, Any], rule: str | None) -> Any:
        """The answer this round carries for this call, or None to ask."""
        if self.state is None:
            return None  # an answer without a state answers nothing
        try:
            state = json.loads(self.state)
            asked = (state["tool"], state["args"], state["rule"])
            nonce, expires = str(state["nonce"]), float(state["exp"])
        except (ValueError, TypeError, KeyError):
            return ("deny", "the request state is not one this server made")
        if asked[:2] != (name, digest_of(arguments)):
            return ("deny", "the approval was given for another call")
        if asked[2] != rule:
            return None  # the rules changed since: the user approved another question
        if not time.time() < expires:
            return ("deny", f"no answer from the user within {self.trips.timeout:g} s")
        response = self.responses.get(INPUT_KEY)
        if response is None:
            return None
        if not isinstance(response, types.ElicitResult):
            return ("deny", "the client's answer is not an elicitation result")
        if not self.trips.spend(nonce, expires):
            return ("deny", "this approval was already used")
        return read_result(response)

    def input_required(self) -> types.InputRequiredResult:
        """The question as an ``InputRequiredResult``; the boundary seals its state."""
        assert self.question is not None
        name, arguments, rule = self.question
        state = {
            "tool": name,
            "args": digest_of(arguments),
            "rule": rule,
            "nonce": secrets.token_urlsafe(16),
            "exp": time.time() + self.trips.timeout,
        }
        request = types.ElicitRequest(
            params=types.ElicitRequestFormParams(
                message=message_for(name, arguments, rule), requested_schema=SCHEMA
            )
        )
        return types.InputRequiredResult(
            input_requests={INPUT_KEY: request}, request_state=json.dumps(state)
        )
