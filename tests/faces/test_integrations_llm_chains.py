"""toolreg.integrations.llm in llm's own chains, sync and async, driven by scripted models."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncGenerator, Iterator
from typing import Any

import llm

from toolreg import ToolRegistry
from toolreg.integrations import llm as toolreg_llm


class Scripted:
    """A model whose first reply calls ``calls``; later replies say done and keep the results."""

    def __init__(self, calls: list[tuple[str, dict[str, Any]]]) -> None:
        self.calls = calls
        self.results: list[llm.ToolResult] = []

    def reply(self, prompt: llm.Prompt, response: Any) -> str:
        if prompt.tool_results:
            self.results.extend(prompt.tool_results)
            return "done"
        for index, (name, arguments) in enumerate(self.calls):
            response.add_tool_call(
                llm.ToolCall(name=name, arguments=arguments, tool_call_id=f"c{index}")
            )
        return ""


def llm_models(scripted: type) -> tuple[Any, Any]:
    """llm's sync and async model classes for ``scripted``, whose ``reply(prompt, response)``
    answers each prompt: what every llm chain test drives."""

    class SyncModel(scripted, llm.Model):
        model_id = "scripted"
        supports_tools = True

        def execute(self, prompt, stream, response, conversation) -> Iterator[str]:
            yield self.reply(prompt, response)

    class AsyncModel(scripted, llm.AsyncModel):
        model_id = "scripted"
        supports_tools = True

        async def execute(
            self, prompt, stream, response, conversation
        ) -> AsyncGenerator[str, None]:
            yield self.reply(prompt, response)

    return SyncModel, AsyncModel


SyncModel, AsyncModel = llm_models(Scripted)


def sleepy_registry() -> ToolRegistry:
    reg = ToolRegistry()
    schema = {"parameters": {"type": "object", "properties": {"n": {"type": "integer"}}}}

    async def nap(args: dict[str, Any]) -> str:
        await asyncio.sleep(0.2)
        return f"slept {args['n']}"

    reg.register("nap", "t", schema, nap, is_async=True)
    reg.register("doze", "t", schema, lambda args: time.sleep(0.2) or f"dozed {args['n']}")
    return reg


def test_a_tool_error_reaches_the_model_as_llms_error_result(host_registry: ToolRegistry) -> None:
    model = SyncModel(
        [("greet", {"name": 7}), ("greet", {"name": "Mallory"}), ("greet", {"name": "Ada"})]
    )
    assert model.chain("go", tools=toolreg_llm.tools(host_registry)).text() == "done"
    invalid, blocked, fine = model.results
    assert isinstance(invalid.exception, toolreg_llm.ToolCallFailed)
    assert invalid.exception.error_type == "invalid_arguments"
    assert invalid.output.startswith("Error: ")
    assert json.loads(invalid.output.removeprefix("Error: "))["error_type"] == "invalid_arguments"
    assert isinstance(blocked.exception, toolreg_llm.ToolCallFailed)
    assert "greeting Mallory is not allowed" in blocked.output
    assert (fine.exception, fine.output) == (None, "Hello, Ada!")


def test_async_tools_run_side_by_side_without_blocking_the_loop() -> None:
    reg = sleepy_registry()
    calls = [("nap", {"n": n}) for n in range(3)] + [("doze", {"n": n}) for n in range(2)]
    model = AsyncModel(calls)
    ticks: list[float] = []

    async def main() -> str:
        async def heartbeat() -> None:
            while True:
                ticks.append(time.perf_counter())
                await asyncio.sleep(0.02)

        beat = asyncio.create_task(heartbeat())
        text = await model.chain("go", tools=toolreg_llm.async_tools(reg)).text()
        beat.cancel()
        return text

    started = time.perf_counter()
    assert asyncio.run(main()) == "done"
    elapsed = time.perf_counter() - started
    outputs = sorted(result.output for result in model.results)
    assert outputs == ["dozed 0", "dozed 1", "slept 0", "slept 1", "slept 2"]
    assert elapsed < 0.9, f"5 calls of 0.2 s took {elapsed:.2f} s: they ran one after another"
    gaps = [later - earlier for earlier, later in zip(ticks, ticks[1:], strict=False)]
    assert max(gaps) < 0.19, "the event loop was blocked (a call holds it for 0.2 s)"


def test_async_tools_report_errors_the_same_way(host_registry: ToolRegistry) -> None:
    model = AsyncModel([("greet", {"name": 7})])

    async def main() -> str:
        return await model.chain("go", tools=toolreg_llm.async_tools(host_registry)).text()

    assert asyncio.run(main()) == "done"
    (invalid,) = model.results
    assert isinstance(invalid.exception, toolreg_llm.ToolCallFailed)
    assert invalid.exception.error_type == "invalid_arguments"
