"""Memory building against the scripted server (spec 11.1 and 11.4)."""

from __future__ import annotations

import json
import re
import subprocess
import threading
from pathlib import Path

import pytest

from gam_desktop.engine.llm import LLMSettings, LLMUnreachable
from gam_desktop.engine.progress import CancelToken, OperationCancelled
from gam_desktop.engine.store.changeset import StoreError
from gam_desktop.engine.store.folder import MemoryFolder, NotAMemoryError
from gam_desktop.engine.store.markdown import README, parse_memory
from gam_desktop.engine.store.naming import sanitize_name
from gam_desktop.selfcheck.scripted_llm import Fault
from tests.documents import make_pdf, topic_document, words_document

SNAKE = re.compile(r"^[^\W_A-Z]+(_[^\W_A-Z]+)*$")


def memory_files(root: Path) -> dict[str, dict]:
    out = {}
    for path in root.rglob("*.md"):
        rel = path.relative_to(root)
        if path.name != README and not rel.parts[0].startswith("."):
            out[rel.as_posix()] = parse_memory(path.read_text(encoding="utf-8")).front
    return out


def folders(root: Path) -> list[Path]:
    return [
        root,
        *(
            p
            for p in root.rglob("*")
            if p.is_dir() and not any(part.startswith(".") for part in p.relative_to(root).parts)
        ),
    ]


def tree_bytes(root: Path) -> dict[str, bytes]:
    """Every file but the lock and the cache (the LLM results a cancel keeps are there).
    git's index by what it stages, not its bytes: a `git status` rewrites it with the
    files' times and its untracked cache whenever it likes, staging nothing."""
    files = {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in root.rglob("*")
        if p.is_file()
        and "lock" not in p.name
        and not p.relative_to(root).as_posix().startswith(".gam/cache/")
    }
    if ".git/index" in files:
        staged = ["git", "-C", str(root), "ls-files", "--stage", "-z"]
        files[".git/index"] = subprocess.run(staged, capture_output=True, check=True).stdout
    return files


def test_full_build_from_one_document(make_workflow, memory_dir: Path, llm_server) -> None:
    text = words_document(5000).replace("Paragraph 10.", "# Optimizers\n\nParagraph 10.")
    text = topic_document({"python": 4, "rust": 4, "docker": 4}) + "\n\n" + text
    report = make_workflow(min_tokens=100, max_tokens=400).add(text=text)
    memories = memory_files(memory_dir)
    assert len(memories) == report.chunks == len(report.memories) > 10
    subdirs = [p for p in memory_dir.iterdir() if p.is_dir() and not p.name.startswith(".")]
    assert len(subdirs) >= 3
    assert all((folder / README).is_file() for folder in folders(memory_dir))
    for front in memories.values():
        assert {"title", "index", "tldr", "source", "source_hash", "span", "hash"} <= set(front)
    indices = sorted(front["index"] for front in memories.values())
    assert indices == list(range(len(memories)))  # every chunk in exactly one place
    meta = json.loads((memory_dir / ".gam_meta.json").read_text())
    assert meta["total_chunks"] == len(memories)
    assert meta["total_directories"] == len(folders(memory_dir)) - 1
    assert meta["schema_version"] == 1 and meta["source_files"] == ["text"]
    assert meta["model_used"] == "scripted"
    assert llm_server.state.tasks().count("organize") == 1


def test_original_wording_is_recoverable(make_workflow, memory_dir: Path, tmp_path) -> None:
    source = tmp_path / "notes.md"
    source.write_text(topic_document({"git": 3, "haskell": 3}), encoding="utf-8")
    make_workflow().add(files=[source])
    folder = MemoryFolder(memory_dir)
    original = source.read_text(encoding="utf-8")
    fronts = memory_files(memory_dir).values()
    recovered = [folder.original_text(front) for front in fronts]
    assert all(text and text in original for text in recovered)
    assert sum(len(t) for t in recovered) > 0.9 * len(original.strip())


def test_memory_keeps_the_key_fact(make_workflow, memory_dir: Path) -> None:
    make_workflow().add(
        text="Python's GIL prevents true multi-threading in CPython. Only one "
        "thread runs bytecode at a time, so CPU-bound threads do not speed up."
    )
    ((path, front),) = memory_files(memory_dir).items()
    body = parse_memory((memory_dir / path).read_text(encoding="utf-8")).body
    assert "GIL" in front["tldr"] and "GIL" not in body  # said once: the body goes on from it
    assert "CPU-bound" in body
    # named in snake_case, titled as the text writes its words
    assert SNAKE.match(Path(path).stem) and sanitize_name(front["title"]) == Path(path).stem
    assert "GIL" in front["title"]
    assert front["tldr"].count(".") == 1 and front["tldr"].endswith(".")


