"""The words the window shows: an error's advice once, a refused key as the headline of Test
connection, the keychain notice once, counts in the singular, rollbacks named without
nesting, broken front matter by its line, times in the person's locale, and the app's own
rollback never reported as files changed outside the app."""

from __future__ import annotations

import keyring
import pytest
from keyring.backends import fail
from PySide6.QtCore import QDateTime, QLocale, Qt

from gam_desktop import keystore
from gam_desktop.engine.llm import LLMAuthError, LLMClient
from gam_desktop.engine.models import ChatResult
from gam_desktop.gui import error_advice, local_time, words
from gam_desktop.gui.app import make_app
from gam_desktop.gui.chat_panel import ChatPanel
from gam_desktop.gui.settings_dialog import SettingsDialog
from gam_desktop.selfcheck.scripted_llm import Fault
from tests.engine.test_words import ONE_WITH_A_PLURAL, refusing_server
from tests.gui.test_main_window import SAMPLES, built, drop, history, idle, newest_is, wait

WAIT = 100_000  # ms: a guard against hanging (under the 120 s test timeout), not a speed limit


@pytest.fixture
def german():
    """The person's locale is German for the test: dates are day.month.year."""
    previous = QLocale()
    QLocale.setDefault(QLocale(QLocale.Language.German, QLocale.Country.Germany))
    yield
    QLocale.setDefault(previous)


def test_a_refused_key_in_the_chat_says_what_to_do_once(qtbot, settings, llm_server) -> None:
    make_app([])
    llm_server.state.faults.append(Fault("401"))
    with pytest.raises(LLMAuthError) as caught:
        LLMClient(settings).text([{"role": "user", "content": "hi"}], stage="chat")
    panel = ChatPanel()
    qtbot.addWidget(panel)
    panel.input.setPlainText("What is BERT?")
    panel.send.click()
    panel.show_error(error_advice.describe(caught.value).full())  # what ChatController shows
    shown = panel.transcript.toPlainText()
    assert shown.count("Settings") == 1 and shown.lower().count("check the key") == 1
    # The headline (with the server's own words) and the advice are separate lines.
    headline = next(line for line in shown.splitlines() if "(HTTP 401)" in line)
    assert "Settings" not in headline and "Open Settings" in shown


def test_test_connection_makes_a_refused_key_the_headline(qtbot, window, prefs) -> None:
    with refusing_server() as url:
        prefs.base_url = url
        dialog = SettingsDialog(prefs, "sk-wrong", window)
        qtbot.addWidget(dialog)
        dialog.test_connection()
        wait(qtbot, lambda: dialog.report.text() not in ("", "Testing…"))
    text = dialog.report.text()
    assert text.startswith("The API key was refused") and "HTTP 401" in text
    assert "Connected" not in text


def test_the_keychain_notice_says_session_only_once(qtbot, window, prefs, monkeypatch) -> None:
    monkeypatch.setattr(keyring, "get_keyring", lambda: fail.Keyring())
    dialog = SettingsDialog(prefs, None, window)
    qtbot.addWidget(dialog)
    dialog.api_key.setText("sk-session-only")
    dialog.save()
    wait(qtbot, lambda: dialog.result() == dialog.DialogCode.Accepted)
    message = dialog.keychain_message
    assert message.startswith(keystore.NO_KEYCHAIN) and message.count("session only") == 1


def test_counts_of_one_in_the_chat_are_singular(qtbot) -> None:
    make_app([])
    panel = ChatPanel()
    qtbot.addWidget(panel)
    panel.set_title("Quokkas", 1, None)
    assert panel.caption.text() == "Saved in this memory · 1 turn"
    panel.input.setPlainText("Where do quokkas live?")
    panel.send.click()
    panel.show_result(
        ChatResult(
            question="Where do quokkas live?",
            answer="On Rottnest Island.",
            sources=["quokkas.md"],
            trajectory="answered from the 1 best passage",
        )
    )
    shown = panel.transcript.toPlainText()
    assert "Show the 1 step" in shown and not ONE_WITH_A_PLURAL.search(shown)


def test_undoing_a_rollback_is_not_rolled_back_twice(qtbot, window, tmp_path) -> None:
    memory = tmp_path / "memory"
    built(qtbot, window, memory, SAMPLES[:1])
    drop(window, SAMPLES[1:2])
    wait(qtbot, lambda: idle(window) and newest_is(window, "add"))
    added = history(qtbot, window)[0]
    window.history.select(added.sha)
    window.history.rollback.click()
    wait(qtbot, lambda: idle(window) and newest_is(window, "rollback"))
    summary = words.counted_notes(added.summary)  # "(1 note)": the window's word for it
    assert window.status_label.text() == f"Rolled back: {summary}"
    window.history.select(history(qtbot, window)[0].sha)
    window.history.rollback.click()
    wait(qtbot, lambda: idle(window) and newest_is(window, "rollback", "Undid rollback"))
    assert window.status_label.text() == f"Undid rollback: {summary}"
    assert words.counted_notes(history(qtbot, window)[0].summary) == window.status_label.text()


