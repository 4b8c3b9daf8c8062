"""Memories a plan filed under a folder that does not name them (ingest/refile.py): the
misfilings a small local model made of 14 look-alike documents (a Tallowmere on-call
memory in the Saltcellar kitchen's folder, release notes among field reports), moved
where the folders' own names put them; a model's grouping by topic stands."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from gam_desktop.engine.ingest.planning import place_memories, plan_taxonomy
from gam_desktop.engine.ingest.prompts import Placement, PlacementPlan, PlannedFolder, TaxonomyPlan
from gam_desktop.engine.ingest.refile import refile
from gam_desktop.engine.models import DirectoryNode, MemorizedChunk
from gam_desktop.engine.progress import CancelToken
from gam_desktop.engine.store.folder import DirView
from gam_desktop.engine.store.naming import sanitize_folder_name
from tests.fakes import FakeLLM

Case = tuple[DirectoryNode, list[MemorizedChunk]]  # a plan and its memories

TLDR = {
    "brindlewave": "Brindlewave Logistics pages the primary engineer for SEV1 at any hour.",
    "tallowmere": "Tallowmere Analytics rotates its on-call engineers every 14 days.",
    "saltcellar": "The Saltcellar keeps fridges at 3 °C and cools food within 90 minutes.",
    "ferrovia": "Ferrovia Trattoria cooks poultry to 74 °C and uses purple boards.",
    "lumenvault": "Lumenvault release backs up every 15 minutes and keeps deleted files.",
    "varga": "Ines Varga counted 1,240 puffin burrows on Mote Isle in spring 2022.",
}
SOURCE = {
    "brindlewave": "brindlewave-oncall-policy.md",
    "tallowmere": "tallowmere-oncall-policy.md",
    "saltcellar": "saltcellar-kitchen-procedures.txt",
    "ferrovia": "ferrovia-kitchen-procedures.txt",
    "lumenvault": "lumenvault-{n}-release-notes.md",
    "varga": "field-report-varga-2022.md",
}


def memory(index: int, title: str, about: str, n: str = "") -> MemorizedChunk:
    return MemorizedChunk(
        index=index,
        title=title,
        memory=TLDR[about],
        tldr=TLDR[about],
        metadata={"source": SOURCE[about].format(n=n)},
    )


def folder(name: str, description: str, indices: list[int]) -> DirectoryNode:
    return DirectoryNode(name=name, description=description, chunk_indices=indices)


def where(plan: DirectoryNode) -> dict[int, str]:
    found: dict[int, str] = {}

    def visit(node: DirectoryNode, base: str) -> None:
        for child in node.children:
            path = f"{base}/{child.name}" if base else child.name
            found.update(dict.fromkeys(child.chunk_indices, path))
            visit(child, path)

    visit(plan, "")
    return found


ONCALL = [
    memory(0, "brindlewave_logistics_on_call_policy_paging", "brindlewave"),
    memory(1, "brindlewave_logistics_on_call_policy_rotation", "brindlewave"),
    memory(2, "tallowmere_analytics_on_call_policy_primary", "tallowmere"),
    memory(3, "tallowmere_analytics_on_call_policy_rotation", "tallowmere"),
    memory(4, "saltcellar_kitchen_procedures_fridges", "saltcellar"),
    memory(5, "saltcellar_kitchen_procedures_delivery", "saltcellar"),
]


def test_a_memory_in_a_folder_naming_another_company_moves_to_its_own() -> None:
    plan = DirectoryNode(
        name="root",
        children=[
            folder("brindlewave_logistics", "On-call policy of Brindlewave Logistics.", [0, 1]),
            folder("tallowmere_analytics", "On-call policy of Tallowmere Analytics.", [2]),
            # the model's slip: a Tallowmere memory among the kitchen's
            folder("saltcellar_kitchen", "Kitchen procedures of a seafood bistro.", [3, 4, 5]),
        ],
    )
    refiled, moved = refile(plan, ONCALL)
    assert moved == 1
    assert where(refiled) == {
        0: "brindlewave_logistics",
        1: "brindlewave_logistics",
        2: "tallowmere_analytics",
        3: "tallowmere_analytics",
        4: "saltcellar_kitchen",
        5: "saltcellar_kitchen",
    }


def policies(first: str) -> DirectoryNode:
    """Brindlewave's folder named `first`, holding a Tallowmere memory by mistake."""
    return DirectoryNode(
        name="root",
        children=[
            folder(first, "On-call policy of Brindlewave Logistics.", [0, 1, 3]),
            folder("tallowmere_analytics", "On-call policy of Tallowmere Analytics.", [2]),
            folder("saltcellar_kitchen", "Kitchen procedures of a seafood bistro.", [4, 5]),
        ],
    )


