"""The host example of the README ("Embedding it in a host"), type-checked by
`make typecheck`; tests/faces/test_host_examples.py keeps the two the same and runs it.
"""

from toolreg import (
    apply_config,
    discover_builtin_tools,
    load_config,
    load_plugins,
    registry,
)

config = load_config()  # raises ConfigError, naming file and key, for a bad file
discover_builtin_tools()  # import the built-in tools
report = load_plugins(config)  # installed packs and local plugins, through the policy gate
apply_config(config, registry)  # [dispatch] validate, [toolsets] aliases and on/off
for outcome in report.with_status("failed", "refused"):
    print(f"{outcome.id}: {outcome.status}: {outcome.reason}")

defs = registry.get_definitions(format="openai")  # only tools available now
print(f"{len(defs)} tool definitions for the model")
result = registry.dispatch("current_time", {"timezone": "UTC"})  # never raises
print(result)
