"""Every view updates from the session's one memory_changed(changes) signal: the tree, the
open preview, the history and the chat's sources; one emission per operation; each task's
Workflow is made on the GUI thread."""

from __future__ import annotations

import threading
from pathlib import Path

from gam_desktop.engine import workflow as workflow_module
from gam_desktop.engine.models import ChatResult, Citation
from gam_desktop.engine.store.changes import Changes
from gam_desktop.engine.store.markdown import render_memory
from gam_desktop.gui.app import make_app
from gam_desktop.gui.chat_panel import ChatPanel
from tests.gui.test_main_window import SAMPLES, built, drop, history, idle, newest_is, wait


def memories(root: Path) -> set[str]:
    return {
        p.relative_to(root).as_posix()
        for p in root.rglob("*.md")
        if p.name != "README.md" and not p.relative_to(root).parts[0].startswith(".")
    }


def heard(window) -> list[Changes]:
    emitted: list[Changes] = []
    window.session.memory_changed.connect(emitted.append)
    return emitted


def test_the_empty_memory_advice_gives_way_to_the_overview(qtbot, window, tmp_path) -> None:
    memory = tmp_path / "memory"
    assert window.open_memory(memory)
    assert window.preview.title.text() == "This memory is empty"
    built(qtbot, window, memory, SAMPLES[:1])
    assert window.preview.title.text() != "This memory is empty"
    assert window.preview.path == "README.md"  # the new memory's overview


def test_an_outside_edit_of_the_previewed_file_updates_the_preview(qtbot, window, tmp_path) -> None:
    memory = tmp_path / "memory"
    built(qtbot, window, memory, SAMPLES[:1])
    shown = sorted(memories(memory))[0]
    window.open_file(shown)
    assert window.preview.path == shown
    emitted = heard(window)
    (memory / shown).write_text(
        render_memory({"title": "edited elsewhere"}, "Rewritten in another editor.")
    )
    wait(qtbot, lambda: "Rewritten in another editor." in window.preview.body.toPlainText())
    assert window.preview.title.text() == "edited elsewhere"
    assert [c.kind for c in emitted] == ["outside-edit"] and shown in emitted[0].modified


def test_a_rollback_that_removes_the_previewed_file_clears_it_once(
    qtbot, window, tmp_path, git_threads
) -> None:
    memory = tmp_path / "memory"
    built(qtbot, window, memory, SAMPLES[:1])
    first = memories(memory)
    drop(window, SAMPLES[1:2])
    wait(qtbot, lambda: idle(window) and newest_is(window, "add"))
    added = sorted(memories(memory) - first)[0]
    window.open_file(added)
    assert window.preview.path == added
    emitted = heard(window)
    window.history.select(history(qtbot, window)[0].sha)
    window.history.rollback.click()
    wait(qtbot, lambda: idle(window) and newest_is(window, "rollback"))
    assert window.preview.path is None
    assert window.preview.title.text().replace("\u200b", "") == f"{added} no longer exists"
    wait(qtbot, lambda: "removed by “Rolled back: Added" in window.preview.body.toPlainText())
    qtbot.wait(1500)  # the watcher sees git's writes too: that echo is no second change
    assert [c.kind for c in emitted] == ["rollback"] and added in emitted[0].removed
    assert threading.main_thread() not in git_threads


def test_one_memory_changed_per_operation(qtbot, window, tmp_path) -> None:
    memory = tmp_path / "memory"
    assert window.open_memory(memory)
    emitted = heard(window)
    built(qtbot, window, memory, SAMPLES[:1])
    drop(window, SAMPLES[1:])
    wait(qtbot, lambda: idle(window) and newest_is(window, "add"))
    qtbot.wait(1000)  # time for any echo of the app's own writes
    assert [c.kind for c in emitted] == ["build", "add"]
    assert all(c.commit for c in emitted)
    assert memories(memory) <= emitted[0].added | emitted[1].added  # what the tree now shows


def test_each_task_gets_a_workflow_made_on_the_gui_thread(
    qtbot, window, tmp_path, monkeypatch
) -> None:
    made: list[threading.Thread] = []
    original = workflow_module.Workflow.__init__

    def recording(self, *args, **kwargs) -> None:
        made.append(threading.current_thread())
        original(self, *args, **kwargs)

    monkeypatch.setattr(workflow_module.Workflow, "__init__", recording)
    built(qtbot, window, tmp_path / "memory", SAMPLES[:1])
    window.chat.input.setPlainText("What is BERT?")
    window.chat.send.click()
    wait(qtbot, lambda: window.chat.turns[-1].result is not None)
    assert len(made) >= 4  # the window's own, the estimate, the build, the question
    assert set(made) == {threading.main_thread()}


def test_chat_sources_follow_moves_and_removals(qtbot) -> None:
    make_app([])
    panel = ChatPanel()
    qtbot.addWidget(panel)
    panel.input.setPlainText("Where do quokkas live?")
    panel.send.click()
    panel.show_result(
        ChatResult(
            question="Where do quokkas live?",
            answer="On Rottnest Island.",
            sources=["all/quokkas.md", "all/wombats.md"],
            citations=[Citation(path="all/quokkas.md"), Citation(path="all/wombats.md")],
        )
    )
    moved = Changes("reorganize", moved=frozenset({("all/quokkas.md", "animals/quokkas.md")}))
    panel.memory_changed(moved)
    html = panel.transcript.toHtml()
    assert 'href="source:animals/quokkas.md"' in html and "source:all/quokkas.md" not in html
    panel.memory_changed(Changes("rollback", removed=frozenset({"all/wombats.md"})))
    assert "all/wombats.md (removed)" in panel.transcript.toPlainText()
    assert "source:all/wombats.md" not in panel.transcript.toHtml()
    panel.memory_changed(Changes("rollback", added=frozenset({"all/wombats.md"})))
    assert "source:all/wombats.md" in panel.transcript.toHtml()  # back, and a link again
