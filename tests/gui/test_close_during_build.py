"""Closing the window while a build runs (issue 13, item 3): the person is asked, and the
build is neither thrown away silently nor half-written. Finish: the build commits, then the
window closes itself. Cancel: the memory is as it was (git HEAD and files unchanged). Keep
working: the window stays open and the build goes on.

Opening another memory while a build runs (File ▸ New memory, Open memory, Open Recent) is
asked the same way: the build used to go on writing the old memory while its results landed
in the new memory's views. Finish: the build commits to the old memory, then the other one
opens. Cancel: the old memory is as it was, then the other one opens. Keep working: nothing
is opened and the build goes on."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt

from gam_desktop.engine.store.folder import MemoryFolder
from gam_desktop.gui import dialogs
from gam_desktop.gui.closing import CloseChoice
from gam_desktop.gui.new_memory_dialog import NewMemoryDialog
from gam_desktop.selfcheck.scripted_llm import Fault
from tests.documents import topic_document
from tests.gui.test_main_window import SAMPLES, built, drop, idle, wait
from tests.repos import git

WAIT = 90_000  # ms: a slowed build on a loaded machine; a wait, not a speed assertion


def head(memory: Path) -> str:
    return git(memory, "rev-parse", "HEAD").strip()


def operation(memory: Path) -> str:
    """The newest commit's operation kind (its Gam-Operation trailer)."""
    return git(memory, "log", "-1", "--format=%(trailers:key=Gam-Operation,valueonly)").strip()


def files(memory: Path) -> dict[Path, bytes]:
    """The memory's own files (not git's, the cache or the lock)."""
    return {
        p: p.read_bytes()
        for p in memory.rglob("*")
        if p.is_file() and ".git" not in p.parts and "cache" not in p.parts and "lock" not in p.name
    }


def building(qtbot, window, llm_server, memory: Path) -> str:
    """A memory built once, then a second, slowed build of two documents running; the
    HEAD before that second build."""
    built(qtbot, window, memory, SAMPLES[:1])
    before = head(memory)
    llm_server.state.latency_s = 0.4
    drop(window, SAMPLES[1:])
    wait(qtbot, lambda: bool(window.tasks.running("build")), timeout=WAIT)
    return before


def test_finish_then_close_commits_the_build_and_then_closes(
    qtbot, window, recorder, llm_server, tmp_path
) -> None:
    memory = tmp_path / "memory"
    before = building(qtbot, window, llm_server, memory)
    recorder.on_close = CloseChoice.FINISH
    assert not window.close()  # not now: the build goes on
    task, title, text = recorder.close_asked[-1]
    assert task == "build" and title == "A build is still running"
    assert "memory" in text and "nothing from the build is saved" in text
    assert window.isVisible() and window.tasks.running("build")
    assert not window.centralWidget().isEnabled()  # no new work while it finishes
    assert "closes by itself" in window.closing._note_label().text()
    assert "closing when the build is done" in window.windowTitle()
    wait(qtbot, lambda: not window.isVisible(), timeout=WAIT)  # it closed itself
    assert not window.tasks.running("build")  # it closed once the build had ended
    assert head(memory) != before and operation(memory) == "add"  # committed
    assert window.store.value("window/geometry")  # a real close: the layout saved
    assert len(recorder.close_asked) == 1  # its own close did not ask again


def test_cancel_and_close_leaves_the_memory_unchanged(
    qtbot, window, recorder, llm_server, tmp_path
) -> None:
    memory = tmp_path / "memory"
    before = building(qtbot, window, llm_server, memory)
    files_before = files(memory)
    recorder.on_close = CloseChoice.CANCEL
    assert window.close()
    assert recorder.close_asked and recorder.close_asked[-1][0] == "build"
    assert not window.isVisible()
    assert all(task.thread.isFinished() for task in window.tasks.tasks.values())  # waited for
    assert head(memory) == before and files(memory) == files_before


def test_keep_working_leaves_the_window_open_and_the_build_running(
    qtbot, window, recorder, llm_server, tmp_path
) -> None:
    memory = tmp_path / "memory"
    before = building(qtbot, window, llm_server, memory)
    recorder.on_close = CloseChoice.KEEP
    assert not window.close()
    assert recorder.close_asked[-1][0] == "build"
    assert window.isVisible() and window.tasks.running("build")
    assert window.centralWidget().isEnabled()
    wait(qtbot, lambda: idle(window) and head(memory) != before, timeout=WAIT)
    assert operation(memory) == "add" and window.isVisible()  # built, and still open


def test_keep_working_after_finish_takes_the_window_back(
    qtbot, window, recorder, llm_server, tmp_path
) -> None:
    memory = tmp_path / "memory"
    building(qtbot, window, llm_server, memory)
    title = window.windowTitle()
    recorder.on_close = CloseChoice.FINISH
    assert not window.close()
    recorder.on_close = CloseChoice.KEEP  # closing again asks again: changed their mind
    assert not window.close()
    assert window.centralWidget().isEnabled() and window.windowTitle() == title
    assert not window.closing.finishing and not window.closing._timer.isActive()
    wait(qtbot, lambda: idle(window), timeout=WAIT)
    assert window.isVisible()  # nothing left to close it


def test_without_a_build_the_window_closes_without_asking(
    qtbot, window, recorder, tmp_path
) -> None:
    built(qtbot, window, tmp_path / "memory", SAMPLES[:1])
    assert window.close() and not window.isVisible()
    assert recorder.close_asked == []


