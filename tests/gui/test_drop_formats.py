"""Every format the engine reads is taken from a drop and from File ▸ Add documents."""

from __future__ import annotations

from PySide6.QtWidgets import QFileDialog

from gam_desktop.engine.ingest.documents import READABLE, SUPPORTED_SUFFIXES
from gam_desktop.gui import dialogs
from gam_desktop.selfcheck.formats import one_of_each
from tests.gui.test_main_window import built, history


def test_a_dropped_folder_of_every_format_is_built(qtbot, window, recorder, tmp_path) -> None:
    folder = tmp_path / "drop"
    files = one_of_each(folder)
    (folder / "sheet.xlsx").write_bytes(b"PK")
    built(qtbot, window, tmp_path / "memory", [folder])
    title, text = recorder.told[0]
    assert title == "Some files were not added"
    assert f"reads {READABLE} files" in text and "sheet.xlsx" in text
    assert all(p.name not in text for p in files.values())
    assert history(qtbot, window)[0].summary.startswith(f"Built {len(files)} documents")


def test_add_documents_offers_every_supported_suffix(qtbot, window, monkeypatch) -> None:
    offered: list[str] = []

    def choose(parent, caption, folder, filters):
        offered.append(filters)
        return [], ""

    monkeypatch.setattr(QFileDialog, "getOpenFileNames", staticmethod(choose))
    assert dialogs.choose_documents(window) == []
    patterns = offered[0].split("(", 1)[1].rstrip(")").split()
    assert sorted(patterns) == sorted(f"*{suffix}" for suffix in SUPPORTED_SUFFIXES)
    assert {"*.docx", "*.pptx", "*.epub", "*.html", "*.htm", "*.eml"} <= set(patterns)


def test_the_words_name_the_new_formats() -> None:
    for words in (dialogs.WELCOME_TEXT, READABLE):
        assert all(kind in words for kind in ("Word", "PowerPoint", "EPUB", "HTML", "e-mail"))