def test_a_word_two_folders_share_does_not_keep_a_memory_in_the_wrong_one() -> None:
    """ "on-call policy" describes both policy folders; "tallowmere" only one."""
    refiled, moved = refile(policies("brindlewave_on_call"), ONCALL)
    assert moved == 1 and where(refiled)[3] == "tallowmere_analytics"
    assert where(refiled)[0] == "brindlewave_on_call"


def test_a_memory_whose_title_names_its_own_folder_stays() -> None:
    plan = policies("on_call_policy")  # "…_on_call_policy_rotation" names its own
    assert refile(plan, ONCALL) == (plan, 0)


def test_a_grouping_by_topic_that_shares_words_with_its_memories_stands() -> None:
    """Folders by what the memories are about, not by company: each memory shares words
    with its own folder, and no other folder names it twice as well."""
    plan = DirectoryNode(
        name="root",
        children=[
            folder("paging", "Who is paged: Brindlewave and Tallowmere paging rules.", [0, 2]),
            folder("rotations", "Rotation lengths of on-call policies.", [1, 3]),
            folder("kitchens", "Kitchen procedures: fridges, deliveries.", [4, 5]),
        ],
    )
    refiled, moved = refile(plan, ONCALL)
    assert moved == 0 and refiled == plan


def test_a_memory_two_folders_name_equally_stays_where_the_model_put_it() -> None:
    chunks = [
        memory(0, "ferrovia_kitchen_procedures_poultry", "ferrovia"),
        memory(1, "saltcellar_kitchen_procedures_fridges", "saltcellar"),
        memory(2, "juniper_kitchen_procedures_grill", "saltcellar"),
    ]
    chunks[2].metadata["source"] = "juniper-kitchen-procedures.txt"
    plan = DirectoryNode(
        name="root",
        children=[
            folder("ferrovia_kitchen", "Kitchen procedures of a trattoria.", [0]),
            folder("saltcellar_kitchen", "Kitchen procedures of a bistro.", [1]),
            folder("field_reports", "Seabird surveys.", [2]),
        ],
    )
    refiled, moved = refile(plan, chunks)
    assert moved == 0 and where(refiled)[2] == "field_reports"


def test_memories_no_folder_names_get_folders_of_their_own() -> None:
    chunks = [
        memory(0, "field_report_seabird_survey_spring_2022", "varga"),
        memory(1, "field_report_seabird_survey_greyholm", "varga"),
        memory(2, "lumenvault_3_0_release_notes_backup", "lumenvault", "3.0"),
        memory(3, "lumenvault_3_0_release_notes_limits", "lumenvault", "3.0"),
        memory(4, "lumenvault_3_1_release_notes_backup", "lumenvault", "3.1"),
        memory(5, "saltcellar_kitchen_procedures_fridges", "saltcellar"),
    ]
    plan = DirectoryNode(
        name="root",
        children=[
            folder("field_reports", "Field reports of seabird surveys.", [0, 1, 2, 3, 4]),
            folder("saltcellar_kitchen", "Kitchen procedures of a bistro.", [5]),
        ],
    )
    refiled, moved = refile(plan, chunks)
    assert moved == 2
    placed = where(refiled)
    assert placed[0] == placed[1] == "field_reports" and placed[5] == "saltcellar_kitchen"
    assert placed[2] == placed[3] == "lumenvault_3_0_release_notes"  # named after it
    assert placed[4] == "field_reports"  # the only memory of its document: no folder for one


def a_lone_memory_no_folder_names_stays() -> Case:
    chunks = [
        memory(0, "field_report_seabird_survey_spring_2022", "varga"),
        memory(1, "lumenvault_3_0_release_notes_backup", "lumenvault", "3.0"),
        memory(2, "saltcellar_kitchen_procedures_fridges", "saltcellar"),
    ]
    plan = DirectoryNode(
        name="root",
        children=[
            folder("field_reports", "Field reports of seabird surveys.", [0, 1]),
            folder("saltcellar_kitchen", "Kitchen procedures of a bistro.", [2]),
        ],
    )
    return plan, chunks


