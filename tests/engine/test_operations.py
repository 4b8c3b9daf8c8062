"""The Workflow as the composition root (issue 40): every LLM is made by the one factory it
is handed, its operations are one object per domain on one shared context, each write is
heard with its `Changes`, and its former methods are those operations."""

from __future__ import annotations

import socket
from dataclasses import fields
from pathlib import Path

import pytest

from gam_desktop.engine.answering.reading import Reading
from gam_desktop.engine.ingest.prompts import MemoryDraft, PlannedFolder, TaxonomyPlan
from gam_desktop.engine.llm import LLMClient, LLMSettings
from gam_desktop.engine.llm.embeddings import EmbeddingSettings
from gam_desktop.engine.operations.context import OperationContext
from gam_desktop.engine.operations.history import HistoryOperations
from gam_desktop.engine.store.changes import BUILD, CHAT, INITIALIZE, ROLLBACK, SETTINGS, Changes
from gam_desktop.engine.workflow import Operations, Workflow
from tests.fakes import FakeLLM

BUILDER = LLMSettings(base_url="http://builder.invalid/v1", model="builder-model")
CHAT_LLM = LLMSettings(base_url="http://chat.invalid/v1", model="chat-model")
BERT = "BERT is pre-trained by masking 15 percent of the input tokens."


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any connection fails the test: the LLM handed in is the only one used."""

    def refuse(_sock: socket.socket, address: object) -> None:
        raise AssertionError(f"a connection to {address} was attempted")

    monkeypatch.setattr(socket.socket, "connect", refuse)


def fake() -> FakeLLM:
    draft = MemoryDraft(title="Masking in BERT", memory=BERT, tldr="BERT masks 15 percent.")
    folder = PlannedFolder(path="nlp", description="Language models.", chunks=[0])
    return FakeLLM(
        {
            MemoryDraft: draft,
            TaxonomyPlan: TaxonomyPlan(description="Notes.", folders=[folder]),
            Reading: Reading(answer="15 percent of the input tokens.", passages=[1]),
        }
    )


def workflow_on(root: Path, llm: FakeLLM, asked_for: list[LLMSettings]) -> Workflow:
    def factory(settings: LLMSettings) -> FakeLLM:
        asked_for.append(settings)
        return llm

    return Workflow(
        gam_dir=root,
        settings=BUILDER,
        chat_settings=CHAT_LLM,
        embeddings=EmbeddingSettings(enabled="off"),
        llm_factory=factory,
    )


def test_an_add_and_a_question_use_the_llm_handed_in(tmp_path: Path, no_network: None) -> None:
    llm, asked_for, heard = fake(), [], []
    with workflow_on(tmp_path / "memory", llm, asked_for) as workflow:
        workflow.on_change = heard.append  # set after it was made: the operations hear it
        report = workflow.add(text=f"# BERT\n\n{BERT}\n")
        assert report.memories == ["nlp/masking_in_bert.md"]
        assert [c.kind for c in heard] == [BUILD] and "nlp/masking_in_bert.md" in heard[0].added
        assert {s.model for s in asked_for} == {"builder-model"}  # the builder's role
        del asked_for[:]
        result = workflow.request("How many input tokens does BERT mask?")
    assert BERT in result.answer and result.sources == ["nlp/masking_in_bert.md"]
    assert [s.model for s in asked_for] == ["chat-model"]  # the chat's role
    assert llm.stages() == ["memorize", "organize", "read"]


def test_each_domain_is_an_operation_object_on_the_one_context(tmp_path: Path) -> None:
    with workflow_on(tmp_path / "memory", fake(), []) as workflow:
        domains = {f.name: getattr(workflow.ops, f.name) for f in fields(Operations)}
        assert set(domains) == {
            *("ingest", "organize", "history", "ask"),
            *("conversations", "facts", "search", "watch"),
        }
        assert isinstance(workflow.context, OperationContext)
        assert all(domain.context is workflow.context for domain in domains.values())
        workflow.settings = CHAT_LLM  # a setting changed on the Workflow is the context's
        assert workflow.context.settings is CHAT_LLM


def test_each_domains_writes_are_heard_with_their_changes(tmp_path: Path) -> None:
    heard: list[Changes] = []
    with workflow_on(tmp_path / "memory", fake(), []) as workflow:
        (tmp_path / "memory").mkdir()
        workflow.on_change = heard.append
        ops = workflow.ops
        ops.ingest.initialize()
        ops.facts.set_personal_memory(learn_facts=False)
        turn = ops.conversations.save_turn("What is BERT?", "An encoder.")
        assert turn.conversation_id is not None and turn.path is not None
        renamed = ops.conversations.rename(turn.conversation_id, "BERT")
        assert workflow.history is not None
        undone = workflow.history.operations(limit=1)[0]
        commit = ops.history.rollback(undone.sha)
    assert [c.kind for c in heard] == [INITIALIZE, SETTINGS, CHAT, CHAT, ROLLBACK]
    assert heard[2].added == {turn.path} and renamed is heard[3]
    assert heard[-1].commit == commit and heard[-1].modified == {turn.path}


def test_the_former_methods_are_the_operations(tmp_path: Path) -> None:
    with workflow_on(tmp_path / "memory", fake(), []) as workflow:
        assert workflow.rollback.__func__ is HistoryOperations.rollback  # type: ignore[attr-defined]
        assert workflow.rollback.__self__ is workflow.ops.history  # type: ignore[attr-defined]
        assert Workflow.interrupted(workflow) is None  # read on the class: takes the Workflow
        assert Workflow.interrupted.__qualname__ == "Workflow.interrupted"


def test_the_real_client_is_the_default_factory(tmp_path: Path) -> None:
    assert Workflow(gam_dir=tmp_path, settings=BUILDER).llm_factory is LLMClient
    made = Workflow(gam_dir=tmp_path, settings=BUILDER, make_llm=FakeLLM)  # its former name
    assert made.llm_factory is FakeLLM and made.make_llm is FakeLLM
