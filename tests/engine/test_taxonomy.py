"""Taxonomy validation (spec 14) and the repair of almost-right plans."""

from __future__ import annotations

from gam_desktop.engine.ingest.taxonomy import normalize_plan, repair_plan, validate_plan
from gam_desktop.engine.models import DirectoryNode


def node(name: str, indices=(), children=(), description: str = "") -> DirectoryNode:
    return DirectoryNode(
        name=name, description=description, chunk_indices=list(indices), children=list(children)
    )


def test_validation_names_every_problem() -> None:
    plan = node("root", [9], [node("a", [0, 1]), node("A", [1]), node("", [5])])
    problems = " | ".join(validate_plan(plan, {0, 1, 2}))
    assert "missing from every leaf: [2]" in problems
    assert "more than one leaf: [1]" in problems
    assert "unknown chunk indices: [5]" in problems  # 9 sits on the parent, not a leaf
    assert "both subdirectories and chunk_indices" in problems
    assert "empty or invalid name" in problems and "same name" in problems


def test_validation_rejects_depth_over_three() -> None:
    deep = node(
        "root",
        children=[node("a", children=[node("b", children=[node("c", children=[node("d", [0])])])])],
    )
    assert any("deeper than 3" in p for p in validate_plan(deep, {0}))


def test_repair_mends_an_almost_right_plan() -> None:
    plan = node(
        "root",
        [7],
        [
            node("python", [0, 1, 1, 99], description="python code"),
            node("rust", [2], description="rust borrow"),
            node("deep", children=[node("b", children=[node("c", children=[node("d", [3])])])]),
        ],
    )
    placed: list[int] = []

    def place(index: int, leaves: list[DirectoryNode]) -> int:
        placed.append(index)
        return [leaf.name for leaf in leaves].index("rust")

    repaired = repair_plan(plan, {0, 1, 2, 3, 4, 7}, place)
    assert repaired is not None and validate_plan(repaired, {0, 1, 2, 3, 4, 7}) == []
    leaves = {leaf.name: leaf.chunk_indices for leaf in normalize_plan(repaired).leaves()}
    assert leaves["python"] == [0, 1]  # duplicate and unknown index dropped
    assert leaves["rust"] == [2, 4]  # the missing chunk placed by `place`
    assert leaves["c"] == [3]  # folded up to depth 3
    assert leaves["general"] == [7]  # the root's own chunk got a folder
    assert placed == [4]


def test_repair_gives_up_without_any_folder() -> None:
    assert repair_plan(node("root", [0, 1]), {0, 1}, lambda i, leaves: 0) is None


def test_soft_problems_only_for_mostly_single_chunk_folders() -> None:
    from gam_desktop.engine.ingest.taxonomy import soft_problems

    singles = node("root", children=[node(f"f{i}", [i]) for i in range(8)])
    assert "8 of 8 folders hold a single chunk" in soft_problems(singles, set(range(8)))[0]
    grouped = node("root", children=[node("a", [0, 1, 2, 3]), node("b", [4, 5, 6, 7])])
    assert soft_problems(grouped, set(range(8))) == []
    few = node("root", children=[node(f"f{i}", [i]) for i in range(3)])
    assert soft_problems(few, set(range(3))) == []  # too few chunks to group


def test_a_broken_reask_keeps_the_first_valid_plan() -> None:
    from gam_desktop.engine.ingest.taxonomy import plan_with_retries

    singles = node("root", children=[node(f"f{i}", [i]) for i in range(8)])
    broken = node("root", children=[node("a", [0, 0])])
    replies = iter([singles, broken])
    asked: list[str | None] = []

    def ask(error):
        asked.append(error)
        return next(replies)

    plan, _problems, invalid = plan_with_retries(ask, set(range(8)))
    assert plan is singles and invalid is None and len(asked) == 2
    assert "single chunk" in asked[1]


# -- plans that organize nothing (issue 10, item 3) -------------------------------------


def test_most_chunks_in_one_folder_is_degenerate() -> None:
    from gam_desktop.engine.ingest.taxonomy import degenerate_problems

    crowded = node("root", children=[node("acme", range(8)), node("globex", [8, 9, 10, 11])])
    (problem,) = degenerate_problems(crowded, set(range(12)))
    assert "'acme' holds 8 of the 12 chunks" in problem
    fair = node("root", children=[node("acme", range(7)), node("globex", range(7, 12))])
    assert degenerate_problems(fair, set(range(12))) == []  # 7 of 12 is under 60%
    small = node("root", children=[node("python", range(6))])
    assert degenerate_problems(small, set(range(6))) == []  # one good folder of 6 is fine


def test_folders_named_with_empty_words_are_degenerate() -> None:
    from gam_desktop.engine.ingest.taxonomy import degenerate_problems
    from gam_desktop.engine.store.describing import is_generic_name

    for name in ("topic", "Topics", "general", "misc_notes", "other_2", "part_1", "documents"):
        assert is_generic_name(name), name
    for name in ("python_notes", "acme_oncall", "release_2_1", "field_reports"):
        assert not is_generic_name(name), name
    plan = node("root", children=[node("general", [0, 1, 2]), node("rust", [3, 4, 5])])
    (problem,) = degenerate_problems(plan, set(range(6)))
    assert "['general'] say nothing" in problem


def test_a_degenerate_plan_is_reasked_once_with_the_problem_named() -> None:
    from gam_desktop.engine.ingest.taxonomy import plan_with_retries

    one = node("root", children=[node("topic", range(10))])
    good = node("root", children=[node("acme", range(5)), node("globex", range(5, 10))])
    asked: list[str | None] = []
    replies = iter([one, good])

    def ask(error):
        asked.append(error)
        return next(replies)

    plan, _problems, invalid = plan_with_retries(ask, set(range(10)))
    assert plan is good and invalid is None and len(asked) == 2
    assert "'topic' holds 10 of the 10 chunks" in asked[1] and "['topic']" in asked[1]


def test_a_second_degenerate_plan_is_refused() -> None:
    from gam_desktop.engine.ingest.taxonomy import plan_with_retries

    one = node("root", children=[node("topic", range(10))])
    broken = node("root", children=[node("acme", [0, 0])])
    for second in (one, broken):  # the same failure, or a broken re-ask: nothing to keep
        replies = iter([one, second])
        asked: list[str | None] = []

        def ask(error, replies=replies, asked=asked):
            asked.append(error)
            return next(replies)

        plan, problems, invalid = plan_with_retries(ask, set(range(10)))
        assert plan is None and invalid is None and len(asked) == 2
        assert problems


def test_descriptions_that_say_nothing_are_blanked() -> None:
    from gam_desktop.engine.store.describing import is_empty_description

    said = ("", "General", "Memories about python.", "Other memories.", "Other notes.")
    for text in (*said, "Python notes."):
        assert is_empty_description(text, "python_notes"), text
    assert not is_empty_description("Acme's paging and escalation rules.", "acme")
    plan = node("root", children=[node("python", [0], description="Memories about python.")])
    assert normalize_plan(plan).children[0].description == ""


def test_a_lone_wrapper_folder_is_hoisted() -> None:
    from gam_desktop.engine.ingest.taxonomy import hoist_lone_folder

    wrapped = node("root", children=[node("topic", children=[node("a", [0]), node("b", [1])])])
    assert [c.name for c in hoist_lone_folder(wrapped).children] == ["a", "b"]
