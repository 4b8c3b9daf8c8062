"""Settings: the models a one-model server offers (issue 39 item 3), the connection test's
words beside its button, and search by meaning chosen in Settings and used by the window
(issue 35 §2)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint

from gam_desktop import appdirs, keystore
from gam_desktop.engine.llm.embeddings import EmbeddingChoice, EmbeddingSettings
from gam_desktop.gui.settings_dialog import SettingsDialog
from gam_desktop.selfcheck.scripted_llm import RunningServer
from tests.gui.test_main_window import wait

pytestmark = pytest.mark.timeout(120)
WAIT = 100_000  # ms: a guard against hanging (under the 120 s test timeout), not a speed limit


@pytest.fixture(autouse=True)
def _own_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The search settings file (appdirs.embeddings_file) is this test's own; no
    GAM_EMBEDDING* variable of the machine running the tests counts."""
    for variable in ("XDG_CONFIG_HOME", "APPDATA"):
        monkeypatch.setenv(variable, str(tmp_path / "config"))
    for variable in (
        "GAM_EMBEDDINGS",
        "GAM_EMBEDDING_BASE_URL",
        "GAM_EMBEDDING_MODEL",
        "GAM_EMBEDDING_API_KEY",
    ):
        monkeypatch.delenv(variable, raising=False)


@pytest.fixture
def one_model() -> RunningServer:
    with RunningServer() as server:
        server.state.models = ["qwen2.5-7b-instruct"]
        yield server


# -- the models (issue 39 item 3) -----------------------------------------------------------


def test_a_server_with_one_model_has_it_chosen_and_no_warning_stays(
    qtbot, window, prefs, one_model
) -> None:
    """The preset's "local-model" stayed chosen and "It does not list local-model" stayed
    after the right one was there: with exactly one model listed, it is chosen."""
    prefs = replace(
        prefs, base_url=one_model.base_url, builder_model="local-model", chat_model="local-model"
    )
    dialog = SettingsDialog(prefs, None, window)
    qtbot.addWidget(dialog)
    qtbot.waitUntil(lambda: dialog.server_models == ["qwen2.5-7b-instruct"], timeout=WAIT)
    assert dialog.builder_model.currentText() == "qwen2.5-7b-instruct"
    assert dialog.chat_model.currentText() == "qwen2.5-7b-instruct"
    assert dialog.models_status.text() == "The server offers 1 model."
    assert dialog.models_status.property("problem") is False
    result = dialog.result_preferences()
    assert (result.builder_model, result.chat_model) == ("qwen2.5-7b-instruct",) * 2


def test_the_warning_follows_the_chosen_model(qtbot, window, prefs, llm_server) -> None:
    """The unlisted-model warning is said again whenever a model is chosen or typed: gone
    once both chosen models are listed, back when one is not."""
    llm_server.state.models = ["scripted", "qwen2.5:7b"]
    prefs = replace(prefs, builder_model="local-model", chat_model="local-model")
    dialog = SettingsDialog(prefs, None, window)
    qtbot.addWidget(dialog)
    status = dialog.models_status
    qtbot.waitUntil(lambda: dialog.builder_model.count() == 2, timeout=WAIT)
    assert "does not list local-model" in status.text()  # two listed: the name stays
    assert status.property("problem") is True
    dialog.chat_model.setCurrentIndex(1)
    assert "does not list local-model" in status.text()  # the builder's is still unlisted
    dialog.builder_model.setCurrentIndex(0)
    assert status.text() == "The server offers 2 models."
    assert status.property("problem") is False
    dialog.chat_model.setCurrentText("my-own-model")  # typed
    assert "does not list my-own-model" in status.text()
    assert "local-model" not in status.text()


def test_the_connection_test_says_its_result_under_its_button(
    qtbot, window, prefs, llm_server
) -> None:
    from gam_desktop.engine.llm.client import sdk

    sdk()  # (its import takes seconds on a busy machine: not the test's to wait for)
    dialog = SettingsDialog(prefs, None, window)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    basic, test = dialog.tabs.widget(0), dialog.test_button
    assert not dialog.report.isVisible()  # nothing said yet: no empty space kept
    test.click()
    qtbot.waitUntil(lambda: dialog.report.text().startswith("Connected"), timeout=WAIT)
    assert basic.isAncestorOf(dialog.report) and dialog.report.isVisible()
    below = test.mapTo(dialog, QPoint(0, test.height()))
    report = dialog.report.mapTo(dialog, QPoint(0, 0))
    assert 0 <= report.y() - below.y() <= 2 * dialog.fontMetrics().height()  # right under it
    assert abs(report.x() - below.x()) <= 8  # in line with it


# -- search by meaning ----------------------------------------------------------------------


