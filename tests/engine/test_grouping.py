"""The deterministic grouping that replaces a taxonomy the LLM cannot give (issue 10, 3)."""

from __future__ import annotations

import re
import time

from gam_desktop.engine.ingest.grouping import MAX_FOLDER, group_memories
from gam_desktop.engine.ingest.prompts import MAX_DEPTH
from gam_desktop.engine.ingest.taxonomy import degenerate_problems, validate_plan
from gam_desktop.engine.models import DirectoryNode, MemorizedChunk
from gam_desktop.engine.store.describing import describe_contents, folder_title, is_generic_name
from gam_desktop.selfcheck.scripted_llm import memorize
from tests.documents import topic_document
from tests.engine.lookalike_docs import family_of, lookalike_documents
from tests.memories import document_parts


def memories_of(docs: dict[str, str], heading: str = "## ") -> list[MemorizedChunk]:
    """One memory per section, written as the scripted model writes them."""
    memories = []
    for name, text in docs.items():
        for section in re.split(rf"\n(?={heading})", text):
            if not section.strip().startswith(heading.strip()):
                continue
            draft = memorize(f"<document>\n{section}\n</document>")
            memories.append(MemorizedChunk(index=len(memories), **draft, metadata={"source": name}))
    return memories


def leaf_of(plan: DirectoryNode) -> dict[int, DirectoryNode]:
    return {i: leaf for leaf in plan.leaves() for i in leaf.chunk_indices}


def top_folder_of(plan: DirectoryNode) -> dict[int, str]:
    return {
        i: child.name
        for child in plan.children
        for leaf in child.leaves()
        for i in leaf.chunk_indices
    }


def test_look_alike_families_are_kept_together_and_named_by_what_sets_them_apart() -> None:
    memories = memories_of(lookalike_documents())
    plan = group_memories(memories)
    assert validate_plan(plan, {m.index for m in memories}) == []
    assert degenerate_problems(plan, {m.index for m in memories}) == []
    top = top_folder_of(plan)
    families: dict[str, set[str]] = {}
    for memory in memories:
        families.setdefault(family_of(memory.metadata["source"]), set()).add(top[memory.index])
    assert all(len(homes) == 1 for homes in families.values()), families  # one folder each
    assert len({home for homes in families.values() for home in homes}) == 3  # none shared
    names = {family: next(iter(homes)) for family, homes in families.items()}
    assert "oncall" in names["oncall"] and "lumen" in names["release"]
    assert "field" in names["field"] or "kestrel" in names["field"]
    leaves = leaf_of(plan)
    for memory in memories:  # within a family, one document per folder, named by its own words
        source = memory.metadata["source"]
        assert leaves[memory.index].name in source.removesuffix(".md")
        assert {memories[i].metadata["source"] for i in leaves[memory.index].chunk_indices} == {
            source
        }
    for folder in plan.walk()[1:]:
        assert not is_generic_name(folder.name)
        assert folder.description and "Memories about" not in folder.description
    acme = next(f for f in plan.walk() if f.name.startswith("acme"))
    assert "Acme" in acme.description  # said from the memories, not the name alone


def test_a_large_document_is_split_by_topic() -> None:
    counts = {"python": 4, "rust": 4, "docker": 4}
    memories = memories_of({"handbook.md": topic_document(counts)}, heading="# ")
    plan = group_memories(memories)
    assert len(plan.children) == 3
    for child in plan.children:
        titles = {memories[i].title.split("_")[0] for i in child.leaves()[0].chunk_indices}
        assert len(titles) == 1 and titles.pop() in child.name  # one topic, named after it


def test_a_few_documents_keep_a_folder_each() -> None:
    docs = {
        "first notes.md": topic_document({"python": 2}),
        "second.md": topic_document({"rust": 2}),
    }
    plan = group_memories(memories_of(docs, heading="# "))
    assert [c.name for c in plan.children] == ["first_notes", "second"]


def test_memories_without_structure_get_even_folders_within_the_depth_limit() -> None:
    docs = {"log.txt": topic_document({"git": 40})}  # forty near-identical sections
    memories = memories_of(docs, heading="# ")
    plan = group_memories(memories)
    assert validate_plan(plan, {m.index for m in memories}) == []
    assert 2 <= len(plan.children) <= 10
    assert all(len(leaf.chunk_indices) <= MAX_FOLDER for leaf in plan.leaves())
    depth = max(len(leaf.path.split("/")) for leaf in _with_paths(plan).leaves())
    assert depth <= MAX_DEPTH


def test_hundreds_of_memories_are_grouped_quickly() -> None:
    counts = {t: 30 for t in ("python", "javascript", "rust", "haskell", "docker", "git")}
    memories = memories_of({f"doc{i}.md": topic_document(counts) for i in range(2)}, "# ")
    started = time.perf_counter()
    plan = group_memories(memories)
    assert time.perf_counter() - started < 5
    assert validate_plan(plan, {m.index for m in memories}) == []


def _with_paths(plan: DirectoryNode) -> DirectoryNode:
    from gam_desktop.engine.ingest.taxonomy import normalize_plan

    return normalize_plan(plan)


