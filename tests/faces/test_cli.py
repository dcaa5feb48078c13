"""The ``toolreg`` command line: in-process through ``main`` and as a real subprocess."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import SHAPED_PLUGIN
from pack_cli import assert_one_line_error, run
from toolreg import registry, tool_error
from toolreg.cli import main

PARAMS = {"type": "object", "properties": {}}
LIST_KEYS = {"name", "toolset", "available", "reason", "owner", "description"}
LIST_KEYS |= {"annotations", "output_schema"}
FILE_TOOLS = {"read_file", "write_file", "edit_file", "list_directory", "search_files"}


# -- helpers ---------------------------------------------------------------------------


def console_command() -> list[str]:
    """The installed ``toolreg`` script next to this interpreter, else ``python -m``."""
    script = shutil.which("toolreg", path=str(Path(sys.executable).parent))
    return [script] if script else [sys.executable, "-m", "toolreg"]


def run_process(cmd: list[str], tmp_path: Path, stdin: str = "") -> subprocess.CompletedProcess:
    env = {**os.environ, "TOOLREG_WORKSPACE": str(tmp_path)}
    return subprocess.run(
        cmd, input=stdin, capture_output=True, text=True, env=env, timeout=60, check=False
    )


# -- list ------------------------------------------------------------------------------


def test_list_json_has_exact_keys_and_builtin_owner(capsys):
    code, out, _ = run(capsys, "list", "--json")
    assert code == 0
    tools = json.loads(out)
    names = [t["name"] for t in tools]
    assert names == sorted(names)
    assert FILE_TOOLS | {"current_time"} <= set(names)
    for tool in tools:
        assert set(tool) == LIST_KEYS
        assert isinstance(tool["available"], bool)
        # An available tool has no reason; an unavailable one must say why.
        assert (tool["reason"] is None) == tool["available"]
    by_name = {t["name"]: t for t in tools}
    assert by_name["current_time"]["owner"] == "builtin"
    assert by_name["current_time"]["toolset"] == "time"
    assert by_name["read_file"]["description"]


def test_list_table_shows_reason_for_unavailable_tool(capsys, host_tool):
    host_tool("cli_needs_env", lambda args, **kw: "ok", requires_env=["TOOLREG_CLI_TEST_UNSET"])
    code, out, _ = run(capsys, "list")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == ["NAME", "TOOLSET", "AVAILABLE", "REASON"]
    row = next(line for line in lines if line.startswith("cli_needs_env "))
    assert row.split()[1:3] == ["cli-test", "no"]
    assert "TOOLREG_CLI_TEST_UNSET" in row
    time_row = next(line for line in lines if line.startswith("current_time "))
    assert time_row.split()[1:] == ["time", "yes"]


def test_list_toolset_filters(capsys):
    code, out, _ = run(capsys, "list", "--toolset", "file", "--json")
    assert code == 0
    tools = json.loads(out)
    assert {t["name"] for t in tools} == FILE_TOOLS
    assert {t["toolset"] for t in tools} == {"file"}


def test_list_toolset_accepts_alias(capsys):
    # Aliases cannot be removed; a test-only alias name keeps the leak harmless.
    registry.register_toolset_alias("cli-test-files-alias", "file")
    code, out, _ = run(capsys, "list", "--toolset", "cli-test-files-alias", "--json")
    assert code == 0
    assert {t["name"] for t in json.loads(out)} == FILE_TOOLS


def test_list_unknown_toolset_is_an_error(capsys):
    code, out, err = run(capsys, "list", "--toolset", "fiel")
    assert code == 1
    assert out == ""
    assert_one_line_error(err, "unknown toolset 'fiel'", "file")


# -- show ------------------------------------------------------------------------------


def test_show_json_formats(capsys):
    code, out, _ = run(capsys, "show", "current_time", "--json")
    assert code == 0
    openai = json.loads(out)
    assert openai["type"] == "function"
    assert openai["function"]["name"] == "current_time"
    assert "timezone" in openai["function"]["parameters"]["properties"]

    code, out, _ = run(capsys, "show", "current_time", "--json", "--format", "anthropic")
    assert code == 0
    assert set(json.loads(out)) == {"name", "description", "input_schema"}

    code, out, _ = run(capsys, "show", "current_time", "--json", "--format", "mcp")
    assert code == 0
    assert "inputSchema" in json.loads(out)


def test_show_human_includes_availability_even_when_unavailable(capsys, host_tool):
    host_tool("cli_probe_fails", lambda args, **kw: "ok", check_fn=lambda: (False, "no daemon"))
    code, out, _ = run(capsys, "show", "cli_probe_fails")
    assert code == 0
    assert "toolset:   cli-test" in out
    assert "owner:     host" in out
    assert "available: no (no daemon)" in out
    assert '"name": "cli_probe_fails"' in out


def test_list_json_and_show_give_annotations_and_output_schema(capsys, host_tool):
    output = {"type": "object", "properties": {"n": {"type": "integer"}}}
    host_tool("cli_counted", lambda args: '{"n": 1}', output_schema=output)
    code, out, _ = run(capsys, "list", "--json")
    assert code == 0
    by_name = {t["name"]: t for t in json.loads(out)}
    assert by_name["read_file"]["annotations"]["readOnlyHint"] is True
    assert by_name["terminal"]["annotations"]["destructiveHint"] is True
    assert by_name["read_file"]["output_schema"] is None
    assert by_name["cli_counted"]["annotations"] == {}
    assert by_name["cli_counted"]["output_schema"] == output

    code, out, _ = run(capsys, "show", "read_file")
    assert code == 0
    assert "title:     Read file" in out
    assert "hints:     readOnlyHint=true openWorldHint=false" in out
    assert "output:" not in out
    code, out, _ = run(capsys, "show", "cli_counted")
    assert "hints:     none declared" in out and "title:" not in out
    assert "output:    structured (outputSchema in the mcp format)" in out

    code, out, _ = run(capsys, "show", "read_file", "--json", "--format", "mcp")
    assert json.loads(out)["annotations"] == {
        "title": "Read file",
        "readOnlyHint": True,
        "openWorldHint": False,
    }
    code, out, _ = run(capsys, "show", "cli_counted", "--json", "--format", "mcp")
    assert json.loads(out)["outputSchema"] == output


def test_show_unknown_tool(capsys):
    code, out, err = run(capsys, "show", "curent_time")
    assert code == 1
    assert out == ""
    assert_one_line_error(err, "unknown tool 'curent_time'", "current_time")


def test_show_bad_format_is_a_usage_error(capsys):
    code, _, err = run(capsys, "show", "current_time", "--format", "bogus")
    assert code == 2
    assert "invalid choice" in err
    assert "Traceback" not in err


# -- call ------------------------------------------------------------------------------


def test_call_current_time_utc(capsys):
    code, out, _ = run(capsys, "call", "current_time", '{"timezone": "UTC"}')
    assert code == 0
    assert "UTC" in out or "+00:00" in out


def test_call_file_round_trip(capsys, workspace):
    args = json.dumps({"path": "notes/hello.txt", "content": "hello\nworld\n"})
    code, out, _ = run(capsys, "call", "write_file", args)
    assert code == 0, out
    assert (workspace / "notes" / "hello.txt").read_text() == "hello\nworld\n"

    code, out, _ = run(capsys, "call", "read_file", '{"path": "notes/hello.txt"}')
    assert code == 0
    content = json.loads(out)["content"]
    assert "hello" in content
    assert "world" in content


def test_call_reads_args_from_stdin(capsys, workspace, monkeypatch):
    (workspace / "in.txt").write_text("from stdin\n")
    monkeypatch.setattr(sys, "stdin", io.StringIO('{"path": "in.txt"}'))
    code, out, _ = run(capsys, "call", "read_file", "-")
    assert code == 0
    assert "from stdin" in json.loads(out)["content"]


def test_call_tool_error_exits_1(capsys, workspace):
    code, out, err = run(capsys, "call", "read_file", '{"path": "missing.txt"}')
    assert code == 1
    # The tool_error is the command's output, so it goes to stdout, not stderr.
    assert "error" in json.loads(out)
    assert "Traceback" not in err


def test_call_host_tool_error_result_exits_1(capsys, host_tool):
    host_tool("cli_always_fails", lambda args, **kw: tool_error("nope"))
    code, out, _ = run(capsys, "call", "cli_always_fails")
    assert code == 1
    assert json.loads(out) == {"error": "nope"}


def test_call_handler_print_goes_to_stderr(capsys, host_tool):
    def noisy(args, **kw):
        print("chatter from the handler")
        return "the result"

    host_tool("cli_noisy", noisy)
    code, out, err = run(capsys, "call", "cli_noisy", "{}")
    assert code == 0
    assert out == "the result\n"
    assert "chatter from the handler" in err


def test_call_multimodal_dict_printed_as_json(capsys, host_tool):
    result = {"_multimodal": True, "content": [{"type": "text", "text": "hi"}]}
    host_tool("cli_multimodal", lambda args, **kw: result)
    code, out, _ = run(capsys, "call", "cli_multimodal")
    assert code == 0
    assert json.loads(out) == result


@pytest.mark.parametrize(
    ("raw", "fragment"),
    [
        ("{not json", "not valid JSON"),
        ('["a", "b"]', "got an array"),
        ('"text"', "got a string"),
        ("null", "got null"),
    ],
)
def test_call_bad_json_args_is_a_usage_error(capsys, raw, fragment):
    code, out, err = run(capsys, "call", "current_time", raw)
    assert code == 2
    assert out == ""
    assert_one_line_error(err, fragment)


def test_call_takes_key_value_pairs_as_httpie_does(capsys, host_tool):
    host_tool("cli_echo_args", lambda args, **kw: json.dumps(args, sort_keys=True))
    argv = ["who=Ada", "n:=3", "on:=true", 'opts:={"a": [1]}', "eq=a=b", "empty=", "k:v=s"]
    code, out, err = run(capsys, "call", "cli_echo_args", *argv)
    assert (code, err) == (0, "")
    expected = {"who": "Ada", "n": 3, "on": True, "opts": {"a": [1]}, "eq": "a=b", "empty": ""}
    assert json.loads(out) == {**expected, "k:v": "s"}
    code, out, _ = run(capsys, "call", "current_time", "timezone=UTC")
    assert code == 0 and "UTC" in out
    code, out, _ = run(capsys, "call", "cli_echo_args", '{"x": "a=b"}')
    assert (code, json.loads(out)) == (0, {"x": "a=b"})


@pytest.mark.parametrize(
    ("argv", "fragments"),
    [
        (["n:=abc"], ["'n:=abc'", "not valid JSON", "n=abc"]),
        (["a=1", "oops"], ["'oops'", "key=value or key:=json"]),
        (["a=1", "a:=2"], ["'a:=2'", "given twice"]),
        ([":=1"], ["':=1'", "empty key"]),
        (['{"a": 1}', "b=2"], ["'{\"a\": 1}'", "key=value"]),
    ],
)
def test_call_bad_pair_is_a_usage_error_naming_it(capsys, host_tool, argv, fragments):
    host_tool("cli_never_called", lambda args, **kw: pytest.fail("dispatched"))
    code, out, err = run(capsys, "call", "cli_never_called", *argv)
    assert (code, out) == (2, "")
    assert_one_line_error(err, *fragments)


def test_call_unknown_tool(capsys):
    code, out, err = run(capsys, "call", "no_such_tool", "{}")
    assert code == 1
    assert out == ""
    assert_one_line_error(err, "unknown tool 'no_such_tool'")


# -- usage, logging, internal errors ---------------------------------------------------


def test_bad_flag_exits_2(capsys):
    code, out, err = run(capsys, "list", "--bogus")
    assert code == 2
    assert out == ""
    assert "toolreg: error: unrecognized arguments: --bogus" in err


def test_missing_command_exits_2(capsys):
    code, _, err = run(capsys)
    assert code == 2
    assert "toolreg: error:" in err


def test_verbose_works_before_or_after_command(capsys):
    assert main(["-v", "list", "--json"]) == 0
    _, err = capsys.readouterr()
    assert "DEBUG" in err
    assert main(["list", "--json", "-v"]) == 0
    _, err = capsys.readouterr()
    assert "DEBUG" in err
    assert main(["list", "--json"]) == 0
    _, err = capsys.readouterr()
    assert "DEBUG" not in err


def test_internal_error_is_one_line_unless_verbose(capsys, monkeypatch):
    def boom() -> list[str]:
        raise RuntimeError("registry on fire")

    monkeypatch.setattr(registry, "get_all_tool_names", boom)
    code, out, err = run(capsys, "list")
    assert code == 1
    assert out == ""
    assert_one_line_error(err, "internal error: RuntimeError: registry on fire")

    code, _, err = run(capsys, "-v", "list")
    assert code == 1
    assert "Traceback" in err


def test_closed_stdout_pipe_is_quiet(capsys, monkeypatch):
    class ClosedPipe(io.StringIO):
        def write(self, text: str) -> int:
            raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(sys, "stdout", ClosedPipe())
    assert main(["list", "--json"]) == 1
    assert "error" not in capsys.readouterr().err


def test_import_failure_warns_on_stderr_and_keeps_stdout_json(capsys, monkeypatch):
    import toolreg.cli._commands as commands

    failures = {"toolreg.builtin_tools.broken": "ImportError: no module named 'nothere'"}
    monkeypatch.setattr(commands, "get_discovery_failures", lambda: failures)
    code, out, err = run(capsys, "list", "--json")
    assert code == 0
    assert isinstance(json.loads(out), list)
    assert "1 tool module(s) failed to import" in err

    code, out, _ = run(capsys, "doctor", "--json")
    assert code == 0
    assert json.loads(out)["import_failures"] == [
        {
            "module": "toolreg.builtin_tools.broken",
            "error": "ImportError: no module named 'nothere'",
        }
    ]


# -- doctor ----------------------------------------------------------------------------


def test_serve_warns_at_start_when_the_workspace_fell_back_to_home(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "TOOLREG_WORKSPACE"}
    env["HOME"] = str(tmp_path)
    proc = subprocess.run(
        [sys.executable, "-m", "toolreg", "serve"],
        input="",
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=60,
        check=False,
    )
    assert "toolreg serve: warning: $TOOLREG_WORKSPACE is not set" in proc.stderr, proc.stderr


# -- the real entry points -------------------------------------------------------------


def test_python_m_toolreg_list_json_stdout_is_pure_json(tmp_path):
    proc = run_process([sys.executable, "-m", "toolreg", "list", "--json"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    names = {t["name"] for t in json.loads(proc.stdout)}
    assert "current_time" in names
    assert "Traceback" not in proc.stderr


def test_console_script_error_goes_to_stderr_only(tmp_path):
    proc = run_process([*console_command(), "show", "no_such_tool"], tmp_path)
    assert proc.returncode == 1
    assert proc.stdout == ""
    assert_one_line_error(proc.stderr, "unknown tool 'no_such_tool'")


def test_console_script_call_with_stdin_round_trip(tmp_path):
    payload = json.dumps({"path": "x.txt", "content": "via subprocess"})
    proc = run_process([*console_command(), "call", "write_file", "-"], tmp_path, stdin=payload)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "x.txt").read_text() == "via subprocess"

    proc = run_process([*console_command(), "call", "read_file", '{"path": "x.txt"}'], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "via subprocess" in json.loads(proc.stdout)["content"]


def test_console_script_bad_json_exits_2(tmp_path):
    proc = run_process([*console_command(), "call", "current_time", "[1, 2]"], tmp_path)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert_one_line_error(proc.stderr, "got an array")


CHATTY_PLUGIN = """\
import os
import subprocess
import sys

