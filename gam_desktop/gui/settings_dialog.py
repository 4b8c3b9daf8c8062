"""Settings, in three tabs. Basic: the provider preset, the server's address, the API key
(kept in the keychain) and the models, chosen from the list the server gives (or typed);
Test connection and Detect local servers, their findings under their buttons. Advanced:
temperatures, passage sizes, parallel calls (automatic, or a number), the reorganization
threshold, the silence limit per call, the git executable. Search: search by meaning
(automatic, on, off), its endpoint (the chat's server when empty; a key of its own, kept in
the keychain, for another server) and its model (found on the server when empty: the one
found is shown)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from pydantic import SecretStr
from PySide6.QtCore import QSignalBlocker, Qt, QTimer, Slot
from PySide6.QtWidgets import (
    QComboBox,
    QCompleter,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from gam_desktop import keystore
from gam_desktop.engine.api import (
    LOCAL_SERVERS,
    Enabled,
    LLMAuthError,
    LLMError,
    LLMSettings,
    NoModels,
    automatic_parallel_calls,
    detect_local,
    forget_found_models,
    is_local,
    list_models,
    pick_model,
    plural,
    probe,
    same_server,
)
from gam_desktop.gui import error_advice
from gam_desktop.gui.settings import PRESETS, Preferences
from gam_desktop.gui.workers import TaskRunner, call_in_daemon

KEYCHAIN_TIMEOUT = 10.0  # seconds
MODEL_LIST_DELAY_MS = 600  # an address being typed is asked for its models once typing pauses
ASKING = "Asking the server for its models…"
EMBEDDINGS: dict[Enabled, str] = {  # search by meaning: the choices, as said
    "auto": "Automatic",
    "on": "On",
    "off": "Off",
}


def _spin(low: int, high: int, value: int) -> QSpinBox:
    box = QSpinBox()
    box.setRange(low, high)
    box.setValue(value)
    return box


def _real(low: float, high: float, value: float, step: float = 0.1, decimals: int = 2):
    box = QDoubleSpinBox()
    box.setRange(low, high)
    box.setDecimals(decimals)
    box.setSingleStep(step)
    box.setValue(value)
    return box


def _model_box(model: str) -> QComboBox:
    """A model name: one of the server's (the list fills once it answers) or typed."""
    box = QComboBox()
    box.setEditable(True)  # a model the server does not list (loaded by name) can be typed
    box.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
    box.setMinimumContentsLength(24)
    completer = QCompleter(box.model(), box)  # a list to pick from, not inline guesses
    completer.setCompletionMode(QCompleter.CompletionMode.PopupCompletion)
    completer.setCaseSensitivity(Qt.CaseSensitivity.CaseSensitive)  # names are exact
    box.setCompleter(completer)
    box.setCurrentText(model)
    return box


def _form(rows: Sequence[tuple[str, QWidget]]) -> QFormLayout:
    """Labelled rows; each field is named for screen readers after its label."""
    form = QFormLayout()
    for label, widget in rows:
        widget.setAccessibleName(label.replace("&", ""))
        form.addRow(label, widget)
    return form


def _align(labels: list[QWidget]) -> None:
    """One label column across forms (each group box has a form of its own)."""
    width = max(label.sizeHint().width() for label in labels)
    for label in labels:
        label.setMinimumWidth(width)


def _parallel_calls(prefs: Preferences) -> QSpinBox:
    """Parallel calls: 0 shows as "automatic (now 3)", the limit learned for the server (the
    number left out until one is known); any other number fixes it."""
    box = _spin(0, 64, prefs.workers)
    now = automatic_parallel_calls(prefs.base_url, prefs.builder_model)
    box.setSpecialValueText(f"automatic (now {now})" if now else "automatic")
    box.setToolTip(
        "How many LLM calls run at once. Automatic: as many as the server is found to take "
        "(llama.cpp: its slots, and one call waiting its turn); a number sets it by hand."
    )
    return box


def _ask_for_models(settings: LLMSettings) -> list[str] | LLMError:
    """The server's models, or what went wrong (a value: the answer crosses threads)."""
    try:
        return list_models(settings)
    except LLMError as exc:
        return exc


