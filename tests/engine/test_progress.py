"""One bar for a whole operation: the fraction the engine reports never goes back, and every
stage (reading, summarizing, planning, READMEs, committing, reorganizing) moves it."""

from __future__ import annotations

from pathlib import Path

from gam_desktop.engine.progress import ProgressEvent, Stages
from tests.documents import document_files, topic_document


def test_stages_share_what_is_left_and_never_go_back() -> None:
    events: list[ProgressEvent] = []
    stages = Stages(events.append)
    stages.expect(read=1, build=3)
    stages.report("read", 1, 2)
    assert events[-1].fraction == 0.125
    stages.report("lock", 0, 1, "Waiting")  # not expected: the bar stays where it is
    assert events[-1].fraction == 0.125
    stages.expect(memorize=1, write=1)  # a better guess shares only what is left
    stages.report("memorize", 0, 4)
    assert events[-1].fraction == 0.125
    stages.report("memorize", 4, 4)
    stages.report("read", 0, 2)  # an earlier stage reported late: no step back
    assert events[-1].fraction == events[-2].fraction == 0.5625
    stages.report("write", 1, 1)
    assert events[-1].fraction == 1.0


def fractions_by_stage(events: list[ProgressEvent]) -> dict[str, list[float]]:
    seen: dict[str, list[float]] = {}
    for event in events:
        assert event.fraction is not None, event
        seen.setdefault(event.stage, []).append(event.fraction)
    return seen


def test_a_build_moves_one_bar_through_every_stage(make_workflow, tmp_path: Path) -> None:
    events: list[ProgressEvent] = []
    workflow = make_workflow(min_tokens=20, max_tokens=200, threshold=3, progress=events.append)
    files = []
    for i, topics in enumerate(({"python": 4}, {"rust": 3}, {"docker": 3})):
        path = tmp_path / f"doc{i}.md"
        path.write_text(topic_document(topics))
        files.append(path)
    workflow.add(files=files)  # doc0/ holds 4 memories: re-planned in the same run
    fractions = [e.fraction for e in events]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0
    seen = fractions_by_stage(events)
    for stage in ("read", "chunk", "memorize", "organize", "describe", "write", "reorganize"):
        assert stage in seen and max(seen[stage]) > 0, stage
    said = [e.message for e in events]
    assert "Reading document 2 of 3: doc1.md" in said
    assert any(s.startswith("Summarizing 3 of ") and "(document " in s for s in said)
    assert {"Planning folders", "Writing READMEs", "Committing"} <= set(said)
    # each stage begins where the one before left off: planning starts past the memories
    assert min(seen["organize"]) >= max(seen["memorize"]) > 0.5


def test_an_add_and_an_estimate_report_their_stages(make_workflow, tmp_path: Path) -> None:
    first = make_workflow(min_tokens=20, max_tokens=200)
    first.add(text=topic_document({"python": 3}))
    events: list[ProgressEvent] = []
    workflow = make_workflow(min_tokens=20, max_tokens=200, progress=events.append)
    path = tmp_path / "more.md"
    path.write_text(topic_document({"rust": 2}))
    estimate = workflow.estimate([path])
    assert [e.fraction for e in events][-1] == 1.0
    events.clear()
    workflow.add(files=[path], estimate=estimate)  # read already: the bar starts at chunks
    fractions = [e.fraction for e in events]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0
    seen = fractions_by_stage(events)
    assert "read" not in seen and min(seen["place"]) > 0 and max(seen["describe"]) > 0


def test_a_drop_in_steps_moves_one_bar_across_all_its_steps(make_workflow, tmp_path: Path) -> None:
    """One bar for the whole drop: it never goes back from one step to the next (each step
    draws within its share, not from 0 to 1 again), and every event says how far it is."""
    events: list[ProgressEvent] = []
    workflow = make_workflow(progress=events.append)
    workflow.options.step_documents = 4
    workflow.add(files=document_files(tmp_path / "docs", 10))  # steps of 4, 4 and 2
    fractions = [e.fraction for e in events]
    assert None not in fractions  # determinate throughout
    assert fractions == sorted(fractions) and fractions[-1] == 1.0
    by_step: dict[int, list[float]] = {}
    for event in events:
        if event.message.startswith("Step "):
            number = int(event.message.split()[1])
            assert event.message.startswith(f"Step {number} of 3: "), event.message
            by_step.setdefault(number, []).append(event.fraction or 0.0)
    assert sorted(by_step) == [1, 2, 3]
    # each step has a part of the bar in proportion to its documents, after the one before
    assert min(by_step[1]) > 0 and max(by_step[1]) < 0.55
    assert max(by_step[1]) <= min(by_step[2]) and max(by_step[2]) <= min(by_step[3])
    assert max(by_step[2]) < 0.95
    said = [e.message for e in events]
    assert any(s.startswith("Step 2 of 3: Summarizing 2 of 4 chunks (document ") for s in said)
    assert "Step 3 of 3: Committing" in said
