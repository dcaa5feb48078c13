"""A complete tool-call loop with the OpenAI Responses API and toolreg.

Run it with OPENAI_API_KEY set: python docs/examples/openai_responses_loop.py
"""

from __future__ import annotations

from typing import Any

from openai import OpenAI

from toolreg import discover_builtin_tools, registry, tool_result_message


def run(client: OpenAI, prompt: str, model: str = "gpt-4.1-mini") -> str:
    items: list[Any] = [{"role": "user", "content": prompt}]
    while True:
        tools = registry.get_definitions(format="openai-responses")
        response = client.responses.create(model=model, input=items, tools=tools)
        calls = [item for item in response.output if item.type == "function_call"]
        if not calls:
            return response.output_text
        items += [item.model_dump(exclude_none=True) for item in response.output]
        for call in calls:
            result = registry.dispatch(call.name, call.arguments)
            items.append(tool_result_message(result, "openai-responses", call_id=call.call_id))


if __name__ == "__main__":
    discover_builtin_tools()
    print(run(OpenAI(), "What time is it in Tokyo?"))
