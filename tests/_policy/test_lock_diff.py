"""``compare``: every difference between a lock and the state now, and its text for a reviewer."""

from __future__ import annotations

import json

from toolreg._contract.definition_digest import digest
from toolreg._policy.lock_diff import changes_text, compare
from toolreg._policy.lock_file import Lock, LockedPack, LockedServer, LockedTool, shown

SCHEMA = {"type": "object", "properties": {"q": {"type": "string"}}}


def tool(name: str, description: str = "Find things.", schema: dict | None = None, **extra):
    definition = {
        "name": name,
        "description": description,
        "input_schema": schema if schema is not None else SCHEMA,
        "output_schema": None,
        "annotations": extra or None,
    }
    return LockedTool(digest(definition), shown(definition))


def pack(version="1.0", files=None, tools=None, hooks=(), override=False) -> LockedPack:
    files = {"p/__init__.py": "sha256=aaa"} if files is None else files
    tools = {"find": tool("find")} if tools is None else tools
    record = "sha256:" + "".join(sorted(files.values()))
    return LockedPack("toolreg-p", version, record, files, tools, tuple(hooks), override)


def lock(packs=None, servers=None) -> Lock:
    return Lock("toolreg.lock", packs or {}, servers or {})


def test_the_same_state_is_no_change():
    state = lock({"toolreg-p": pack()}, {"docs": LockedServer({"find": tool("find")})})
    changes = compare(state, state)
    assert not changes
    assert changes_text(changes) == ""
    assert changes.to_dict() == {"packs": [], "servers": []}


def test_a_changed_pack_says_version_record_files_tools_hooks_and_consent():
    before = pack(
        files={"p/__init__.py": "sha256=aaa", "p/old.py": "sha256=bbb", "p/x.py": "sha256=ccc"},
        tools={"find": tool("find"), "gone": tool("gone", schema={"type": "object"})},
        hooks=["toolreg_setup"],
        override=True,
    )
    after = pack(
        version="2.0",
        files={"p/__init__.py": "sha256=aaa", "p/new.py": "sha256=ddd", "p/x.py": "sha256=eee"},
        tools={"find": tool("find", "Find things, and send them away."), "fresh": tool("fresh")},
        hooks=["toolreg_pre_tool_call"],
        override=False,
    )
    changes = compare(lock({"toolreg-p": before}), lock({"toolreg-p": after}))
    (change,) = changes.packs
    assert change.status == "changed"
    assert change.version == ("1.0", "2.0")
    assert change.record == (before.record, after.record)
    assert change.files._asdict() == {
        "added": ["p/new.py"],
        "removed": ["p/old.py"],
        "modified": ["p/x.py"],
    }
    assert (change.tools.added, change.tools.removed) == (["fresh"], ["gone"])
    assert change.tools.renames == {}  # another schema: no rename
    assert (change.hooks_added, change.hooks_removed) == (
        ["toolreg_pre_tool_call"],
        ["toolreg_setup"],
    )
    assert change.override == (True, False)
    text = changes_text(changes)
    assert text.splitlines()[:11] == [
        "pack toolreg-p: changed",
        "  version 1.0 -> 2.0",
        f"  record {before.record} -> {after.record}",
        "  file added: p/new.py",
        "  file removed: p/old.py",
        "  file modified: p/x.py",
        "  override consent: granted -> not granted",
        "  hook added: toolreg_pre_tool_call",
        "  hook removed: toolreg_setup",
        "  tool added: fresh",
        "  tool removed: gone",
    ]
    assert "    -Find things." in text and "    +Find things, and send them away." in text
    assert "  tool find (changed definition):" in text
    assert "  tool fresh (new definition):" in text
    assert json.loads(json.dumps(changes.to_dict()))["packs"][0]["version"] == {
        "locked": "1.0",
        "now": "2.0",
    }


def test_a_tool_gone_while_one_with_its_schema_appears_is_a_possible_rename():
    before = lock(servers={"docs": LockedServer({"lookup": tool("lookup"), "b": tool("b", "B")})})
    after = lock(servers={"docs": LockedServer({"find": tool("find"), "b": tool("b", "B")})})
    changes = compare(before, after)
    (server,) = changes.servers
    assert (server.name, server.status) == ("docs", "changed")
    assert server.tools.renames == {"find": "lookup"}
    text = changes_text(changes)
    assert "  possible rename: lookup -> find (the same input schema)" in text
    # Shown against the tool it may have been: only the name differs, and no field shows it.
    assert server.tools.diffs["find"] == "(the locked definition of 'lookup', under a new name)\n"


def test_an_annotation_flip_shows_in_the_diff():
    before = lock(servers={"fs": LockedServer({"rm": tool("rm", readOnlyHint=True)})})
    after = lock(servers={"fs": LockedServer({"rm": tool("rm", readOnlyHint=False)})})
    text = changes_text(compare(before, after))
    assert '    -  "readOnlyHint": true' in text
    assert '    +  "readOnlyHint": false' in text


def test_new_and_removed_packs_and_servers():
    before = lock({"toolreg-old": pack()}, {"gone": LockedServer({"x": tool("x")})})
    after = lock({"toolreg-new": pack()}, {"fresh": LockedServer({"y": tool("y")})})
    changes = compare(before, after)
    assert [(p.plugin_id, p.status) for p in changes.packs] == [
        ("toolreg-new", "new"),
        ("toolreg-old", "removed"),
    ]
    assert [(s.name, s.status) for s in changes.servers] == [("fresh", "new"), ("gone", "removed")]
    text = changes_text(changes)
    assert "  files: 1 in its RECORD" in text and "file added" not in text


def test_only_the_targets_asked_for_are_compared():
    before = lock({"toolreg-a": pack(), "toolreg-b": pack()}, {"s": LockedServer({})})
    after = lock(
        {"toolreg-a": pack("2"), "toolreg-b": pack("2")}, {"s": LockedServer({"t": tool("t")})}
    )
    changes = compare(before, after, packs={"toolreg-b"}, servers=set())
    assert [p.plugin_id for p in changes.packs] == ["toolreg-b"] and changes.servers == []


def test_a_digest_edited_by_hand_is_a_change_even_when_the_fields_match():
    edited = tool("find")._replace(digest="sha256:" + "0" * 64)
    changes = compare(
        lock({"toolreg-p": pack(tools={"find": edited})}), lock({"toolreg-p": pack()})
    )
    assert "was the lock edited?" in changes.packs[0].tools.diffs["find"]


def test_what_a_pack_or_server_wrote_reaches_the_terminal_escaped():
    hostile = "Fine.\x1b[2J\x1b[31m\rno differences\u202e\x0bok"
    before = lock(servers={"evil\x1b]0;x\x07": LockedServer({"t": tool("t")})})
    after = lock(servers={"evil\x1b]0;x\x07": LockedServer({"t": tool("t", hostile)})})
    text = changes_text(compare(before, after))
    assert not any(c in text for c in "\x1b\r\x07\u202e\x0b")
    assert "mcp server evil\\u001b]0;x\\u0007: changed" in text
    # Each line the description's breaks make is a line of the diff, marked and escaped:
    # none can pass for toolreg's own words.
    assert (
        "    +Fine.\\u001b[2J\\u001b[31m\\u000d\n    +no differences\\u202e\\u000b\n    +ok" in text
    )
