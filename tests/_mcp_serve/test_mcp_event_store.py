"""Resumable HTTP streams: a client drops a call's stream and resumes it with Last-Event-ID.

The streams are read by hand (``serve_harness.RawSession``), so the test
decides exactly which events a client saw before its connection broke. The
``steps`` tool logs three warnings, waits for the test's release, logs three
more and returns.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from serve_harness import HttpServer, RawSession, ServeSetup, SseEvent, read_events

pytest.importorskip("mcp")

import anyio  # noqa: E402  (after the importorskip: anyio comes with mcp)
import mcp_types as types  # noqa: E402
from mcp.server.streamable_http import EventMessage  # noqa: E402

from toolreg._mcp_serve.event_store import RETRY_MS, MemoryEventStore  # noqa: E402


def logged(event: SseEvent) -> str | None:
    """The text of a log notification, or None for any other event."""
    message = event.message
    return message["params"]["data"] if message.get("method") == "notifications/message" else None


def take(events: Any, count: int) -> list[SseEvent]:
    return [next(events) for _ in range(count)]


def answer_text(event: SseEvent) -> str:
    return event.message["result"]["content"][0]["text"]


def until_answer(events: Any) -> list[SseEvent]:
    """Events up to and with the response (the stream stays open for a live tail after it)."""
    seen = []
    for event in events:
        seen.append(event)
        if "result" in event.message or "error" in event.message:
            return seen
    raise AssertionError(f"the stream ended without an answer after {len(seen)} events")


def test_a_dropped_call_stream_resumes_with_the_events_it_missed(
    serve_setup: ServeSetup, http_server: Callable[..., HttpServer]
) -> None:
    server = http_server("-v")
    raw = RawSession(server.url)
    events = read_events(raw.start_call(7, "steps", {}))
    priming = next(events)
    assert (priming.data, priming.retry) == ("", RETRY_MS) and priming.id
    first = take(events, 3)
    assert [logged(event) for event in first] == ["step 1", "step 2", "step 3"]
    raw.drop()  # the connection breaks mid-response: the call goes on
    server.wait_for_line("the client of a POST request dropped its connection")

    serve_setup.release_holds()
    resumed = until_answer(read_events(raw.resume(first[-1].id)))
    # The resumed stream is primed again, then replays what was missed, nothing twice.
    replayed = [event for event in resumed if event.data]
    assert [logged(event) for event in replayed[:-1]] == ["step 4", "step 5", "step 6"]
    assert replayed[-1].message["id"] == 7 and answer_text(replayed[-1]) == "stepped"
    assert all(event.id for event in replayed)
    raw.drop()

    # Resuming again from an earlier event replays from there, whatever was seen since.
    again = until_answer(read_events(raw.resume(first[0].id)))
    assert [logged(event) for event in again if event.data][:5] == [
        "step 2",
        "step 3",
        "step 4",
        "step 5",
        "step 6",
    ]
    raw.drop()


def test_sessions_resume_only_their_own_streams(
    serve_setup: ServeSetup, http_server: Callable[..., HttpServer]
) -> None:
    """Two sessions use the same request id; neither can replay the other's events."""
    server = http_server()
    alice, bob = RawSession(server.url), RawSession(server.url)
    primings = {}
    for name, session in (("alice", alice), ("bob", bob)):
        events = read_events(session.start_call(1, "chatty", {"tag": name}))
        primings[name] = next(events).id
        until_answer(events)  # both calls are done and stored
        session.drop()

    for name, session in (("alice", alice), ("bob", bob)):
        replayed = until_answer(read_events(session.resume(primings[name])))
        texts = [logged(event) for event in replayed if event.data]
        assert texts == [f"{name} says warning", f"{name} says error", None]
        session.drop()

    # Bob presenting Alice's event id gets nothing of hers: the stream just ends.
    assert list(read_events(bob.resume(primings["alice"]))) == []
    bob.drop()


def test_stateless_http_keeps_no_events_and_still_answers(
    serve_setup: ServeSetup, http_server: Callable[..., HttpServer]
) -> None:
    server = http_server("--stateless")
    raw = RawSession(server.url)
    events = until_answer(read_events(raw.start_call(1, "chatty", {"tag": "s"})))
    levels = ("debug", "info", "warning", "error")  # no session keeps a level: all of them
    assert [logged(event) for event in events] == [*(f"s says {lv}" for lv in levels), None]
    assert {event.id for event in events} == {None}  # nothing to resume from
    assert answer_text(events[-1]) == "chatted"
    raw.drop()


# -- the store's bounds ------------------------------------------------------------------------


def note(text: str) -> types.JSONRPCMessage:
    params = {"data": text}
    return types.JSONRPCNotification(jsonrpc="2.0", method="notifications/message", params=params)


class Replay:
    def __init__(self) -> None:
        self.texts: list[str] = []

    async def __call__(self, event: EventMessage) -> None:
        self.texts.append(event.message.params["data"])  # type: ignore[union-attr]


def replay(store: MemoryEventStore, event_id: str) -> tuple[str | None, list[str]]:
    got = Replay()
    stream = anyio.run(store.replay_events_after, event_id, got)
    return stream, got.texts


def store_all(store: MemoryEventStore, stream: str, texts: list[str]) -> list[str]:
    async def run() -> list[str]:
        return [await store.store_event(stream, note(text)) for text in texts]

    return anyio.run(run)


def test_a_stream_keeps_its_last_events_and_replays_what_it_kept() -> None:
    store = MemoryEventStore(max_events_per_stream=3)
    ids = store_all(store, "s", ["a", "b", "c", "d", "e"])
    assert len(store) == 3
    assert replay(store, ids[3]) == ("s", ["e"])
    # "a" was let go: a resume from it gets what is still kept after it.
    assert replay(store, ids[0]) == ("s", ["c", "d", "e"])
    assert replay(store, "no-such-event") == (None, [])
    assert replay(store, "garbage") == (None, [])


def test_the_least_recently_written_stream_goes_first() -> None:
    store = MemoryEventStore(max_streams=2)
    first = store_all(store, "one", ["1"])
    store_all(store, "two", ["2"])
    store_all(store, "one", ["1b"])  # "one" is written again: "two" is now the oldest
    store_all(store, "three", ["3"])
    assert replay(store, first[0]) == ("one", ["1b"])
    assert sorted(store._streams) == ["one", "three"]


def test_the_character_bound_holds_over_all_streams() -> None:
    size = len(note("x" * 100).model_dump_json(by_alias=True, exclude_unset=True))
    store = MemoryEventStore(max_chars=size * 3)
    store_all(store, "old", ["x" * 100] * 2)
    newest = store_all(store, "new", ["x" * 100] * 2)
    assert store.chars <= size * 3
    assert sorted(store._streams) == ["new"]  # the old stream went as a whole
    # One stream alone over the bound loses its own oldest events.
    store_all(store, "new", ["x" * 100] * 5)
    assert store.chars <= size * 3 and len(store) == 3
    assert replay(store, newest[0])[0] == "new"


def test_bounds_must_be_positive() -> None:
    with pytest.raises(ValueError, match="bounds"):
        MemoryEventStore(max_streams=0)


def test_memory_holds_under_many_streams() -> None:
    """A long-running server's store never grows past its bounds, however many calls it saw."""
    store = MemoryEventStore(max_streams=50, max_events_per_stream=4)

    async def many_calls() -> None:
        for n in range(2000):
            for text in "abcdef":
                await store.store_event(f"call-{n}", note(text))

    anyio.run(many_calls)
    assert len(store._streams) == 50 and len(store) == 200
    assert len(store._by_token) == 50
