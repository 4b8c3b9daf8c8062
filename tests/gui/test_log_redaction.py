"""The window's log file never holds the API key: a task that failed is logged with its
traceback (gui.workers.Worker), and an LLM server may quote the key in its error. The
errors are redacted where they are made (engine/llm/client.py); the log's formatter also
takes out any key this process sends, a last line of defence."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QCoreApplication

from gam_desktop.engine.llm import LLMClient
from gam_desktop.engine.llm.redact import LABEL
from gam_desktop.gui.app import set_identity, setup_logging
from gam_desktop.gui.workers import TaskRunner, Worker
from tests.engine import test_llm_refused
from tests.engine.test_llm_refused import KEY, QUESTION, RefusingServer, keyed

refusing = test_llm_refused.refusing  # the fixture: a server quoting the key in its 400


def levels() -> dict[str, int]:
    """Every logger's own level, the root's ("") included."""
    loggers = {"": logging.getLogger(), **logging.Logger.manager.loggerDict}
    return {n: lg.level for n, lg in loggers.items() if isinstance(lg, logging.Logger)}


@pytest.fixture
def log_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, qapp) -> Iterator[Path]:
    """The app's own log handler, writing under this test's data folder; what setting it
    up changed for the process (handlers, levels, the app's names) is put back after."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    # the app's names decide where QSettings reads: the tests after this one keep theirs
    app = QCoreApplication
    names = (app.applicationName(), app.organizationName(), app.applicationVersion())
    root = logging.getLogger()
    handlers, before = list(root.handlers), levels()
    changed: dict[str, int] = {}  # logger: its level before, where setting up changed it
    try:
        set_identity()
        folder = setup_logging()
        old = {n: before.get(n, logging.NOTSET) for n in levels()}
        changed = {n: level for n, level in old.items() if logging.getLogger(n).level != level}
        yield folder / "gam-desktop.log"
    finally:
        for handler in set(root.handlers) - set(handlers):
            root.removeHandler(handler)
            handler.close()
        for name, level in changed.items():
            logging.getLogger(name).setLevel(level)
        app.setApplicationName(names[0])
        app.setOrganizationName(names[1])
        app.setApplicationVersion(names[2])


def run_failing(qtbot, job: Callable[[Worker], object]) -> list[Exception]:
    """`job` run as the window runs a task (TaskRunner: a Worker on a thread of its own),
    once it has failed."""
    failed: list[Exception] = []
    runner = TaskRunner()
    runner.start("failing", lambda worker, _cancel: job(worker), on_failure=failed.append)
    qtbot.waitUntil(lambda: bool(failed) and not runner.tasks, timeout=30_000)
    return failed


def test_a_task_failing_on_a_server_that_echoes_the_key_logs_no_key(
    qtbot, log_file: Path, refusing: RefusingServer
) -> None:
    client = LLMClient(keyed(refusing))
    [error] = run_failing(qtbot, lambda _w: client.text(QUESTION, stage="chat"))
    assert KEY not in str(error)
    for handler in logging.getLogger().handlers:
        handler.flush()
    text = log_file.read_text()
    assert "task 1 failed" in text and "Traceback" in text  # logged, with its traceback
    assert f"Bearer {LABEL}" in text and KEY not in text


def test_the_log_takes_out_a_key_the_app_sends_whatever_logs_it(
    qtbot, log_file: Path, refusing: RefusingServer
) -> None:
    """A message that quotes the key without going through the LLM client's errors (a
    bug, a library's own message): the log's formatter takes it out."""
    LLMClient(keyed(refusing))  # the key this process sends

    def job(_worker: Worker) -> None:
        raise RuntimeError(f"something quoted {KEY}")

    run_failing(qtbot, job)
    logging.getLogger("gam_desktop").warning("and a line with %s in it", KEY)
    for handler in logging.getLogger().handlers:
        handler.flush()
    text = log_file.read_text()
    assert f"something quoted {LABEL}" in text and f"a line with {LABEL} in it" in text
    assert KEY not in text
