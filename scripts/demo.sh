#!/usr/bin/env bash
# The README's demo: built-in tools, then the example packs under an operator
# config. Runs against the toolreg in the venv whose bin/ is passed as $1.
set -euo pipefail
BIN="${1:-.venv/bin}"
TOOLREG="$BIN/toolreg"
HERE="$(cd "$(dirname "$0")/.." && pwd)"

ws="$(mktemp -d)"
trap 'rm -rf "$ws"' EXIT
export TOOLREG_WORKSPACE="$ws" TOOLREG_AUDIT_LOG="$ws/audit.jsonl"
unset TOOLREG_CONFIG TOOLREG_PLUGINS TOOLREG_DISABLE_PLUGIN_AUTOLOAD
step() { printf '\n== %s\n' "$*"; }

step "toolreg list   (built-ins, plus the example packs)"
"$TOOLREG" list
step "toolreg plugins   (no operator config: the sandbox may not replace terminal)"
"$TOOLREG" plugins
step "toolreg call current_time"
"$TOOLREG" call current_time '{"timezone": "UTC"}'
step "file round trip in $ws"
"$TOOLREG" call write_file '{"path": "hello.txt", "content": "Hello from toolreg!\n"}'
"$TOOLREG" call read_file '{"path": "hello.txt"}'

step "toolreg-sqlite: a read-only query"
"$BIN/python" - "$ws/shop.db" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("create table fruit (name text, price real)")
db.executemany("insert into fruit values (?, ?)", [("apple", 0.5), ("pear", 0.75)])
db.commit()
PY
"$TOOLREG" call sqlite_list_tables '{"database": "shop.db"}'
"$TOOLREG" call sqlite_query '{"database": "shop.db", "sql": "select * from fruit order by price"}'
echo "+ a write is refused by the read-only connection (exit 1 expected):"
"$TOOLREG" call sqlite_query '{"database": "shop.db", "sql": "delete from fruit"}' || true

step "with example_plugins/demo.toml: the sandbox replaces terminal, audit blocks http_request"
export TOOLREG_CONFIG="$HERE/example_plugins/demo.toml"
"$TOOLREG" config check
"$TOOLREG" plugins
"$TOOLREG" call terminal '{"command": "echo sandboxed; rm -rf /"}'
echo "+ http_request is blocked by the audit pack (exit 1 expected):"
"$TOOLREG" call http_request '{"url": "http://127.0.0.1:9"}' || true
step "the audit log"
cat "$TOOLREG_AUDIT_LOG"
