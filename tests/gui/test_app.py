"""The real start-up path of `gam-desktop`, in a fresh process."""

from __future__ import annotations

import logging
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import QLockFile, QSettings

from gam_desktop.gui.app import log_folder, set_identity, setup_logging
from gam_desktop.gui.settings import clear_broken_lock
from tests.documents import topic_document

README = Path(__file__).resolve().parents[2] / "README.md"


@pytest.mark.linux_only(
    "reads the settings file Qt writes under HOME on Linux; elsewhere QSettings ignores HOME"
)
def test_the_app_starts_opens_a_memory_and_logs(
    make_workflow, memory_dir: Path, tmp_path: Path
) -> None:
    make_workflow().add(text=topic_document({"python": 2}))
    home = tmp_path / "home"
    env = {
        "HOME": str(home),
        "PATH": os.environ["PATH"],
        "QT_QPA_PLATFORM": "offscreen",
        "GAM_EXIT_WHEN_SHOWN": "1",
        "OPENAI_API_KEY": "sk-never-logged-1234567890",
    }
    out = subprocess.run(
        [sys.executable, "-m", "gam_desktop", str(memory_dir)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert "window shown" in out.stdout
    logs = list(home.rglob("gam-desktop.log"))
    assert logs == [home / documented_log().removeprefix("~/")]  # where the README says
    assert "GAM Desktop 0.1.0 starting" in logs[0].read_text()
    everything = "".join(p.read_text(errors="ignore") for p in home.rglob("*") if p.is_file())
    assert "sk-never-logged" not in everything  # not in logs, not in settings
    settings = next(home.rglob("GAM Desktop.conf")).read_text()
    assert str(memory_dir) in settings  # the folder is remembered for next time


# The app's start, as `python -m gam_desktop` runs it, with a Qt message handler that ends
# the process (exit 3) on the warning a QThread deleted while it runs gives (Qt then aborts).
# "slow": a warm-up still at work when the window is shown and the app quits, and a closing
# window that waits 0.1 s for a task (as a busy machine's imports outlasted its 10 s).
EXIT_PATH = """
import os, sys, threading, time
from PySide6.QtCore import qInstallMessageHandler
from gam_desktop.gui import app, workers

def handler(_kind, _context, message):
    if "Destroyed while thread" in message:
        print(f"QThread warning: {message}", file=sys.stderr, flush=True)
        os._exit(3)

qInstallMessageHandler(handler)
if sys.argv[1] == "slow":
    quitting, shown, warm_up = threading.Event(), app.say_shown, app.warm_up

    def say_shown(qt_app):
        quitting.set()
        shown(qt_app)

    def slow_warm_up():
        quitting.wait(60)
        time.sleep(0.5)  # (a fake job's length: five times the wait at close)
        warm_up()

    app.say_shown, app.warm_up, workers.WAIT_AT_CLOSE_MS = say_shown, slow_warm_up, 100
sys.exit(app.main([]))
"""


@pytest.mark.parametrize("warm_up", ["slow", "as-is", "as-is"])
def test_the_app_quitting_as_soon_as_shown_waits_for_its_warm_up(tmp_path: Path, warm_up) -> None:
    """GAM_EXIT_WHEN_SHOWN (the start-up benchmark) quit while the warm-up thread still ran
    (its imports take over 10 s on a busy machine, and the closing window waited 10 s):
    "QThread: Destroyed while thread 'gam-warm-up-1' is still running", then an abort (exit
    134). The warm-up, which always ends, is waited for as long as it takes."""
    home = tmp_path / "home"
    env = {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / "config"),
        "XDG_DATA_HOME": str(home / "data"),
        "PATH": os.environ["PATH"],
        "PYTHONPATH": str(README.parent),
        "QT_QPA_PLATFORM": "offscreen",
        "GAM_EXIT_WHEN_SHOWN": "1",
    }
    out = subprocess.run(
        [sys.executable, "-c", EXIT_PATH, warm_up],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "QThread warning" not in out.stderr and out.returncode == 0, out.stderr[-2000:]
    assert "window shown" in out.stdout


def documented_log() -> str:
    """The log file's path on Linux as README.md's "Where things live" table gives it."""
    row = next(line for line in README.read_text().splitlines() if line.startswith("| logs |"))
    found = re.search(r"`(~/[^`]+)`", row)
    assert found is not None, row
    return found.group(1)


@pytest.mark.linux_only("the README's path is Linux's ($XDG_DATA_HOME, ~/.local/share)")
def test_the_log_is_written_where_the_readme_says(tmp_path: Path, monkeypatch) -> None:
    """In this test's own data folder ($XDG_DATA_HOME, which the README says wins), at the
    documented path below ~/.local/share; Help ▸ Open log folder and About name the same."""
    data = tmp_path / "data"
    monkeypatch.setenv("XDG_DATA_HOME", str(data))
    assert "`$XDG_DATA_HOME`" in next(
        line for line in README.read_text().splitlines() if line.startswith("| logs |")
    )
    set_identity()
    root = logging.getLogger()
    before = list(root.handlers)
    try:
        folder = setup_logging()
        logging.getLogger("gam_desktop").warning("a line for the log")
    finally:
        for handler in set(root.handlers) - set(before):
            root.removeHandler(handler)
            handler.close()
    log_file = data / documented_log().removeprefix("~/.local/share/")
    assert folder == log_folder() == log_file.parent
    assert "a line for the log" in log_file.read_text()


def test_version_and_help() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "gam_desktop", "--version"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.stdout.strip() == "0.1.0"


def test_a_windowed_build_without_stdout_runs_its_self_test(tmp_path: Path) -> None:
    """A windowed PyInstaller exe on Windows has sys.stdout and sys.stderr set to None:
    nothing may write to them unguarded."""
    code = (
        "import sys; sys.stdout = None; sys.stderr = None\n"
        "from gam_desktop.gui.app import main\n"
        "sys.exit(main(['--self-test']))\n"
    )
    env = {"HOME": str(tmp_path), "PATH": os.environ["PATH"], "QT_QPA_PLATFORM": "offscreen"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, timeout=120)
    assert out.returncode == 0, out.stderr.decode(errors="replace")[-2000:]


def _second_start_env(home: Path) -> dict[str, str]:
    """A second start of the app: its own home, the same user and temporary folder (where
    the window's local socket lives)."""
    env = {
        "HOME": str(home),
        "PATH": os.environ["PATH"],
        "QT_QPA_PLATFORM": "offscreen",
        "GAM_EXIT_WHEN_SHOWN": "1",  # were a window shown, it would say so and quit
    }
    for name in ("TMPDIR", "TEMP", "TMP", "SYSTEMROOT", "USERNAME"):
        if name in os.environ:
            env[name] = os.environ[name]
    return env


def test_a_second_start_on_an_open_memory_brings_its_window_to_the_front(
    qtbot, window, tmp_path: Path
) -> None:
    """Two real processes: this one has the memory open in its window; a second start of the
    app on the same memory asks that window to come to the front and exits, without a
    window of its own (it used to show the "already open" notice, then a blank window)."""
    memory = tmp_path / "memory"
    assert window.open_memory(memory)
    raised: list[bool] = []
    window.session.app_lock.raise_requested.connect(lambda: raised.append(True))
    second = subprocess.Popen(
        [sys.executable, "-m", "gam_desktop", str(memory)],
        env=_second_start_env(tmp_path / "home"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:  # this window's event loop runs meanwhile: it answers the knock
        qtbot.waitUntil(lambda: second.poll() is not None, timeout=60_000)
    finally:
        second.kill()
    out, err = second.communicate()
    assert second.returncode == 0, err
    assert "its window was brought to the front" in out and "window shown" not in out
    assert raised == [True] and window.isVisible()


def test_a_memory_open_in_a_window_that_does_not_answer_is_said_so(tmp_path: Path) -> None:
    """The other window holds the memory but does not answer (no door: a hung app, or an
    older version): this start says so and exits; once it is closed, a start goes on."""
    from filelock import FileLock

    from gam_desktop.engine.store.folder import APP_LOCK_FILE
    from gam_desktop.gui.app import defer_to_other_window

    memory = tmp_path / "memory"
    (memory / ".gam").mkdir(parents=True)
    other = FileLock(memory / APP_LOCK_FILE, thread_local=False)
    other.acquire()
    told: list[tuple[str, str]] = []
    assert defer_to_other_window(memory, lambda *said: told.append(said)) == 1
    assert told == [
        (
            "This memory is already open",
            f"{memory} is open in another GAM Desktop window, which did not answer when asked "
            "to come to the front (it may be busy, or have stopped responding). Switch to that "
            "window yourself, or close it, then open the memory again.",
        )
    ]
    other.release()
    assert defer_to_other_window(memory, lambda *said: told.append(said)) is None
    assert len(told) == 1


def test_a_settings_lock_left_empty_by_a_crash_is_removed(qapp, tmp_path: Path) -> None:
    """The app killed as it made its settings' lock file leaves it empty; QSettings then
    waited until it was 30 s old before saving, and the next start showed its window 32 s
    late. A lock that names a live process, one being written now, is kept."""
    store = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    lock = Path(store.fileName() + ".lock")
    lock.write_text("")
    assert clear_broken_lock(store) and not lock.exists()
    held = QLockFile(str(lock))
    assert held.tryLock(0)  # this process, alive
    try:
        assert not clear_broken_lock(store) and lock.exists()
    finally:
        held.unlock()
    assert not clear_broken_lock(store)  # no lock at all
