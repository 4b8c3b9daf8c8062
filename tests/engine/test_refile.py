"""Memories a plan filed under a folder that does not name them (ingest/refile.py): the
misfilings a small local model made of look-alike documents (one hostel's house rules in
a gym's cleaning folder, a user guide among garden logs), moved where the folders' own
names put them; a model's grouping by topic stands."""

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
    "hollybrook": "Hollybrook Hostel wakes the breakfast guest for ferries at any hour.",
    "marlowe": "Marlowe Lodge sets its late-arrival guests a curfew every 3 nights.",
    "ashenfield": "The Ashenfield keeps showers at 38 °C and dries towels within 2 hours.",
    "birchmoor": "Birchmoor Dojo washes mats at 60 °C and uses blue lockers.",
    "cosyheat": "CosyHeat guide checks the rooms every 20 minutes and keeps a night mode.",
    "brandt": "Olga Brandt counted 340 snails under the south hedge in spring 2021.",
}
SOURCE = {
    "hollybrook": "hollybrook-house-rules.md",
    "marlowe": "marlowe-house-rules.md",
    "ashenfield": "ashenfield-cleaning-checklist.txt",
    "birchmoor": "birchmoor-cleaning-checklist.txt",
    "cosyheat": "cosyheat-{n}-user-guide.md",
    "brandt": "garden-log-brandt-2021.md",
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


RULES = [
    memory(0, "hollybrook_hostel_house_rules_checkin", "hollybrook"),
    memory(1, "hollybrook_hostel_house_rules_curfew", "hollybrook"),
    memory(2, "marlowe_lodge_house_rules_breakfast", "marlowe"),
    memory(3, "marlowe_lodge_house_rules_curfew", "marlowe"),
    memory(4, "ashenfield_cleaning_checklist_showers", "ashenfield"),
    memory(5, "ashenfield_cleaning_checklist_laundry", "ashenfield"),
]


def test_a_memory_in_a_folder_naming_another_company_moves_to_its_own() -> None:
    plan = DirectoryNode(
        name="root",
        children=[
            folder("hollybrook_hostel", "House rules of Hollybrook Hostel.", [0, 1]),
            folder("marlowe_lodge", "House rules of Marlowe Lodge.", [2]),
            # the model's slip: a Marlowe memory among the gym's
            folder("ashenfield_cleaning", "Cleaning checklist of a leisure centre.", [3, 4, 5]),
        ],
    )
    refiled, moved = refile(plan, RULES)
    assert moved == 1
    assert where(refiled) == {
        0: "hollybrook_hostel",
        1: "hollybrook_hostel",
        2: "marlowe_lodge",
        3: "marlowe_lodge",
        4: "ashenfield_cleaning",
        5: "ashenfield_cleaning",
    }


def policies(first: str) -> DirectoryNode:
    """Hollybrook's folder named `first`, holding a Marlowe memory by mistake."""
    return DirectoryNode(
        name="root",
        children=[
            folder(first, "House rules of Hollybrook Hostel.", [0, 1, 3]),
            folder("marlowe_lodge", "House rules of Marlowe Lodge.", [2]),
            folder("ashenfield_cleaning", "Cleaning checklist of a leisure centre.", [4, 5]),
        ],
    )


def test_a_word_two_folders_share_does_not_keep_a_memory_in_the_wrong_one() -> None:
    """ "house rules" describes both rules folders; "marlowe" only one."""
    refiled, moved = refile(policies("hollybrook_house"), RULES)
    assert moved == 1 and where(refiled)[3] == "marlowe_lodge"
    assert where(refiled)[0] == "hollybrook_house"


def test_a_memory_whose_title_names_its_own_folder_stays() -> None:
    plan = policies("house_rules")  # "…_house_rules_curfew" names its own
    assert refile(plan, RULES) == (plan, 0)


def test_a_grouping_by_topic_that_shares_words_with_its_memories_stands() -> None:
    """Folders by what the memories are about, not by company: each memory shares words
    with its own folder, and no other folder names it twice as well."""
    plan = DirectoryNode(
        name="root",
        children=[
            folder("checkin", "Who checks in: Hollybrook and Marlowe checkin times.", [0, 2]),
            folder("curfews", "Curfew hours of house rulebooks.", [1, 3]),
            folder("cleanings", "Cleaning checklist: showers, laundries.", [4, 5]),
        ],
    )
    refiled, moved = refile(plan, RULES)
    assert moved == 0 and refiled == plan


def test_a_memory_two_folders_name_equally_stays_where_the_model_put_it() -> None:
    chunks = [
        memory(0, "birchmoor_cleaning_checklist_mats", "birchmoor"),
        memory(1, "ashenfield_cleaning_checklist_showers", "ashenfield"),
        memory(2, "rowan_cleaning_checklist_sauna", "ashenfield"),
    ]
    chunks[2].metadata["source"] = "rowan-cleaning-checklist.txt"
    plan = DirectoryNode(
        name="root",
        children=[
            folder("birchmoor_cleaning", "Cleaning checklist of a dojo.", [0]),
            folder("ashenfield_cleaning", "Cleaning checklist of a gym.", [1]),
            folder("garden_logs", "Snail counts.", [2]),
        ],
    )
    refiled, moved = refile(plan, chunks)
    assert moved == 0 and where(refiled)[2] == "garden_logs"


def test_memories_no_folder_names_get_folders_of_their_own() -> None:
    chunks = [
        memory(0, "garden_log_snail_count_spring_2021", "brandt"),
        memory(1, "garden_log_snail_count_hedge", "brandt"),
        memory(2, "cosyheat_2_0_user_guide_timer", "cosyheat", "2.0"),
        memory(3, "cosyheat_2_0_user_guide_limits", "cosyheat", "2.0"),
        memory(4, "cosyheat_2_1_user_guide_timer", "cosyheat", "2.1"),
        memory(5, "ashenfield_cleaning_checklist_showers", "ashenfield"),
    ]
    plan = DirectoryNode(
        name="root",
        children=[
            folder("garden_logs", "Garden logs of snail counts.", [0, 1, 2, 3, 4]),
            folder("ashenfield_cleaning", "Cleaning checklist of a gym.", [5]),
        ],
    )
    refiled, moved = refile(plan, chunks)
    assert moved == 2
    placed = where(refiled)
    assert placed[0] == placed[1] == "garden_logs" and placed[5] == "ashenfield_cleaning"
    assert placed[2] == placed[3] == "cosyheat_2_0_user_guide"  # named after it
    assert placed[4] == "garden_logs"  # the only memory of its document: no folder for one


def a_lone_memory_no_folder_names_stays() -> Case:
    chunks = [
        memory(0, "garden_log_snail_count_spring_2021", "brandt"),
        memory(1, "cosyheat_2_0_user_guide_timer", "cosyheat", "2.0"),
        memory(2, "ashenfield_cleaning_checklist_showers", "ashenfield"),
    ]
    plan = DirectoryNode(
        name="root",
        children=[
            folder("garden_logs", "Garden logs of snail counts.", [0, 1]),
            folder("ashenfield_cleaning", "Cleaning checklist of a gym.", [2]),
        ],
    )
    return plan, chunks


def test_memories_their_folder_does_not_name_get_one_even_if_a_look_alikes_would() -> None:
    """A gym's checklist among house rules: their folder shares no word with them; the
    dojo's folder shares "cleaning" and "checklist" but is not theirs. They get a folder
    of their own, named after their document."""
    chunks = [
        memory(0, "marlowe_lodge_house_rules_breakfast", "marlowe"),
        memory(1, "marlowe_lodge_house_rules_curfew", "marlowe"),
        memory(2, "ashenfield_cleaning_checklist_showers", "ashenfield"),
        memory(3, "ashenfield_cleaning_checklist_laundry", "ashenfield"),
        memory(4, "birchmoor_cleaning_checklist_mats", "birchmoor"),
        memory(5, "birchmoor_cleaning_checklist_lockers", "birchmoor"),
    ]
    for chunk in chunks[2:4]:
        chunk.tldr = "The Ashenfield keeps showers at 38 °C and checks towels at the door."
    plan = DirectoryNode(
        name="root",
        children=[
            folder("house_rules", "Marlowe Lodge guidelines for guests.", [0, 1, 2, 3]),
            folder("birchmoor_cleaning", "Cleaning checklist of a dojo.", [4, 5]),
        ],
    )
    refiled, moved = refile(plan, chunks)
    placed = where(refiled)
    assert moved == 2 and placed[2] == placed[3] == "ashenfield_checklist"  # name cut short
    assert placed[0] == placed[1] == "house_rules"
    assert placed[4] == placed[5] == "birchmoor_cleaning"


def test_the_models_plan_is_refiled_before_it_is_used() -> None:
    reply = TaxonomyPlan(
        description="Rules and checklists.",
        folders=[
            PlannedFolder(
                path="hollybrook_hostel", description="Hollybrook house rules.", chunks=[0, 1]
            ),
            PlannedFolder(path="marlowe_lodge", description="Marlowe house rules.", chunks=[2]),
            PlannedFolder(
                path="ashenfield_cleaning", description="A gym's cleaning.", chunks=[3, 4, 5]
            ),
        ],
    )
    tree, warnings = plan_taxonomy(FakeLLM({TaxonomyPlan: reply}), RULES, CancelToken())
    assert warnings == []
    assert {leaf.name: sorted(leaf.chunk_indices) for leaf in tree.leaves()} == {
        "hollybrook_hostel": [0, 1],
        "marlowe_lodge": [2, 3],
        "ashenfield_cleaning": [4, 5],
    }


def test_a_new_memory_placed_in_a_folder_naming_another_company_goes_to_its_own() -> None:
    def leaf(path: str, description: str) -> DirView:
        return DirView(path, description=description, files={f"{path}/a.md": None})

    view = DirView(
        "",
        subdirs={
            "house": DirView(
                "house",
                description="House rulebooks.",
                subdirs={"marlowe": leaf("house/marlowe", "Marlowe Lodge.")},
            ),
            "ashenfield_cleaning": leaf("ashenfield_cleaning", "A leisure centre's cleaning."),
        },
    )
    reply = PlacementPlan(
        placements=[
            Placement(index=3, directory="ashenfield_cleaning"),  # the slip
            Placement(index=4, directory="ashenfield_cleaning"),
            Placement(index=5, directory="laundries", description="Checks of towels at the door."),
        ]
    )
    placed = place_memories(FakeLLM({PlacementPlan: reply}), view, RULES[3:], CancelToken())
    assert placed == {
        3: ("house/marlowe", ""),
        4: ("ashenfield_cleaning", ""),
        5: ("laundries", "Checks of towels at the door."),  # a new folder: the model's call
    }


def a_plan_whose_folders_name_few_of_its_memories_is_left_as_the_model_made_it() -> tuple[
    DirectoryNode, list[MemorizedChunk]
]:
    """Folders by what the model knows ("work", "personal"), not by the memories' names:
    nothing names most memories, so nothing is regrouped."""
    chunks = [
        memory(0, "cosyheat_2_0_user_guide_timer", "cosyheat", "2.0"),
        memory(1, "cosyheat_2_1_user_guide_timer", "cosyheat", "2.1"),
        memory(2, "garden_log_snail_count_spring_2021", "brandt"),
        memory(3, "garden_log_snail_count_hedge", "brandt"),
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
        description="Rulebooks.",
        folders=[
            PlannedFolder(path="hollybrook", description="Hollybrook house rules.", chunks=[0, 1]),
            PlannedFolder(path="marlowe", description="Marlowe house rules.", chunks=[2]),
            PlannedFolder(path="cleaning/ashenfield", description="A gym.", chunks=[3, 4, 5]),
        ],
    )
    tree, _ = plan_taxonomy(FakeLLM({TaxonomyPlan: reply}), RULES, CancelToken(), "rulebooks")
    placed = where(tree)
    assert placed[3] == "marlowe" and placed[2] == "marlowe"
    assert placed[4] == placed[5] == "cleaning/ashenfield"


def a_folder_naming_a_memory_not_twice_as_well_as_its_own_leaves_it() -> tuple[
    DirectoryNode, list[MemorizedChunk]
]:
    """Its own folder's description has one of its words, the other folder's name two."""
    chunks = [
        topic_memory(0, "marlowe_lodge_curfew", "notes.md"),
        topic_memory(1, "hollybrook_curfew", "notes.md"),
    ]
    plan = DirectoryNode(
        name="root",
        children=[
            folder("bedtimes", "Every curfew.", [0, 1]),
            folder("marlowe_lodge", "", []),
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