from toolreg import registry

os.write(1, b"fd chatter at import\\n")


def chatty(args):
    os.write(1, b"fd chatter in the handler\\n")
    subprocess.run([sys.executable, "-c", "print('a child process talking')"], check=True)
    return '{"ok": true}'


registry.register("chatty", "chat", {"description": "Chatty."}, chatty)
"""


def with_local_plugin(
    tmp_path: Path, stem: str, source: str, config: str = ""
) -> Callable[..., subprocess.CompletedProcess]:
    """The console script, run with ``source`` as local plugin ``stem`` (and more config)."""
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    (plugins / f"{stem}.py").write_text(source)
    path = tmp_path / "toolreg.toml"
    path.write_text(f"[plugins]\npaths = [{json.dumps(str(plugins))}]\n{config}")
    env = {**os.environ, "TOOLREG_WORKSPACE": str(tmp_path)}
    env.pop("TOOLREG_DISABLE_PLUGIN_AUTOLOAD", None)

    def toolreg(*argv: str) -> subprocess.CompletedProcess:
        cmd = [*console_command(), "--config", str(path), *argv]
        try:
            # cwd: packs installed next to toolreg load too, and may write files there.
            return subprocess.run(
                cmd, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60
            )
        except subprocess.TimeoutExpired:
            pytest.fail(f"toolreg {' '.join(argv)} did not exit (hung)")

    return toolreg


def test_fd_level_chatter_never_reaches_stdout(tmp_path):
    """Writes to file descriptor 1 (C code, child processes) go to stderr, like print()."""
    toolreg = with_local_plugin(tmp_path, "chatty", CHATTY_PLUGIN)
    listed = toolreg("list", "--json")
    assert listed.returncode == 0, listed.stderr
    assert "chatty" in {tool["name"] for tool in json.loads(listed.stdout)}
    assert "fd chatter at import" in listed.stderr

    called = toolreg("call", "chatty")
    assert called.returncode == 0, called.stderr
    assert json.loads(called.stdout) == {"ok": True}
    assert "fd chatter in the handler" in called.stderr
    assert "a child process talking" in called.stderr


STUCK_PLUGIN = """\
import time

