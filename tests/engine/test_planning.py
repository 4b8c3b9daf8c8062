"""The LLM's decisions about structure (ingest/planning.py) with the in-process fake LLM,
which answers by the reply's model (TaxonomyPlan, PlacementPlan, DescriptionBatch): a plan
is re-asked naming its problems, mended after three broken ones, replaced by the grouping
when it organizes nothing; placements and descriptions fall back without the model."""

from __future__ import annotations

from gam_desktop.engine.ingest.planning import (
    describe_directories,
    place_memories,
    plan_taxonomy,
)
from gam_desktop.engine.ingest.prompts import (
    DescriptionBatch,
    DirectoryDescription,
    Placement,
    PlacementPlan,
    PlannedFolder,
    TaxonomyPlan,
)
from gam_desktop.engine.llm import LLMCallFailed, StructuredOutputError
from gam_desktop.engine.models import DirectoryNode, MemorizedChunk
from gam_desktop.engine.progress import CancelToken
from gam_desktop.engine.store.folder import DirView
from tests.documents import TOPIC_FACTS
from tests.fakes import FakeLLM


def memories(topics: dict[str, int], sources: dict[str, str] | None = None) -> list[MemorizedChunk]:
    """`topics[t]` memories about each topic, indices in order; from `sources[t]` or "text"."""
    out: list[MemorizedChunk] = []
    for topic, count in topics.items():
        facts = TOPIC_FACTS[topic]
        for n in range(count):
            out.append(
                MemorizedChunk(
                    index=len(out),
                    title=f"{topic}_notes_{n}",
                    memory=facts,
                    tldr=facts.split(". ")[0] + ".",
                    metadata={"source": (sources or {}).get(topic, "text")},
                )
            )
    return out


def plan(*folders: tuple[str, list[int]]) -> TaxonomyPlan:
    return TaxonomyPlan(
        description="Notes on programming.",
        folders=[
            PlannedFolder(path=p, description=f"What {p} holds.", chunks=c) for p, c in folders
        ],
    )


def singletons(chunks: list[MemorizedChunk]) -> TaxonomyPlan:
    """A folder for each memory, named after it: what small models do."""
    return plan(*((m.title, [m.index]) for m in chunks))


def leaves(tree: DirectoryNode) -> dict[str, list[int]]:
    return {leaf.name: sorted(leaf.chunk_indices) for leaf in tree.leaves()}


def planned(llm: FakeLLM, chunks: list[MemorizedChunk], scope: str | None = None):
    return plan_taxonomy(llm, chunks, CancelToken(), scope=scope)


def test_a_good_plan_is_taken_from_one_call() -> None:
    llm = FakeLLM({TaxonomyPlan: plan(("python", [0, 1, 2]), ("rust", [3, 4, 5]))})
    tree, warnings = planned(llm, memories({"python": 3, "rust": 3}))
    assert leaves(tree) == {"python": [0, 1, 2], "rust": [3, 4, 5]} and warnings == []
    (call,) = llm.calls
    assert call.stage == "organize" and call.max_tokens == 300 + 40 * 6


def test_an_invalid_plan_is_reasked_with_the_error() -> None:
    broken = plan(("all", [1, 2, 3, 4, 5, 5]))  # the first missing, the last twice
    good = plan(("python", [0, 1, 2]), ("rust", [3, 4, 5]))
    llm = FakeLLM({TaxonomyPlan: [broken, good]})
    tree, warnings = planned(llm, memories({"python": 3, "rust": 3}))
    organize = llm.asked(TaxonomyPlan)
    assert len(organize) == 2
    assert "missing" in organize[1].prompt and "more than one leaf" in organize[1].prompt
    assert warnings == [] and leaves(tree) == {"python": [0, 1, 2], "rust": [3, 4, 5]}


def test_three_invalid_plans_are_mended_keeping_the_models_folder() -> None:
    llm = FakeLLM({TaxonomyPlan: plan(("all", [1, 2, 3, 4, 5, 5]))})
    tree, warnings = planned(llm, memories({"python": 3, "rust": 3}))
    assert len(llm.asked(TaxonomyPlan)) == 3
    assert any("needed repairs" in w for w in warnings)
    assert leaves(tree) == {"all": [0, 1, 2, 3, 4, 5]}  # every chunk, in the model's folder


def test_one_folder_per_chunk_is_reasked_once() -> None:
    chunks = memories({"python": 4, "rust": 4})
    good = plan(("python", [0, 1, 2, 3]), ("rust", [4, 5, 6, 7]))
    llm = FakeLLM({TaxonomyPlan: [singletons(chunks), good]})
    tree, _warnings = planned(llm, chunks)
    organize = llm.asked(TaxonomyPlan)
    assert len(organize) == 2 and "hold a single chunk" in organize[1].prompt
    assert len(leaves(tree)) == 2  # grouped on the second try


