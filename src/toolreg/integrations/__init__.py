"""The registry's tools as agent frameworks' tool objects.

Each submodule needs its framework, installed with an extra of the same name
(``pip install 'toolreg-core[langchain]'``), and exposes
``tools(registry=None, *, names=None, toolsets=None)``:

- ``openai_agents``: ``agents.FunctionTool`` (extra ``openai-agents``);
- ``langchain``: ``langchain_core.tools.StructuredTool`` (extra ``langchain``);
- ``llm``: ``llm.Tool`` (extra ``llm``);
- ``pydantic_ai``: ``pydantic_ai.Tool`` (extra ``pydantic-ai``).

Importing ``toolreg`` or this package imports none of them. See docs/hosts.md.
"""
