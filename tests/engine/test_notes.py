"""Notes a person wants to read (issue 35, deliverable 6): no dump of the chunk appended to
a note, titles unique within a memory that say what sets each note apart, READMEs that say
in words what their folder holds, and families of look-alike documents in one folder."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

from gam_desktop.engine.ingest.chunking import Chunk, Chunker
from gam_desktop.engine.ingest.compose import place_memory
from gam_desktop.engine.ingest.documents import load_text
from gam_desktop.engine.ingest.grouping import group_memories
from gam_desktop.engine.ingest.memorize import memorize_chunks
from gam_desktop.engine.ingest.prompts import MemoryDraft
from gam_desktop.engine.models import ChunkConfig, DirectoryNode, MemorizedChunk
from gam_desktop.engine.progress import CancelToken
from gam_desktop.engine.store.changeset import ChangeSet
from gam_desktop.engine.store.folder import DirView
from gam_desktop.engine.store.markdown import README, parse_memory, parse_readme
from gam_desktop.engine.store.readmes import stage_readmes
from gam_desktop.selfcheck.scripted_llm import Fault, memorize
from tests.fakes import FakeLLM

ROOT = Path(__file__).resolve().parents[2]
NUMBERED = re.compile(r"_\d+$")  # "acme_policy_2": a title told apart by a number
COUNTED = re.compile(r"^\s*\d+\s+(memories|memory|notes|chunks)\b", re.IGNORECASE)


def chunks_of(text: str, name: str, max_tokens: int = 120) -> list[Chunk]:
    config = ChunkConfig(min_tokens=20, max_tokens=max_tokens)
    return Chunker(config).chunk_documents([load_text(text, name)])


def memorized(draft, chunks: list[Chunk]) -> list[MemorizedChunk]:
    llm = FakeLLM({MemoryDraft: draft})
    return memorize_chunks(llm, chunks, first_index=0, cancel=CancelToken(), on_done=print)


# -- no dump ---------------------------------------------------------------------------

RELEASE = """# Lumenvault 3.0 Release Notes

## Limits

The upload limit is now 50 GB per file and the default retention is 90 days.

.. note:: directive left over from the converter
:version: 3.0.1

```
lumenvault --retention-days 90 --limit 0.75
```
"""


def test_a_note_pastes_nothing_from_its_chunk_and_says_its_tldr_once() -> None:
    """The issue's notes: the tldr word for word, then "Details from the original:" with
    markup directives, versions, a float and a line of code. Now the body goes on from the
    tldr in the model's words, and nothing is appended: the original is kept and searched."""
    (chunk,) = chunks_of(RELEASE, "lumenvault-3.0-release-notes.md", max_tokens=300)
    draft = MemoryDraft(
        title="lumenvault_3_0_limits",
        tldr="Lumenvault 3.0 raises the upload limit.",
        memory="Lumenvault 3.0 raises the upload limit. Files may now be much larger.",
    )
    (memory,) = memorized(draft, [chunk])
    assert memory.memory == "Lumenvault 3.0 Release Notes: Files may now be much larger."
    assert memory.tldr == "Lumenvault 3.0 raises the upload limit."
    for dump in ("Details from the original", "..", ":version:", "0.75", "--retention", "50"):
        assert dump not in memory.memory, dump


def test_a_body_that_only_repeats_the_tldr_becomes_the_passages_own_sentences() -> None:
    (chunk,) = chunks_of(RELEASE, "lumenvault-3.0-release-notes.md", max_tokens=300)
    said = "Lumenvault 3.0 changes its limits."
    (memory,) = memorized(MemoryDraft(title="limits", tldr=said, memory=said), [chunk])
    assert memory.tldr == said and said not in memory.memory
    assert memory.memory.endswith(
        "The upload limit is now 50 GB per file and the default retention is 90 days."
    )
    assert not any(dump in memory.memory for dump in ("directive", ":version:", "--limit"))


