"""File tools (toolset ``file``): read, write, edit, list and search inside the workspace.

Every path is confined to the workspace root (``$TOOLREG_WORKSPACE`` or the
current directory). All five tools return JSON; failures are ``tool_error`` JSON
naming the offending path. The handlers live in ``_file_ops`` and
``_file_search``; this module declares the tools: the two read-only ones as typed functions with
``@registry.tool``, the rest through ``registry.register`` in a table.
"""

from __future__ import annotations

from typing import Annotated, Any

from toolreg import registry
from toolreg.workspace import supports_descriptor_paths

from . import _file_ops, _file_search
from ._file_ops import MAX_READ_LINES
from ._file_search import MAX_SEARCH_RESULTS

_REL = "Relative paths are taken from the workspace root; paths outside it are refused."

# MCP's hints. All five stay inside the workspace: a closed world.
_READS = {"readOnlyHint": True, "openWorldHint": False}


# The limits in these docstrings are _file_ops' MAX_READ_LINES, MAX_READ_CHARS,
# MAX_LINE_CHARS and MAX_LIST_ENTRIES; keep them in step.
@registry.tool(
    toolset="file",
    emoji="📖",
    check_fn=supports_descriptor_paths,
    annotations={"title": "Read file", **_READS},
)
def read_file(
    path: Annotated[str, f"File to read. {_REL}"],
    offset: Annotated[int, {"minimum": 1}, "1-based line number to start reading from."] = 1,
    limit: Annotated[
        int, {"minimum": 1, "maximum": MAX_READ_LINES}, "Maximum number of lines to return."
    ] = MAX_READ_LINES,
) -> str:
    """Read a UTF-8 text file.

    Returns JSON: `content` (each line prefixed by its 1-based number and a tab, like
    `cat -n`), `start_line`, `end_line`, `total_lines`, `truncated` (true when more lines
    follow) and `next_offset` (pass it as `offset` to continue). At most 2000 lines or about
    100,000 characters per call; lines longer than 2000 characters are shortened. Binary
    files are refused.
    """
    return _file_ops.read_file({"path": path, "offset": offset, "limit": limit})


@registry.tool(
    toolset="file",
    emoji="📂",
    check_fn=supports_descriptor_paths,
    annotations={"title": "List directory", **_READS},
)
def list_directory(path: Annotated[str, f"Directory to list. {_REL}"] = ".") -> str:
    """List a directory's entries, sorted by name.

    Returns JSON `{path, entries, total, truncated}` where each entry is `{name, type,
    size}`; type is file, dir, symlink or other and size (bytes) is set for files only. At
    most 1000 entries.
    """
    return _file_ops.list_directory({"path": path})


def _path(what: str, default: str | None = None) -> dict[str, Any]:
    prop: dict[str, Any] = {"type": "string", "description": f"{what} {_REL}"}
    if default is not None:
        prop["default"] = default
    return prop


# (name, handler, emoji, description, properties, required, annotations)
_TOOLS: list[tuple[str, Any, str, str, dict[str, Any], list[str], dict[str, Any]]] = [
    (
        "write_file",
        _file_ops.write_file,
        "✏️",
        "Create or overwrite a file with the given text (UTF-8), creating missing parent "
        "directories. Replaces the whole file; use edit_file for small changes. Returns JSON "
        "`{path, bytes_written, created}`.",
        {
            "path": _path("File to write."),
            "content": {"type": "string", "description": "The complete new file content."},
        },
        ["path", "content"],
        # Overwrites whatever was there; the same content twice leaves the same file.
        {"title": "Write file", "destructiveHint": True, "idempotentHint": True},
    ),
    (
        "edit_file",
        _file_ops.edit_file,
        "🩹",
        "Replace an exact string in a UTF-8 text file. `old_string` must match the file "
        "character for character (whitespace and indentation included) and, unless "
        "`replace_all` is true, occur exactly once; otherwise the call fails and says how many "
        "times it was found, so add surrounding lines to make it unique. Returns JSON "
        "`{path, replacements}`.",
        {
            "path": _path("File to edit."),
            "old_string": {"type": "string", "description": "Exact text to replace."},
            "new_string": {"type": "string", "description": "Text to put in its place."},
            "replace_all": {
                "type": "boolean",
                "default": False,
                "description": "Replace every occurrence instead of requiring exactly one.",
            },
        },
        ["path", "old_string", "new_string"],
        # A second identical call finds nothing to replace, or replaces again.
        {"title": "Edit file", "destructiveHint": True, "idempotentHint": False},
    ),
    (
        "search_files",
        _file_search.search_files,
        "🔎",
        "Search text files for a regular expression (Python `re` syntax), recursively, "
        "matching each line on its own, without its line ending, like grep. Returns JSON "
        "`{matches, count, files_searched, truncated}`; each match is "
        "`path:line_number:line_text`. Hidden directories (such as .git), node_modules, "
        "__pycache__, symbolic links, binary files and files over 5 MB are skipped. A pattern "
        "that backtracks for over 1 s, or a search that takes over 10 s, stops with an error.",
        {
            "pattern": {"type": "string", "description": "Regular expression to look for."},
            "path": _path("Directory (or single file) to search.", default="."),
            "glob": {
                "type": "string",
                "default": "*",
                "description": "Only search files whose name matches this glob, e.g. '*.py'.",
            },
            "max_results": {
                "type": "integer",
                "minimum": 1,
                "maximum": MAX_SEARCH_RESULTS,
                "default": 200,
                "description": "Stop after this many matching lines.",
            },
        },
        ["pattern"],
        {"title": "Search files", **_READS},
    ),
]

for _name, _handler, _emoji, _description, _properties, _required, _hints in _TOOLS:
    registry.register(
        name=_name,
        toolset="file",
        schema={
            "name": _name,
            "description": _description,
            "parameters": {
                "type": "object",
                "properties": _properties,
                "required": _required,
                "additionalProperties": False,
            },
        },
        handler=_handler,
        description=_description,
        emoji=_emoji,
        check_fn=supports_descriptor_paths,
        annotations={"readOnlyHint": False, "openWorldHint": False, **_hints},
    )
