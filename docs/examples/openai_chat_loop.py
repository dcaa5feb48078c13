"""A complete tool-call loop with OpenAI Chat Completions and toolreg.

Run it with OPENAI_API_KEY set: python docs/examples/openai_chat_loop.py
"""

from __future__ import annotations

from typing import Any

from openai import OpenAI

from toolreg import discover_builtin_tools, registry, tool_result_message


def run(client: OpenAI, prompt: str, model: str = "gpt-4.1-mini") -> str:
    messages: list[Any] = [{"role": "user", "content": prompt}]
    while True:
        tools = registry.get_definitions(format="openai")  # each turn: what is available now
        response = client.chat.completions.create(model=model, messages=messages, tools=tools)
        message = response.choices[0].message
        if not message.tool_calls:
            return message.content or ""
        messages.append(message.model_dump(exclude_none=True))
        for call in message.tool_calls:
            if call.type != "function":
                continue  # custom tools are not toolreg's
            # The arguments arrive as a JSON string; dispatch parses and validates them.
            result = registry.dispatch(call.function.name, call.function.arguments)
            messages.append(tool_result_message(result, "openai", call_id=call.id))


if __name__ == "__main__":
    discover_builtin_tools()
    print(run(OpenAI(), "What time is it in Tokyo?"))
