"""A complete tool-call loop with the Anthropic Messages API and toolreg.

Run it with ANTHROPIC_API_KEY set: python docs/examples/anthropic_loop.py
"""

from __future__ import annotations

from typing import Any

from anthropic import Anthropic
from anthropic.types import ToolResultBlockParam

from toolreg import discover_builtin_tools, registry, tool_result_message


def run(client: Anthropic, prompt: str, model: str = "claude-sonnet-4-5") -> str:
    messages: list[Any] = [{"role": "user", "content": prompt}]
    while True:
        tools = registry.get_definitions(format="anthropic")
        response = client.messages.create(
            model=model, max_tokens=1024, tools=tools, messages=messages
        )
        if response.stop_reason != "tool_use":
            return "".join(block.text for block in response.content if block.type == "text")
        content = [block.model_dump(exclude_none=True) for block in response.content]
        messages.append({"role": "assistant", "content": content})
        results: list[ToolResultBlockParam] = [
            tool_result_message(registry.dispatch(block.name, block.input), "anthropic",
                                call_id=block.id)
            for block in response.content
            if block.type == "tool_use"
        ]  # fmt: skip
        messages.append({"role": "user", "content": results})


if __name__ == "__main__":
    discover_builtin_tools()
    print(run(Anthropic(), "What time is it in Tokyo?"))