def test_broken_front_matter_is_told_by_file_and_line(qtbot, window, recorder, tmp_path) -> None:
    memory = tmp_path / "memory"
    built(qtbot, window, memory, SAMPLES[:1])
    (memory / "x.md").write_text("---\ntitle: x\ntldr: Note: this is it\n---\n\nBody.\n")
    wait(qtbot, lambda: any(t == "A note's front matter is broken" for t, _ in recorder.told))
    text = next(text for title, text in recorder.told if title.endswith("is broken"))
    assert text.startswith(
        "The front matter of x.md cannot be read: line 3 has a ':' where a value was expected"
    )
    assert "<unicode string>" not in text and "column" not in text


def test_history_times_follow_the_locale(qtbot, window, tmp_path, german) -> None:
    built(qtbot, window, tmp_path / "memory", SAMPLES[:1])
    operations = history(qtbot, window)
    shown = window.history.list.topLevelItem(0).text(0)
    clock = QLocale().toString(
        QDateTime.fromSecsSinceEpoch(operations[0].time).toLocalTime().time(),
        QLocale.FormatType.ShortFormat,
    )
    assert shown == local_time.when(operations[0].time) == f"Today {clock}"  # just built
    assert "-" not in shown and "M" not in shown  # not ISO's 2025-11-03, a 24-hour clock


MOMENT = "2025-11-03T14:05:09+00:00"  # 14:05 UTC: another day in Sydney (UTC+11)


def in_german(iso: str) -> str:
    """How the window writes `iso` in German in this machine's time zone: the local day, the
    month in German words, the year and the 24-hour clock ("3 Nov. 2025 15:05" in Berlin),
    checked piece by piece: the tests hold in any time zone."""
    local = QDateTime.fromString(iso, Qt.DateFormat.ISODate).toLocalTime()
    date = local.date()
    clock = QLocale().toString(local.time(), QLocale.FormatType.ShortFormat)
    month = QLocale().monthName(date.month(), QLocale.FormatType.ShortFormat)
    assert month.startswith("Nov") and ":" in clock and "M" not in clock
    return f"{date.day()} {month} {date.year()} {clock}"


def test_an_iso_time_is_shown_in_the_locale(german) -> None:
    make_app([])
    shown = local_time.when(MOMENT.replace("+", ".123456+"))
    assert "2025-11-03" not in shown and "T14" not in shown
    assert shown == in_german(MOMENT)  # the local day, the month in German, a 24-hour clock
    assert local_time.when(None) == "" and local_time.when("soon") == "soon"


def test_one_way_of_writing_a_moment_everywhere() -> None:
    """Seen in the walkthrough: "28 11 2026 16:14" in the History and the preview, "28 Nov
    2026 16:16" in a fact's history, "Today 16:16" in the conversations."""
    from datetime import UTC, datetime, timedelta

    make_app([])
    now = datetime(2026, 11, 28, 12, 0, tzinfo=UTC)
    local = now.astimezone()
    clock = QLocale().toString(
        QDateTime.fromSecsSinceEpoch(int(now.timestamp())).toLocalTime().time(),
        QLocale.FormatType.ShortFormat,
    )
    assert local_time.when(now, now=now) == f"Today {clock}"
    assert local_time.when(now, now=now, in_sentence=True) == f"today {clock}"
    assert local_time.when(now - timedelta(days=1), now=now) == f"Yesterday {clock}"
    older = local_time.when(now - timedelta(days=30), now=now)
    month = QLocale().monthName((local - timedelta(days=30)).month, QLocale.FormatType.ShortFormat)
    assert older == f"{(local - timedelta(days=30)).day} {month} 2026 {clock}"


def test_rolling_back_the_first_build_is_not_an_outside_edit(qtbot, window, tmp_path) -> None:
    """The rollback leaves no memory (no .gam_meta.json); its echo was reported as "11 files
    changed outside the app"."""
    memory = tmp_path / "memory"
    built(qtbot, window, memory, SAMPLES[:1])
    build = history(qtbot, window)[0]
    said: list[str] = []
    window.session.status.connect(said.append)
    with qtbot.waitSignal(window.session._watched, timeout=WAIT):  # the watcher saw git's writes
        window.history.select(build.sha)
        window.history.rollback.click()
        wait(qtbot, lambda: idle(window) and newest_is(window, "rollback"))
    assert not (memory / ".gam_meta.json").exists()
    assert said == [f"Rolled back: {words.counted_notes(build.summary)}"]


def test_the_previews_dates_follow_the_locale(qtbot, german, tmp_path) -> None:
    """The preview's Created field was "03 Nov 2025, 14:05" in every locale."""
    from PySide6.QtWidgets import QLabel

    from gam_desktop.engine.store.folder import MemoryFolder
    from gam_desktop.engine.store.markdown import render_memory
    from gam_desktop.gui.preview import PreviewPane

    make_app([])
    (tmp_path / "note.md").write_text(render_memory({"title": "note", "created": MOMENT}, "Body."))
    pane = PreviewPane()
    qtbot.addWidget(pane)
    pane.show_file(MemoryFolder(tmp_path), "note.md")
    labels = [w.text() for w in pane.fields.findChildren(QLabel)]
    assert local_time.when(MOMENT) in labels
    assert in_german(MOMENT) in labels, labels  # the month in German
