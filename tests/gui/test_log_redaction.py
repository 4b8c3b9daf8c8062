"""The window's log file never holds the API key: a task that failed is logged with its
traceback (gui.workers.Worker), and an LLM server may quote the key in its error. The
errors are redacted where they are made (engine/llm/client.py); the log's formatter also
takes out any key this process sends, a last line of defence."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from gam_desktop.engine.llm import LLMClient
from gam_desktop.engine.llm.redact import LABEL
from gam_desktop.gui.app import set_identity, setup_logging
from gam_desktop.gui.workers import Worker
from tests.engine import test_llm_refused
from tests.engine.test_llm_refused import KEY, QUESTION, RefusingServer, keyed

refusing = test_llm_refused.refusing  # the fixture: a server quoting the key in its 400


@pytest.fixture
def log_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, qapp) -> Iterator[Path]:
    """The app's own log handler, writing under this test's data folder."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    set_identity()
    root = logging.getLogger()
    before = list(root.handlers)
    try:
        folder = setup_logging()
        yield folder / "gam-desktop.log"
    finally:
        for handler in set(root.handlers) - set(before):
            root.removeHandler(handler)
            handler.close()


def run_failing(job) -> list[Exception]:
    failed: list[Exception] = []
    worker = Worker(1, job)
    worker.failed.connect(lambda _id, exc: failed.append(exc))
    worker.run()  # on this thread: what the task's thread would do
    return failed


def test_a_task_failing_on_a_server_that_echoes_the_key_logs_no_key(
    log_file: Path, refusing: RefusingServer
) -> None:
    client = LLMClient(keyed(refusing))
    [error] = run_failing(lambda _w: client.text(QUESTION, stage="chat"))
    assert KEY not in str(error)
    for handler in logging.getLogger().handlers:
        handler.flush()
    text = log_file.read_text()
    assert "task 1 failed" in text and "Traceback" in text  # logged, with its traceback
    assert f"Bearer {LABEL}" in text and KEY not in text


def test_the_log_takes_out_a_key_the_app_sends_whatever_logs_it(
    log_file: Path, refusing: RefusingServer
) -> None:
    """A message that quotes the key without going through the LLM client's errors (a
    bug, a library's own message): the log's formatter takes it out."""
    LLMClient(keyed(refusing))  # the key this process sends

    def job(_worker: Worker) -> None:
        raise RuntimeError(f"something quoted {KEY}")

    run_failing(job)
    logging.getLogger("gam_desktop").warning("and a line with %s in it", KEY)
    for handler in logging.getLogger().handlers:
        handler.flush()
    text = log_file.read_text()
    assert f"something quoted {LABEL}" in text and f"a line with {LABEL} in it" in text
    assert KEY not in text