def test_search_settings_show_the_model_found_on_the_chat_server(
    qtbot, window, prefs, llm_server
) -> None:
    llm_server.state.models = ["scripted", "nomic-embed-text"]
    dialog = SettingsDialog(prefs, None, window)
    qtbot.addWidget(dialog)
    page = dialog.tabs.widget(2)
    assert dialog.tabs.tabText(2) == "S&earch"
    for field in (dialog.embeddings, dialog.embedding_url, dialog.embedding_model):
        assert page.isAncestorOf(field) and field.accessibleName()
    assert dialog.embeddings.currentText() == "Automatic"
    status = dialog.embedding_status
    qtbot.waitUntil(lambda: status.text().startswith("Found"), timeout=WAIT)
    assert status.text() == f"Found nomic-embed-text at {llm_server.base_url}: search by " + (
        "meaning uses it."
    )
    assert dialog.embedding_model.lineEdit().placeholderText() == "automatic: nomic-embed-text"
    assert not dialog.embedding_key.isEnabled()  # the chat's server: the chat's key
    dialog.embeddings.setCurrentIndex(dialog.embeddings.findData("off"))
    assert status.text().startswith("Off")
    assert not dialog.embedding_url.isEnabled() and not dialog.embedding_model.isEnabled()
    result = dialog.result_preferences()
    assert (result.embeddings, result.embedding_base_url, result.embedding_model) == (
        "off",
        "",
        "",
    )


def test_a_server_without_an_embedding_model_is_said(qtbot, window, prefs, llm_server) -> None:
    dialog = SettingsDialog(prefs, None, window)
    qtbot.addWidget(dialog)
    status = dialog.embedding_status
    qtbot.waitUntil(lambda: "lists no embedding model" in status.text(), timeout=WAIT)
    assert status.property("problem") is False  # automatic: words alone is no problem
    dialog.embeddings.setCurrentIndex(dialog.embeddings.findData("on"))
    qtbot.waitUntil(lambda: "lists no embedding model" in status.text(), timeout=WAIT)
    assert status.property("problem") is True  # on, and there is none: a problem
    dialog.embedding_model.setCurrentText("fake-embed")
    assert status.text().startswith("Search by meaning uses fake-embed.")


def test_an_endpoint_of_its_own_has_its_key_in_the_keychain(
    qtbot, secret_service, window, prefs, tmp_path
) -> None:
    with RunningServer() as embedder:
        embedder.state.models = ["multilingual-e5-small"]
        dialog = SettingsDialog(prefs, None, window)
        qtbot.addWidget(dialog)
        dialog.embeddings.setCurrentIndex(dialog.embeddings.findData("on"))
        dialog.embedding_url.setText(embedder.base_url)
        assert dialog.embedding_key.isEnabled()  # another server: a key of its own
        dialog.embedding_key.setText("sk-embed-0123456789")
        status = dialog.embedding_status
        qtbot.waitUntil(lambda: "multilingual-e5-small" in status.text(), timeout=WAIT)
        result = dialog.result_preferences()
        dialog.save()
        qtbot.waitUntil(lambda: dialog.result() == dialog.DialogCode.Accepted, timeout=WAIT)
    assert (result.embeddings, result.embedding_base_url) == ("on", embedder.base_url)
    assert dialog.result_embedding_key() == "sk-embed-0123456789"
    assert keystore.get_key(embedder.base_url) == "sk-embed-0123456789"
    window.session.set_preferences(result, None, dialog.result_embedding_key())
    stored = appdirs.embeddings_file()
    assert EmbeddingChoice.read(stored) == EmbeddingChoice(enabled="on", base_url=embedder.base_url)
    files = [stored, *tmp_path.rglob("*.ini")]
    assert all("sk-embed" not in f.read_text(errors="ignore") for f in files)
    keystore.delete_key(embedder.base_url)


# -- the window uses them -------------------------------------------------------------------


def test_the_window_searches_by_meaning_as_set_in_settings(
    qtbot, make_window, make_workflow, prefs, llm_server
) -> None:
    engine = make_workflow(embeddings=EmbeddingSettings(enabled="off"))
    engine.add(text="# Attention\n\nThe transformer relies on attention alone.\n")
    window = make_window(replace(prefs, embeddings="on", embedding_model="fake-embed"))
    assert window.open_memory(engine.folder.root)
    workflow = window.session.task_workflow()
    assert (workflow.embeddings.model, workflow.embeddings.base_url) == (
        "fake-embed",
        llm_server.base_url,
    )
    assert workflow.embeddings.key_value() == "not-needed"  # no chat key was given
    workflow.search_tools().index.embed_pending()  # (a search embeds a big backlog behind)
    assert workflow.search("transformer attention")
    assert "transformer attention" in llm_server.embeddings.texts  # asked by meaning too
    assert {c["model"] for c in llm_server.embeddings.calls} == {"fake-embed"}
    assert workflow.search_notices() == []


def test_search_by_meaning_off_in_settings_or_in_the_environment(
    qtbot, make_window, prefs, tmp_path, monkeypatch
) -> None:
    window = make_window(replace(prefs, embeddings="off", embedding_model="fake-embed"))
    assert window.open_memory(tmp_path / "one")
    assert window.session.task_workflow().search_tools().index.semantic is None
    monkeypatch.setenv("GAM_EMBEDDINGS", "off")  # the environment overrides Settings
    other = make_window(replace(prefs, embeddings="on", embedding_model="fake-embed"))
    assert other.open_memory(tmp_path / "two")
    assert other.session.task_workflow().search_tools().index.semantic is None


