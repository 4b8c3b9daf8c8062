"""The History panel on its own: pages of operations, changes and diffs loaded on worker
threads (never git on the GUI thread), and results that arrive too late are dropped."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from PySide6.QtWidgets import QApplication

from gam_desktop.engine.history.gitrepo import MemoryRepo
from gam_desktop.engine.history.log import TRAILER_KIND, FileChange
from gam_desktop.gui import history_panel, theme
from gam_desktop.gui.app import make_app
from gam_desktop.gui.history_panel import HistoryPanel, HistorySource

WAIT = 100_000  # ms: a guard against hanging (under the 120 s test timeout), not a speed limit


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    """A repository with five operations, one note each."""
    repo = MemoryRepo.open(tmp_path, None)
    (tmp_path / ".gam_meta.json").write_text('{"total_chunks": 1}\n')  # an app file
    for i in range(5):
        (tmp_path / f"note{i}.md").write_text(f"note {i}\n")
        repo.commit_all(f"Note {i}", {TRAILER_KIND: "manual-edit"})
    return tmp_path


@pytest.fixture
def panel(qtbot) -> HistoryPanel:
    make_app([])
    panel = HistoryPanel()
    qtbot.addWidget(panel)
    yield panel
    panel.shutdown()


def loaded(qtbot, panel: HistoryPanel, count: int) -> None:
    qtbot.waitUntil(lambda: not panel.loading() and len(panel.operations) == count, timeout=WAIT)


def test_pages_changes_and_diffs_load_off_the_gui_thread(
    qtbot, panel, notes, git_threads, monkeypatch
) -> None:
    monkeypatch.setattr(history_panel, "PAGE", 2)
    panel.set_history(HistorySource(notes), None)
    assert panel.operations == []  # the GUI thread did not wait for git
    loaded(qtbot, panel, 2)
    assert [op.summary for op in panel.operations] == ["Note 4", "Note 3"]
    assert not panel.more.isHidden()
    assert panel.files.topLevelItem(0).text(1) == "note4.md"
    assert "+ note 4" in panel.diff.toPlainText()  # (words.readable_diff)
    panel.more.click()
    loaded(qtbot, panel, 4)
    panel.more.click()
    loaded(qtbot, panel, 5)
    assert panel.more.isHidden()  # the last page was short
    panel.select(panel.operations[-1].sha)  # the first operation: the meta file and note0.md
    qtbot.waitUntil(lambda: panel.files.topLevelItemCount() == 2, timeout=WAIT)
    names = [panel.files.topLevelItem(i).text(1) for i in range(2)]
    assert names == ["note0.md", ".gam_meta.json"]  # the app's own files last
    panel.files.setCurrentItem(panel.files.topLevelItem(1))
    qtbot.waitUntil(lambda: '+ {"total_chunks": 1}' in panel.diff.toPlainText(), timeout=WAIT)
    assert git_threads and threading.main_thread() not in git_threads


def test_late_results_are_dropped(qtbot, panel, notes) -> None:
    panel.set_history(HistorySource(notes), None)
    loaded(qtbot, panel, 5)
    newest, older = panel.operations[0], panel.operations[1]
    panel.select(older.sha)
    qtbot.waitUntil(lambda: not panel.loading(), timeout=WAIT)
    panel._show_changes(newest.sha, [FileChange("added", "stale.md")], "+stale")
    panel._show_diff((newest.sha, "note1.md"), "+stale")
    assert panel.files.topLevelItem(0).text(1) == "note3.md"
    assert "stale" not in panel.diff.toPlainText()
    panel._show_page(0, 0, panel.operations[:1])  # a page of a list reloaded since
    assert panel.list.topLevelItemCount() == 5


def test_without_git_the_notice_says_why(qtbot, panel) -> None:
    panel.set_history(None, "History is unavailable: git was not found.")
    assert not panel.notice.isHidden() and "git was not found" in panel.notice.text()
    assert panel.list.topLevelItemCount() == 0 and panel.more.isHidden()
    assert not panel.loading() and not panel.rollback.isEnabled()


def test_a_diff_wraps_in_a_narrow_column(qtbot, panel, tmp_path: Path) -> None:
    """Long lines (a memory's paragraph, a path without spaces) wrap instead of scrolling
    sideways, and a theme change redraws the diff in the new colours."""
    repo = MemoryRepo.open(tmp_path, None)
    paragraph = " ".join(f"word{i}" for i in range(80))
    path = "a/" + "very_long_folder_name_" * 8 + "end.md"
    (tmp_path / "memory.md").write_text(f"{paragraph}\n{path}\n")
    repo.commit_all("Long lines", {TRAILER_KIND: "manual-edit"})
    panel.resize(360, 700)
    panel.show()
    panel.set_history(HistorySource(tmp_path), None)
    qtbot.waitUntil(lambda: f"+ {paragraph}" in panel.diff.toPlainText(), timeout=WAIT)
    assert panel.diff.viewport().width() < 360
    assert panel.diff.horizontalScrollBar().maximum() == 0  # nothing to scroll sideways to
    assert f"+ {path}" in panel.diff.toPlainText()  # wrapped, not cut
    light = panel.diff.toHtml()
    theme.choose(QApplication.instance(), theme.DARK_CHOICE)
    try:
        assert panel.diff.toHtml() != light and theme.DARK["diff_add"] in panel.diff.toHtml()
    finally:
        theme.choose(QApplication.instance(), theme.SYSTEM)


def test_a_notes_change_reads_as_its_text(qtbot, panel, tmp_path: Path) -> None:
    """Issue 39, item 14: the lines of the note added and removed, not git's patch with its
    headers and the front matter's bookkeeping; what changed in the front matter is said
    in words ("Title changed from … to …"), its dates and hashes not at all."""
    repo = MemoryRepo.open(tmp_path, None)
    front = "---\ntitle: Water\nupdated: '2025-01-01'\nhash: abc\n---\n\n"
    note = tmp_path / "water.md"
    note.write_text(front + "Drink two litres a day.\nMore in summer.\n")
    repo.commit_all("Water", {TRAILER_KIND: "add"})
    note.write_text(
        front.replace("2025-01-01", "2025-02-01")
        .replace("abc", "def")
        .replace("title: Water", "title: Drinking water")
        + "Drink three litres a day.\nMore in summer.\n"
    )
    repo.commit_all("Edited", {TRAILER_KIND: "manual-edit"})
    panel.set_history(HistorySource(tmp_path), None)
    qtbot.waitUntil(lambda: "three litres" in panel.diff.toPlainText(), timeout=WAIT)
    shown = panel.diff.toPlainText().splitlines()
    assert shown[0] == "Title changed from “Water” to “Drinking water”"
    assert "− Drink two litres a day." in shown and "+ Drink three litres a day." in shown
    text = "\n".join(shown)
    for raw in ("diff --git", "@@", "index ", "+++", "---", "title:", "updated", "hash"):
        assert raw not in text


SUMMARIZED_AGAIN = """---
title: Escalation
index: 3
tldr: Incidents escalate after 30 minutes.
source: acme_oncall.md
source_hash: 9f2c
span: [120, 480]
pages: [2, 3]
tokens: 412
hash: {hash}
created: '2026-11-20T10:00:00+00:00'
{fallback}---

Incidents that nobody acknowledges escalate to the secondary engineer.
{line}
"""


def test_front_matter_inside_a_hunk_is_said_in_words_not_shown(qtbot, panel, tmp_path) -> None:
    """Issue 39: "Summarize again" changes a note's hash and drops its `fallback: true`
    deep in its front matter; git's hunk then starts inside the front matter (not at its
    first line), and its YAML was shown as the note's text: "+ hash: 7d1e", "− fallback:
    true", and its closing "---". It is said in words instead."""
    repo = MemoryRepo.open(tmp_path, None)
    note = tmp_path / "acme" / "escalation.md"
    note.parent.mkdir()
    note.write_text(
        SUMMARIZED_AGAIN.format(hash="0a1b", fallback="fallback: true\n", line="After 30 minutes.")
    )
    repo.commit_all("Add", {TRAILER_KIND: "add"})
    note.write_text(
        SUMMARIZED_AGAIN.format(hash="7d1e", fallback="", line="The primary has 30 minutes.")
    )
    repo.commit_all("Summarized 1 note again", {TRAILER_KIND: "summarize", "Gam-Tokens": "3456"})
    panel.set_history(HistorySource(tmp_path), None)
    qtbot.waitUntil(lambda: "primary" in panel.diff.toPlainText(), timeout=WAIT)
    shown = panel.diff.toPlainText().splitlines()
    assert shown[0] == "Summary now written by the model"
    assert "+ The primary has 30 minutes." in shown and "− After 30 minutes." in shown
    text = "\n".join(shown)
    for raw in ("hash", "fallback", "tokens", "---", "created", "true"):
        assert raw not in text, raw
    row = panel.list.topLevelItem(0)
    assert panel.list.headerItem().text(3) == "Model use"  # not "Tokens"
    assert row.text(3) == "≈ 2,600 words" and "about 2,600 words: 3,456 tokens" in row.toolTip(3)


