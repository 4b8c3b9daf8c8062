"""A memory closes everything it opened (issue 38's blocker): Windows deletes no file that is
open (SQLite opens without FILE_SHARE_DELETE), so a search index left open kept the
self-test's temporary folder from being deleted, the windowed app showed a modal dialog and
no release was published. Linux deletes open files, so the tests look for them instead:
every descriptor of this process (/proc/self/fd) that leads into the memory folder."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

from gam_desktop import cli
from gam_desktop.engine.workflow import Workflow
from gam_desktop.serve.index import FreshIndex
from gam_desktop.serve.learning import PendingTurn, TurnWriter
from tests.memories import write_memory

pytestmark = pytest.mark.linux_only("reads /proc/self/fd")


def open_under(root: Path) -> list[str]:
    """The files under `root` this process holds open."""
    found = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:  # closed meanwhile (the listing's own descriptor)
            continue
        if target.startswith(f"{root}{os.sep}"):
            found.append(target)
    return sorted(found)


@pytest.fixture
def kept_alive(monkeypatch) -> list[Workflow]:
    """Every Workflow made from here on, kept referenced: a Workflow dropped by its command
    would close its files when collected, whenever that happens; kept, only `close` does."""
    made: list[Workflow] = []
    original = Workflow.__init__

    def init(self, *args, **kwargs) -> None:
        original(self, *args, **kwargs)
        made.append(self)

    monkeypatch.setattr(Workflow, "__init__", init)
    return made


def test_a_workflow_closes_the_index_and_the_watcher_it_opened(make_workflow) -> None:
    workflow = make_workflow()
    root = workflow.folder.root
    workflow.add(text="# BERT\n\nBERT is a bidirectional transformer encoder from 2018.\n")
    watcher = workflow.watch(lambda _edit: None)
    assert workflow.search("BERT") and workflow.request("What is BERT?").answer
    assert open_under(root)  # the search index (.gam/cache/search.sqlite3) is open
    workflow.close()
    assert open_under(root) == []
    assert not watcher.running  # (on Windows its handle on the folder is open too)
    workflow.close()  # twice is fine
    assert workflow.search("BERT")  # used again: opened again, and closed by a `with`
    with workflow:
        assert workflow.search("BERT")
    assert open_under(root) == []


def test_shared_tools_are_closed_by_their_owner_only(make_workflow) -> None:
    """The window's session owns the search tools its tasks' Workflows share: a task that
    ends must not close the index under the next question."""
    owner = make_workflow()
    owner.add(text="# BERT\n\nBERT is a bidirectional transformer encoder from 2018.\n")
    task = make_workflow(tools=owner.search_tools())
    assert task.search("BERT")
    task.close()
    assert open_under(owner.folder.root)  # still the owner's, open
    owner.close()
    assert open_under(owner.folder.root) == []


def _chat_input(monkeypatch, *lines: str) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("".join(f"{line}\n" for line in lines)))


def test_every_command_closes_the_memory(
    tmp_path: Path, llm_server, monkeypatch, kept_alive, capsys
) -> None:
    """Each entry point of gam_desktop.cli, run in this process as a person would run it."""
    for name, value in (
        ("OPENAI_BASE_URL", llm_server.base_url),
        ("OPENAI_MODEL", "scripted"),
        ("OPENAI_API_KEY", "test-key"),
    ):
        monkeypatch.setenv(name, value)
    root = tmp_path / "memory"
    document = tmp_path / "bert.md"
    document.write_text("# BERT\n\nBERT is a bidirectional transformer encoder from 2018.\n")
    at = ["--gam-dir", str(root)]
    _chat_input(monkeypatch, "What is BERT?", "I work at Borealis in Oslo.", "")
    commands = [
        ("add", lambda: cli.add_main([*at, "--files", str(document), "-q"])),
        ("request", lambda: cli.request_main([*at, "-Q", "What is BERT?", "-q"])),
        ("chat", lambda: cli.chat_main([*at, "-q"])),
        ("facts", lambda: cli.facts_main([*at, "list"])),
        ("research", lambda: cli.research_main([*at, "What is BERT?", "-q"])),
    ]
    for name, run in commands:
        assert run() == 0, (name, capsys.readouterr().err)
        assert open_under(root) == [], name
    capsys.readouterr()
    assert cli.history_main([*at, "list"]) == 0
    assert open_under(root) == []
    newest = capsys.readouterr().out.split()[0]
    assert cli.rollback_main([*at, newest]) == 0, capsys.readouterr().err
    assert open_under(root) == []
    assert len(kept_alive) >= len(commands) + 2  # each command's Workflow, still referenced


def test_gam_serve_closes_its_indexes_and_its_writer(tmp_path: Path, make_workflow) -> None:
    root = write_memory(tmp_path / "memory")
    index = FreshIndex(root, idle=3600)
    index.start()
    index.refresh_now()  # both sets of tools have an index open
    assert open_under(root)
    workflow = make_workflow(gam_dir=root)
    workflow.search("BERT")  # (what a writer's learning may open)
    writer = TurnWriter(workflow)
    writer.start()
    writer.submit(
        PendingTurn(history=[], question="What is BERT?", answer="An encoder.", sources=[])
    )
    assert writer.drain(60)
    writer.stop(60)
    index.stop()
    assert open_under(root) == []