def test_a_body_that_only_says_what_the_text_is_about_becomes_the_passages_own_sentences() -> None:
    """Small models describe the document instead of noting what it says ("The document
    describes…", then "It also mentions…"): no fact survives, so the passage's own
    sentences stand in; among facts, such a sentence is left out and the facts stay."""
    (chunk,) = chunks_of(RELEASE, "lumenvault-3.0-release-notes.md", max_tokens=300)
    tldr = "Lumenvault 3.0 raises its upload limit."
    about = "The document describes the limits of a release. It also mentions retention."
    (memory,) = memorized(MemoryDraft(title="limits", tldr=tldr, memory=about), [chunk])
    assert "describes" not in memory.memory and "mentions" not in memory.memory
    assert memory.memory.endswith(
        "The upload limit is now 50 GB per file and the default retention is 90 days."
    )
    mixed = "This section covers the limits.\n- Files may be 50 GB.\n- The text lists defaults."
    (memory,) = memorized(MemoryDraft(title="limits", tldr=tldr, memory=mixed), [chunk])
    assert memory.memory == "Lumenvault 3.0 Release Notes:\n- Files may be 50 GB."
    stated = "The document explains that a file may be as large as the limit allows."
    (memory,) = memorized(MemoryDraft(title="limits", tldr=tldr, memory=stated), [chunk])
    assert memory.memory.endswith(stated)  # a "that" clause states a fact
    named = "The document provides the Lumenvault 3.0 release notes and their limits."
    (memory,) = memorized(MemoryDraft(title="limits", tldr=tldr, memory=named), [chunk])
    assert "provides" not in memory.memory  # the title's version is no fact of it


def test_a_tldr_says_what_the_text_says_not_that_it_explains_it() -> None:
    """Small models open a tldr with "The document explains…": in a list of notes every
    one of them says it. The tldr says what follows instead; "It also covers…" after it
    too, and "It" that names a thing of the passage stays."""
    (chunk,) = chunks_of(RELEASE, "lumenvault-3.0-release-notes.md", max_tokens=300)
    body = "The upload limit is now 50 GB per file."
    tldr = "The document explains how to raise the upload limit. It also covers old files kept."
    (memory,) = memorized(MemoryDraft(title="limits", tldr=tldr, memory=body), [chunk])
    assert memory.tldr.endswith("How to raise the upload limit. Old files kept.")
    kept = "Lumenvault 3.0 raises its upload limit. It covers files of 50 GB."
    (memory,) = memorized(MemoryDraft(title="limits", tldr=kept, memory=body), [chunk])
    assert memory.tldr.endswith(kept)
    short = "The document explains limits."  # two words left: it stays as said
    (memory,) = memorized(MemoryDraft(title="limits", tldr=short, memory=body), [chunk])
    assert memory.tldr.endswith(short)


# -- titles ----------------------------------------------------------------------------

POLICY = """# Acme Robotics On-Call Policy

## Rotation

Engineers swap shifts through the planner. Shifts last seven days and shifts start on
Monday. A swap of shifts needs the lead's approval before the shifts change hands.

## Paging

Pages go out through Klaxon for every incident of severity one or two. An engineer
acknowledges an alert within 15 minutes, day or night, and alerts repeat every minute.

## Escalation

An unacknowledged alert escalates to the secondary after 30 minutes. The duty manager is
called when nobody answers, and the incident commander joins every severity one incident.
"""


def test_notes_of_one_document_sharing_a_title_are_told_apart_by_their_headings() -> None:
    chunks = chunks_of(POLICY, "acme-oncall.md", max_tokens=80)
    assert len(chunks) == 3
    same = MemoryDraft(title="acme_on_call_policy", memory="A part of the policy.", tldr="x.")
    titles = [m.title for m in memorized(same, chunks)]
    assert len(set(titles)) == 3 and not any(NUMBERED.search(t) for t in titles), titles
    for title, heading in zip(titles, ("rotation", "paging", "escalation"), strict=True):
        assert title.startswith("acme") and title.endswith(heading), titles


def test_notes_under_one_heading_are_told_apart_by_their_own_words() -> None:
    text = (
        "# Field Notes\n\n## Survey\n\nPuffins nest on Mote Isle in burrows counted along the "
        "slope. Puffin burrows were counted twice in June. The count was 980 burrows.\n\n"
        "Kittiwakes breed on the Greyholm cliffs above the western landing. Kittiwake nests "
        "were photographed from the boat. The count was 301 nests."
    )
    chunks = chunks_of(text, "field-notes.md", max_tokens=50)
    assert len(chunks) == 2
    draft = MemoryDraft(title="field_notes_survey", memory="m.", tldr="t.")
    titles = [m.title for m in memorized(draft, chunks)]
    assert titles[0] != titles[1] and not any(NUMBERED.search(t) for t in titles), titles
    assert titles == ["field_notes_survey_puffins_nest", "field_notes_survey_kittiwakes_breed"]


