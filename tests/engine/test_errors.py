"""Errors with advice: every error a person can act on is a GamError; anything else is a
bug, reported as one (the command line exits 70 with the traceback on stderr)."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from pathlib import Path

import pytest

import gam_desktop.engine
from gam_desktop import keystore
from gam_desktop.cli import EX_SOFTWARE, add_main, rollback_main
from gam_desktop.engine.errors import GamError
from gam_desktop.engine.workflow import Workflow
from tests.documents import topic_document

# Control flow or messages to the model, never shown to a person as a failure.
# Silent (NoFirstToken: before the reply began), BrokenReply and Overlong are a stream given up on:
# retried, then an LLMCallFailed.
NOT_FOR_PEOPLE = {
    "OperationCancelled",
    "ToolError",
    "ParseProblem",
    "_NotAReply",
    "Silent",
    "NoFirstToken",
    "BrokenReply",
    "Overlong",  # a BrokenReply: a reply that runs on, retried, then an LLMCallFailed
    "_OverBudget",  # a PDF's reading past its budget: a DocumentError where it is caught
    "_TooLarge",  # front matter expanding too far: a damaged note where it is caught
    "_Full",  # the results store's write met a full disk: kept in the process instead
}


def engine_errors() -> list[type[BaseException]]:
    found = {}
    for info in pkgutil.walk_packages(gam_desktop.engine.__path__, "gam_desktop.engine."):
        module = importlib.import_module(info.name)
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if issubclass(cls, BaseException) and cls.__module__.startswith("gam_desktop"):
                found[cls.__qualname__] = cls
    found["KeychainUnavailable"] = keystore.KeychainUnavailable
    return [cls for name, cls in found.items() if name not in NOT_FOR_PEOPLE]


def test_every_error_a_person_meets_carries_a_title_and_advice() -> None:
    errors = engine_errors()
    assert len(errors) >= 15
    assert [e.__qualname__ for e in errors if not issubclass(e, GamError)] == []
    assert all(e.title for e in errors)


def test_the_command_line_gives_the_advice_not_a_traceback(
    make_workflow, memory_dir: Path, capsys
) -> None:
    make_workflow().add(text=topic_document({"python": 2}))
    assert rollback_main(["--gam-dir", str(memory_dir), "0123456789abcdef"]) == 1
    err = capsys.readouterr().err
    assert "no operation '0123456789abcdef'" in err and "Traceback" not in err


def test_an_unexpected_error_is_reported_as_a_bug(
    llm_server, memory_dir: Path, capsys, monkeypatch
) -> None:
    def broken(*_args, **_kwargs):
        raise KeyError("a programming mistake")

    monkeypatch.setattr(Workflow, "add", broken)
    monkeypatch.setenv("OPENAI_BASE_URL", llm_server.base_url)
    monkeypatch.setenv("OPENAI_MODEL", "scripted")
    code = add_main(["--gam-dir", str(memory_dir), "--text", "hello", "-q"])
    err = capsys.readouterr().err
    assert code == EX_SOFTWARE
    assert "unexpected error (a bug" in err and "KeyError" in err and "Traceback" in err


@pytest.mark.parametrize(
    ("error", "title"),
    [
        (keystore.KeychainUnavailable("no keychain"), "The key was not saved"),
        (PermissionError(13, "denied"), "The memory folder cannot be written"),
        (KeyError("x"), "Something went wrong (an unexpected error)"),
    ],
)
def test_the_gui_reads_the_title_and_advice_from_the_error(
    error: BaseException, title: str
) -> None:
    from gam_desktop.gui.error_advice import describe

    assert describe(error).title == title
