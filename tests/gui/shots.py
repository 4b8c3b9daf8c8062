"""Screenshots of the window as a person sees it, and the user guide's pictures, taken with
the app's own window offscreen (Qt's `grab`), in a process of its own:

    QT_QPA_PLATFORM=offscreen python -m tests.gui.shots OUT [--guide resources/guide]

A memory ("Research notes") is built from the sample documents with the scripted server;
the window answers a question, shows a note, a note written without the LLM, a source a
rollback removed, a research report, the History and a fact learned, each at 800 × 600 and
1280 × 800 in the light and the dark theme (OUT/<state>-<size>-<theme>.png). With --guide,
the guide's pictures (resources/guide/*.png) are written again from the same window. The
caller sets HOME: nothing here touches the person's own (tests/gui/test_shots.py).
"""

from __future__ import annotations

import argparse
import io
import shutil
import tempfile
from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, Qt, QUrl
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QApplication, QWidget

from gam_desktop import __version__
from gam_desktop.gui import theme
from gam_desktop.gui.app import make_app
from gam_desktop.gui.main_window import MainWindow
from gam_desktop.selfcheck.scripted_llm import Fault, RunningServer
from tests.gui.offscreen import samples, scripted_workflow, themed_window, wait_until

SIZES = {"800x600": (800, 600), "1280x800": (1280, 800)}
GUIDE_SIZE = (1024, 660)  # the guide's pictures: readable, and small files
MEMORY = "Research notes"
PICTURE_KEY = "Made-by"  # a guide picture's PNG text: made here, from the window itself


def settle(window: MainWindow) -> None:
    wait_until(lambda: not window.tasks.running() and not window.history.loading())
    for _ in range(5):
        QApplication.processEvents()


def build_memory(server: RunningServer, folder: Path) -> None:
    """The sample documents, one of them written without the LLM (its calls failed)."""
    documents = samples()
    with scripted_workflow(server, folder) as workflow:
        workflow.add(files=documents[1:])
        failing = Fault("500", times=10_000, task="memorize")
        server.state.faults.append(failing)
        workflow.add(files=documents[:1])  # written without the LLM: its calls kept failing
        failing.times = 0


class Shooter:
    def __init__(self, window: MainWindow, out: Path) -> None:
        self.window, self.out = window, out
        self.taken: list[Path] = []

    def shoot(self, name: str, widget: QWidget | None = None, sizes: list[str] | None = None):
        window = self.window
        for size in sizes or list(SIZES):
            width, height = SIZES[size]
            window.resize(width, height)
            wait_until(lambda w=width: window.width() == w)
            settle(window)
            path = self.out / f"{name}-{size}-{theme_name()}.png"
            (widget or window).grab().save(str(path))
            self.taken.append(path)
            panes = (window.find_panel, window.preview, window.conversation_list, window.chat)
            print(path.name, *[p.width() if p.isVisible() else 0 for p in panes])


def theme_name() -> str:
    app = QApplication.instance()
    return "dark" if isinstance(app, QApplication) and theme.is_dark(app) else "light"


def guide_picture(widget: QWidget, path: Path) -> None:
    """A picture for the guide: the window at GUIDE_SIZE, scaled to 760 px wide (the
    guide's column) and saved as a small PNG (128 colours, as the guide ships in the app),
    marked as made here (PICTURE_KEY)."""
    from PIL import Image, PngImagePlugin

    image = widget.grab().toImage()
    scaled = image.scaledToWidth(760, Qt.TransformationMode.SmoothTransformation)
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    assert scaled.convertToFormat(QImage.Format.Format_RGB888).save(buffer, "PNG")
    buffer.close()
    picture = Image.open(io.BytesIO(bytes(data.data()))).convert("RGB")
    few = picture.quantize(colors=128, dither=Image.Dither.NONE)
    info = PngImagePlugin.PngInfo()
    info.add_text(PICTURE_KEY, f"tests/gui/shots.py, GAM Desktop {__version__}")
    few.save(path, "PNG", optimize=True, pnginfo=info)


def run(out: Path, guide: Path | None) -> list[Path]:
    """Every state, both themes, both sizes; the guide's pictures too with `guide`."""
    app = make_app([])
    scratch = Path(tempfile.mkdtemp(prefix="gam-shots-"))
    for folder in (out, guide):
        if folder is not None:
            folder.mkdir(parents=True, exist_ok=True)
    taken: list[Path] = []
    try:
        with RunningServer() as server:
            build_memory(server, scratch / "built" / MEMORY)
            for scheme in ("light", "dark"):
                memory = scratch / scheme / MEMORY  # each theme in a memory of its own
                shutil.copytree(scratch / "built" / MEMORY, memory, symlinks=True)
                taken += shots(server, memory, out, scheme, guide)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    app.shutdown()
    return taken