def test_memories_their_folder_does_not_name_get_one_even_if_a_look_alikes_would() -> None:
    """A bistro's procedures among on-call policies: their folder shares no word with them;
    the trattoria's folder shares "kitchen" and "procedures" but is not theirs. They get a
    folder of their own, named after their document."""
    chunks = [
        memory(0, "tallowmere_analytics_on_call_policy_primary", "tallowmere"),
        memory(1, "tallowmere_analytics_on_call_policy_rotation", "tallowmere"),
        memory(2, "saltcellar_kitchen_procedures_fridges", "saltcellar"),
        memory(3, "saltcellar_kitchen_procedures_delivery", "saltcellar"),
        memory(4, "ferrovia_kitchen_procedures_poultry", "ferrovia"),
        memory(5, "ferrovia_kitchen_procedures_boards", "ferrovia"),
    ]
    for chunk in chunks[2:4]:
        chunk.tldr = "The Saltcellar keeps fridges at 3 °C and checks fish at the door."
    plan = DirectoryNode(
        name="root",
        children=[
            folder("on_call_policy", "Tallowmere Analytics on-call rules.", [0, 1, 2, 3]),
            folder("ferrovia_kitchen", "Kitchen procedures of a trattoria.", [4, 5]),
        ],
    )
    refiled, moved = refile(plan, chunks)
    placed = where(refiled)
    assert moved == 2 and placed[2] == placed[3] == "saltcellar_procedures"  # name cut short
    assert placed[0] == placed[1] == "on_call_policy"
    assert placed[4] == placed[5] == "ferrovia_kitchen"


def test_the_models_plan_is_refiled_before_it_is_used() -> None:
    reply = TaxonomyPlan(
        description="Policies and procedures.",
        folders=[
            PlannedFolder(
                path="brindlewave_logistics", description="Brindlewave on-call.", chunks=[0, 1]
            ),
            PlannedFolder(
                path="tallowmere_analytics", description="Tallowmere on-call.", chunks=[2]
            ),
            PlannedFolder(
                path="saltcellar_kitchen", description="A bistro's kitchen.", chunks=[3, 4, 5]
            ),
        ],
    )
    tree, warnings = plan_taxonomy(FakeLLM({TaxonomyPlan: reply}), ONCALL, CancelToken())
    assert warnings == []
    assert {leaf.name: sorted(leaf.chunk_indices) for leaf in tree.leaves()} == {
        "brindlewave_logistics": [0, 1],
        "tallowmere_analytics": [2, 3],
        "saltcellar_kitchen": [4, 5],
    }


def test_a_new_memory_placed_in_a_folder_naming_another_company_goes_to_its_own() -> None:
    def leaf(path: str, description: str) -> DirView:
        return DirView(path, description=description, files={f"{path}/a.md": None})

    view = DirView(
        "",
        subdirs={
            "on_call": DirView(
                "on_call",
                description="On-call policies.",
                subdirs={"tallowmere": leaf("on_call/tallowmere", "Tallowmere Analytics.")},
            ),
            "saltcellar_kitchen": leaf("saltcellar_kitchen", "A seafood bistro's kitchen."),
        },
    )
    reply = PlacementPlan(
        placements=[
            Placement(index=3, directory="saltcellar_kitchen"),  # the slip
            Placement(index=4, directory="saltcellar_kitchen"),
            Placement(index=5, directory="deliveries", description="Checks of fish at the door."),
        ]
    )
    placed = place_memories(FakeLLM({PlacementPlan: reply}), view, ONCALL[3:], CancelToken())
    assert placed == {
        3: ("on_call/tallowmere", ""),
        4: ("saltcellar_kitchen", ""),
        5: ("deliveries", "Checks of fish at the door."),  # a new folder: the model's call
    }