def test_taxonomy_groups_twenty_chunks_by_topic(make_workflow, memory_dir: Path) -> None:
    counts = {"python": 4, "javascript": 4, "rust": 4, "haskell": 4, "docker": 4}
    make_workflow(min_tokens=20, max_tokens=200).add(text=topic_document(counts))
    memories = memory_files(memory_dir)
    assert len(memories) == 20
    for path in memories:
        assert len(Path(path).parts) - 1 <= 3  # at most 3 levels
    leaves: dict[str, list[str]] = {}
    for path in memories:
        leaves.setdefault(str(Path(path).parent), []).append(path)
    assert all(3 <= len(files) <= 7 for files in leaves.values())
    for topic in counts:  # a topic's memories share one folder
        homes = {str(Path(p).parent) for p, f in memories.items() if topic in f["title"].lower()}
        assert len(homes) == 1, (topic, homes)


def test_incremental_add_creates_a_folder_and_keeps_the_rest(
    make_workflow, memory_dir: Path
) -> None:
    workflow = make_workflow(min_tokens=20, max_tokens=200)
    workflow.add(text=topic_document({"python": 10}))
    before = {
        p: b
        for p, b in tree_bytes(memory_dir).items()
        if p.startswith("python") and not p.endswith(README)
    }
    root_readme = (memory_dir / README).read_text()
    report = workflow.add(text=topic_document({"javascript": 5}))
    after = tree_bytes(memory_dir)
    assert all(after[p] == b for p, b in before.items())  # existing memories untouched
    assert len(report.memories) == 5
    assert {Path(p).parts[0] for p in report.memories} == {"javascript"}
    assert report.new_directories == ["javascript"]
    new_root = (memory_dir / README).read_text()
    assert new_root != root_readme and "javascript/" in new_root
    meta = json.loads((memory_dir / ".gam_meta.json").read_text())
    assert meta["total_chunks"] == 15
    indices = sorted(f["index"] for f in memory_files(memory_dir).values())
    assert indices == list(range(15))


def test_batch_add_places_many_chunks_in_one_call(make_workflow, llm_server) -> None:
    workflow = make_workflow(min_tokens=20, max_tokens=200)
    workflow.add(text=topic_document({"python": 3, "rust": 3}))
    llm_server.state.requests.clear()
    workflow.add(text=topic_document({"python": 2, "rust": 2, "git": 3}))
    tasks = llm_server.state.tasks()
    assert tasks.count("memorize") == 7
    assert tasks.count("place") == 1 and tasks.count("describe") == 1


def test_reorganization_on_threshold(make_workflow, memory_dir: Path) -> None:
    workflow = make_workflow(min_tokens=20, max_tokens=200, threshold=10)
    workflow.add(text=topic_document({"python": 6}))
    (leaf,) = {str(Path(p).parent) for p in memory_files(memory_dir)}
    report = workflow.add(
        text=topic_document({"python": 7})
        + "\n"
        + "\n".join(
            f"# Python extra {i}\n\nPython decorators wrap functions in example {i}. " * 3
            for i in range(2)
        )
    )
    assert report.reorganizations, "a folder with 15 memories must be re-planned"
    operation = report.reorganizations[0]
    assert operation.directory == leaf and len(operation.new_directories) >= 2
    memories = memory_files(memory_dir)
    assert len(memories) == 15  # no lost chunks
    assert all(len(files) <= 10 for files in _by_folder(memories).values())
    readme = (memory_dir / leaf / README).read_text()
    for new_dir in operation.new_directories:
        assert (memory_dir / new_dir / README).is_file()
        parent_readme = (memory_dir / Path(new_dir).parent / README).read_text()
        assert f"**{Path(new_dir).name}/**" in parent_readme  # READMEs list the new folders
    assert "## Contents" in readme and ".md" not in readme.split("## Contents")[1]


def _by_folder(memories: dict[str, dict]) -> dict[str, list[str]]:
    folders_: dict[str, list[str]] = {}
    for path in memories:
        folders_.setdefault(str(Path(path).parent), []).append(path)
    return folders_


