"""The ``gemini-json-schema`` format: Gemini's ``parametersJsonSchema``, JSON Schema kept whole.

https://ai.google.dev/api/caching#FunctionDeclaration: ``parametersJsonSchema`` "Describes
the parameters to the function in JSON Schema format ... mutually exclusive with
``parameters``". Checked against google-genai's ``FunctionDeclaration`` and
``FunctionDeclarationDict``.
"""

from __future__ import annotations

import copy
from typing import Any

from google.genai import types as genai_types

from conftest import RICH_SCHEMA, conforms
from toolreg import ToolRegistry, tool_result_message

SCHEMA = RICH_SCHEMA["parameters"]


def handler(args: dict[str, Any]) -> str:
    return "ok"


def registry_with(parameters: dict[str, Any]) -> ToolRegistry:
    reg = ToolRegistry()
    reg.register("plot", "t", {"description": "Plot.", "parameters": parameters}, handler)
    return reg


def test_the_schema_is_sent_whole_in_parameters_json_schema() -> None:
    (declaration,) = registry_with(copy.deepcopy(SCHEMA)).get_definitions(
        format="gemini-json-schema"
    )
    assert declaration == {"name": "plot", "description": "Plot.", "parameters_json_schema": SCHEMA}
    conforms(genai_types.FunctionDeclarationDict, declaration)
    parsed = genai_types.FunctionDeclaration.model_validate(declaration)
    assert parsed.parameters is None  # the two fields are mutually exclusive
    assert parsed.parameters_json_schema == SCHEMA
    tool = genai_types.Tool(function_declarations=[declaration])
    sent = tool.model_dump(mode="json", by_alias=True, exclude_none=True)
    assert sent["functionDeclarations"][0]["parametersJsonSchema"] == SCHEMA


def test_a_function_without_parameters_leaves_them_unset() -> None:
    reg = registry_with({"type": "object", "properties": {}})
    (declaration,) = reg.get_definitions(format="gemini-json-schema")
    assert declaration == {"name": "plot", "description": "Plot."}
    genai_types.FunctionDeclaration.model_validate(declaration)


def test_names_follow_geminis_rule() -> None:
    reg = ToolRegistry()
    reg.register("2fa", "t", {"parameters": {"type": "object"}}, handler)
    assert reg.get_definitions(format="gemini-json-schema") == []


def test_results_go_back_as_gemini_function_responses() -> None:
    part = tool_result_message("done", "gemini-json-schema", name="plot", call_id="c1")
    assert part == tool_result_message("done", "gemini", name="plot", call_id="c1")
    genai_types.Part.model_validate(part)