def a_plan_whose_folders_name_few_of_its_memories_is_left_as_the_model_made_it() -> tuple[
    DirectoryNode, list[MemorizedChunk]
]:
    """Folders by what the model knows ("work", "personal"), not by the memories' names:
    nothing names most memories, so nothing is regrouped."""
    chunks = [
        memory(0, "lumenvault_3_0_release_notes_backup", "lumenvault", "3.0"),
        memory(1, "lumenvault_3_1_release_notes_backup", "lumenvault", "3.1"),
        memory(2, "field_report_seabird_survey_spring_2022", "varga"),
        memory(3, "field_report_seabird_survey_greyholm", "varga"),
    ]
    plan = DirectoryNode(
        name="root",
        children=[
            folder("work", "What I do for a living.", [0, 1]),
            folder("personal", "Weekends.", [2, 3]),
        ],
    )
    return plan, chunks


def topic_memory(index: int, title: str, source: str, tldr: str = "") -> MemorizedChunk:
    return MemorizedChunk(
        index=index, title=title, memory=tldr, tldr=tldr, metadata={"source": source}
    )


def a_topic_plan_of_one_memory_per_document_is_not_broken_up() -> tuple[
    DirectoryNode, list[MemorizedChunk]
]:
    """Folders named by what the model knows ("finance", "health"): three memories share
    no word with any folder, each from its own file; none gets a folder of one."""
    chunks = [
        topic_memory(0, "q3_budget_review", "q3-budget.md"),
        topic_memory(1, "tax_return_2022", "taxes.md"),
        topic_memory(2, "savings_account_money", "savings.md"),
        topic_memory(3, "dentist_appointment", "calendar.md"),
        topic_memory(4, "running_log", "runs.md", "Ran for fitness."),
        topic_memory(5, "doctor_checkup", "doctor.md"),
    ]
    plan = DirectoryNode(
        name="root",
        children=[
            folder("finance", "Money matters.", [0, 1, 2]),
            folder("health", "Doctor visits and fitness.", [3, 4, 5]),
        ],
    )
    return plan, chunks


def one_word_in_common_does_not_take_a_memory_from_a_folder_by_topic() -> tuple[
    DirectoryNode, list[MemorizedChunk]
]:
    """ "comparison" (singular in the title, plural in the folder) keeps it among the
    comparisons; "feeding" in the pets folder's description is no name of it."""
    chunks = [
        topic_memory(0, "rust_vs_go_comparison", "notes.md"),
        topic_memory(1, "rust_ownership", "notes.md"),
        topic_memory(2, "sourdough_starter_feeding", "bread.md"),
        topic_memory(3, "dog_walks", "dog.md"),
    ]
    plan = DirectoryNode(
        name="root",
        children=[
            folder("comparisons", "Languages side by side.", [0]),
            folder("rust", "The Rust language.", [1]),
            folder("baking", "Bread at home.", [2]),
            folder("pets", "Our dog: feeding, walks and the vet.", [3]),
        ],
    )
    return plan, chunks


def a_document_the_model_split_by_topic_is_not_pulled_back_by_its_file_name() -> tuple[
    DirectoryNode, list[MemorizedChunk]
]:
    source = "acme-employee-handbook.pdf"
    chunks = [
        topic_memory(0, "employee_handbook_overview", source),
        topic_memory(1, "dental_plan", source),
        topic_memory(2, "parental_leave", source),
        topic_memory(3, "password_rules", source),
        topic_memory(4, "laptop_encryption", source),
    ]
    plan = DirectoryNode(
        name="root",
        children=[
            folder("employee_handbook", "The handbook's introduction.", [0]),
            folder("benefits", "Health insurance and leave.", [1, 2]),
            folder("security", "Passwords and laptops.", [3, 4]),
        ],
    )
    return plan, chunks


def a_two_letter_folder_name_names_its_memories() -> Case:
    chunks = [
        topic_memory(0, "go_channels", "go.md"),
        topic_memory(1, "go_modules", "go.md"),
        *(topic_memory(i, f"rust_ownership_{i}", "rust.md") for i in (2, 3, 4)),
    ]
    plan = DirectoryNode(
        name="root",
        children=[folder("go", "", [0, 1]), folder("rust", "The Rust language.", [2, 3, 4])],
    )
    return plan, chunks


