"""The note under the model fields ("The server offers 1 model.") is about the address
shown, as soon as it is shown (issue 39, item 3). After a provider switch the old server's
list was still said, with "It does not list local-model", until a 600 ms typing pause
ended, and an answer of the old server arriving meanwhile was taken for the new one's: a
llama.cpp preset showed the scripted server's model. Testing a connection left the note
saying what the list said before."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import pytest

from gam_desktop.gui import settings_dialog
from gam_desktop.gui.settings import PRESETS
from gam_desktop.gui.settings_dialog import SettingsDialog
from gam_desktop.selfcheck.scripted_llm import Fault, RunningServer

pytestmark = pytest.mark.timeout(120)

WAIT = 100_000  # ms: a guard against hanging (under the 120 s test timeout), not a speed limit
ASKING = "Asking the server for its models…"
ONE_MODEL = "The server offers 1 model."
LOADED = "qwen2.5-3b-instruct"  # the one model a local server has loaded


@pytest.fixture
def loaded(monkeypatch) -> Iterator[RunningServer]:
    """A server offering one model, as LM Studio's preset (its usual address is not asked)."""
    with RunningServer() as server:
        server.state.models = [LOADED]
        monkeypatch.setitem(PRESETS, "LM Studio", (server.base_url, "local-model", False))
        yield server


@pytest.fixture
def no_typing_pause(monkeypatch) -> None:
    """An address being typed is asked for its models once typing pauses: here the pause
    never ends within a test, so only what is asked at once is answered."""
    monkeypatch.setattr(settings_dialog, "MODEL_LIST_DELAY_MS", 3_600_000)


def said(dialog: SettingsDialog) -> tuple[str, bool]:
    """The note under the model fields, and whether it is coloured as a problem."""
    return dialog.models_status.text(), bool(dialog.models_status.property("problem"))


def models(dialog: SettingsDialog) -> tuple[str, str]:
    return dialog.builder_model.currentText(), dialog.chat_model.currentText()


def test_a_provider_chosen_is_asked_for_its_models_at_once(
    qtbot, window, prefs, loaded, no_typing_pause
) -> None:
    dialog = SettingsDialog(prefs, None, window)
    qtbot.addWidget(dialog)
    qtbot.waitUntil(lambda: said(dialog) == (ONE_MODEL, False), timeout=WAIT)
    dialog.provider.setCurrentText("LM Studio")
    # not the scripted server's list, nor "It does not list local-model" said from it
    assert said(dialog) == (ASKING, False)
    qtbot.waitUntil(lambda: dialog.server_models == [LOADED], timeout=WAIT)
    assert said(dialog) == (ONE_MODEL, False)
    assert models(dialog) == (LOADED, LOADED)  # its one model, not "local-model"


def test_the_old_servers_answer_after_a_switch_is_not_taken_for_the_new_ones(
    qtbot, window, prefs, loaded, no_typing_pause
) -> None:
    """The settings picture (tests/gui/shots.py): llama.cpp chosen as the dialog opened,
    its fields showed the scripted server's model, its list taken for llama.cpp's."""
    dialog = SettingsDialog(prefs, None, window)  # asks the scripted server
    qtbot.addWidget(dialog)
    dialog.provider.setCurrentText("LM Studio")  # before that answer came
    qtbot.waitUntil(lambda: dialog.server_models == [LOADED], timeout=WAIT)
    old = dialog._models_asked - 1
    dialog._models_answered((old, ["scripted"]))  # (should it come after the new one)
    assert dialog.server_models == [LOADED]
    assert models(dialog) == (LOADED, LOADED)
    assert said(dialog) == (ONE_MODEL, False)


def test_a_new_address_typed_drops_the_old_lists_warning_at_once(
    qtbot, window, prefs, loaded
) -> None:
    dialog = SettingsDialog(prefs, None, window)
    qtbot.addWidget(dialog)
    qtbot.waitUntil(lambda: said(dialog) == (ONE_MODEL, False), timeout=WAIT)
    dialog.chat_model.setCurrentText("local-model")  # typed: the scripted server lacks it
    assert said(dialog)[1] and "It does not list local-model" in said(dialog)[0]
    dialog.base_url.setText(loaded.base_url)  # another server, being typed
    assert said(dialog) == (ASKING, False)  # the old server's warning is not about it
    qtbot.waitUntil(lambda: dialog.server_models == [LOADED], timeout=WAIT)
    assert said(dialog) == (ONE_MODEL, False)
    assert models(dialog) == (LOADED, LOADED)


def test_with_one_model_offered_it_is_chosen_and_no_warning_stays(
    qtbot, window, prefs, llm_server
) -> None:
    """Issue 39, item 3: "local-model" stayed chosen with a server offering one model, and
    its warning stayed after the right one was chosen."""
    prefs = replace(prefs, builder_model="local-model", chat_model="local-model")
    dialog = SettingsDialog(prefs, None, window)
    qtbot.addWidget(dialog)
    qtbot.waitUntil(lambda: dialog.server_models == ["scripted"], timeout=WAIT)
    assert models(dialog) == ("scripted", "scripted")
    assert said(dialog) == (ONE_MODEL, False)
    dialog.chat_model.setCurrentText("local-model")  # typed again
    assert "It does not list local-model" in said(dialog)[0]
    dialog.chat_model.setCurrentIndex(0)  # the server's one, chosen from the list
    assert said(dialog) == (ONE_MODEL, False)
    assert dialog.result_preferences().chat_model == "scripted"


def test_testing_a_connection_brings_the_model_note_up_to_date(
    qtbot, window, prefs, llm_server
) -> None:
    llm_server.state.faults.append(Fault("401", task="models"))  # the first list only
    prefs = replace(prefs, embeddings="off")  # (its own list of models would take the fault)
    dialog = SettingsDialog(prefs, None, window)
    qtbot.addWidget(dialog)
    qtbot.waitUntil(lambda: "wants an API key" in said(dialog)[0], timeout=WAIT)
    dialog.test_button.click()
    qtbot.waitUntil(lambda: dialog.report.text().startswith("Connected"), timeout=WAIT)
    qtbot.waitUntil(lambda: said(dialog) == (ONE_MODEL, False), timeout=WAIT)