def test_a_reorganization_is_finished_too_before_the_window_closes(
    qtbot, window, recorder, llm_server, tmp_path
) -> None:
    # Three invalid plans are repaired into the model's single folder "all/", mixing topics.
    llm_server.state.faults.append(Fault("invalid_taxonomy", times=3, task="organize"))
    mixed = tmp_path / "mixed.md"
    mixed.write_text(topic_document({"python": 4, "rust": 4}))
    memory = tmp_path / "memory"
    built(qtbot, window, memory, [mixed])
    before = head(memory)
    llm_server.state.latency_s = 0.4
    window.plan_reorganization("all")
    wait(qtbot, lambda: bool(window.tasks.running("reorganize")), timeout=WAIT)
    recorder.on_close = CloseChoice.FINISH
    assert not window.close()
    assert recorder.close_asked[-1][:2] == ("reorganize", "A reorganization is still running")
    wait(qtbot, lambda: not window.isVisible(), timeout=WAIT)
    assert recorder.plans[-1].directory == "all"  # the plan was shown, and accepted
    assert head(memory) != before and operation(memory) == "reorganize"


# -- opening another memory while a build runs ------------------------------------------------


def shows(window, memory: Path) -> bool:
    """The window has `memory` open and shows it, usable again."""
    workflow = window.workflow
    return (
        workflow is not None
        and workflow.folder.root == memory
        and window.windowTitle().startswith(memory.name)
        and window.centralWidget().isEnabled()
        and window.menuBar().isEnabled()
    )


def test_opening_another_memory_during_a_build_can_finish_the_build_first(
    qtbot, window, recorder, llm_server, tmp_path
) -> None:
    memory, other = tmp_path / "memory", tmp_path / "other"
    assert window.open_memory(other)  # known, so it is in File ▸ Open Recent
    before = building(qtbot, window, llm_server, memory)
    recorder.on_close = CloseChoice.FINISH
    window.menus.recent_menu.aboutToShow.emit()
    entry = next(a for a in window.menus.recent_menu.actions() if a.data() == str(other))
    entry.trigger()  # File ▸ Open Recent ▸ other
    task, title, text = recorder.close_asked[-1]
    assert task == "build" and title == "A build is still running"
    assert "“memory”" in text and "“other”" in text
    assert recorder.close_answers[-1] == {
        CloseChoice.FINISH: "Finish the build, then open “other”",
        CloseChoice.CANCEL: "Cancel the build and open “other”",
        CloseChoice.KEEP: "Keep working",
    }
    assert window.workflow.folder.root == memory and window.tasks.running("build")  # not yet
    assert not window.centralWidget().isEnabled() and not window.menuBar().isEnabled()
    assert "“other” opens when it is done" in window.closing._note_label().text()
    wait(qtbot, lambda: shows(window, other), timeout=WAIT)
    assert not window.tasks.running("build")  # it opened once the build had ended
    assert head(memory) != before and operation(memory) == "add"  # committed where it ran
    assert window.tree.memory_count() == 0  # the other memory's (empty) tree: nothing of it
    assert window.isVisible() and len(recorder.close_asked) == 1


def test_a_new_memory_during_a_build_can_cancel_the_build_first(
    qtbot, window, recorder, llm_server, tmp_path
) -> None:
    memory, other = tmp_path / "memory", tmp_path / "other"
    before = building(qtbot, window, llm_server, memory)
    files_before = files(memory)
    recorder.on_close = CloseChoice.CANCEL
    window.menus.new_memory.trigger()  # File ▸ New memory…
    dialog = next(d for d in window.findChildren(NewMemoryDialog) if d.isVisible())
    dialog.location.setText(str(tmp_path))
    dialog.name.setText("other")
    qtbot.mouseClick(dialog.create_button, Qt.MouseButton.LeftButton)
    assert recorder.close_asked[-1][0] == "build"
    assert recorder.close_answers[-1][CloseChoice.CANCEL] == "Cancel the build and open “other”"
    wait(qtbot, lambda: shows(window, other), timeout=WAIT)
    assert not window.tasks.running("build")
    assert head(memory) == before and files(memory) == files_before  # as it was
    assert window.tree.memory_count() == 0 and window.isVisible()


def test_opening_a_memory_during_a_build_can_be_declined_to_keep_working(
    qtbot, window, recorder, llm_server, tmp_path, monkeypatch
) -> None:
    memory, other = tmp_path / "memory", tmp_path / "other"
    other.mkdir()
    monkeypatch.setattr(dialogs, "choose_memory_folder", lambda parent, start="": other)
    before = building(qtbot, window, llm_server, memory)
    title = window.windowTitle()
    recorder.on_close = CloseChoice.KEEP
    window.menus.open_memory.trigger()  # File ▸ Open memory…, choosing `other`
    assert recorder.close_asked[-1][0] == "build"
    assert window.workflow.folder.root == memory and window.windowTitle() == title
    assert window.centralWidget().isEnabled() and window.tasks.running("build")
    wait(qtbot, lambda: idle(window) and head(memory) != before, timeout=WAIT)
    assert operation(memory) == "add" and shows(window, memory)  # built, still this memory
    assert not MemoryFolder(other).is_memory() and list(other.iterdir()) == []


def test_without_a_build_another_memory_opens_without_asking(
    qtbot, window, recorder, tmp_path
) -> None:
    built(qtbot, window, tmp_path / "memory", SAMPLES[:1])
    assert window.open_memory(tmp_path / "other")
    assert shows(window, tmp_path / "other") and recorder.close_asked == []