def test_a_new_folder_never_takes_the_name_of_one_the_plan_has() -> None:
    """Two memories of a-b.md no folder names get a folder named after it: not "a_b",
    which the plan's "A & B" becomes once its name is made a folder name."""
    chunks = [
        topic_memory(0, "alpha_one", "a-b.md"),
        topic_memory(1, "alpha_two", "a-b.md"),
        topic_memory(2, "gamma_ray", "rays.md"),
        topic_memory(3, "bread_recipe", "bread.md"),
        topic_memory(4, "bread_flour", "bread.md"),
        topic_memory(5, "bread_oven", "bread.md"),
    ]
    plan = DirectoryNode(
        name="root",
        children=[folder("A & B", "", [0, 1, 2]), folder("bread", "Baking.", [3, 4, 5])],
    )
    refiled, moved = refile(plan, chunks)
    assert moved == 2
    names = [sanitize_folder_name(child.name) for child in refiled.children]
    assert len(names) == len(set(names)) == 3, names
    assert plan_taxonomy_valid(refiled, set(range(6)))


def plan_taxonomy_valid(plan: DirectoryNode, expected: set[int]) -> bool:
    from gam_desktop.engine.ingest.taxonomy import normalize_plan, validate_plan

    return validate_plan(normalize_plan(plan), expected) == []


def test_a_reorganized_folders_plan_is_refiled_within_it() -> None:
    """A re-plan of one folder (a scope) into subfolders: the same check, among them."""
    reply = TaxonomyPlan(
        description="Policies.",
        folders=[
            PlannedFolder(path="brindlewave", description="Brindlewave on-call.", chunks=[0, 1]),
            PlannedFolder(path="tallowmere", description="Tallowmere on-call.", chunks=[2]),
            PlannedFolder(path="kitchen/saltcellar", description="A bistro.", chunks=[3, 4, 5]),
        ],
    )
    tree, _ = plan_taxonomy(FakeLLM({TaxonomyPlan: reply}), ONCALL, CancelToken(), "policies")
    placed = where(tree)
    assert placed[3] == "tallowmere" and placed[2] == "tallowmere"
    assert placed[4] == placed[5] == "kitchen/saltcellar"


def a_folder_naming_a_memory_not_twice_as_well_as_its_own_leaves_it() -> tuple[
    DirectoryNode, list[MemorizedChunk]
]:
    """Its own folder's description has one of its words, the other folder's name two."""
    chunks = [
        topic_memory(0, "tallowmere_analytics_rotation", "notes.md"),
        topic_memory(1, "brindlewave_rotation", "notes.md"),
    ]
    plan = DirectoryNode(
        name="root",
        children=[
            folder("rotas", "Every rotation.", [0, 1]),
            folder("tallowmere_analytics", "", []),
        ],
    )
    return plan, chunks


def a_memory_its_document_or_tldr_names_is_no_orphan() -> tuple[
    DirectoryNode, list[MemorizedChunk]
]:
    """Two memories of health-notes.md whose titles say nothing of health: the file's name
    says where they belong, and they stay."""
    chunks = [
        topic_memory(0, "blood_pressure", "health-notes.md"),
        topic_memory(1, "sleep_hours", "health-notes.md"),
        topic_memory(2, "resting_pulse", "pulse.md", "My health at rest."),
        topic_memory(3, "resting_pulse_2", "pulse.md", "My health at rest."),
        *(topic_memory(i, f"bread_{i}", "bread.md") for i in (4, 5, 6, 7)),
    ]
    plan = DirectoryNode(
        name="root",
        children=[folder("health", "", [0, 1, 2, 3]), folder("bread", "Baking.", [4, 5, 6, 7])],
    )
    return plan, chunks


@pytest.mark.parametrize(
    "case",
    [
        a_lone_memory_no_folder_names_stays,
        a_plan_whose_folders_name_few_of_its_memories_is_left_as_the_model_made_it,
        a_topic_plan_of_one_memory_per_document_is_not_broken_up,
        one_word_in_common_does_not_take_a_memory_from_a_folder_by_topic,
        a_document_the_model_split_by_topic_is_not_pulled_back_by_its_file_name,
        a_two_letter_folder_name_names_its_memories,
        a_folder_naming_a_memory_not_twice_as_well_as_its_own_leaves_it,
        a_memory_its_document_or_tldr_names_is_no_orphan,
    ],
    ids=lambda case: case.__name__,
)
def test_a_plan_is_left_as_the_model_made_it(
    case: Callable[[], Case],
) -> None:
    plan, chunks = case()
    assert refile(plan, chunks) == (plan, 0)