class SettingsDialog(QDialog):
    def __init__(
        self,
        prefs: Preferences,
        api_key: str | None,
        parent: QWidget | None = None,
        embedding_key: str | None = None,
    ):
        super().__init__(parent)
        self.setWindowTitle("Settings")
        self.prefs = prefs
        self.key_for_session: str | None = api_key
        self.keychain_message = ""  # why the key was kept for this session only
        self._key_typed = False  # a key to save (with none, the keychain's answer says nothing)
        self.server_models: list[str] = []  # what the server listed last
        self._listed = False  # the models shown are the server's answer (not a problem said)
        self._models_asked = 0  # only the answer to the latest question counts
        self.embedding_models: list[str] | None = None  # what the embedding endpoint listed
        self.embedding_found: str | None = None  # the embedding model found there, if any
        self._embeddings_asked = 0
        self.tasks = TaskRunner(self)
        self.local_ports: dict[str, int] | None = None  # Detect's ports, by server (tests)
        # Timers are children: they die with the dialog, and never call a deleted one.
        self._keychain_timer = self._timer(self._keychain_timed_out, KEYCHAIN_TIMEOUT * 1000)
        self._model_timer = self._timer(self.refresh_models, MODEL_LIST_DELAY_MS)
        self._embedding_timer = self._timer(self.refresh_embeddings, MODEL_LIST_DELAY_MS)
        self.tabs = QTabWidget()
        self.tabs.setAccessibleName("Settings pages")
        # Short tabs: no scroll buttons (the bold selected tab made room for them).
        self.tabs.setUsesScrollButtons(False)
        self.tabs.tabBar().setElideMode(Qt.TextElideMode.ElideNone)
        self.tabs.addTab(self._basic(prefs, api_key), "&Basic")
        self.tabs.addTab(self._advanced(prefs), "&Advanced")
        self.tabs.addTab(self._search(prefs, embedding_key), "S&earch")
        self.saving = QLabel()  # the keychain being written (it may ask for a password)
        self.saving.setObjectName("modelStatus")
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.save)
        buttons.rejected.connect(self.reject)
        bottom = QHBoxLayout()
        bottom.addWidget(self.saving, 1)
        bottom.addWidget(buttons)
        layout = QVBoxLayout(self)
        layout.addWidget(self.tabs)
        layout.addLayout(bottom)
        self.resize(600, 0)
        self.base_url.textChanged.connect(lambda _text: self._address_edited())
        self.base_url.textChanged.connect(lambda _text: self._embedding_endpoint_edited())
        self.api_key.editingFinished.connect(self._key_edited)
        for box in (self.builder_model, self.chat_model):
            box.currentTextChanged.connect(lambda _text: self._say_models())
        self._asked_key = self.api_key.text().strip()
        self.refresh_models()
        self.refresh_embeddings()

    def _timer(self, slot: Callable[[], None], milliseconds: float) -> QTimer:
        timer = QTimer(self)
        timer.setSingleShot(True)
        timer.setInterval(int(milliseconds))
        timer.timeout.connect(slot)
        return timer

    # -- the tabs -------------------------------------------------------------------------

    def _basic(self, prefs: Preferences, api_key: str | None) -> QWidget:
        self.provider = QComboBox()
        self.provider.addItems(list(PRESETS))
        self.provider.setCurrentText(prefs.provider)
        self.provider.currentTextChanged.connect(self._preset)
        self.base_url = QLineEdit(prefs.base_url)
        self.base_url.setPlaceholderText("the address ending in /v1")
        self.api_key = QLineEdit(api_key or "")
        self.api_key.setEchoMode(QLineEdit.EchoMode.Password)
        self.api_key.setPlaceholderText("stored in the system keychain, never in a file")
        self.builder_model = _model_box(prefs.builder_model)
        self.chat_model = _model_box(prefs.chat_model)
        self.models_status = QLabel()
        self.models_status.setObjectName("modelStatus")
        self.models_status.setWordWrap(True)
        self.refresh = QPushButton("&Refresh list")
        self.refresh.setToolTip("Ask the server again for the models it offers")
        self.refresh.clicked.connect(self.refresh_models)
        listing = QHBoxLayout()
        listing.addWidget(self.models_status, 1)
        listing.addWidget(self.refresh, 0, Qt.AlignmentFlag.AlignTop)
        form = _form(
            [
                ("&Provider", self.provider),
                ("Base &URL", self.base_url),
                ("API &key", self.api_key),
                ("Model for &building", self.builder_model),
                ("Model for c&hat", self.chat_model),
            ]
        )
        form.addRow("", listing)
        test = self.test_button = QPushButton("&Test connection")
        test.clicked.connect(self.test_connection)
        detect = QPushButton("&Detect local servers")
        detect.clicked.connect(self.detect)
        probes = QHBoxLayout()
        probes.addWidget(test)
        probes.addWidget(detect)
        probes.addStretch(1)
        # What Test connection and Detect local servers found: under their buttons.
        self.report = QLabel()
        self.report.setWordWrap(True)
        self.report.setObjectName("probeReport")
        self.report.setAccessibleName("Connection test result")
        self.report.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.report.hide()  # until a test says something
        page = QWidget()
        layout = QVBoxLayout(page)
        layout.addLayout(form)
        layout.addLayout(probes)
        layout.addWidget(self.report)
        layout.addStretch(1)
        return page

    def _advanced(self, prefs: Preferences) -> QWidget:
        self.builder_temperature = _real(0, 2, prefs.builder_temperature)
        self.chat_temperature = _real(0, 2, prefs.chat_temperature)
        self.min_tokens = _spin(10, 4000, prefs.min_tokens)
        self.max_tokens = _spin(100, 16000, prefs.max_tokens)
        self.threshold = _spin(3, 500, prefs.reorganize_threshold)
        self.step_documents = _spin(0, 10_000, prefs.step_documents)
        self.step_documents.setSpecialValueText("never (one step)")
        self.step_documents.setToolTip(
            "A big drop is saved in steps of this many documents: each step can be asked, "
            "and a cancel keeps the finished ones."
        )
        self.workers = _parallel_calls(prefs)
        self.timeout = _real(1, 3600, prefs.timeout, step=10, decimals=0)
        self.timeout.setSuffix(" s")
        self.timeout.setToolTip(
            "A call is given up when the server sends nothing for this long (the wait for "
            "the calls queued ahead of it is allowed for)."
        )
        self.git_path = QLineEdit(prefs.git_path)
        self.git_path.setPlaceholderText("found on PATH when empty")
        groups: list[tuple[str, list[tuple[str, QWidget]]]] = [
            (
                "Temperature (0 keeps to the likeliest words; higher varies more)",
                [("For building", self.builder_temperature), ("For chat", self.chat_temperature)],
            ),
            (
                "Building",
                [
                    # a passage of a document becomes a note (never "chunk" in the window)
                    ("Shortest passage (tokens)", self.min_tokens),
                    ("Longest passage (tokens)", self.max_tokens),
                    ("Reorganize a folder above (notes)", self.threshold),
                    ("Save big drops every (documents)", self.step_documents),
                ],
            ),
            (
                "The server",
                [("Parallel calls", self.workers), ("Silence limit per call", self.timeout)],
            ),
            ("History", [("git executable", self.git_path)]),
        ]
        page = QWidget()
        layout = QVBoxLayout(page)
        labels: list[QWidget] = []
        for title, rows in groups:
            group = QGroupBox(title)
            form = _form(rows)
            # Numbers keep their size (a spin box across the dialog reads badly); git grows.
            form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.ExpandingFieldsGrow)
            group.setLayout(form)
            layout.addWidget(group)
            labels += [w for _, field in rows if (w := form.labelForField(field)) is not None]
        layout.addStretch(1)
        _align(labels)
        self.builder_temperature.setAccessibleName("Temperature for building")
        self.chat_temperature.setAccessibleName("Temperature for chat")
        numbers = [number for _, rows in groups[:3] for _, number in rows]
        width = max([110] + [n.sizeHint().width() for n in numbers])  # "never (one step)"
        for number in numbers:  # the numbers, of one width
            number.setMinimumWidth(width)
        return page

    def _search(self, prefs: Preferences, embedding_key: str | None) -> QWidget:
        """Search by meaning: whether, where (the chat's server unless another is named, with
        a key of its own then) and with which model (found on the server unless named)."""
        self.embeddings = QComboBox()
        for value, text in EMBEDDINGS.items():
            self.embeddings.addItem(text, value)
        self.embeddings.setCurrentIndex(max(0, self.embeddings.findData(prefs.embeddings)))
        self.embeddings.setToolTip(
            "Automatic: search by meaning when the server offers an embedding model (or one "
            "is named here). On: always, saying so when it cannot. Off: by words alone."
        )
        self.embedding_url = QLineEdit(prefs.embedding_base_url)
        self.embedding_url.setPlaceholderText("the chat's server when empty")
        self.embedding_key = QLineEdit(embedding_key or "")
        self.embedding_key.setEchoMode(QLineEdit.EchoMode.Password)
        self.embedding_model = _model_box(prefs.embedding_model)
        self.embedding_status = QLabel()
        self.embedding_status.setObjectName("modelStatus")
        self.embedding_status.setWordWrap(True)
        self.embedding_status.setAccessibleName("Embedding model found")
        about = QLabel(
            "Search finds notes by their words and, with an embedding model, by their meaning "
            "too: a question that shares no word with a note still finds it. The app, "
            "gam-serve and gam-mcp use these settings (GAM_EMBEDDING* variables override "
            "them)."
        )
        about.setWordWrap(True)
        about.setObjectName("modelStatus")
        form = _form(
            [
                ("Search by &meaning", self.embeddings),
                ("End&point", self.embedding_url),
                ("API ke&y", self.embedding_key),
                ("M&odel", self.embedding_model),
            ]
        )
        form.addRow("", self.embedding_status)
        # Said apart from the Basic page's fields of the same labels (screen readers).
        self.embeddings.setAccessibleName("Search by meaning")
        self.embedding_url.setAccessibleName("Embedding endpoint")
        self.embedding_key.setAccessibleName("Embedding endpoint's API key")
        self.embedding_model.setAccessibleName("Embedding model")
        group = QGroupBox("Embeddings")
        group.setLayout(form)
        page = QWidget()
        layout = QVBoxLayout(page)
        layout.addWidget(about)
        layout.addWidget(group)
        layout.addStretch(1)
        self.embeddings.currentIndexChanged.connect(lambda _index: self.refresh_embeddings())
        self.embedding_url.textChanged.connect(lambda _text: self._embedding_endpoint_edited())
        self.embedding_key.editingFinished.connect(self._embedding_timer.start)
        self.embedding_model.currentTextChanged.connect(lambda _text: self._say_embeddings())
        self._embedding_fields()
        return page

    def _preset(self, name: str) -> None:
        url, model, _needs_key = PRESETS[name]
        self.base_url.setText(url)
        self.builder_model.setCurrentText(model)
        self.chat_model.setCurrentText(model)
        self.refresh_models()  # a provider chosen, not an address typed: asked at once

    # -- the server's models --------------------------------------------------------------

    def _connection(self) -> LLMSettings:
        return self.result_preferences().llm("chat", self.api_key.text().strip())

    def _address_edited(self) -> None:
        """The address changed: what the last one listed says nothing about this one (its
        answer, should it still come, is dropped); asked once the typing pauses."""
        self._forget_listed()
        self._model_timer.start()

    def _forget_listed(self) -> None:
        """The models shown are no longer the server's answer: said to be asked, no
        warning drawn from the old list, and an answer on its way counts for nothing."""
        self._models_asked += 1
        self._listed = False
        self.models_status.setText(ASKING)
        self._mark_problem(False)

    def refresh_models(self) -> None:
        """Ask the server for its models off the GUI thread (a daemon thread: a server that
        never answers cannot hold up closing the app)."""
        self._model_timer.stop()
        self._forget_listed()
        asked, settings = self._models_asked, self._connection()
        call_in_daemon(
            lambda: (asked, _ask_for_models(settings)), self._models_answered, self._models_failed
        )

    def _key_edited(self) -> None:
        key = self.api_key.text().strip()
        if key != self._asked_key:  # a refused key is asked again once it changes
            self._asked_key = key
            self.refresh_models()
            if not self._embedding_where()[1]:  # the embeddings are on the chat's server
                self.refresh_embeddings()

    @Slot(object)
    def _models_answered(self, answer: tuple[int, list[str] | LLMError]) -> None:
        asked, models = answer
        if asked != self._models_asked:
            return  # an older question: the address or the key changed since
        if isinstance(models, LLMError):
            self.models_status.setText(self._model_list_problem(models))
            self._mark_problem(True)
            return
        self._offer(models)

    @Slot(object)
    def _models_failed(self, error: object) -> None:
        self.models_status.setText(f"The models could not be listed: {error}")
        self._mark_problem(True)

    def _offer(self, models: list[str]) -> None:
        """The server's models in both lists. A chosen name stays, listed or not, unless the
        server offers exactly one model: then that one is chosen (a llama.cpp or LM Studio
        server serves the model it loaded, whatever name is asked)."""
        self.server_models, self._listed = models, False  # (no word while the lists fill)
        for box in (self.builder_model, self.chat_model):
            chosen = box.currentText().strip()
            if len(models) == 1 and chosen not in models:
                chosen = models[0]
            box.clear()
            box.addItems(models)
            box.setCurrentText(chosen or models[0])
        self._listed = True
        self._say_models()

    def _say_models(self) -> None:
        """How many models the server offers, and which chosen ones it does not list: said
        again whenever a model is chosen or typed."""
        if not self._listed:
            return  # no list yet, or a problem is said instead
        models = self.server_models
        text = f"The server offers {plural(len(models), 'model')}."
        unlisted = sorted(
            {b.currentText().strip() for b in (self.builder_model, self.chat_model)} - set(models)
        )
        if unlisted:
            text += (
                f" It does not list {', '.join(unlisted)}: choose one it lists, unless the "
                "server loads models by name."
            )
        self.models_status.setText(text)
        self._mark_problem(bool(unlisted))

    def _model_list_problem(self, error: LLMError) -> str:
        """What went wrong, and what to do: the key refused, nothing there, no models."""
        if isinstance(error, LLMAuthError):
            if self.api_key.text().strip():
                return f"{error}: check the key for this endpoint (each keeps its own)."
            return f"{error}: enter the key for this endpoint."
        if isinstance(error, NoModels):
            return f"{error}: load a model in the server, or type its name."
        return f"{error}."

    def _mark_problem(self, problem: bool, label: QLabel | None = None) -> None:
        """The stylesheet colours a problem (`QLabel#modelStatus[problem="true"]`)."""
        label = label or self.models_status
        label.setProperty("problem", problem)
        label.style().unpolish(label)
        label.style().polish(label)

    # -- search by meaning ----------------------------------------------------------------

    def _embedding_where(self) -> tuple[str, bool]:
        """The embedding endpoint, and whether it is a server of its own (not the chat's)."""
        chat = self.base_url.text().strip()
        own = self.embedding_url.text().strip()
        return (own, True) if own and not same_server(own, chat) else (own or chat, False)

    def _embedding_fields(self) -> None:
        """The endpoint, key and model matter unless search by meaning is off; the key only
        for a server of its own (on the chat's server, the chat's key is used)."""
        on = self.embeddings.currentData() != "off"
        _url, own = self._embedding_where()
        for field in (self.embedding_url, self.embedding_model):
            field.setEnabled(on)
        self.embedding_key.setEnabled(on and own)
        self.embedding_key.setPlaceholderText(
            "stored in the system keychain, never in a file"
            if own
            else "the chat's key, on the chat's server"
        )

    def _embedding_endpoint_edited(self) -> None:
        self._embedding_fields()
        self._embedding_timer.start()  # asked once the typing pauses

    def _embedding_connection(self) -> LLMSettings:
        url, own = self._embedding_where()
        key = (self.embedding_key if own else self.api_key).text().strip()
        return LLMSettings(base_url=url, api_key=SecretStr(key) if key else None, timeout=5)

    def refresh_embeddings(self) -> None:
        """Ask the embedding endpoint for its models, off the GUI thread, to show the one
        search by meaning would use. A remote server without a key is not asked (it would
        refuse; search does not ask it either)."""
        self._embedding_timer.stop()
        self._embedding_fields()
        self._embeddings_asked += 1
        self.embedding_models = self.embedding_found = None
        self._show_found()
        if self.embeddings.currentData() == "off":
            self._say_embeddings()
            return
        settings = self._embedding_connection()
        url = settings.base_url.rstrip("/")
        if not self.embedding_url.text().strip() and not self.base_url.text().strip():
            self._say_embeddings("Enter the chat's server on the Basic page, or an endpoint.")
            return
        if not is_local(url) and settings.api_key is None:
            self._say_embeddings(f"Enter the key for {url} to look for its embedding model.")
            return
        self._say_embeddings(f"Asking {url} for its embedding models…", problem=False)
        asked = self._embeddings_asked
        call_in_daemon(
            lambda: (asked, _ask_for_models(settings)),
            self._embeddings_answered,
            self._embeddings_failed,
        )

    @Slot(object)
    def _embeddings_answered(self, answer: tuple[int, list[str] | LLMError]) -> None:
        asked, models = answer
        if asked != self._embeddings_asked:
            return  # an older question: the endpoint, the key or the choice changed since
        if isinstance(models, LLMError):
            self._say_embeddings(f"{models}.")
            return
        self.embedding_models = models
        self.embedding_found = pick_model(models)
        chosen = self.embedding_model.currentText()
        self.embedding_model.blockSignals(True)
        self.embedding_model.clear()
        self.embedding_model.addItems(["", *models])  # "": found automatically
        self.embedding_model.setCurrentText(chosen)
        self.embedding_model.blockSignals(False)
        self._show_found()
        self._say_embeddings()

    @Slot(object)
    def _embeddings_failed(self, error: object) -> None:
        self._say_embeddings(f"The models could not be listed: {error}")

    def _show_found(self) -> None:
        """The model field, left empty, shows the model that would be used."""
        found, line = self.embedding_found, self.embedding_model.lineEdit()
        if line is not None:  # (an editable box has one)
            line.setPlaceholderText(
                f"automatic: {found}" if found else "found on the server when empty"
            )

    def _say_embeddings(self, problem_text: str = "", problem: bool = True) -> None:
        """What search by meaning will use: the model named or found, or why none."""
        status = self.embedding_status
        if problem_text:
            status.setText(problem_text)
            self._mark_problem(problem, status)
            return
        if self.embeddings.currentData() == "off":
            status.setText("Off: search finds notes by their words alone.")
            self._mark_problem(False, status)
            return
        models = self.embedding_models
        if models is None:
            return  # still asking
        url = self._embedding_connection().base_url.rstrip("/")
        chosen = self.embedding_model.currentText().strip()
        if chosen:
            text = f"Search by meaning uses {chosen}."
            if chosen not in models:
                text += f" {url} does not list it: it is asked for by name."
            status.setText(text)
            self._mark_problem(chosen not in models, status)
        elif self.embedding_found:
            status.setText(f"Found {self.embedding_found} at {url}: search by meaning uses it.")
            self._mark_problem(False, status)
        else:
            status.setText(
                f"{url} lists no embedding model: search finds notes by their words alone. "
                "Name a model, or an endpoint that has one."
            )
            self._mark_problem(self.embeddings.currentData() == "on", status)

    # -- the result -----------------------------------------------------------------------

    def result_preferences(self) -> Preferences:
        return replace(
            self.prefs,
            provider=self.provider.currentText(),
            base_url=self.base_url.text().strip(),
            builder_model=self.builder_model.currentText().strip(),
            chat_model=self.chat_model.currentText().strip(),
            builder_temperature=self.builder_temperature.value(),
            chat_temperature=self.chat_temperature.value(),
            min_tokens=self.min_tokens.value(),
            max_tokens=max(self.max_tokens.value(), self.min_tokens.value() + 1),
            workers=self.workers.value(),
            reorganize_threshold=self.threshold.value(),
            step_documents=self.step_documents.value(),
            timeout=self.timeout.value(),
            git_path=self.git_path.text().strip(),
            embeddings=self.embeddings.currentData(),
            embedding_base_url=self.embedding_url.text().strip(),
            embedding_model=self.embedding_model.currentText().strip(),
        )

    def result_key(self) -> str | None:
        return self.key_for_session

    def result_embedding_key(self) -> str | None:
        """The embedding endpoint's own key (None when it is the chat's server)."""
        _url, own = self._embedding_where()
        return (self.embedding_key.text().strip() or None) if own else None

    # -- probes ---------------------------------------------------------------------------

    def _tell(self, text: str) -> None:
        """What a probe found, under its buttons."""
        self.report.setText(text)
        self.report.setVisible(bool(text))

    def test_connection(self) -> None:
        settings = self._connection()
        self._tell("Testing…")
        self.refresh_models()  # the note under the models says what this test finds too
        self.tasks.start(
            "probe",
            lambda w, c: probe(settings),
            on_success=lambda report: self._tell(report.summary()),
            on_failure=lambda exc: self._tell(f"Test failed: {exc}"),
        )

    def detect(self) -> None:
        *first, last = [server.name for server in LOCAL_SERVERS]
        self._tell(f"Looking for {', '.join(first)} and {last} on this computer…")
        ports = self.local_ports

        def found(servers) -> None:
            if not servers:
                where = ", ".join(f"{s.name} {s.port}" for s in LOCAL_SERVERS)
                self._tell(f"No local server answered on the default ports ({where}).")
                return
            name, url, models = servers[0]
            with QSignalBlocker(self.provider):  # not its preset's address: the one found
                self.provider.setCurrentText(name)
            self.base_url.setText(url)
            if models:
                self._model_timer.stop()  # its models are known: nothing to ask
                self.builder_model.setCurrentText(models[0])
                self.chat_model.setCurrentText(models[0])
                self._offer(models)
            else:
                self.refresh_models()
            found = (f"{n} at {u} ({plural(len(m), 'model')})" for n, u, m in servers)
            self._tell("Found " + "; ".join(found))

        self.tasks.start("detect", lambda w, c: detect_local(ports=ports), on_success=found)

    # -- saving ---------------------------------------------------------------------------

    def save(self) -> None:
        """Store the key (and the embedding endpoint's own, if it has one) in the keychain
        off the GUI thread, then close. The timer and the answer's slots belong to this
        dialog: once it is deleted, neither calls it."""
        key = self.api_key.text().strip()
        endpoint = self.base_url.text().strip()
        own_url, own = self._embedding_where()
        own_key = self.embedding_key.text().strip()
        self.key_for_session = key or None
        self.saving.setText("Saving…")
        forget_found_models()  # what a server lists is asked again, as it may change

        keys = {endpoint: key, **({own_url: own_key} if own else {})}
        self._key_typed = any(keys.values())

        def store() -> None:
            for url, typed in keys.items():
                if typed:
                    keystore.set_key(url, typed)
                else:  # none typed: none kept (without a keychain there is none to forget)
                    keystore.delete_key(url)

        call_in_daemon(store, self._stored, self._not_stored)
        # A locked keychain may wait for a password prompt indefinitely: do not wait with it.
        self._keychain_timer.start(int(KEYCHAIN_TIMEOUT * 1000))  # (tests shorten it)

    @Slot(object)
    def _stored(self, _result: object) -> None:
        if self._keychain_timer.isActive():  # else the timeout has answered already
            self._keychain_timer.stop()
            self.accept()

    @Slot(object)
    def _not_stored(self, error: object) -> None:
        if self._keychain_timer.isActive():
            self._keychain_timer.stop()
            if self._key_typed:  # (with no key, "The key was not saved" said nothing true)
                self.keychain_message = self._not_saved(error)
            self.accept()

    @Slot()
    def _keychain_timed_out(self) -> None:
        if self._key_typed:
            self.keychain_message = self._not_saved(
                f"The keychain did not answer within {KEYCHAIN_TIMEOUT:g} s (is it locked?)."
            )
        self.accept()

    @staticmethod
    def _not_saved(error: object) -> str:
        """Why the key was not saved, then, once, that it is kept for this session only."""
        what = error_advice.describe(error).text if isinstance(error, BaseException) else error
        return f"{what}\n\n{keystore.SESSION_ONLY}"