def mixed_folder(make_workflow, llm_server) -> tuple:
    """A memory whose one folder "all/" mixes topics: three invalid plans are repaired into
    the model's single folder."""
    llm_server.state.faults.append(Fault("invalid_taxonomy", times=3, task="organize"))
    workflow = make_workflow(min_tokens=20, max_tokens=200, threshold=100)
    workflow.add(text=topic_document({"python": 3, "rust": 3}))
    (folder,) = {str(Path(p).parent) for p in memory_files(workflow.folder.root)}
    return workflow, folder


def test_reorganize_dry_run_touches_nothing(make_workflow, memory_dir: Path, llm_server) -> None:
    workflow, folder = mixed_folder(make_workflow, llm_server)
    before = tree_bytes(memory_dir)
    commits = workflow.history.count()
    plan = workflow.reorganize(folder, dry_run=True)
    assert len(plan.moved_files) == 6 and len(plan.new_directories) == 2
    assert all(old.startswith(f"{folder}/") for old, _ in plan.moved_files)
    assert tree_bytes(memory_dir) == before and workflow.history.count() == commits


def test_reorganize_on_demand_moves_files(make_workflow, memory_dir: Path, llm_server) -> None:
    workflow, folder = mixed_folder(make_workflow, llm_server)
    operation = workflow.reorganize(folder)
    assert len(operation.moved_files) == 6
    after = memory_files(memory_dir)
    assert len(after) == 6
    assert {str(Path(p).parent) for p in after} == set(operation.new_directories)


def test_invalid_taxonomy_is_reprompted_with_the_error(make_workflow, llm_server) -> None:
    llm_server.state.faults.append(Fault("invalid_taxonomy", task="organize"))
    report = make_workflow(min_tokens=20, max_tokens=200).add(
        text=topic_document({"python": 3, "rust": 3})
    )
    organize = [r for r in llm_server.state.requests if r["task"] == "organize"]
    assert len(organize) == 2
    second_prompt = organize[1]["messages"][-1]["content"]
    assert "missing" in second_prompt and "more than one leaf" in second_prompt
    assert report.warnings == []


def test_invalid_taxonomy_three_times_is_repaired(
    make_workflow, memory_dir: Path, llm_server
) -> None:
    llm_server.state.faults.append(Fault("invalid_taxonomy", times=3, task="organize"))
    report = make_workflow(min_tokens=20, max_tokens=200).add(
        text=topic_document({"python": 3, "rust": 3})
    )
    assert llm_server.state.tasks().count("organize") == 3
    assert any("needed repairs" in w for w in report.warnings)
    memories = memory_files(memory_dir)
    assert sorted(front["index"] for front in memories.values()) == list(range(6))
    assert {Path(p).parent.name for p in memories} == {"all"}  # the model's folder, mended


def test_no_usable_taxonomy_falls_back_to_folders_per_source(
    make_workflow, memory_dir: Path, llm_server, tmp_path: Path
) -> None:
    llm_server.state.faults.append(Fault("garbage", times=6, task="organize", on_reask=True))
    first, second = tmp_path / "first notes.md", tmp_path / "second.md"
    first.write_text(topic_document({"python": 2}))
    second.write_text(topic_document({"rust": 2}))
    report = make_workflow(min_tokens=20, max_tokens=200).add(files=[first, second])
    assert any("grouped by source" in w for w in report.warnings)
    folders_ = {Path(p).parent.name for p in memory_files(memory_dir)}
    assert folders_ == {"first_notes", "second"}


def test_memorize_failures_fall_back_and_are_reported(
    make_workflow, memory_dir: Path, llm_server
) -> None:
    llm_server.state.faults.append(Fault("500", times=1000, task="memorize"))
    report = make_workflow(min_tokens=20, max_tokens=200).add(
        text=topic_document({"python": 2, "rust": 2})
    )
    assert report.fallbacks == 4 and "written without the LLM" in report.warnings[0]
    fronts = memory_files(memory_dir).values()
    assert all(front["fallback"] is True for front in fronts)
    assert all(SNAKE.match(Path(path).stem) for path in memory_files(memory_dir))
    assert all(front["title"] for front in fronts)


def test_empty_input_creates_nothing(make_workflow, memory_dir: Path, llm_server) -> None:
    report = make_workflow().add(text="")
    assert report.chunks == 0 and report.memories == []
    assert memory_files(memory_dir) == {}
    assert llm_server.state.requests == []


