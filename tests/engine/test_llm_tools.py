"""Tool calling with native `tools` and with the JSON action fallback."""

from __future__ import annotations

from gam_desktop.engine.llm import LLMClient
from gam_desktop.engine.llm.tools import Tool, chat_with_tools, parse_action

LS = Tool(
    "ls",
    "List a directory",
    {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)
CAT = Tool("cat", "Read a file", {"type": "object", "properties": {"file": {"type": "string"}}})
MESSAGES = [
    {"role": "system", "content": "You are a research agent."},
    {"role": "user", "content": "What is in the memory?"},
]


def test_native_tool_call(settings, llm_server) -> None:
    reply = chat_with_tools(LLMClient(settings), MESSAGES, [LS, CAT], stage="chat")
    assert reply.native
    assert [(c.name, c.arguments) for c in reply.calls] == [("cat", {"file": "README.md"})]
    assert llm_server.state.requests[0]["tools"] is True


def test_server_without_tools_uses_json_actions_and_remembers(settings, llm_server) -> None:
    llm_server.state.reject.add("tools")
    client = LLMClient(settings)
    first = chat_with_tools(client, MESSAGES, [LS, CAT], stage="chat")
    second = chat_with_tools(client, MESSAGES, [LS, CAT], stage="chat")
    for reply in (first, second):
        assert not reply.native
        assert [(c.name, c.arguments) for c in reply.calls] == [("cat", {"file": "README.md"})]
    sent = [r["tools"] for r in llm_server.state.requests]
    assert sent == [True, False, False]  # rejected once, then never offered again
    system = llm_server.state.requests[1]["messages"][0]["content"]
    assert "You can use these tools" in system and "- cat(file)" in system


def test_tool_call_written_as_text_is_understood() -> None:
    names = {"ls", "cat"}
    text = 'I will read it.\n```json\n{"name": "cat", "arguments": "{\\"file\\": \\"a.md\\"}"}\n```'
    call = parse_action(text, names)
    assert call is not None and (call.name, call.arguments) == ("cat", {"file": "a.md"})
    assert parse_action('{"tool": "rm", "arguments": {}}', names) is None  # unknown tool
    assert parse_action("The answer is 42.", names) is None


def test_the_answers_arguments_written_alone_are_the_answer() -> None:
    """The 1.5B model replied '{"text": "Garden log brandt 2021", "confidence": 0.9,
    "sources": [...]}' and the user saw that JSON as the answer."""
    text = '{"text": "Brandt led the team.", "confidence": 0.9, "sources": ["a/b.md"]}'
    call = parse_action(text, {"ls", "answer"})
    assert call is not None and call.name == "answer"
    assert call.arguments == {
        "text": "Brandt led the team.",
        "confidence": 0.9,
        "sources": ["a/b.md"],
    }
    assert parse_action(text, {"ls", "cat"}) is None  # no answer tool offered
    assert parse_action('{"text": "x", "path": "/etc"}', {"answer"}) is None  # other fields
