"""Settings: provider presets, models, chunking and parallelism, the API key (keychain)."""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtCore import QTimer, Slot
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from gam_desktop import keystore
from gam_desktop.engine.llm.probe import detect_local, probe
from gam_desktop.engine.textutil import plural
from gam_desktop.gui import error_advice
from gam_desktop.gui.settings import PRESETS, Preferences
from gam_desktop.gui.workers import TaskRunner, call_in_daemon

KEYCHAIN_TIMEOUT = 10.0  # seconds


def _spin(low: int, high: int, value: int) -> QSpinBox:
    box = QSpinBox()
    box.setRange(low, high)
    box.setValue(value)
    return box


def _real(low: float, high: float, value: float) -> QDoubleSpinBox:
    box = QDoubleSpinBox()
    box.setRange(low, high)
    box.setSingleStep(0.1)
    box.setValue(value)
    return box


class SettingsDialog(QDialog):
    def __init__(self, prefs: Preferences, api_key: str | None, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle("Settings")
        self.prefs = prefs
        self.key_for_session: str | None = api_key
        self.keychain_message = ""  # why the key was kept for this session only
        self.tasks = TaskRunner(self)
        self._keychain_timer = QTimer(self)  # a child: it dies with the dialog
        self._keychain_timer.setSingleShot(True)
        self._keychain_timer.timeout.connect(self._keychain_timed_out)
        self.provider = QComboBox()
        self.provider.addItems(list(PRESETS))
        self.provider.setCurrentText(prefs.provider)
        self.provider.currentTextChanged.connect(self._preset)
        self.base_url = QLineEdit(prefs.base_url)
        self.api_key = QLineEdit(api_key or "")
        self.api_key.setEchoMode(QLineEdit.EchoMode.Password)
        self.api_key.setPlaceholderText("stored in the system keychain, never in a file")
        self.builder_model = QLineEdit(prefs.builder_model)
        self.chat_model = QLineEdit(prefs.chat_model)
        self.builder_temperature = _real(0, 2, prefs.builder_temperature)
        self.chat_temperature = _real(0, 2, prefs.chat_temperature)
        self.min_tokens = _spin(10, 4000, prefs.min_tokens)
        self.max_tokens = _spin(100, 16000, prefs.max_tokens)
        self.workers = _spin(1, 32, prefs.workers)
        self.threshold = _spin(3, 500, prefs.reorganize_threshold)
        self.step_documents = _spin(0, 10_000, prefs.step_documents)
        self.step_documents.setSpecialValueText("never (one step)")
        self.step_documents.setToolTip(
            "A big drop is saved in steps of this many documents: each step can be asked, "
            "and a cancel keeps the finished ones."
        )
        self.git_path = QLineEdit(prefs.git_path)
        self.git_path.setPlaceholderText("found on PATH when empty")
        self.report = QLabel()
        self.report.setWordWrap(True)
        self.report.setObjectName("probeReport")
        test = QPushButton("Test connection")
        test.clicked.connect(self.test_connection)
        detect = QPushButton("Detect local servers")
        detect.clicked.connect(self.detect)
        form = QFormLayout()
        for label, widget in (
            ("Provider", self.provider),
            ("Base URL", self.base_url),
            ("API key", self.api_key),
            ("Model for building", self.builder_model),
            ("Model for chat", self.chat_model),
            ("Building temperature", self.builder_temperature),
            ("Chat temperature", self.chat_temperature),
            ("Smallest chunk (tokens)", self.min_tokens),
            ("Largest chunk (tokens)", self.max_tokens),
            ("Parallel LLM calls", self.workers),
            ("Reorganize a folder above", self.threshold),
            ("Save big drops every (documents)", self.step_documents),
            ("git executable", self.git_path),
        ):
            form.addRow(label, widget)
        probes = QHBoxLayout()
        probes.addWidget(test)
        probes.addWidget(detect)
        probes.addStretch(1)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.save)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addLayout(probes)
        layout.addWidget(self.report)
        layout.addWidget(buttons)
        self.resize(560, 0)

    def _preset(self, name: str) -> None:
        url, model, _needs_key = PRESETS[name]
        self.base_url.setText(url)
        self.builder_model.setText(model)
        self.chat_model.setText(model)

    def result_preferences(self) -> Preferences:
        return replace(
            self.prefs,
            provider=self.provider.currentText(),
            base_url=self.base_url.text().strip(),
            builder_model=self.builder_model.text().strip(),
            chat_model=self.chat_model.text().strip(),
            builder_temperature=self.builder_temperature.value(),
            chat_temperature=self.chat_temperature.value(),
            min_tokens=self.min_tokens.value(),
            max_tokens=max(self.max_tokens.value(), self.min_tokens.value() + 1),
            workers=self.workers.value(),
            reorganize_threshold=self.threshold.value(),
            step_documents=self.step_documents.value(),
            git_path=self.git_path.text().strip(),
        )

    def result_key(self) -> str | None:
        return self.key_for_session

    def test_connection(self) -> None:
        settings = self.result_preferences().llm("chat", self.api_key.text().strip())
        self.report.setText("Testing…")
        self.tasks.start(
            "probe",
            lambda w, c: probe(settings),
            on_success=lambda report: self.report.setText(report.summary()),
            on_failure=lambda exc: self.report.setText(f"Test failed: {exc}"),
        )

    def detect(self) -> None:
        self.report.setText("Looking for Ollama and LM Studio on this computer…")

        def found(servers) -> None:
            if not servers:
                self.report.setText(
                    "No local server answered on the default ports (Ollama 11434, LM Studio 1234)."
                )
                return
            name, url, models = servers[0]
            self.provider.setCurrentText(name)
            self.base_url.setText(url)
            if models:
                self.builder_model.setText(models[0])
                self.chat_model.setText(models[0])
            found = (f"{n} at {u} ({plural(len(m), 'model')})" for n, u, m in servers)
            self.report.setText("Found " + "; ".join(found))

        self.tasks.start("detect", lambda w, c: detect_local(), on_success=found)

    def save(self) -> None:
        """Store the key in the keychain off the GUI thread, then close. The timer and the
        answer's slots belong to this dialog: once it is deleted, neither calls it."""
        key = self.api_key.text().strip()
        endpoint = self.base_url.text().strip()
        self.key_for_session = key or None
        self.report.setText("Saving…")
        call_in_daemon(lambda: keystore.set_key(endpoint, key), self._stored, self._not_stored)
        # A locked keychain may wait for a password prompt indefinitely: do not wait with it.
        self._keychain_timer.start(int(KEYCHAIN_TIMEOUT * 1000))

    @Slot(object)
    def _stored(self, _result: object) -> None:
        if self._keychain_timer.isActive():  # else the timeout has answered already
            self._keychain_timer.stop()
            self.accept()

    @Slot(object)
    def _not_stored(self, error: object) -> None:
        if self._keychain_timer.isActive():
            self._keychain_timer.stop()
            self.keychain_message = self._not_saved(error)
            self.accept()

    @Slot()
    def _keychain_timed_out(self) -> None:
        self.keychain_message = self._not_saved(
            f"The keychain did not answer within {KEYCHAIN_TIMEOUT:g} s (is it locked?)."
        )
        self.accept()

    @staticmethod
    def _not_saved(error: object) -> str:
        """Why the key was not saved, then, once, that it is kept for this session only."""
        what = error_advice.describe(error).text if isinstance(error, BaseException) else error
        return f"{what}\n\n{keystore.SESSION_ONLY}"
