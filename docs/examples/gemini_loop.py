"""A complete tool-call loop with Gemini (google-genai) and toolreg.

Run it with GEMINI_API_KEY set: python docs/examples/gemini_loop.py
"""

from __future__ import annotations

from google import genai
from google.genai import types

from toolreg import discover_builtin_tools, registry, tool_result_message


def run(client: genai.Client, prompt: str, model: str = "gemini-2.5-flash") -> str:
    contents: list[types.Content] = [types.Content(role="user", parts=[types.Part(text=prompt)])]
    while True:
        declarations = [
            types.FunctionDeclaration.model_validate(d)
            for d in registry.get_definitions(format="gemini")
        ]
        config = types.GenerateContentConfig(tools=[types.Tool(function_declarations=declarations)])
        response = client.models.generate_content(model=model, contents=contents, config=config)
        calls = response.function_calls
        if not calls or not response.candidates or response.candidates[0].content is None:
            return response.text or ""
        contents.append(response.candidates[0].content)
        parts = [
            types.Part.model_validate(tool_result_message(
                registry.dispatch(call.name or "", call.args or {}), "gemini",
                call_id=call.id, name=call.name))
            for call in calls
        ]  # fmt: skip
        contents.append(types.Content(role="user", parts=parts))


if __name__ == "__main__":
    discover_builtin_tools()
    print(run(genai.Client(), "What time is it in Tokyo?"))
