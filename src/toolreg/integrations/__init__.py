"""The registry's tools as agent frameworks' tool objects.

Each submodule needs its framework, installed with an extra of the same name
(``pip install 'toolreg-core[langchain]'``), and exposes
``tools(registry=None, *, names=None, toolsets=None)``:

- ``openai_agents``: ``agents.FunctionTool`` (extra ``openai-agents``);
- ``langchain``: ``langchain_core.tools.StructuredTool`` (extra ``langchain``);
- ``llm``: ``llm.Tool`` (extra ``llm``), and ``async_tools()`` for llm's async models;
- ``pydantic_ai``: ``pydantic_ai.Tool`` (extra ``pydantic-ai``).

A tool error is reported the framework's own way (an error status, a retry, a
raised exception, the SDK's failure function), and ``tools()`` leaves out and
logs what it cannot offer rather than raise. Importing ``toolreg`` or this
package imports none of them. See docs/hosts.md.
"""