def test_a_title_of_loose_keywords_becomes_the_heading_it_sits_under() -> None:
    """Qwen2.5-Coder-1.5B titled passages with two words picked from anywhere in them."""
    (chunk, *_rest) = chunks_of(POLICY, "acme-oncall.md", max_tokens=80)
    loose = MemoryDraft(title="shifts_lead", memory="Shifts last a week.", tldr="Shifts.")
    (memory,) = memorized(loose, [chunk])
    assert memory.title == "acme_robotics_rotation"


def test_a_note_placed_beside_a_namesake_is_told_apart_by_its_own_words() -> None:
    """Titles stay unique across adds too: a new note whose title a note of the folder
    already has gets words of its own, not `_2`."""
    folder = DirView("acme", files={"acme_rotation.md": "Acme rotations last a week."})
    newer = MemorizedChunk(
        index=9,
        title="acme_rotation",
        tldr="Acme rotations move to fortnights in 2025.",
        memory="From January, rotations last fourteen days.",
        metadata={"source": "acme-2025.md"},
    )
    changes = ChangeSet()
    path = place_memory(changes, folder, newer)
    assert path == "acme/acme_rotation_move_fortnights.md"
    assert parse_memory(changes.writes[path]).front["title"] == "acme_rotation_move_fortnights"


# -- READMEs ---------------------------------------------------------------------------


def test_a_readme_says_in_words_what_its_folder_holds() -> None:
    tldrs = {
        "brindlewave_logistics_rotation.md": "Brindlewave Logistics runs weekly rotations.",
        "brindlewave_logistics_paging_windows.md": "Brindlewave Logistics pages by severity.",
        "brindlewave_logistics_escalation.md": "Brindlewave Logistics escalates after 10 min.",
        "brindlewave_logistics_compensation.md": "Brindlewave Logistics pays for nights.",
    }
    root = DirView("", subdirs={"brindlewave": DirView("brindlewave", files=dict(tldrs))})
    changes = ChangeSet()
    stage_readmes(changes, root, ["", "brindlewave"])
    description = parse_readme(changes.writes[f"brindlewave/{README}"]).description
    assert not COUNTED.match(description) and " on " not in description.split(":")[0][:3]
    assert description.startswith("Notes on Brindlewave Logistics: "), description
    for topic in ("rotation", "paging windows", "escalation", "compensation"):
        assert topic in description, description
    root_text = parse_readme(changes.writes[README]).description
    assert not COUNTED.match(root_text) and "Brindlewave" in root_text, root_text


def test_a_counted_description_of_an_earlier_version_is_written_again_in_words() -> None:
    files = {"acme_rotation.md": "Acme rotations last a week.", "acme_paging.md": "Acme pages."}
    old = "2 memories on acme, rotation and paging: Acme rotation and Acme paging."
    root = DirView("", subdirs={"acme": DirView("acme", description=old, files=files)})
    changes = ChangeSet()
    stage_readmes(changes, root, ["acme"])
    description = parse_readme(changes.writes[f"acme/{README}"]).description
    assert description == "Notes on Acme: rotation and paging.", description


# -- families --------------------------------------------------------------------------


def memories_of(docs: dict[str, str]) -> list[MemorizedChunk]:
    """One memory per "## " section, as the scripted model writes them."""
    found = []
    for name, text in docs.items():
        for section in re.split(r"\n(?=## )", text):
            if section.strip():
                draft = memorize(f"<document>\n{section}\n</document>")
                found.append(MemorizedChunk(index=len(found), **draft, metadata={"source": name}))
    return found


def top_folders(plan: DirectoryNode, memories: list[MemorizedChunk]) -> dict[str, set[str]]:
    """Each document's top-level folders."""
    source = {m.index: m.metadata["source"] for m in memories}
    homes: dict[str, set[str]] = {}
    for child in plan.children:
        for leaf in child.leaves():
            for i in leaf.chunk_indices:
                homes.setdefault(source[i], set()).add(child.name)
    return homes


