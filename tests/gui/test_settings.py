"""Settings: the API key in the real Secret Service, probes, presets; keychain fallbacks."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

import keyring
import pytest
from keyring.backends import fail

from gam_desktop import keystore
from gam_desktop.engine.llm import LLMClient, LLMSettings
from gam_desktop.engine.llm.probe import detect_local, probe
from gam_desktop.gui.settings_dialog import SettingsDialog
from gam_desktop.selfcheck.scripted_slots import Slots

WAIT = 100_000  # ms: a guard against hanging (under the 120 s test timeout), not a speed limit


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


def test_with_no_key_typed_nothing_is_said_about_the_keychain(
    qtbot, window, prefs, monkeypatch
) -> None:
    """Seen in the walkthrough: every Settings ▸ Save of a local server (no key) said "The
    key was not saved": there was no key to save. Nor when the keychain does not answer."""
    import threading

    from gam_desktop.gui import settings_dialog

    monkeypatch.setattr(keyring, "get_keyring", lambda: fail.Keyring())  # no keychain
    dialog = SettingsDialog(prefs, None, window)
    qtbot.addWidget(dialog)
    dialog.api_key.setText("")
    dialog.save()
    qtbot.waitUntil(lambda: dialog.result() == dialog.DialogCode.Accepted, timeout=WAIT)
    assert dialog.keychain_message == "" and dialog.result_key() is None
    release = threading.Event()
    monkeypatch.setattr(settings_dialog, "KEYCHAIN_TIMEOUT", 0.3)
    monkeypatch.setattr(keystore, "delete_key", lambda endpoint: release.wait(10))  # locked
    locked = SettingsDialog(prefs, None, window)
    qtbot.addWidget(locked)
    locked.save()
    qtbot.waitUntil(lambda: locked.result() == locked.DialogCode.Accepted, timeout=WAIT)
    assert locked.keychain_message == ""
    release.set()
    locked.tasks.wait_all()


def test_presets_and_preferences(qtbot, window, prefs, providers_absent) -> None:
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


def test_local_servers_are_detected_on_their_ports(llm_server) -> None:
    with closed_port() as nothing:
        ports = {"Ollama": nothing, "LM Studio": port_of(llm_server.base_url), "llama.cpp": nothing}
        assert detect_local(timeout=1, ports=ports) == [
            ("LM Studio", llm_server.base_url, ["scripted"])
        ]


class FakeLlamaServer(ThreadingHTTPServer):
    """llama.cpp's llama-server as Detect sees it: GET /v1/models (the model it was started
    with) and GET /props (its settings, a path only it answers); `own_path` False: another
    OpenAI-compatible server, with no /props."""

    def __init__(self, own_path: bool = True) -> None:
        self.own_path = own_path
        super().__init__(("127.0.0.1", 0), _LlamaHandler)  # port 0: a free one
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def __enter__(self) -> FakeLlamaServer:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.shutdown()
        self.server_close()


class _LlamaHandler(BaseHTTPRequestHandler):
    server: FakeLlamaServer

    def do_GET(self) -> None:  # (http.server calls it so)
        if self.path == "/v1/models":
            body: object = {"object": "list", "data": [{"id": "qwen2.5-3b.gguf"}]}
        elif self.path == "/props" and self.server.own_path:
            body = {"total_slots": 1, "model_path": "qwen2.5-3b.gguf"}
        else:
            self.send_error(404)
            return
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *_args: object) -> None:  # quiet
        pass


@contextmanager
def closed_port() -> Iterator[int]:
    """A port of 127.0.0.1 that refuses connections (bound, not listening) while in use."""
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        yield held.getsockname()[1]


def port_of(url: str) -> int:
    port = urlsplit(url).port
    assert port is not None and port not in (8089, 8090)
    return port


def test_llama_cpp_is_detected_by_its_own_path(qtbot, window, prefs) -> None:
    """Detect local servers looked for Ollama and LM Studio only: llama-server (port 8080,
    /v1/models and /props) was never found. Another OpenAI-compatible server on that port
    (no /props) is offered as Custom, not named llama.cpp."""
    with closed_port() as nothing, FakeLlamaServer() as llama:
        ports = {"Ollama": nothing, "LM Studio": nothing, "llama.cpp": port_of(llama.base_url)}
        assert detect_local(timeout=1, ports=ports) == [
            ("llama.cpp", llama.base_url, ["qwen2.5-3b.gguf"])
        ]
        dialog = SettingsDialog(prefs, None, window)
        qtbot.addWidget(dialog)
        dialog.local_ports = ports
        dialog.detect()
        assert dialog.report.text() == (
            "Looking for Ollama, LM Studio and llama.cpp on this computer…"
        )
        qtbot.waitUntil(lambda: dialog.report.text().startswith("Found"), timeout=WAIT)
        assert dialog.report.text() == f"Found llama.cpp at {llama.base_url} (1 model)"
        assert dialog.provider.currentText() == "llama.cpp"
        assert dialog.base_url.text() == llama.base_url
        assert dialog.chat_model.currentText() == "qwen2.5-3b.gguf"
    with closed_port() as nothing, FakeLlamaServer(own_path=False) as other:
        ports = {"Ollama": nothing, "LM Studio": nothing, "llama.cpp": port_of(other.base_url)}
        assert detect_local(timeout=1, ports=ports) == [
            ("Custom", other.base_url, ["qwen2.5-3b.gguf"])
        ]
    with closed_port() as nothing:
        dialog.local_ports = dict.fromkeys(ports, nothing)
        dialog.detect()
        qtbot.waitUntil(lambda: dialog.report.text().startswith("No local"), timeout=WAIT)
        assert dialog.report.text() == (
            "No local server answered on the default ports "
            "(Ollama 11434, LM Studio 1234, llama.cpp 8080)."
        )


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


