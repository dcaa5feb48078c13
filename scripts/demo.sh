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
step "what the model sees: toolreg show current_time --json   (its OpenAI definition)"
"$TOOLREG" show current_time --json
step "toolreg call current_time"
"$TOOLREG" call current_time '{"timezone": "UTC"}'
echo "+ arguments that break the schema never reach the tool; the model gets the reason (exit 1 expected):"
"$TOOLREG" call current_time '{"timezone": 5}' || true
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

step "host code: the README's example (\"Embedding it in a host\"), run as written"
"$BIN/python" - "$HERE/README.md" <<'PY'
import re, sys
readme = open(sys.argv[1], encoding="utf-8").read()
(code,) = re.findall(r"## Embedding it in a host\n\n```python\n(.*?)```", readme, re.S)
exec(compile(code, "README.md: Embedding it in a host", "exec"), {"__name__": "__main__"})
PY

step "with example_plugins/demo.toml: the sandbox replaces terminal, audit blocks http_request"
export TOOLREG_CONFIG="$HERE/example_plugins/demo.toml"
"$TOOLREG" config check
"$TOOLREG" plugins
# Call terminal only once the sandbox's terminal is the one in place.
sandbox="$("$TOOLREG" plugins --json | "$BIN/python" -c '
import json, sys
found = [p for p in json.load(sys.stdin) if p["id"] == "toolreg-sandbox"]
print(found[0]["status"] + " " + ",".join(found[0]["tools_overridden"]) if found else "missing")
')"
if [ "$sandbox" != "loaded terminal" ]; then
    echo "demo: toolreg-sandbox did not replace terminal ($sandbox); not calling terminal" >&2
    exit 1
fi
echo "+ terminal, with a harmless command: a shell would expand \$0 and run the pipe,"
echo "+ the sandbox runs echo alone, and \$0, | and tr reach it as plain words:"
answer="$("$TOOLREG" call terminal '{"command": "echo answered by $0 | tr a-z A-Z"}')"
echo "$answer"
case "$answer" in
*'answered by $0 | tr a-z A-Z'*) echo "+ toolreg-sandbox's terminal answered" ;;
*)
    echo "demo: that was not toolreg-sandbox's terminal" >&2
    exit 1
    ;;
esac
echo "+ http_request is blocked by the audit pack (exit 1 expected):"
"$TOOLREG" call http_request '{"url": "http://127.0.0.1:9"}' || true
step "the audit log"
cat "$TOOLREG_AUDIT_LOG"
