# Two entry points, both working on a machine with nothing but python3:
#   make demo   set up .venv, install toolreg, run a few tools
#   make test   set up .venv with dev tools, lint, check formatting, type-check, run the tests

PYTHON ?= python3
VENV ?= .venv
BIN = $(VENV)/bin
PIP = $(BIN)/python -m pip --disable-pip-version-check
TOOLREG = $(BIN)/toolreg

# The example tool packs `make demo` installs next to toolreg, as a user would.
DEMO_PACKS = ./example_plugins/toolreg-sqlite ./example_plugins/toolreg-sandbox \
	./example_plugins/toolreg-audit

# Installs are remembered by stamp files inside the venv: repeated runs skip pip,
# a newer pyproject.toml (or a deleted .venv) triggers a reinstall.
DEMO_STAMP = $(VENV)/.toolreg-demo-installed
DEV_STAMP = $(VENV)/.toolreg-dev-installed

.PHONY: demo test typecheck test-install test-scaleout conformance docs docs-serve lint install dev clean

demo: $(DEMO_STAMP)
	bash scripts/demo.sh $(BIN)

test: $(DEV_STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(MAKE) --no-print-directory typecheck
	$(BIN)/python -m pytest tests/

# What hosts copy (docs/examples) and the integrations, checked against the SDKs'
# own types. Imported modules are read for their types but not reported on;
# .mypy_cache keeps repeat runs to seconds.
typecheck: $(DEV_STAMP)
	$(BIN)/mypy --strict --follow-imports=silent docs/examples src/toolreg/integrations

# Only the fresh-venv install test (part of `test`; deselect it there with
# -m "not install"): the wheels, a local wheelhouse, pip --no-index.
test-install: $(DEV_STAMP)
	$(BIN)/python -m pytest -m install -rA tests/test_fresh_install.py

# Three stateless replicas behind HAProxy, one killed mid-run (about a minute;
# needs the haproxy binary, else it skips and says why). CI runs it after `test`.
test-scaleout: $(DEV_STAMP)
	$(BIN)/python -m pytest -m scaleout -rA tests/_mcp_serve/test_scaleout.py

# The official MCP conformance suite against toolreg serve, stateful and --stateless
# (docs/mcp.md). Node 22 and the pinned suite come from the npm registry into
# ~/.cache/toolreg-conformance; about a minute once there. Skips, saying why,
# when the registry is out of reach. CI runs it after `test`.
# (python scripts/conformance.py runs the suite alone and prints its table.)
conformance: $(DEV_STAMP)
	$(BIN)/python -m pytest -m conformance -rA tests/_mcp_serve/test_conformance.py

# The documentation site, from mkdocs.yml, into build/site; any warning fails it.
# (Material for MkDocs announces its successor on every build; said once is enough.)
docs: $(DEV_STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

docs-serve: $(DEV_STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs serve --dev-addr 127.0.0.1:8000

install: $(DEMO_STAMP)
dev: $(DEV_STAMP)

# pip is the target, not python: a venv whose pip bootstrap failed (Debian without
# python3-venv) must be retried, so the user sees the real error again.
$(BIN)/pip:
	$(PYTHON) -m venv $(VENV)

# The distribution was called "toolreg" before it became toolreg-core; an old
# editable install of it in this venv would shadow the new one.
RENAMED = $(PIP) uninstall --yes --quiet toolreg 2>/dev/null || true

$(DEMO_STAMP): pyproject.toml $(wildcard example_plugins/*/pyproject.toml) $(BIN)/pip
	$(RENAMED)
	$(PIP) install -e . $(DEMO_PACKS)
	touch $@

# toolreg-speedups, the C extension of earlier versions, is gone: a venv that still
# has it installed would carry dead weight, so it is removed.
$(DEV_STAMP): pyproject.toml $(BIN)/pip
	$(RENAMED)
	$(PIP) uninstall --yes --quiet toolreg-speedups 2>/dev/null || true
	$(PIP) install -e '.[dev]'
	touch $@

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .mypy_cache build/site