def test_a_family_of_look_alike_documents_shares_a_folder_named_for_what_they_share() -> None:
    """Real release notes and manual pages: alike in name and vocabulary, not in headings.
    The fallback gave each document a folder of its own."""
    corpora = ROOT / "tests" / "corpora"
    names = {
        "postgres": ["15.1", "15.2", "15.4", "15.5"],
        "sqlite": ["foreign-keys", "pragmas", "transactions"],
    }
    docs = {
        f"postgresql-{v}-release-notes.md": (
            corpora / "postgres" / "docs" / f"postgresql-{v}-release-notes.md"
        ).read_text(encoding="utf-8")
        for v in names["postgres"]
    }
    docs |= {
        f"sqlite-{n}.md": (corpora / "sqlite" / "docs" / f"sqlite-{n}.md").read_text("utf-8")
        for n in names["sqlite"]
    }
    for other in ("cron-and-atd.md", "syslog-system-events.md"):
        docs[other] = (corpora / "handbook" / "docs" / other).read_text(encoding="utf-8")
    memories = memories_of(docs)
    homes = top_folders(group_memories(memories), memories)
    postgres = {h for d, found in homes.items() if d.startswith("postgresql") for h in found}
    sqlite = {h for d, found in homes.items() if d.startswith("sqlite") for h in found}
    assert len(postgres) == 1 and "postgresql" in next(iter(postgres)), homes
    assert len(sqlite) == 1 and "sqlite" in next(iter(sqlite)), homes
    others = homes["cron-and-atd.md"] | homes["syslog-system-events.md"]
    assert not others & (postgres | sqlite), homes


def test_a_small_family_shares_one_folder_and_a_stranger_stays_apart() -> None:
    def oncall(company: str, minutes: int, tool: str) -> str:
        return (
            f"# {company} on-call\n\n## Rotation\n\n{company} engineers rotate weekly; the "
            f"on-call engineer answers pages within {minutes} minutes through {tool}.\n\n"
            f"## Escalation\n\nUnanswered pages escalate to the {company} duty manager.\n"
        )

    docs = {
        "acme-oncall.md": oncall("Acme", 5, "Klaxon"),
        "borealis-oncall.md": oncall("Borealis", 15, "Pagerly"),
        "gardening.md": "# Gardening\n\n## Roses\n\nPrune roses in March.\n\n"
        "## Tomatoes\n\nWater tomatoes every evening.\n",
    }
    memories = memories_of(docs)
    plan = group_memories(memories)
    homes = top_folders(plan, memories)
    assert homes["acme-oncall.md"] == homes["borealis-oncall.md"] == {"oncall"}, homes
    assert homes["gardening.md"] != {"oncall"}
    (family,) = [c for c in plan.children if c.name == "oncall"]
    pair = [m.index for m in memories if m.metadata["source"] != "gardening.md"]
    assert sorted(family.chunk_indices) == pair  # one folder for the pair
    assert family.description.startswith("Notes from Acme oncall and Borealis oncall: ")


# -- a whole build, the way the lead measures it ---------------------------------------


def test_a_built_memory_reads_as_notes(make_workflow, memory_dir: Path, llm_server) -> None:
    """tests/lookalike built with the scripted server, its taxonomy from the fallback."""
    fault = Fault("one_folder_taxonomy", times=10, task="organize", on_reask=True)
    llm_server.state.faults.append(fault)
    docs = sorted((ROOT / "tests" / "lookalike" / "docs").iterdir())
    make_workflow(min_tokens=100, max_tokens=600).add(files=docs)
    notes = [p for p in memory_dir.rglob("*.md") if ".gam" not in p.parts and p.name != README]
    fronts = {p: parse_memory(p.read_text(encoding="utf-8")) for p in notes}
    titles = Counter(str(f.front["title"]) for f in fronts.values())
    assert len(notes) >= 14 and titles.most_common(1)[0][1] == 1, titles
    assert not any("Details from the original" in f.body for f in fronts.values())
    for readme in memory_dir.rglob(README):
        description = parse_readme(readme.read_text(encoding="utf-8")).description
        assert description and not COUNTED.match(description), (readme, description)
    families = json.loads((ROOT / "tests" / "lookalike" / "documents.json").read_text())
    homes: dict[str, set[str]] = {}
    for path, parsed in fronts.items():
        family = families[str(parsed.front["source"])]["family"]
        homes.setdefault(family, set()).add(path.relative_to(memory_dir).parts[0])
    assert all(len(found) == 1 for found in homes.values()), homes
    assert len({h for found in homes.values() for h in found}) == len(homes), homes


# -- titles for people -------------------------------------------------------------------

