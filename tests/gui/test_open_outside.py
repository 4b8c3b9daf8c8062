"""Opening things with the system's applications (issue 39, item 10): Open log folder and
Edit in your editor… did nothing, without a word, on a system with no application for them
(`QDesktopServices.openUrl` returned False)."""

from __future__ import annotations

import pytest

from tests.gui.test_main_window import SAMPLES, built

pytestmark = pytest.mark.timeout(120)


def test_no_application_to_open_with_is_said(qtbot, window, recorder, tmp_path) -> None:
    built(qtbot, window, tmp_path / "memory", SAMPLES[:1])
    opened: list = []
    window.open_external = lambda url: opened.append(url) or False  # no handler
    told = len(recorder.told)
    window.menus.log_folder.trigger()  # Help ▸ Open log folder
    title, text = recorder.told[told]
    assert title == "Could not open the log folder" and opened[-1].toLocalFile() in text
    window.edit_file("README.md")  # Edit in your editor…
    title, text = recorder.told[told + 1]
    assert title == "Could not open this file in an editor"
    assert str(tmp_path / "memory" / "README.md") in text


def test_an_application_that_opens_it_is_not_questioned(qtbot, window, recorder, tmp_path) -> None:
    built(qtbot, window, tmp_path / "memory", SAMPLES[:1])
    window.open_external = lambda url: True
    told = len(recorder.told)
    window.menus.log_folder.trigger()
    window.edit_file("README.md")
    assert recorder.told[told:] == []
