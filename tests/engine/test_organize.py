"""Taxonomies that organize, built against the scripted server (issue 10, item 3): plans
that put everything in one folder or name folders "topic" are re-asked once, then
replaced by the deterministic grouping; overfull folders of a first build are re-planned;
READMEs say what their folders hold."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from gam_desktop.engine.store.describing import is_generic_name
from gam_desktop.engine.store.markdown import README, parse_memory, parse_readme
from gam_desktop.selfcheck.scripted_llm import Fault
from tests.documents import topic_document
from tests.engine.lookalike_docs import family_of, write_lookalike_documents


def memory_sources(root: Path) -> dict[str, str]:
    """Memory file (relative path) -> the document it came from."""
    out = {}
    for path in root.rglob("*.md"):
        rel = path.relative_to(root)
        if path.name != README and not rel.parts[0].startswith("."):
            out[rel.as_posix()] = parse_memory(path.read_text(encoding="utf-8")).front["source"]
    return out


def readmes(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): p.read_text(encoding="utf-8")
        for p in root.rglob(README)
        if not p.relative_to(root).parts[0].startswith(".")
    }


def organize_prompts(llm_server) -> list[str]:
    return [
        r["messages"][-1]["content"] for r in llm_server.state.requests if r["task"] == "organize"
    ]


def build_lookalikes(make_workflow, tmp_path: Path, **options):
    workflow = make_workflow(min_tokens=20, max_tokens=120, **options)
    return workflow, workflow.add(files=write_lookalike_documents(tmp_path / "docs"))


def test_one_folder_plan_is_reasked_once_naming_the_problem(
    make_workflow, memory_dir: Path, llm_server, tmp_path: Path
) -> None:
    llm_server.state.faults.append(Fault("one_folder_taxonomy", task="organize"))
    _workflow, report = build_lookalikes(make_workflow, tmp_path)
    prompts = organize_prompts(llm_server)
    total = len(memory_sources(memory_dir))
    assert len(prompts) == 2 and report.warnings == []
    assert f"'topic' holds {total} of the {total} chunks" in prompts[1]
    assert "['topic'] say nothing" in prompts[1]
    folders = {Path(p).parts[0] for p in memory_sources(memory_dir)}
    assert "topic" not in folders and len(folders) >= 3  # the re-ask's plan was used


def test_generic_folder_names_are_reasked_naming_them(
    make_workflow, memory_dir: Path, llm_server, tmp_path: Path
) -> None:
    llm_server.state.faults.append(Fault("generic_names", task="organize"))
    build_lookalikes(make_workflow, tmp_path)
    prompts = organize_prompts(llm_server)
    assert len(prompts) == 2 and "'general', 'misc'" in prompts[1]
    assert not any(
        is_generic_name(part) for p in memory_sources(memory_dir) for part in Path(p).parts[:-1]
    )


def test_a_second_degenerate_plan_gives_way_to_grouping_by_similarity(
    make_workflow, memory_dir: Path, llm_server, tmp_path: Path
) -> None:
    llm_server.state.faults.append(Fault("one_folder_taxonomy", times=2, task="organize"))
    _workflow, report = build_lookalikes(make_workflow, tmp_path)
    assert len(organize_prompts(llm_server)) == 2  # re-asked once, not more
    assert any("grouped by source document and text similarity" in w for w in report.warnings)
    sources = memory_sources(memory_dir)
    homes: dict[str, set[str]] = {}
    for path, source in sources.items():
        homes.setdefault(family_of(source), set()).add(Path(path).parts[0])
    assert all(len(h) == 1 for h in homes.values()) and len(set().union(*homes.values())) == 3
    names = {family: h.pop() for family, h in homes.items()}
    assert "oncall" in names["oncall"] and "lumen" in names["release"]
    per_folder = Counter(str(Path(p).parent) for p in sources)
    assert all(n <= 7 for n in per_folder.values())
    assert not any(is_generic_name(part) for p in sources for part in Path(p).parts[:-1])


def test_a_first_build_with_an_overfull_folder_is_reorganized_in_its_own_commit(
    make_workflow, memory_dir: Path, llm_server, tmp_path: Path
) -> None:
    """Three broken plans are repaired into one folder of six ("all"); with the threshold
    at five, the build is followed by a reorganization, as an add would be."""
    llm_server.state.faults.append(Fault("invalid_taxonomy", times=3, task="organize"))
    workflow = make_workflow(min_tokens=20, max_tokens=200, threshold=5)
    report = workflow.add(text=topic_document({"python": 3, "rust": 3}))
    assert len(report.reorganizations) == 1 and report.reorganizations[0].directory == "all"
    kinds = [op.kind for op in workflow.history.operations()]
    assert kinds == ["reorganize", "build"]  # newest first: each its own commit
    folders = Counter(str(Path(p).parent) for p in memory_sources(memory_dir))
    assert len(folders) == 2 and all(n <= 5 for n in folders.values())


@pytest.mark.parametrize(("fault", "calls"), [("one_folder_taxonomy", 2), ("invalid_taxonomy", 3)])
def test_reorganization_plans_follow_the_same_rules(
    make_workflow, memory_dir: Path, llm_server, tmp_path: Path, fault: str, calls: int
) -> None:
    """A re-plan that puts everything in one folder "topic", or that can only be mended into
    one folder, gives way to the grouping by text similarity."""
    llm_server.state.faults += [
        Fault("invalid_taxonomy", times=3, task="organize"),  # the build: one folder "all"
        Fault(fault, times=calls, task="organize"),  # its reorganization
    ]
    report = make_workflow(min_tokens=20, max_tokens=200, threshold=5).add(
        text=topic_document({"python": 5, "rust": 5})  # one document: the mended folder stays
    )
    prompts = organize_prompts(llm_server)
    assert len(prompts) == 3 + calls and "Re-plan the directory 'all'" in prompts[3]
    assert fault != "one_folder_taxonomy" or "['topic'] say nothing" in prompts[4]
    assert report.reorganizations  # grouped by text similarity instead
    folders = Counter(str(Path(p).parent) for p in memory_sources(memory_dir))
    assert len(folders) >= 2 and all(f.startswith("all/") for f in folders), folders


def test_memories_of_several_documents_mended_into_one_folder_are_grouped(
    make_workflow, memory_dir: Path, llm_server, tmp_path: Path
) -> None:
    """A small model's plan mended into one folder for everything ("on_call_policy/" for
    fourteen documents) organizes nothing: the grouping by document replaces it at once."""
    llm_server.state.faults.append(Fault("invalid_taxonomy", times=3, task="organize"))
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "python.md").write_text(topic_document({"python": 3}), encoding="utf-8")
    (docs / "rust.md").write_text(topic_document({"rust": 3}), encoding="utf-8")
    report = make_workflow(min_tokens=20, max_tokens=200, threshold=5).add(
        files=sorted(docs.iterdir())
    )
    assert any("grouped by source document" in w for w in report.warnings)
    folders = {str(Path(p).parent) for p in memory_sources(memory_dir)}
    assert folders == {"python", "rust"}


def test_readmes_describe_their_folders_from_the_memories(
    make_workflow, memory_dir: Path, llm_server, tmp_path: Path
) -> None:
    llm_server.state.faults.append(Fault("generic_names", times=2, task="organize"))
    workflow, _report = build_lookalikes(make_workflow, tmp_path)
    llm_server.state.faults.append(Fault("500", times=100, task="describe"))  # no LLM text
    workflow.add(text=topic_document({"haskell": 3}))
    texts = readmes(memory_dir)
    assert len(texts) > 5
    for path, text in texts.items():
        description = parse_readme(text).description
        assert "Memories about" not in text and "General" not in description, path
        assert len(description) < 400, path
    root = parse_readme(texts[README]).description
    assert root.startswith("Notes in folders on ") and "memories" not in root  # in words
    haskell = next(t for p, t in texts.items() if "haskell" in p)
    assert "haskell" in parse_readme(haskell).description.lower()  # said from its memories


def test_a_plan_shown_is_applied_as_shown_without_the_llm(
    make_workflow, memory_dir: Path, llm_server
) -> None:
    """Reorganize ▸ Apply carries out the plan the person saw: the same moves and READMEs as
    a reorganization planned and applied at once, and no second planning call."""
    llm_server.state.faults.append(Fault("invalid_taxonomy", times=3, task="organize"))
    workflow = make_workflow(min_tokens=20, max_tokens=200, threshold=50)
    workflow.add(text=topic_document({"python": 4, "rust": 4}))  # mended into one folder
    plan = workflow.plan_reorganization("all")
    assert plan.moved_files and plan.descriptions.keys() == set(plan.new_directories)
    asked = len(llm_server.state.requests)
    applied = workflow.reorganize(plan=plan)
    assert len(llm_server.state.requests) == asked  # no LLM call: the plan shown is applied
    assert applied.moved_files == plan.moved_files
    for old, new in plan.moved_files:
        assert not (memory_dir / old).exists() and (memory_dir / new).is_file()
    written = readmes(memory_dir)
    for folder in plan.new_directories:
        assert parse_readme(written[f"{folder}/{README}"]).description  # its plan's words
    assert workflow.history.operations()[0].kind == "reorganize"


def test_a_plan_the_folder_outgrew_is_refused_and_changes_nothing(
    make_workflow, memory_dir: Path, llm_server
) -> None:
    from gam_desktop.engine.ingest.reorganize import ReorganizeError

    llm_server.state.faults.append(Fault("invalid_taxonomy", times=3, task="organize"))
    workflow = make_workflow(min_tokens=20, max_tokens=200, threshold=50)
    workflow.add(text=topic_document({"python": 3, "rust": 3}))
    plan = workflow.plan_reorganization("all")
    gone = memory_dir / plan.moved_files[-1][0]
    gone.unlink()  # deleted in an editor while the person read the plan
    before = {p: p.read_bytes() for p in memory_dir.rglob("*.md")}
    with pytest.raises(ReorganizeError, match="gone since the plan was made"):
        workflow.reorganize(plan=plan)
    assert {p: p.read_bytes() for p in memory_dir.rglob("*.md")} == before
