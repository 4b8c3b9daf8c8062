"""The scripted server knows a call's task by the stage our client names in its header
(STAGE_HEADER), never by the wording of a prompt: every stage the engine's calls name is
routed to a task it answers, and the engine works with every system prompt reworded."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path
from typing import Any

import gam_desktop
from gam_desktop.engine.llm import LLMClient
from gam_desktop.engine.llm.protocol import LLM
from gam_desktop.engine.llm.tools import chat_with_tools
from gam_desktop.engine.progress import CancelToken
from gam_desktop.selfcheck.scripted_llm import ANSWERED, STAGE_TASKS, task_of
from tests.documents import built_pebblecast_notes

PRODUCT = Path(gam_desktop.__file__).parent
REWORDED = "These instructions were reworded by a test; they open like no prompt of the app."
# The LLM's calls that take a stage: the protocol's methods, and the tool-calling loop.
LLM_CALLS = {
    name
    for name, member in vars(LLM).items()
    if callable(member) and "stage" in inspect.signature(member).parameters
} | {chat_with_tools.__name__}


def engine_stages() -> set[str]:
    """The stage names the product's LLM calls give (`stage="..."`), read from its source;
    a call passing on its own `stage` parameter names none of its own."""
    stages: set[str] = set()
    unknown: list[str] = []
    for path in PRODUCT.rglob("*.py"):
        if "selfcheck" in path.parts:  # the scripted server's own side
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            for keyword in node.keywords:
                if name not in LLM_CALLS or keyword.arg != "stage":
                    continue
                value = keyword.value
                if isinstance(value, ast.Constant) and isinstance(value.value, str):
                    stages.add(value.value)
                elif not (isinstance(value, ast.Name) and value.id == "stage"):
                    unknown.append(f"{path.relative_to(PRODUCT)}:{node.lineno}")
    assert unknown == [], f"stages that are not written out, so cannot be checked: {unknown}"
    return stages


def test_every_stage_the_engine_names_is_routed_to_a_task_the_server_answers() -> None:
    stages = engine_stages()
    assert {"memorize", "organize", "read", "research_plan", "probe"} <= stages  # it reads them
    assert stages == set(STAGE_TASKS), (
        "a stage the engine names has no task, or one it no longer names"
    )
    messages = [{"role": "system", "content": REWORDED}, {"role": "user", "content": "text"}]
    for stage in stages:
        assert task_of(messages, stage) == STAGE_TASKS[stage]
        assert STAGE_TASKS[stage] in ANSWERED


def test_a_request_without_the_header_is_routed_by_no_prompt_of_the_app() -> None:
    """Only another program's request, forwarded by gam-serve, comes without the header:
    it is told by the passages gam-serve injects; the app's prompt openings route nothing."""
    memorizer = [{"role": "system", "content": "You are a memory generation agent."}]
    assert task_of(memorizer) == "chat"
    assert task_of(memorizer, "memorize") == "memorize"
    forwarded = [{"role": "system", "content": "Passages from the user's memory (GAM), ..."}]
    assert task_of(forwarded) == "recall"


class Reworded(LLMClient):
    """The real client, every system prompt it sends replaced by other words."""

    def complete(
        self,
        messages: list[dict[str, Any]],
        *,
        stage: str,
        cancel: CancelToken | None = None,
        **extra: Any,
    ) -> Any:
        reworded = [
            {**m, "content": REWORDED} if m.get("role") == "system" else m for m in messages
        ]
        return super().complete(reworded, stage=stage, cancel=cancel, **extra)


def test_the_engine_works_with_every_system_prompt_reworded(
    make_workflow, tmp_path: Path, llm_server
) -> None:
    workflow = built_pebblecast_notes(
        lambda **kw: make_workflow(llm_factory=Reworded, **kw), tmp_path
    )
    assert workflow.folder.load_view().memory_count() == 2
    answer = workflow.request("What is the longest single episode in Pebblecast 6.0?")
    assert "20 hours" in answer.answer
    report = workflow.research("Compare the refresh interval of Pebblecast 5.1 and Pebblecast 6.0")
    assert {c.source for c in report.citations} == {
        "pebblecast-5.1-release-notes.md",
        "pebblecast-6.0-release-notes.md",
    }
    learned = workflow.learn_from_turn("c-1", 1, "I live in Porto.")
    assert learned.summary() == "Learned 1 fact"
    assert [f.statement for f in workflow.facts()] == ["The user lives in Porto."]
    tasks = set(llm_server.state.tasks())
    assert {"memorize", "organize", "read", "research_plan", "research_integrate"} <= tasks
    assert {"research_reflect", "extract_facts"} <= tasks
    systems = [
        m["content"]
        for r in llm_server.state.requests
        for m in r["messages"]
        if m["role"] == "system"
    ]
    assert systems and set(systems) == {REWORDED}  # every call came through the reworder
