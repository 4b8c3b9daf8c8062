"""The engine's API (engine/api): the front ends (gui, cli, serve) import it and nothing
else of the engine, it names what it offers, and the memory logic that moved out of the
front ends into it does what they did."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import gam_desktop
from gam_desktop.engine import api
from gam_desktop.engine.api import folder, serving, settings, text, values
from gam_desktop.engine.store.folder import JOURNAL_FILE
from tests.engine.test_fact_history import told
from tests.engine.test_lock import hold_lock

PACKAGE = Path(gam_desktop.__file__).parent
FRONT_ENDS = ("gui", "cli", "serve")


def engine_imports(path: Path) -> list[str]:
    """The engine modules `path` imports from, anywhere in it (inside functions too)."""
    modules = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            modules.append(node.module)
        elif isinstance(node, ast.Import):
            modules += [alias.name for alias in node.names]
    return [m for m in modules if m == "gam_desktop.engine" or m.startswith("gam_desktop.engine.")]


def test_the_front_ends_import_the_engine_through_its_api_only() -> None:
    """What the import contract says (pyproject.toml), read from the source: no front end
    imports an engine module but `gam_desktop.engine.api` itself."""
    offenders = [
        f"{path.relative_to(PACKAGE)}: {module}"
        for front_end in FRONT_ENDS
        for path in sorted((PACKAGE / front_end).rglob("*.py"))
        for module in engine_imports(path)
        if module != "gam_desktop.engine.api"
    ]
    assert offenders == []


def test_the_api_names_what_it_offers_once() -> None:
    names = api.__all__
    assert len(names) == len(set(names))
    assert [n for n in names if not hasattr(api, n)] == []
    for module in (folder, serving, settings, text, values):
        assert set(module.__all__) <= set(names), module.__name__
    assert "Workflow" in names


def test_the_front_ends_have_one_front_matter_reader() -> None:
    """A note's front matter is read by `parse_memory` (store.markdown's), the one reader
    the API offers; `split_front` says where it ends, reading nothing (issue 40)."""
    readers = {"parse_memory", "front_of", "front_value", "body_of"}
    assert readers & set(api.__all__) == {"parse_memory"}


def test_needs_recovery_only_for_an_operation_a_crash_left(tmp_path: Path) -> None:
    """gam-serve's /health: a journal nobody is writing is a crash to recover from; one
    whose writer holds the lock is an operation running now; none is nothing."""
    memory = api.MemoryFolder(tmp_path)
    assert not api.needs_recovery(memory) and api.interrupted_operation(memory) is None
    journal = {"operation": "add", "started": "2026-01-01T00:00:00+00:00", "head": None, "pid": 1}
    (tmp_path / JOURNAL_FILE).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / JOURNAL_FILE).write_text(json.dumps(journal), encoding="utf-8")
    assert api.needs_recovery(memory)
    interrupted = api.interrupted_operation(memory)
    assert interrupted is not None and interrupted.operation == "add"
    holder = hold_lock(tmp_path, 60)  # an operation running in another process
    try:
        assert not api.needs_recovery(memory)
    finally:
        holder.kill()
        holder.wait(10)
    assert api.needs_recovery(memory)


def test_a_file_as_a_passage_shown_to_a_model() -> None:
    """gam-serve's passages: a fact as the user's dated statement, a memory by its title
    and its body without the front matter."""
    fact = (
        "---\nid: f1\nstatement: The user's dentist appointment is on 23 July.\n"
        "updated: 2026-05-04T18:00:00+00:00\n---\nThe user's dentist appointment is on 23 July.\n"
    )
    label, shown = api.passage_of("facts/health/dentist.md", fact)
    assert label == "a fact the user stated on Monday 4 May 2026"
    assert shown == "Stated on Monday 4 May 2026: The user's dentist appointment is on 23 July."
    note = "---\ntitle: Release process\ntags: [x]\n---\nReleases are cut on Fridays.\n"
    assert api.passage_of("ops/release.md", note) == (
        "Release process",
        "Releases are cut on Fridays.",
    )
    assert api.search_terms(note) == api.search_terms("Releases are cut on Friday")
    assert "titl" not in api.search_terms(note) and "tag" not in api.search_terms(note)


def test_fact_lineages_are_the_memory_s_facts_with_their_history(tmp_path: Path) -> None:
    told(tmp_path, "My dentist appointment is on 9 July.",
         "The user's dentist appointment is on 9 July.", 0, "c-1", 1)  # fmt: skip
    told(tmp_path, "The practice moved the appointment from 9 July to 16 July.",
         "The user's dentist appointment is on 16 July.", 3, "c-2", 1)  # fmt: skip
    workflow = api.Workflow(gam_dir=tmp_path, settings=api.LLMSettings())
    (line,) = api.fact_lineages(workflow)
    assert line.current and "16 July" in line.fact.statement
    assert [e.conversation for e in line.events] == ["c-1", "c-2"]


def test_open_history_reads_the_memory_s_operations(tmp_path: Path) -> None:
    (tmp_path / "note.md").write_text("# A note\n", encoding="utf-8")
    workflow = api.Workflow(gam_dir=tmp_path, settings=api.LLMSettings())
    workflow.initialize()  # the folder becomes a memory: its first commit
    history = api.open_history(tmp_path)
    assert history.operations()[0].summary == "Made this folder a memory"  # the latest
