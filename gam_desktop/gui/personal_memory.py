"""What the open memory keeps of its user: the facts learned from what they said (listed
with the conversation each was said in and their history, forgotten and restored as
commits), and the memory's two switches, saving conversations and learning facts
(`Workflow.set_personal_memory`, a commit too). Both follow memory_changed: a learning, a
forget, a restore, a rollback or an outside edit."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from gam_desktop.engine.api import (
    CONVERSATIONS_DIR,
    FACTS_DIR,
    META_FILE,
    Changes,
    Event,
    Fact,
    MemoryFolder,
    Workflow,
    fact_lineages,
)
from gam_desktop.gui.prompts import Prompter
from gam_desktop.gui.session import MemorySession


@dataclass(frozen=True)
class FactRow:
    """A fact as the Facts view lists it: with the title of the conversation it was said
    in ("" when that conversation is gone or it was said in an unsaved one), its history
    (stated, updated, retracted…, oldest first) and the titles of the conversations that
    history names. `current` is False for a fact retracted or forgotten (it can be
    restored)."""

    fact: Fact
    conversation_title: str
    events: tuple[Event, ...] = ()
    current: bool = True
    titles: dict[str, str] = field(default_factory=dict)


def fact_rows(workflow: Workflow) -> list[FactRow]:
    """On a task thread: the current facts, the most recently updated first, then those
    taken back, the most recently ended first."""
    titles = {c.id: c.title for c in workflow.conversations()}
    lines = fact_lineages(workflow)
    lines.sort(key=lambda line: (line.current, line.fact.updated, line.fact.id), reverse=True)
    return [
        FactRow(
            line.fact,
            titles.get(line.fact.source_conversation, ""),
            line.events,
            line.current,
            {
                e.conversation: titles[e.conversation]
                for e in line.events
                if e.conversation in titles
            },
        )
        for line in lines
    ]


class PersonalMemory(QObject):
    """Signals: facts_listed(rows), switches(save_conversations, learn_facts) whenever the
    memory's switches are read (on opening it, and after they changed), forgotten(fact)
    once a Forget is committed (the Facts view offers its Undo)."""

    facts_listed = Signal(object)
    switches = Signal(bool, bool)
    forgotten = Signal(object)

    def __init__(
        self, session: MemorySession, prompter: Prompter, parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        self.session = session
        self.prompter = prompter
        self.rows: list[FactRow] = []
        self.save_conversations = True
        self.learn_facts = True
        self._generation = 0
        session.opened.connect(self.memory_opened)
        session.memory_changed.connect(self.memory_changed)
        # A switch that could not be written: the menu shows the memory's again.
        session.operations.stopped.connect(
            lambda: self.switches.emit(self.save_conversations, self.learn_facts)
        )

    def memory_opened(self, _root: Path, _folder: MemoryFolder) -> None:
        self.rows = []
        self.facts_listed.emit([])
        self._read_switches()
        self.refresh()

    def memory_changed(self, changes: Changes) -> None:
        if changes.touches(META_FILE):
            self._read_switches()
        if changes.touches(FACTS_DIR) or changes.touches(CONVERSATIONS_DIR):
            self.refresh()  # the facts, or the titles of the conversations they cite

    def refresh(self) -> None:
        if self.session.workflow is None:
            return
        self._generation += 1
        generation, workflow = self._generation, self.session.task_workflow()
        self.session.operations.tasks.start(
            "facts",
            lambda _w, _c: fact_rows(workflow),
            on_success=lambda rows: self._listed(generation, rows),
            on_failure=self.prompter.show_error,
        )

    def _listed(self, generation: int, rows: list[FactRow]) -> None:
        if generation == self._generation:
            self.rows = rows
            self.facts_listed.emit(rows)

    def forget(self, fact: Fact) -> None:
        """Forget a fact: a commit (its tombstone in facts/.deleted), which Restore (the
        view's Undo) or History undoes."""
        self.session.write(
            "forget",
            lambda workflow: workflow.forget_fact(fact.id),
            "Forgetting…",
            lambda _changes: f"Forgot: {fact.statement}",
            then=lambda _changes: self.forgotten.emit(fact),
        )

    def restore(self, fact: Fact) -> None:
        """Bring back a forgotten or retracted fact: a commit of its own."""
        self.session.write(
            "restore-fact",
            lambda workflow: workflow.restore_fact(fact.id),
            "Restoring…",
            lambda _changes: f"Restored: {fact.statement}",
        )

    # -- the memory's switches --------------------------------------------------------------

    def _read_switches(self) -> None:
        workflow = self.session.workflow
        meta = workflow.folder.read_meta() if workflow is not None else None
        if meta is not None:
            self.save_conversations, self.learn_facts = meta.save_conversations, meta.learn_facts
        else:  # not a memory yet: the defaults its first build will write
            self.save_conversations = self.learn_facts = True
        self.switches.emit(self.save_conversations, self.learn_facts)

    def set_saving(self, on: bool) -> None:
        if on == self.save_conversations:
            return
        self._switch(
            "Conversations are saved in this memory"
            if on
            else "Conversations are no longer saved (those saved are kept)",
            save_conversations=on,
        )

    def set_learning(self, on: bool) -> None:
        if on == self.learn_facts:
            return
        self._switch(
            "Facts are learned from what you say"
            if on
            else "No more facts are learned (those learned are kept)",
            learn_facts=on,
        )

    def _switch(self, said: str, **switches: bool) -> None:
        if self.session.workflow is None or self.session.workflow.folder.read_meta() is None:
            self.prompter.tell(
                "Add documents first",
                "These switches belong to a memory: add documents to this folder first.",
            )
            self.switches.emit(self.save_conversations, self.learn_facts)
            return
        self.session.write(
            "settings",
            lambda workflow: workflow.set_personal_memory(**switches),
            "Saving the setting…",
            lambda _none: said,
        )