from toolreg import hookimpl, registry


def stuck(args):
    time.sleep(600)  # ignores every deadline
    return "too late"


registry.register("stuck_tool", "stuck", {}, stuck, timeout=0.2)
registry.register("guarded_tool", "stuck", {}, lambda args: "ran")


@hookimpl
def toolreg_pre_tool_call(name, args):
    if name == "guarded_tool":
        time.sleep(600)
"""


@pytest.mark.parametrize(
    ("tool", "fragment"), [("stuck_tool", "timed out"), ("guarded_tool", "hook")]
)
def test_call_exits_promptly_after_a_deadline(tmp_path, tool, fragment):
    """The abandoned call runs on in a daemon worker: it never holds the process open."""
    toolreg = with_local_plugin(tmp_path, "stuck", STUCK_PLUGIN, "hook_timeout = 0.2\n")
    proc = toolreg("call", tool)
    assert proc.returncode == 1, proc.stderr
    assert fragment in json.loads(proc.stdout)["error"]


def test_a_local_plugin_that_hangs_at_import_fails_with_the_reason(tmp_path):
    source = "import time\n\nfrom toolreg import registry\n\ntime.sleep(600)\n"
    source += "registry.register('never', 'slow', {}, lambda args: 'never')\n"
    toolreg = with_local_plugin(tmp_path, "slow", source, "import_timeout = 0.3\n")
    proc = toolreg("plugins", "--json")
    assert proc.returncode == 0, proc.stderr
    (slow,) = [item for item in json.loads(proc.stdout) if item["id"] == "local:slow"]
    assert slow["status"] == "failed" and "did not finish within 0.3 s" in slow["reason"]


def test_arguments_or_config_too_deep_to_parse_exit_2_naming_them(tmp_path):
    deep = "[" * 100_000 + "]" * 100_000
    proc = run_process([*console_command(), "call", "current_time", "-"], tmp_path, stdin=deep)
    assert proc.returncode == 2 and proc.stdout == ""
    assert_one_line_error(proc.stderr, "stdin is nested too deeply to parse")
    config = tmp_path / "deep.toml"
    config.write_text(f"[plugins]\nenabled = {deep}\n")
    for command in (["list"], ["config", "check"]):
        proc = run_process([*console_command(), "--config", str(config), *command], tmp_path)
        assert proc.returncode == 2, proc.stderr
        assert_one_line_error(proc.stderr, str(config), "nested too deeply")


def test_list_and_show_shape_definitions_on_request(tmp_path):
    toolreg = with_local_plugin(tmp_path, "shapes", SHAPED_PLUGIN)
    flags = ("--inline-refs", "--optional-as-absent")
    plain = toolreg("show", "plot", "--json", "--format", "anthropic")
    shaped = toolreg("show", "plot", "--json", "--format", "anthropic", *flags)
    assert plain.returncode == shaped.returncode == 0, plain.stderr + shaped.stderr
    assert "$ref" in plain.stdout and "null" in plain.stdout
    schema = json.loads(shaped.stdout)["input_schema"]
    assert "$ref" not in shaped.stdout and "$defs" not in shaped.stdout
    assert schema["properties"]["note"] == {"type": "string"}

    listed = toolreg("list", "--json", "--toolset", "shapes", "--format", "mcp", *flags)
    (tool,) = json.loads(listed.stdout)
    assert tool["definition"]["inputSchema"]["properties"] == schema["properties"]
    refused = toolreg("list", "--inline-refs")
    assert refused.returncode == 2 and refused.stdout == ""
    assert "--inline-refs shape definitions: add --json --format FORMAT" in refused.stderr