def test_settings_has_a_basic_and_an_advanced_tab(qtbot, window, prefs) -> None:
    dialog = SettingsDialog(prefs, None, window)
    qtbot.addWidget(dialog)
    basic, advanced = dialog.tabs.widget(0), dialog.tabs.widget(1)
    assert [dialog.tabs.tabText(i) for i in range(2)] == ["&Basic", "&Advanced"]
    for field in (dialog.provider, dialog.base_url, dialog.api_key, dialog.builder_model):
        assert basic.isAncestorOf(field)
    for field in (
        dialog.builder_temperature,
        dialog.chat_temperature,
        dialog.min_tokens,
        dialog.max_tokens,
        dialog.workers,
        dialog.threshold,
        dialog.timeout,
        dialog.git_path,
    ):
        assert advanced.isAncestorOf(field) and field.accessibleName()
    dialog.timeout.setValue(300)
    assert dialog.result_preferences().timeout == 300  # the time limit is a setting now


def test_the_model_lists_come_from_the_server_and_a_name_may_be_typed(
    qtbot, window, prefs, llm_server
) -> None:
    llm_server.state.models = ["scripted", "qwen2.5:7b", "llama3.2:3b"]
    dialog = SettingsDialog(prefs, None, window)
    qtbot.addWidget(dialog)
    qtbot.waitUntil(lambda: dialog.builder_model.count() == 3, timeout=WAIT)
    box = dialog.chat_model
    assert [box.itemText(i) for i in range(box.count())] == llm_server.state.models
    assert box.currentText() == "scripted"  # the chosen model stays chosen
    assert dialog.models_status.text() == "The server offers 3 models."
    box.setCurrentIndex(2)
    dialog.builder_model.setCurrentText("my-own-model")  # not listed: typed
    result = dialog.result_preferences()
    assert (result.chat_model, result.builder_model) == ("llama3.2:3b", "my-own-model")
    dialog.refresh.click()
    qtbot.waitUntil(
        lambda: "does not list my-own-model" in dialog.models_status.text(), timeout=WAIT
    )
    assert dialog.builder_model.currentText() == "my-own-model"


def test_a_new_address_is_asked_for_its_models(qtbot, window, prefs) -> None:
    from gam_desktop.selfcheck.scripted_llm import RunningServer

    dialog = SettingsDialog(prefs, None, window)
    qtbot.addWidget(dialog)
    qtbot.waitUntil(lambda: dialog.server_models == ["scripted"], timeout=WAIT)
    with RunningServer() as other:
        other.state.models = ["other-model", "second-model"]
        dialog.base_url.setText(other.base_url)  # typed: asked once the typing pauses
        qtbot.waitUntil(lambda: dialog.server_models == other.state.models, timeout=WAIT)
    assert dialog.chat_model.currentText() == "scripted"  # still chosen: said to be unlisted
    assert "does not list scripted" in dialog.models_status.text()


def test_model_list_problems_are_said_in_words(qtbot, window, prefs, llm_server) -> None:
    from gam_desktop.selfcheck.scripted_llm import Fault
    from tests.engine.test_words import refusing_server

    dialog = SettingsDialog(prefs, "sk-wrong", window)
    qtbot.addWidget(dialog)
    status = dialog.models_status

    def told(words: str) -> str:
        qtbot.waitUntil(lambda: words in status.text(), timeout=WAIT)
        assert status.property("problem") is True
        return status.text()

    with refusing_server() as url:
        dialog.base_url.setText(url)
        dialog.refresh_models()
        assert told("refused the API key (HTTP 401)").endswith(
            "check the key for this endpoint (each keeps its own)."
        )
        dialog.api_key.clear()
        dialog.refresh_models()
        assert told("wants an API key").endswith("enter the key for this endpoint.")
    dialog.base_url.setText("http://127.0.0.1:9/v1")
    dialog.refresh_models()
    told("Nothing answers at http://127.0.0.1:9/v1 (the connection was refused")
    llm_server.state.models = []
    dialog.base_url.setText(llm_server.base_url)
    dialog.refresh_models()
    told("answered, but offers no models: load a model in the server, or type its name.")
    llm_server.state.faults.append(Fault("401", task="models"))
    dialog.refresh_models()
    told("wants an API key (HTTP 401)")


def test_only_the_latest_model_list_counts(qtbot, window, prefs) -> None:
    dialog = SettingsDialog(prefs, None, window)
    qtbot.addWidget(dialog)
    qtbot.waitUntil(lambda: dialog.server_models == ["scripted"], timeout=WAIT)
    dialog.refresh_models()
    first = dialog._models_asked
    dialog.refresh_models()
    dialog._models_answered((first, ["from-the-old-address"]))  # it arrives late
    assert dialog.server_models == ["scripted"]
    qtbot.waitUntil(lambda: "offers 1 model" in dialog.models_status.text(), timeout=WAIT)


def test_parallel_calls_are_automatic_with_the_learned_number_or_set_by_hand(
    qtbot, window, prefs, llm_server
) -> None:
    llm_server.state.slots = Slots(3)  # llama-server with -np 3
    prefs = replace(prefs, workers=0)
    assert LLMClient(prefs.llm("builder", None)).limiter.slots == 3  # asked of /props
    dialog = SettingsDialog(prefs, None, window)
    qtbot.addWidget(dialog)
    assert dialog.workers.text() == "automatic (now 4)"  # three slots, one call waiting
    dialog.workers.setValue(2)
    assert dialog.result_preferences().llm("builder", None).workers == 2  # by hand
    dialog.workers.setValue(0)
    assert dialog.result_preferences().workers == 0