def test_very_large_document(make_workflow, memory_dir: Path) -> None:
    report = make_workflow(min_tokens=100, max_tokens=1000).add(text=words_document(100_000))
    memories = memory_files(memory_dir)
    assert report.chunks == len(memories) > 100
    assert all(front["tokens"] <= 1000 for front in memories.values())
    meta = json.loads((memory_dir / ".gam_meta.json").read_text())
    assert meta["total_chunks"] == len(memories)


def test_japanese_document(make_workflow, memory_dir: Path) -> None:
    text = "\n\n".join(
        f"# 第{i}章 機械学習\n\n" + "ニューラルネットワークは勾配降下法で重みを学習します。" * 8
        for i in range(5)
    )
    make_workflow(min_tokens=20, max_tokens=200).add(text=text)
    memories = memory_files(memory_dir)
    assert len(memories) >= 5
    assert all(front["title"] and front["tldr"] for front in memories.values())


def test_pdf_with_images(make_workflow, memory_dir: Path, tmp_path: Path) -> None:
    from PIL import Image

    image = tmp_path / "fig.png"
    Image.new("RGB", (100, 100), (0, 0, 255)).save(image)
    pdf = make_pdf(
        tmp_path / "paper.pdf",
        ["Attention heads compare queries and keys.", "Figure 2 shows the attention pattern."],
        image,
    )
    make_workflow().add(files=[pdf])
    (front,) = memory_files(memory_dir).values()
    assert front["source"] == "paper.pdf" and front["pages"] == [1, 2]


def test_two_concurrent_adds_are_both_kept(make_workflow, memory_dir: Path) -> None:
    errors: list[BaseException] = []

    def add(counts: dict[str, int]) -> None:
        try:
            make_workflow(min_tokens=20, max_tokens=200).add(text=topic_document(counts))
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=add, args=(c,)) for c in ({"python": 4}, {"rust": 4})]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert errors == []
    memories = memory_files(memory_dir)
    titles = " ".join(front["title"] for front in memories.values()).lower()
    assert len(memories) == 8 and "python" in titles and "rust" in titles
    meta = json.loads((memory_dir / ".gam_meta.json").read_text())
    assert meta["total_chunks"] == 8
    assert sorted(f["index"] for f in memories.values()) == list(range(8))


def test_same_document_twice_is_skipped(make_workflow, memory_dir: Path, tmp_path) -> None:
    source = tmp_path / "a.md"
    source.write_text(topic_document({"git": 2}))
    workflow = make_workflow()
    workflow.add(files=[source])
    report = workflow.add(files=[source])
    assert report.memories == [] and "already in this memory" in report.warnings[0]


def test_unreadable_files_are_reported_and_the_rest_added(make_workflow, tmp_path) -> None:
    good, bad = tmp_path / "good.md", tmp_path / "bad.pdf"
    good.write_text(topic_document({"git": 2}))
    bad.write_bytes(b"not a pdf")
    report = make_workflow().add(files=[good, bad])
    assert len(report.memories) >= 1
    assert len(report.unreadable) == 1 and "bad.pdf" in report.unreadable[0]


def test_unreachable_llm_leaves_no_trace(memory_dir: Path, make_workflow) -> None:
    settings = LLMSettings(base_url="http://127.0.0.1:9/v1", model="m", max_retries=0)
    with pytest.raises(LLMUnreachable):
        make_workflow(settings=settings).add(text=topic_document({"git": 2}))
    assert memory_files(memory_dir) == {}
    assert not (memory_dir / ".gam_meta.json").exists()


def test_cancelled_build_leaves_the_folder_unchanged(
    make_workflow, memory_dir: Path, llm_server
) -> None:
    workflow = make_workflow(min_tokens=20, max_tokens=200)
    workflow.add(text=topic_document({"python": 3}))
    before = tree_bytes(memory_dir)
    llm_server.state.latency_s = 0.05
    cancel = CancelToken()
    seen: list[str] = []

    def progress(event) -> None:
        seen.append(event.stage)
        if event.stage == "memorize" and event.done == 2:
            cancel.cancel()

    cancelling = make_workflow(min_tokens=20, max_tokens=200, cancel=cancel, progress=progress)
    with pytest.raises(OperationCancelled):
        cancelling.add(text=topic_document({"rust": 8}))
    assert tree_bytes(memory_dir) == before
    assert "memorize" in seen and "write" not in seen