def test_a_word_every_family_shares_is_a_shelf_not_a_family() -> None:
    """Excerpts of several licences, each named "<licence>-<version>-excerpt": "excerpt"
    is what the whole collection is, and its folder held every family inside it."""
    docs = {
        "alpha-1.0-excerpt.md": topic_document({"python": 2}),
        "alpha-2.0-excerpt.md": topic_document({"python": 2}),
        "beta-1.0-excerpt.md": topic_document({"rust": 2}),
        "beta-2.0-excerpt.md": topic_document({"rust": 2}),
        "gamma-1.0-excerpt.md": topic_document({"docker": 2}),
    }
    memories = memories_of(docs, heading="# ")
    plan = group_memories(memories)
    top = top_folder_of(plan)
    homes = {name.split("-")[0]: set() for name in docs}
    for memory in memories:
        homes[memory.metadata["source"].split("-")[0]].add(top[memory.index])
    assert homes["alpha"] == {"alpha"} and homes["beta"] == {"beta"}
    assert not any(c.name == "excerpt" for c in plan.walk())


def test_a_memory_has_no_lone_folder_around_everything() -> None:
    """Every document named "widget-…": the family of all of them is the memory itself,
    and a root holding only "widget/" added a level nobody needs."""
    docs = {
        f"widget-{topic}.md": topic_document({topic: 3}) for topic in ("python", "rust", "docker")
    }
    plan = group_memories(memories_of(docs, heading="# "))
    assert sorted(c.name for c in plan.children) == ["docker", "python", "rust"]


def test_a_folder_names_each_part_of_its_document_as_the_titles_write_it() -> None:
    """A file name loses what makes a title readable ("participant_s_version" of
    "Participant's Contributor Version"): the folder's description lists the parts as the
    titles a reader sees write them."""
    parts = {
        "Participant's Contributor Version": "The contributor version is defined.",
        "Definitions": "Terms the licence uses are defined.",
        "TERMINATION": "Rights end when terms are broken.",
    }
    plan = group_memories(document_parts(parts))
    folder = plan.leaves()[0]
    assert folder.description == (
        "Notes from Gizmo Licence 2.0: Participant's Contributor Version, Definitions and"
        " TERMINATION."
    ), folder.description


def test_titles_that_do_not_name_their_document_leave_the_description_to_the_file_names() -> None:
    """A title that does not open with its document's name says nothing of which part of
    it a note is; one that is the document's name alone adds no part."""
    source = ["gizmo-guide.txt", "gizmo-guide.txt"]
    names = ["gizmo_guide_pairing_the_remote", "gizmo_guide_charging"]
    texts = ["Pairing the remote takes a minute.", "Charging takes an hour."]
    by_names = describe_contents([], names, texts, source)
    unnamed = describe_contents([], names, texts, source, ["Pairing the Remote", "Charging"])
    assert unnamed == by_names
    alone = describe_contents([], names, texts, source, ["Gizmo Guide", "Gizmo Guide: Charging"])
    assert alone == "Notes from Gizmo Guide: Charging."
    only_names = describe_contents([], names, texts, source, ["Gizmo Guide", "gizmo guide"])
    assert only_names == by_names


def test_a_possessive_s_goes_with_the_name_it_was_written_on() -> None:
    """A title's "Tallyho's" is "tallyho_s" in its file name: once the words every title
    says ("tallyho") are out, the "s" left alone is no word of what the note adds
    ("querying s ledger"); a folder named so is still titled as its notes write it."""
    source = ["tallyho-guide.txt"] * 4
    names = [
        "tallyho_guide_querying_tallyho_s_ledger",
        "tallyho_guide_installing",
        "tallyho_guide_removing",
        "tallyho_guide_tallyho_s_log_file",
    ]
    texts = ["Querying Tallyho's ledger is quick.", "Install it.", "Remove it.", "Logs grow."]
    description = describe_contents([], names, texts, source)
    assert description == (
        "Notes from Tallyho guide: Querying ledger, installing, removing and log file."
    ), description
    assert folder_title("tallyho_s_ledger", texts) == "Tallyho's ledger"


def test_a_word_a_title_repeats_once_its_shared_words_are_out_is_said_once() -> None:
    """ "Tallyho sync, tallyho-cli sync and tallyho Tools" less the words every title says
    is "sync sync": said once."""
    source = ["tallyho-tools.txt"] * 2
    names = [
        "tallyho_sync_tallyho_cli_sync_and_tallyho_tools",
        "tallyho_cli_and_tallyho_tools_profiles",
    ]
    texts = ["Use tallyho sync or tallyho-cli sync.", "Profiles hold settings."]
    description = describe_contents([], names, texts, source)
    assert description == "Notes from tallyho tools: sync and Profiles.", description


def test_a_document_s_file_name_is_spelled_without_words_it_does_not_have() -> None:
    """A file name a person wrote ("tallyho-quotas.md") is all its words: a tldr's
    "Tallyho has quotas" does not spell it, "Tallyho quotas" does, in the tldr's case."""
    source = ["tallyho-quotas.md"] * 2
    names = ["tallyho_quotas_shared_folders", "tallyho_quotas_members"]
    texts = ["Tallyho has quotas on shared folders.", "A team has at most 20 members."]
    description = describe_contents([], names, texts, source)
    assert description == "Notes from Tallyho quotas: shared folders and members.", description


def test_a_capital_a_sentence_s_start_explains_is_not_the_word_s_spelling() -> None:
    """ "Quota rules: …" opens a tldr, so its capital is the sentence's; the texts write
    "quota" in lowercase inside their sentences, so the folder's notes are on "quota
    rules", not "Quota rules". A word the texts capitalize inside a sentence keeps it."""
    names = ["quota_rules_limits", "quota_rules_exceptions"]
    texts = ["Quota rules: a limit is per member.", "Each quota rules out shared Tallyho folders."]
    assert describe_contents([], names, texts) == "Notes on quota rules: limits and exceptions."
    named = ["tallyho_folders_limits", "tallyho_folders_exceptions"]
    assert describe_contents([], named, texts).startswith("Notes on Tallyho folders: ")