def test_the_rows_stay_until_the_new_ones_are_in(qtbot, panel, notes) -> None:
    """Seen in the walkthrough: after every change the list was blank for a second or two,
    its buttons disabled, with no sign of loading. The rows shown stay (usable) with
    "Loading…" beside the buttons; the operation chosen stays chosen, and when the newest
    was, the new newest is (what was just done)."""
    panel.show()
    panel.set_history(HistorySource(notes), None)
    loaded(qtbot, panel, 5)
    chosen = panel.operations[2].sha
    panel.select(chosen)
    repo = MemoryRepo.open(notes, None)
    (notes / "note5.md").write_text("note 5\n")
    repo.commit_all("Note 5", {TRAILER_KIND: "manual-edit"})
    panel.refresh()
    assert panel.list.topLevelItemCount() == 5 and panel.current().sha == chosen
    assert panel.rollback.isEnabled() and panel.restore.isEnabled()
    assert not panel.loading_note.isHidden()
    loaded(qtbot, panel, 6)
    assert panel.operations[0].summary == "Note 5" and panel.current().sha == chosen
    assert panel.loading_note.isHidden() and panel.rollback.isEnabled()
    panel.select(panel.operations[0].sha)  # the newest
    (notes / "note6.md").write_text("note 6\n")
    repo.commit_all("Note 6", {TRAILER_KIND: "manual-edit"})
    panel.refresh()
    loaded(qtbot, panel, 7)
    assert panel.current().summary == "Note 6"
    qtbot.waitUntil(lambda: panel.files.topLevelItemCount() == 1, timeout=WAIT)
    assert panel.files.topLevelItem(0).text(1) == "note6.md"