def test_a_key_from_the_keychain_reaches_the_search_already_made(
    qtbot, make_window, prefs, tmp_path
) -> None:
    """The keys are read from the keychain once the window is up, after the memory opened:
    the search tools made meanwhile ask with them."""
    own = "http://127.0.0.1:9/v1"  # another server than the chat's
    window = make_window(replace(prefs, embedding_base_url=own, embedding_model="e"))
    assert window.open_memory(tmp_path / "memory")
    tools = window.session.task_workflow().search_tools()
    embedder = tools.index.semantic.embedder
    assert embedder.settings.key_value() == "not-needed"
    window.set_embedding_key("sk-own-endpoint")
    assert embedder.settings.key_value() == "sk-own-endpoint"
    assert embedder.settings.base_url == own
    assert window.session.task_workflow().embeddings.key_value() == "sk-own-endpoint"


def test_the_app_reads_the_embedding_endpoint_s_key_at_start(
    qtbot, make_window, prefs, monkeypatch
) -> None:
    from gam_desktop.gui import app

    asked: list[str] = []

    def get_key(endpoint: str) -> str:
        asked.append(endpoint)
        return f"key-for-{endpoint}"

    monkeypatch.setattr(keystore, "get_key", get_key)
    own = "http://127.0.0.1:9/v1"
    prefs = replace(prefs, embedding_base_url=own)
    window = make_window(prefs)
    app.start_in_background(window, prefs.base_url, prefs.own_embedding_endpoint())
    wait(qtbot, lambda: window.session.embedding_key == f"key-for-{own}")
    assert sorted(asked) == sorted([prefs.base_url, own])
    window.tasks.wait_all()


def test_the_app_s_own_endpoint_searches_by_meaning_as_the_window_does(
    qtbot, make_window, make_workflow, prefs, llm_server, monkeypatch
) -> None:
    """Settings ▸ "Let other apps use this memory" serves gam-serve inside the app: its
    search is the window's, by meaning too."""
    import socket

    import httpx2

    monkeypatch.setenv("GAM_SERVE_TOKEN", "gui-embeddings-token-0123")
    engine = make_workflow(embeddings=EmbeddingSettings(enabled="off"))
    engine.add(text="# Boiler\n\nThe boiler in the cellar is serviced every October.\n")
    window = make_window(replace(prefs, embeddings="on", embedding_model="fake-embed"))
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        window.store.setValue("sharing/port", probe.getsockname()[1])
    window.store.setValue("sharing/enabled", True)
    with qtbot.waitSignal(window.sharing.service.state_changed, timeout=WAIT) as started:
        assert window.open_memory(engine.folder.root)
    url, question = started.args[0], "Who services the boiler in the cellar?"
    headers = {"Authorization": "Bearer gui-embeddings-token-0123"}
    body = {"model": "gam", "messages": [{"role": "user", "content": question}]}
    with qtbot.waitSignal(window.sharing.service.served, timeout=WAIT):
        reply = httpx2.post(f"{url}/chat/completions", json=body, headers=headers, timeout=30)
    assert reply.status_code == 200
    assert any("boiler" in text for text in llm_server.embeddings.texts)
    assert {c["model"] for c in llm_server.embeddings.calls} == {"fake-embed"}
    window.close()


def test_screenshots_of_settings_pages(qtbot, window, prefs, llm_server, tmp_path) -> None:
    """Each page of Settings at its default size, the connection test's result shown and an
    embedding model found, in the light and the dark scheme (GAM_SCREENSHOTS=folder keeps
    them for a person to look at); no page cuts a text."""
    import os

    from PySide6.QtWidgets import QApplication

    from gam_desktop.engine.llm.client import sdk
    from gam_desktop.gui import theme
    from tests.gui.scaled import clipped

    sdk()  # (imported before the test's wait for the connection test)
    folder = Path(os.environ.get("GAM_SCREENSHOTS") or tmp_path / "screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    llm_server.state.models = ["scripted", "nomic-embed-text"]
    app = QApplication.instance()
    shots = []
    try:
        for scheme in (theme.LIGHT_CHOICE, theme.DARK_CHOICE):
            theme.choose(app, scheme)
            dialog = SettingsDialog(prefs, "sk-test-key", window)
            qtbot.addWidget(dialog)
            dialog.show()
            qtbot.waitUntil(lambda d=dialog: d.embedding_status.text().startswith("Found"))
            dialog.test_button.click()
            qtbot.waitUntil(lambda d=dialog: d.report.text().startswith("Connected"), timeout=WAIT)
            for page in range(dialog.tabs.count()):
                dialog.tabs.setCurrentIndex(page)
                app.processEvents()
                shots.append(folder / f"12-settings-page-{page}-{scheme}.png")
                assert dialog.grab().save(str(shots[-1]))
                assert clipped(dialog, f"page {page}") == []
            dialog.close()
    finally:
        theme.choose(app, theme.SYSTEM)
    assert all(p.stat().st_size > 10_000 for p in shots)
