"""Settings: the API key in the real Secret Service, probes, presets; keychain fallbacks."""

from __future__ import annotations

import subprocess
import sys

import keyring
import pytest
from keyring.backends import fail

from gam_desktop import keystore
from gam_desktop.engine.llm import LLMSettings
from gam_desktop.engine.llm.probe import detect_local, probe
from gam_desktop.gui.settings_dialog import SettingsDialog

WAIT = 30_000


def test_the_key_is_stored_in_the_secret_service_and_read_back(
    qtbot, secret_service, window, prefs, tmp_path
) -> None:
    assert keystore.backend_name().endswith("SecretService.Keyring")
    dialog = SettingsDialog(prefs, None, window)
    qtbot.addWidget(dialog)
    dialog.api_key.setText("sk-test-0123456789abcdef")
    dialog.save()
    qtbot.waitUntil(lambda: dialog.result() == dialog.DialogCode.Accepted, timeout=WAIT)
    assert dialog.keychain_message == ""
    assert keystore.get_key(prefs.base_url) == "sk-test-0123456789abcdef"
    settings_files = list(tmp_path.glob("*.ini")) + list(tmp_path.rglob("*.json"))
    assert all("sk-test" not in f.read_text(errors="ignore") for f in settings_files)
    keystore.delete_key(prefs.base_url)
    assert keystore.get_key(prefs.base_url) is None


def test_keys_are_kept_per_endpoint(secret_service) -> None:
    keystore.set_key("https://api.openai.com/v1/", "sk-openai")
    keystore.set_key("http://127.0.0.1:11434/v1", "ollama-key")
    assert keystore.get_key("https://api.openai.com/v1") == "sk-openai"
    assert keystore.get_key("http://127.0.0.1:11434/v1") == "ollama-key"


def test_without_a_keychain_the_key_is_kept_for_the_session(
    qtbot, window, prefs, monkeypatch
) -> None:
    monkeypatch.setattr(keyring, "get_keyring", lambda: fail.Keyring())
    assert not keystore.available()
    with pytest.raises(keystore.KeychainUnavailable, match="No keychain"):
        keystore.set_key(prefs.base_url, "sk-x")
    dialog = SettingsDialog(prefs, None, window)
    qtbot.addWidget(dialog)
    dialog.api_key.setText("sk-session-only")
    dialog.save()
    qtbot.waitUntil(lambda: dialog.result() == dialog.DialogCode.Accepted, timeout=WAIT)
    assert "session only" in dialog.keychain_message
    assert dialog.result_key() == "sk-session-only"


def test_presets_and_preferences(qtbot, window, prefs) -> None:
    dialog = SettingsDialog(prefs, None, window)
    qtbot.addWidget(dialog)
    dialog.provider.setCurrentText("Ollama")
    assert dialog.base_url.text() == "http://127.0.0.1:11434/v1"
    dialog.workers.setValue(3)
    dialog.threshold.setValue(25)
    result = dialog.result_preferences()
    assert (result.provider, result.workers, result.reorganize_threshold) == ("Ollama", 3, 25)
    assert result.llm("chat", "k").temperature == prefs.chat_temperature


def test_test_connection_reports_what_the_server_supports(qtbot, window, prefs, llm_server) -> None:
    llm_server.state.reject.update({"json_schema", "tools"})
    dialog = SettingsDialog(prefs, None, window)
    qtbot.addWidget(dialog)
    dialog.test_connection()
    qtbot.waitUntil(lambda: dialog.report.text().startswith("Connected"), timeout=WAIT)
    text = dialog.report.text()
    assert "Models: scripted" in text and "Structured output: json_object" in text
    assert "Tool calling: no" in text


def test_probe_of_a_server_that_is_not_there() -> None:
    report = probe(LLMSettings(base_url="http://127.0.0.1:9/v1", model="m", timeout=2))
    assert not report.reachable and report.summary().startswith("Cannot use")


def test_local_servers_are_detected_on_their_ports(llm_server, monkeypatch) -> None:
    from gam_desktop.engine.llm import probe as probe_module

    monkeypatch.setattr(
        probe_module,
        "LOCAL_SERVERS",
        {
            "Ollama": "http://127.0.0.1:9/v1",  # nothing listens there
            "LM Studio": llm_server.base_url,
        },
    )
    assert detect_local(timeout=1) == [("LM Studio", llm_server.base_url, ["scripted"])]


def test_probe_with_everything_supported(llm_server) -> None:
    report = probe(LLMSettings(base_url=llm_server.base_url, model="scripted"))
    assert report.reachable and report.structured == "json_schema" and report.tools


@pytest.mark.linux_only("runs with PATH=/usr/bin:/bin")
def test_self_test_passes_in_a_fresh_process(tmp_path) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "gam_desktop", "--self-test"],
        capture_output=True,
        text=True,
        timeout=300,
        env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "QT_QPA_PLATFORM": "offscreen"},
    )
    assert out.returncode == 0, out.stderr
    assert "self-test passed" in out.stdout and "rolled back" in out.stdout


def test_a_keychain_that_never_answers_does_not_hang_the_dialog(
    qtbot, window, prefs, monkeypatch
) -> None:
    import threading

    from gam_desktop.gui import settings_dialog

    release = threading.Event()
    monkeypatch.setattr(settings_dialog, "KEYCHAIN_TIMEOUT", 0.3)
    monkeypatch.setattr(keystore, "set_key", lambda endpoint, key: release.wait(10))
    dialog = SettingsDialog(prefs, None, window)
    qtbot.addWidget(dialog)
    dialog.api_key.setText("sk-locked")
    dialog.save()
    qtbot.waitUntil(lambda: dialog.result() == dialog.DialogCode.Accepted, timeout=WAIT)
    assert "did not answer" in dialog.keychain_message and dialog.result_key() == "sk-locked"
    assert dialog.keychain_message.count("session only") == 1  # said once (issue 13 words)
    release.set()
    dialog.tasks.wait_all()


def test_a_keychain_timeout_after_the_dialog_is_deleted_does_nothing(
    qtbot, window, prefs, monkeypatch
) -> None:
    """The keychain timer and a late keychain answer belong to the dialog: once it is deleted
    neither may call it (a bare singleShot lambda did, and failed CI on a busy machine)."""
    import threading

    from PySide6.QtCore import QTimer

    from gam_desktop.gui import settings_dialog, workers

    release = threading.Event()
    monkeypatch.setattr(settings_dialog, "KEYCHAIN_TIMEOUT", 0.05)
    monkeypatch.setattr(keystore, "set_key", lambda endpoint, key: release.wait(WAIT / 1000))
    dialog = SettingsDialog(prefs, None, window)
    dialog.api_key.setText("sk-locked")
    before = set(workers._in_flight)
    dialog.save()
    ours = workers._in_flight - before
    with qtbot.waitSignal(dialog.destroyed, timeout=WAIT):
        dialog.deleteLater()
    # Qt fires timers in deadline order: once a later timer has fired, the dialog's would have.
    later = QTimer()
    later.setSingleShot(True)
    with qtbot.waitSignal(later.timeout, timeout=WAIT):
        later.start(100)
    release.set()  # the keychain answers at last, to nobody
    qtbot.waitUntil(lambda: not ours & workers._in_flight, timeout=WAIT)
