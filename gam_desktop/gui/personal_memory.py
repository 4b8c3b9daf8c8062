"""What the open memory keeps of its user: the facts learned from what they said (listed
with the conversation each was said in, forgotten as a commit), and the memory's two
switches, saving conversations and learning facts (`Workflow.set_personal_memory`, a commit
too). Both follow memory_changed: a learning, a forget, a rollback or an outside edit."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from gam_desktop.engine.facts.record import Fact
from gam_desktop.engine.models import META_FILE
from gam_desktop.engine.store.changes import Changes
from gam_desktop.engine.store.folder import CONVERSATIONS_DIR, FACTS_DIR, MemoryFolder
from gam_desktop.engine.workflow import Workflow
from gam_desktop.gui.prompts import Prompter
from gam_desktop.gui.session import MemorySession


@dataclass(frozen=True)
class FactRow:
    """A fact as the Facts view lists it: with the title of the conversation it was said
    in ("" when that conversation is gone or it was said in an unsaved one)."""

    fact: Fact
    conversation_title: str


def fact_rows(workflow: Workflow) -> list[FactRow]:
    """On a task thread: the current facts, the most recently updated first."""
    titles = {c.id: c.title for c in workflow.conversations()}
    facts = sorted(workflow.facts(), key=lambda f: (f.updated, f.id), reverse=True)
    return [FactRow(f, titles.get(f.source_conversation, "")) for f in facts]


class PersonalMemory(QObject):
    """Signals: facts_listed(rows), switches(save_conversations, learn_facts) whenever the
    memory's switches are read (on opening it, and after they changed)."""

    facts_listed = Signal(object)
    switches = Signal(bool, bool)

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
        """Retract a fact: a commit (it moves to facts/.deleted), which History can undo."""
        self.session.write(
            "forget",
            lambda workflow: workflow.forget_fact(fact.id),
            "Forgetting…",
            lambda _changes: f"Forgot: {fact.statement} (History can bring it back)",
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
