"""Tool calling that works on every server.

Native function calling where the server has it; where it rejects `tools` (old
llama.cpp without --jinja, vLLM without --enable-auto-tool-choice), the tools are
described in the system prompt and the model replies with a JSON action. Small
models also write tool calls as plain text even when `tools` works; such text is
parsed the same way. Either way the caller gets a ToolReply.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import json_repair

from gam_desktop.engine.llm import capabilities
from gam_desktop.engine.llm.client import _append_to_system
from gam_desktop.engine.llm.errors import LLMRejected
from gam_desktop.engine.llm.protocol import LLM, Messages
from gam_desktop.engine.progress import CancelToken


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    parameters: dict[str, Any]  # JSON schema of the arguments

    def as_openai(self) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            },
        }


@dataclass
class ToolCall:
    name: str
    arguments: dict[str, Any]
    id: str = ""


@dataclass
class ToolReply:
    calls: list[ToolCall] = field(default_factory=list)
    text: str = ""
    native: bool = True  # False: the JSON action protocol was used


def action_instructions(tools: list[Tool]) -> str:
    lines = ["You can use these tools:"]
    for tool in tools:
        params = ", ".join(tool.parameters.get("properties", {}))
        lines.append(f"- {tool.name}({params}): {tool.description}")
    lines.append('To use a tool, reply with JSON only: {"tool": "<name>", "arguments": {...}}')
    return "\n".join(lines)


def parse_action(text: str, names: set[str]) -> ToolCall | None:
    """A tool call written as text: {"tool"|"name": ..., "arguments"|"parameters": ...}."""
    start = text.find("{")
    if start < 0:
        return None
    try:
        obj = json_repair.loads(text[start:])
    except (ValueError, RecursionError):
        return None
    if isinstance(obj, list):
        obj = next((o for o in obj if isinstance(o, dict)), None)
    if not isinstance(obj, dict):
        return None
    name = obj.get("tool") or obj.get("name") or obj.get("function")
    if name is None and _bare_answer(obj, names):  # {"text": …, "sources": …}: the answer
        return ToolCall("answer", obj)
    arguments = obj.get("arguments", obj.get("parameters", {}))
    if isinstance(arguments, str):
        arguments = json_repair.loads(arguments) if arguments.strip() else {}
    if name not in names or not isinstance(arguments, dict):
        return None
    return ToolCall(str(name), arguments)


def _bare_answer(obj: dict[str, Any], names: set[str]) -> bool:
    """The answer tool's arguments written alone (a small model's habit): answer text and
    nothing but the answer's own fields."""
    fields = {"text", "confidence", "sources"}
    return "answer" in names and isinstance(obj.get("text"), str) and set(obj) <= fields


def _native_calls(message: Any) -> list[ToolCall]:
    calls = []
    for call in getattr(message, "tool_calls", None) or []:
        raw = call.function.arguments or "{}"
        try:
            arguments = json.loads(raw)
        except json.JSONDecodeError:
            arguments = json_repair.loads(raw) or {}
        calls.append(
            ToolCall(call.function.name, arguments if isinstance(arguments, dict) else {}, call.id)
        )
    return calls


def chat_with_tools(
    llm: LLM,
    messages: Messages,
    tools: list[Tool],
    *,
    stage: str,
    cancel: CancelToken | None = None,
    max_tokens: int = 1024,
) -> ToolReply:
    names = {t.name for t in tools}
    if llm.caps.usable("tools"):
        try:
            response = llm.complete(
                messages,
                stage=stage,
                cancel=cancel,
                max_tokens=max_tokens,
                tools=[t.as_openai() for t in tools],
            )
        except LLMRejected:  # `tools` refused: the JSON-action protocol instead
            capabilities.mark(llm.settings.base_url, llm.settings.model, "tools", False)
        else:
            capabilities.mark(llm.settings.base_url, llm.settings.model, "tools", True)
            message = response.choices[0].message
            text = message.content or ""
            calls = _native_calls(message) or [c for c in [parse_action(text, names)] if c]
            return ToolReply(calls, text, native=True)
    # refused again (LLMRejected: an LLMCallFailed, with the server's reason redacted)
    response = llm.complete(
        _append_to_system(messages, action_instructions(tools)),
        stage=stage,
        cancel=cancel,
        max_tokens=max_tokens,
    )
    text = response.choices[0].message.content or ""
    action = parse_action(text, names)
    return ToolReply([action] if action else [], text, native=False)