UPGRADE = """# Quillon 4.2 Release Notes

## Upgrading from 4.1

Quillon's index format changed in 4.2: run the reindex tool once after upgrading from 4.1,
and keep the old index until the tool says it is done.
"""


def test_a_note_is_titled_as_its_document_writes_the_words_and_named_in_snake_case(
    tmp_path: Path,
) -> None:
    """The title a reader sees keeps the document's case, dots and apostrophes; its file
    is named by the same words in snake_case."""
    (chunk,) = chunks_of(UPGRADE, "quillon-4.2-release-notes.md", max_tokens=300)
    draft = MemoryDraft(
        title="quillon_4_2_release_notes_upgrading",
        tldr="Upgrading to Quillon 4.2 needs one reindex.",
        memory="Run the reindex tool once after upgrading from 4.1.",
    )
    (memory,) = memorized(draft, [chunk])
    assert memory.title == "quillon_4_2_release_notes_upgrading"
    assert memory.heading == "Quillon 4.2 Release Notes: Upgrading"
    changes, directory = ChangeSet(), DirView("notes")
    path = place_memory(changes, directory, memory)
    assert path == "notes/quillon_4_2_release_notes_upgrading.md"
    assert parse_memory(changes.writes[path]).front["title"] == memory.heading


def test_a_title_keeps_how_its_words_are_written_in_as_few_phrases_as_can_be() -> None:
    from gam_desktop.engine.ingest.titles import written_title

    texts = ["Quillon 4.2 Release Notes", "Quillon's Log File", "An MMC is eligible if …"]
    assert written_title("quillon_4_2_release_notes", texts) == "Quillon 4.2 Release Notes"
    assert written_title("quillon_s_log_file", texts) == "Quillon's Log File"
    assert written_title("notes_mmc_eligible", texts) == "Notes MMC eligible"
    assert written_title("quillon_4_2_release_notes_log", texts) == (
        "Quillon 4.2 Release Notes: Log"  # the document's whole title, then the section
    )
    # two phrases one after the other keep what separates them; unknown words stay
    assert written_title("report_spring_2022", ["Report: Spring 2022"]) == "Report: Spring 2022"
    assert written_title("zz_top_words", ["nothing alike"]) == "Zz top words"
    # a title from a file name (lowercase) takes its words' case from the passage
    assert written_title("abc_2_0_notes", ["abc 2.0 notes", "", "The ABC 2.0 says"]) == (
        "ABC 2.0 notes"
    )
    # a line break ends a phrase; a name with underscores is one word
    assert written_title("pragma_cache_size_a", ["PRAGMA cache_size\n\nA"]) == (
        "PRAGMA cache_size A"
    )


def test_a_title_names_whose_document_it_is_without_its_kind() -> None:
    """The subject memory titles start with: the name, not what kind of document it is. A
    hyphenated word built on a function word describes (on-call, in-house, end-of-life);
    one without is a name and stays (Wi-Fi)."""
    from gam_desktop.engine.ingest.context import subject_of

    assert subject_of("Tallowmere Analytics On-Call Policy") == ["Tallowmere", "Analytics"]
    assert subject_of("Harbor Labs In-House Training Guide") == ["Harbor", "Labs", "Training"]
    assert subject_of("End-of-Life Procedure — Corvid Books") == ["Corvid", "Books"]
    assert subject_of("Wi-Fi Setup Guide") == ["Wi", "Fi", "Setup"]
    assert subject_of("Lumenvault 3.2 Release Notes") == ["Lumenvault", "3.2"]


def test_notes_told_apart_by_their_own_words_never_take_a_section_number() -> None:
    """ "1.6" of "# 1.6. Lifecycle" says where a passage sits, not what it is about: notes
    of a numbered document were titled "Lifecycle of a Release: 1.6 simultaneously"."""
    from gam_desktop.engine.ingest.titles import distinguish

    text = (
        "# 1.6. Lifecycle of a Release\n\nThe project will simultaneously have three versions."
        + "\n\n" + "A plain sentence follows here. " * 60
        + "\n\nThe release team decides when a version is frozen."
    )  # fmt: skip
    chunks = chunks_of(text, "release-lifecycle.md")
    titles = distinguish(["lifecycle_release"] * len(chunks), chunks)
    assert len(set(titles)) == len(titles)
    assert titles[0] == "lifecycle_release_project_simultaneously"
    assert not any(char.isdigit() for title in titles for char in title)