def test_a_model_that_keeps_making_single_folders_is_not_asked_forever() -> None:
    chunks = memories({"python": 4, "rust": 4})
    llm = FakeLLM({TaxonomyPlan: singletons(chunks)})
    tree, warnings = planned(llm, chunks)
    assert len(llm.asked(TaxonomyPlan)) == 2  # one re-ask, then accepted
    assert warnings == [] and len(leaves(tree)) == 8


def test_one_folder_for_everything_twice_gives_way_to_grouping() -> None:
    chunks = memories({"python": 5, "rust": 5}, {"python": "python.md", "rust": "rust.md"})
    llm = FakeLLM({TaxonomyPlan: plan(("topic", list(range(10))))})
    tree, warnings = planned(llm, chunks)
    organize = llm.asked(TaxonomyPlan)
    assert len(organize) == 2  # re-asked once, not more
    assert "'topic' holds 10 of the 10 chunks" in organize[1].prompt
    assert "['topic'] say nothing" in organize[1].prompt
    assert any("grouped by source document and text similarity" in w for w in warnings)
    assert sorted(leaves(tree).values()) == [[0, 1, 2, 3, 4], [5, 6, 7, 8, 9]]


def test_a_replan_names_its_directory() -> None:
    llm = FakeLLM({TaxonomyPlan: plan(("python", [0, 1, 2]), ("rust", [3, 4, 5]))})
    planned(llm, memories({"python": 3, "rust": 3}), scope="all")
    assert "Re-plan the directory 'all'" in llm.calls[0].prompt


def test_no_usable_taxonomy_falls_back_to_folders_per_source() -> None:
    chunks = memories({"python": 2, "rust": 2}, {"python": "first notes.md", "rust": "second.md"})
    llm = FakeLLM({TaxonomyPlan: StructuredOutputError("invalid reply after a re-ask")})
    tree, warnings = planned(llm, chunks)
    assert len(llm.asked(TaxonomyPlan)) == 3
    assert any("grouped by source" in w for w in warnings)
    assert leaves(tree) == {"first_notes": [0, 1], "second": [2, 3]}


# -- placing memories in an existing tree, describing folders --------------------------------


def existing_tree() -> DirView:
    def leaf(path: str, description: str) -> DirView:
        return DirView(path, description=description, files={f"{path}_a.md": None})

    return DirView(
        "",
        subdirs={
            "python": leaf("python", "The Python GIL, interpreted code and indentation."),
            "rust": leaf("rust", "The Rust borrow checker, ownership rules and data races."),
        },
    )


def test_placements_follow_the_model_and_what_it_left_out_goes_by_words() -> None:
    chunks = memories({"python": 1, "rust": 1, "git": 1})
    reply = PlacementPlan(
        placements=[
            Placement(index=0, directory="python"),
            Placement(index=2, directory="../Git Tools/", description="Memories about git tools."),
            Placement(index=0, directory="rust"),  # a second answer for 0 is ignored
        ]
    )
    llm = FakeLLM({PlacementPlan: reply})
    placements = place_memories(llm, existing_tree(), chunks, CancelToken())
    assert placements == {0: ("python", ""), 1: ("rust", ""), 2: ("git_tools", "")}
    (call,) = llm.calls
    assert call.stage == "place" and call.max_tokens == 100 + 40 * 3


def test_a_failed_placement_places_by_words() -> None:
    chunks = memories({"python": 1, "rust": 1})
    llm = FakeLLM({PlacementPlan: LLMCallFailed("HTTP 500")})
    placements = place_memories(llm, existing_tree(), chunks, CancelToken())
    assert placements == {0: ("python", ""), 1: ("rust", "")}


def test_descriptions_that_say_nothing_or_name_no_listed_folder_are_dropped() -> None:
    reply = DescriptionBatch(
        directories=[
            DirectoryDescription(path="root", title="Notes", description="Python and Rust."),
            DirectoryDescription(path="python", title="Python", description="Python notes."),
            DirectoryDescription(path="rust/", title="", description="Rust ownership rules."),
            DirectoryDescription(path="haskell", title="Haskell", description="Lazy code."),
        ]
    )
    llm = FakeLLM({DescriptionBatch: reply})
    listings = {"": "- python/\n- rust/", "python": "- a.md", "rust": "- b.md"}
    described = describe_directories(llm, listings, CancelToken())
    assert described == {
        "": ("Notes", "Python and Rust."),
        "rust": ("Rust", "Rust ownership rules."),
    }
    assert llm.stages() == ["describe"] and llm.calls[0].max_tokens == 100 + 150 * 3


def test_failed_descriptions_keep_the_previous_ones() -> None:
    llm = FakeLLM({DescriptionBatch: LLMCallFailed("HTTP 500")})
    assert describe_directories(llm, {"python": "- a.md"}, CancelToken()) == {}