def make_window(server: RunningServer, memory: Path, scheme: str) -> MainWindow:
    window = themed_window(server, memory.parent / "settings.ini", dark=scheme == "dark")
    window.confirm = lambda *_a, **_k: True  # every question answered with its first button
    window.tell = lambda *_a: None
    window.resize(*SIZES["1280x800"])
    window.show()
    assert window.open_memory(memory)
    settle(window)
    return window


def ask(window: MainWindow, question: str, research: bool = False) -> None:
    chat = window.chat
    chat.research.setChecked(research)
    chat.input.setPlainText(question)
    chat.send.click()
    if research:
        wait_until(lambda: chat.turns[-1].report is not None)
    else:
        wait_until(lambda: chat.turns[-1].result is not None)
    settle(window)


def fallback_note(memory: Path) -> str:
    """A note of the memory written without the LLM."""
    return next(
        p.relative_to(memory).as_posix()
        for p in sorted(memory.rglob("*.md"))
        if ".git" not in p.parts and "fallback: true" in p.read_text()
    )


def shots(
    server: RunningServer, memory: Path, out: Path, scheme: str, guide: Path | None
) -> list[Path]:
    window = make_window(server, memory, scheme)
    shooter = Shooter(window, out)
    pictures = guide is not None and scheme == "light"
    window.tree.expandAll()
    ask(window, "What is BERT?")
    window.chat.transcript.anchorClicked.emit(
        QUrl(f"source:{window.chat.turns[-1].result.sources[0]}")
    )
    shooter.shoot("chat")
    if pictures:
        guide_shot(window, guide / "window.png")
    window.drop_hint.setText(window.intake.drop_hint())  # files dragged over the window
    window.drop_hint.show()
    window.drop_hint.raise_()
    shooter.shoot("drop", sizes=["1280x800"])
    if pictures:
        guide_shot(window, guide / "drop.png")
    window.drop_hint.hide()
    fallback = fallback_note(memory)
    window.open_file(fallback)
    shooter.shoot("fallback")
    ask(window, "When were BERT and GPT released?", research=True)
    shooter.shoot("research")
    window.chat.transcript.anchorClicked.emit(QUrl(f"save:{len(window.chat.turns) - 1}"))
    wait_until(lambda: window.chat.turns[-1].saved is not None)
    shooter.shoot("research-saved")
    if pictures:
        guide_shot(window, guide / "research.png")
    ask(window, "I am a vegetarian.")
    wait_until(lambda: window.chat.turns[-1].note is not None)
    window.open_file(window.chat.turns[0].result.sources[0])
    shooter.shoot("learned")
    if guide is not None and scheme == "dark":
        guide_shot(window, guide / "dark.png")
    window.open_file(fallback)
    window.tabs.setCurrentWidget(window.history)
    wait_until(lambda: window.history.operations)
    added = next(op for op in window.history.operations if op.summary.startswith("Added 1"))
    window.history.select(added.sha)
    wait_until(lambda: window.history.diff.toPlainText())
    shooter.shoot("history")
    if pictures:
        guide_shot(window, guide / "history.png")
    window.history_actions.roll_back(added)  # the note shown goes with it
    wait_until(lambda: "was removed by" in window.preview.body.toPlainText())
    shooter.shoot("removed")
    from gam_desktop.gui.settings_dialog import ASKING, SettingsDialog

    # llama.cpp on the scripted server's address (its own, 8080, is not asked from here),
    # pictured once the server's models are listed
    llama = replace(window.prefs, provider="llama.cpp")
    dialog = SettingsDialog(llama, None, window)
    dialog.show()
    wait_until(lambda: dialog.models_status.text() not in ("", ASKING))
    settle(window)
    path = out / f"settings-{scheme}.png"
    dialog.grab().save(str(path))
    shooter.taken.append(path)
    dialog.close()
    window.close()
    again = make_window(server, memory, scheme)  # a restart: the saved report stays saved
    wait_until(lambda: any(turn.research for turn in again.chat.turns))
    shooter.window = again
    again.chat.transcript.verticalScrollBar().setValue(0)
    shooter.shoot("after-restart", sizes=["1280x800"])
    again.close()
    return shooter.taken


def guide_shot(window: MainWindow, path: Path) -> None:
    """The window at the guide's size, as a picture for the guide: the conversation at its
    latest turn, and the memory named in the status bar without this run's scratch folder."""
    window.resize(*GUIDE_SIZE)
    wait_until(lambda: window.width() == GUIDE_SIZE[0])
    settle(window)
    bar = window.chat.transcript.verticalScrollBar()
    bar.setValue(bar.maximum())
    status = window.status_label.text()
    if status.startswith("Opened /"):
        window.status_label.setText(f"Opened {MEMORY}{status.split(MEMORY, 1)[-1]}")
    settle(window)
    guide_picture(window, path)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("out", type=Path)
    parser.add_argument("--guide", type=Path)
    arguments = parser.parse_args()
    run(arguments.out, arguments.guide)
