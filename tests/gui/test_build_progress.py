"""The status bar during a build: one determinate bar across every stage, the stage named
beside it, never going back (it used to restart at 0% for planning, READMEs and the write)."""

from __future__ import annotations

from gam_desktop.gui.main_window import PROGRESS_STEPS
from tests.documents import topic_document
from tests.gui.test_main_window import drop, idle, wait


def bar_as_drawn(window) -> list[tuple[str, int, int]]:
    """(status text, value, maximum) of the progress bar each time the window drew it."""
    shown: list[tuple[str, int, int]] = []

    def drawn(_fraction: float) -> None:  # connected after the window's own slot
        bar = window.progress
        shown.append((window.status_label.text(), bar.value(), bar.maximum()))

    window.operations.progressed.connect(drawn)
    return shown


def test_the_bar_moves_forward_through_every_stage(qtbot, window, tmp_path) -> None:
    files = []
    for name, topics in (("python", {"python": 3}), ("rust", {"rust": 2}), ("git", {"git": 2})):
        files.append(tmp_path / f"{name}.md")
        files[-1].write_text(topic_document(topics))
    shown = bar_as_drawn(window)
    assert window.open_memory(tmp_path / "memory")
    drop(window, files)
    wait(qtbot, lambda: idle(window) and window.tree.memory_count() > 0)
    reading = [s for s in shown if s[0].startswith("Reading document")]
    assert [s[0] for s in reading[:2]] == [
        "Reading document 1 of 3: python.md",
        "Reading document 2 of 3: rust.md",
    ]  # the estimate, document by document
    build = shown[shown.index(next(s for s in shown if s[0].startswith("Cutting"))) :]
    values = [value for _text, value, _maximum in build]
    assert values == sorted(values) and values[-1] == PROGRESS_STEPS
    assert {maximum for _t, _v, maximum in build} == {PROGRESS_STEPS}  # never a busy bar
    by_text = {text: value for text, value, _maximum in build}
    # "parts" of documents, as a person says it (the engine's "chunks", issue 39)
    assert any(t.startswith("Summarizing 3 of 7 passages (document ") for t in by_text)
    assert not any("chunk" in t for t in by_text)
    summarized = by_text["Summarizing 7 of 7 passages (document 3 of 3)"]
    assert 0 < summarized <= by_text["Planning folders"] <= by_text["Writing READMEs"]
    assert by_text["Writing READMEs"] <= by_text["Committing"] < PROGRESS_STEPS