def test_failed_write_leaves_the_folder_unchanged(
    make_workflow, memory_dir: Path, monkeypatch
) -> None:
    import errno

    from gam_desktop.engine.store import changeset

    workflow = make_workflow(min_tokens=20, max_tokens=200)
    workflow.add(text=topic_document({"python": 3}))
    before = tree_bytes(memory_dir)
    real, count = changeset.atomic_write, [0]

    def full_disk(path, data):
        count[0] += 1
        if count[0] > 2:
            raise OSError(errno.ENOSPC, "No space left on device")
        real(path, data)

    monkeypatch.setattr(changeset, "atomic_write", full_disk)
    with pytest.raises(StoreError, match="No space left"):
        workflow.add(text=topic_document({"rust": 3}))
    assert tree_bytes(memory_dir) == before


def test_folder_that_is_not_a_memory_is_refused(make_workflow, memory_dir: Path) -> None:
    memory_dir.mkdir()
    (memory_dir / "taxes.xlsx").write_bytes(b"PK")
    with pytest.raises(NotAMemoryError, match="not a GAM memory"):
        make_workflow().add(text="hello there")
    assert sorted(p.name for p in memory_dir.iterdir()) == ["taxes.xlsx"]


def test_every_stage_caps_its_reply_length(make_workflow, settings, llm_server) -> None:
    """Small local models sometimes loop; a stage's reply is capped to what it needs."""
    make_workflow(min_tokens=20, max_tokens=200).add(text=topic_document({"python": 3, "rust": 3}))
    caps = {r["task"]: r["max_tokens"] for r in llm_server.state.requests}
    assert caps["memorize"] == 900
    assert caps["organize"] == 300 + 40 * 6
    low = settings.model_copy(update={"max_tokens": 500})
    llm_server.state.requests.clear()
    make_workflow(settings=low, min_tokens=20, max_tokens=200).add(text=topic_document({"git": 2}))
    low_caps = {r["task"]: r["max_tokens"] for r in llm_server.state.requests}
    assert low_caps["memorize"] == 500  # the lower of the stage's cap and the setting
    assert all(cap <= 500 for cap in low_caps.values())


def test_one_folder_per_chunk_is_reasked_once(make_workflow, memory_dir: Path, llm_server) -> None:
    """Small models give every chunk its own folder; one re-ask asks them to group."""
    llm_server.state.faults.append(Fault("singleton_taxonomy", task="organize"))
    make_workflow(min_tokens=20, max_tokens=200).add(text=topic_document({"python": 4, "rust": 4}))
    organize = [r for r in llm_server.state.requests if r["task"] == "organize"]
    assert len(organize) == 2
    assert "hold a single chunk" in organize[1]["messages"][-1]["content"]
    folders = {Path(p).parent for p in memory_files(memory_dir)}
    assert len(folders) == 2  # grouped on the second try


def test_a_model_that_keeps_making_single_folders_is_not_asked_forever(
    make_workflow, memory_dir: Path, llm_server
) -> None:
    llm_server.state.faults.append(
        Fault("singleton_taxonomy", times=10, task="organize", on_reask=True)
    )
    report = make_workflow(min_tokens=20, max_tokens=200).add(
        text=topic_document({"python": 4, "rust": 4})
    )
    assert llm_server.state.tasks().count("organize") == 2  # one re-ask, then accepted
    assert report.warnings == [] and len(memory_files(memory_dir)) == 8


def test_the_estimates_reading_goes_on_to_the_build(make_workflow, tmp_path, monkeypatch) -> None:
    """Each dropped document is parsed once: the estimate's reading is the build's, unless
    the file changed in between."""
    from gam_desktop.engine.operations import ingest as workflow_module  # reads the files

    files = []
    for name, topics in (("a.md", {"python": 3}), ("b.md", {"rust": 3})):
        (tmp_path / name).write_text(topic_document(topics))
        files.append(tmp_path / name)
    reads: list[str] = []
    real_load = workflow_module.load_file
    monkeypatch.setattr(
        workflow_module, "load_file", lambda path: reads.append(Path(path).name) or real_load(path)
    )
    workflow = make_workflow(min_tokens=20, max_tokens=200)
    estimate = workflow.estimate(files)
    assert reads == ["a.md", "b.md"]
    report = workflow.add(files=files, estimate=estimate)
    assert reads == ["a.md", "b.md"] and len(report.documents) == 2
    (tmp_path / "c.md").write_text(topic_document({"docker": 3}))
    later = workflow.estimate([tmp_path / "c.md"])
    (tmp_path / "c.md").write_text(topic_document({"docker": 3, "git": 3}))  # edited meanwhile
    report = workflow.add(files=[tmp_path / "c.md"], estimate=later)
    assert reads[-2:] == ["c.md", "c.md"] and len(report.documents) == 1