def test_kinds_and_the_rollback_button_say_what_the_operation_was() -> None:
    """Seen in the walkthrough: a fact brought back ("Restored: …") was listed as a Forget,
    and an undone rollback ("Undid rollback: …") still offered "Undo this rollback…"."""
    from gam_desktop.engine.history.log import Operation
    from gam_desktop.gui.history_panel import kind_label, rollback_label

    def operation(kind: str, summary: str) -> Operation:
        return Operation("0" * 40, 0, summary, {TRAILER_KIND: kind})

    assert kind_label(operation("forget", "Forgot: The user lives in Porto.")) == "Forget"
    assert kind_label(operation("forget", "Restored: The user lives in Porto.")) == "Restore"
    assert rollback_label(operation("add", "Added 2 documents")) == "Roll back…"
    assert rollback_label(operation("rollback", "Rolled back: Add")) == "Undo this rollback…"
    assert rollback_label(operation("rollback", "Undid rollback: Add")) == "Roll back again…"


def test_a_narrow_list_gives_the_model_use_column_s_room_to_what_was_done(qtbot, panel) -> None:
    """Seen in the screenshots at 800 px: the What column had ten letters ("Chat: I a…")
    beside When, Kind and Model use. Where the list is narrow, Model use gives way (each
    row's tooltip says it); a wider list shows it again."""
    import time

    from gam_desktop.engine.history.log import Operation

    now = int(time.time())  # "Today 03:13"
    operations = [
        Operation("a" * 40, now, "Chat: I am a vegetarian.", {TRAILER_KIND: "chat"}),
        Operation("b" * 40, now, "Added 1 document (5 notes)",
                  {TRAILER_KIND: "add", "Gam-Tokens": "2100"}),
    ]  # fmt: skip
    panel.resize(340, 500)
    panel.show()
    panel._show_page(panel._generation, 0, operations)
    QApplication.processEvents()
    what = panel.list.header().sectionSize(2)
    chars = panel.list.fontMetrics().averageCharWidth()
    assert panel.list.isColumnHidden(3) and what >= history_panel.WHAT_MIN_CHARS * chars
    assert "2,100 tokens" in panel.list.topLevelItem(1).toolTip(2)
    panel.resize(800, 500)
    qtbot.waitUntil(lambda: not panel.list.isColumnHidden(3), timeout=WAIT)
    assert panel.list.header().sectionSize(3) > 0
