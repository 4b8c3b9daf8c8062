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
from gam_desktop.engine.ingest.reorganize import stage_reorganization
from gam_desktop.engine.models import (
    ChunkConfig,
    DirectoryNode,
    MemorizedChunk,
    ReorganizeOperation,
)
from gam_desktop.engine.progress import CancelToken
from gam_desktop.engine.store.changeset import ChangeSet
from gam_desktop.engine.store.folder import DirView, MemoryFolder
from gam_desktop.engine.store.markdown import README, parse_memory, parse_readme
from gam_desktop.engine.store.readmes import stage_readmes
from gam_desktop.selfcheck.scripted_llm import Fault, memorize
from tests.fakes import FakeLLM
from tests.memories import document_parts

ROOT = Path(__file__).resolve().parents[2]
NUMBERED = re.compile(r"_\d+$")  # "acme_policy_2": a title told apart by a number
COUNTED = re.compile(r"^\s*\d+\s+(memories|memory|notes|chunks)\b", re.IGNORECASE)


def chunks_of(text: str, name: str, max_tokens: int = 120) -> list[Chunk]:
    config = ChunkConfig(min_tokens=20, max_tokens=max_tokens)
    return Chunker(config).chunk_documents([load_text(text, name)])


def memorized(draft, chunks: list[Chunk]) -> list[MemorizedChunk]:
    llm = FakeLLM({MemoryDraft: draft})
    return memorize_chunks(llm, chunks, first_index=0, cancel=CancelToken(), on_done=print)


def memorized_from(text: str, name: str, draft: MemoryDraft) -> MemorizedChunk:
    """The note the model's `draft` makes of `text`, a document named `name`, as one chunk."""
    (chunk,) = chunks_of(text, name, max_tokens=300)
    (memory,) = memorized(draft, [chunk])
    return memory


# -- no dump ---------------------------------------------------------------------------

RELEASE = """# Pebblecast 5.0 Release Notes

## Limits

The download limit is now 400 episodes per show and the default cleanup is 21 days.

.. note:: directive left over from the converter
:version: 5.0.1

```
pebblecast --cleanup-days 21 --limit 0.75
```
"""


def test_a_note_pastes_nothing_from_its_chunk_and_says_its_tldr_once() -> None:
    """The issue's notes: the tldr word for word, then "Details from the original:" with
    markup directives, versions, a float and a line of code. Now the body goes on from the
    tldr in the model's words, and nothing is appended: the original is kept and searched."""
    memory = memorized_from(
        RELEASE,
        "pebblecast-5.0-release-notes.md",
        MemoryDraft(
            title="pebblecast_5_0_limits",
            tldr="Pebblecast 5.0 raises the download limit.",
            memory=(
                "Pebblecast 5.0 raises the download limit. Shows may now keep many more episodes."
            ),
        ),
    )
    assert memory.memory == "Pebblecast 5.0 Release Notes: Shows may now keep many more episodes."
    assert memory.tldr == "Pebblecast 5.0 raises the download limit."
    for dump in ("Details from the original", "..", ":version:", "0.75", "--cleanup", "400"):
        assert dump not in memory.memory, dump


def test_a_body_that_only_repeats_the_tldr_becomes_the_passages_own_sentences() -> None:
    (chunk,) = chunks_of(RELEASE, "pebblecast-5.0-release-notes.md", max_tokens=300)
    said = "Pebblecast 5.0 changes its limits."
    (memory,) = memorized(MemoryDraft(title="limits", tldr=said, memory=said), [chunk])
    assert memory.tldr == said and said not in memory.memory
    assert memory.memory.endswith(
        "The download limit is now 400 episodes per show and the default cleanup is 21 days."
    )
    assert not any(dump in memory.memory for dump in ("directive", ":version:", "--limit"))


def test_a_body_left_with_a_reference_alone_becomes_the_passages_own_sentences() -> None:
    """A small model's memory of a long passage was its tldr and a reference ("(CVE-1)");
    once the tldr is out, the body said nothing. The passage's own sentences stand in."""
    (chunk,) = chunks_of(RELEASE, "pebblecast-5.0-release-notes.md", max_tokens=300)
    tldr = "Pebblecast 5.0 raises its download limit."
    for thin in (f"{tldr} (PC-1041)", f"{tldr} Thanks, Ana."):
        (memory,) = memorized(MemoryDraft(title="limits", tldr=tldr, memory=thin), [chunk])
        assert memory.memory.endswith(
            "The download limit is now 400 episodes per show and the default cleanup is 21 days."
        ), memory.memory
    kept = f"{tldr} Shows keep 400 episodes."  # one short sentence that says something stays
    (memory,) = memorized(MemoryDraft(title="limits", tldr=tldr, memory=kept), [chunk])
    assert memory.memory == "Pebblecast 5.0 Release Notes: Shows keep 400 episodes."


def test_a_reply_that_loops_until_its_cap_says_each_sentence_once() -> None:
    """A small model's memory can loop: the same sentences again and again until the token
    cap cuts one in the middle (json-repair closes the reply, without its tldr). The note
    says each sentence once, without the fragment the cut left."""
    (chunk,) = chunks_of(RELEASE, "pebblecast-5.0-release-notes.md", max_tokens=300)
    loop = "Shows keep 400 episodes. Cleanup runs after 21 days. " * 12 + "Shows keep 4"
    (memory,) = memorized(MemoryDraft(title="limits", tldr="", memory=loop), [chunk])
    assert memory.tldr == "Pebblecast 5.0 Release Notes: Shows keep 400 episodes."
    assert memory.memory == "Pebblecast 5.0 Release Notes: Cleanup runs after 21 days."


def test_a_body_that_only_says_what_the_text_is_about_becomes_the_passages_own_sentences() -> None:
    """Small models describe the document instead of noting what it says ("The document
    describes…", then "It also mentions…"): no fact survives, so the passage's own
    sentences stand in; among facts, such a sentence is left out and the facts stay."""
    (chunk,) = chunks_of(RELEASE, "pebblecast-5.0-release-notes.md", max_tokens=300)
    tldr = "Pebblecast 5.0 raises its download limit."
    about = "The document describes the limits of a release. It also mentions cleanup."
    (memory,) = memorized(MemoryDraft(title="limits", tldr=tldr, memory=about), [chunk])
    assert "describes" not in memory.memory and "mentions" not in memory.memory
    assert memory.memory.endswith(
        "The download limit is now 400 episodes per show and the default cleanup is 21 days."
    )
    mixed = (
        "This section covers the limits.\n- Shows keep 400 episodes.\n- The text lists defaults."
    )
    (memory,) = memorized(MemoryDraft(title="limits", tldr=tldr, memory=mixed), [chunk])
    assert memory.memory == "Pebblecast 5.0 Release Notes:\n- Shows keep 400 episodes."
    stated = "The document explains that a show may keep as many episodes as the limit allows."
    (memory,) = memorized(MemoryDraft(title="limits", tldr=tldr, memory=stated), [chunk])
    assert memory.memory.endswith(stated)  # a "that" clause states a fact
    named = "The document provides the Pebblecast 5.0 release notes and their limits."
    (memory,) = memorized(MemoryDraft(title="limits", tldr=tldr, memory=named), [chunk])
    assert "provides" not in memory.memory  # the title's version is no fact of it


def test_a_tldr_says_what_the_text_says_not_that_it_explains_it() -> None:
    """Small models open a tldr with "The document explains…": in a list of notes every
    one of them says it. The tldr is then the body's first sentence that states something;
    with none, it says what follows ("How to raise…"); "It also covers…" after it too, and
    "It" that names a thing of the passage stays."""
    (chunk,) = chunks_of(RELEASE, "pebblecast-5.0-release-notes.md", max_tokens=300)
    body = "The download limit is now 400 episodes per show."
    tldr = (
        "The document explains how to raise the download limit. It also covers old episodes kept."
    )
    (memory,) = memorized(MemoryDraft(title="limits", tldr=tldr, memory=body), [chunk])
    assert memory.tldr.endswith(body)
    about = "The notes describe the download limit of Pebblecast 5.0 for shows."
    (memory,) = memorized(MemoryDraft(title="limits", tldr=tldr, memory=about), [chunk])
    assert memory.tldr.endswith("How to raise the download limit.")
    # the body opening with talk about the text: its fact is the tldr, said once
    talk = f"The notes describe the limits of Pebblecast 5.0. {body} Cleanup runs after 21 days."
    (memory,) = memorized(MemoryDraft(title="limits", tldr=tldr, memory=talk), [chunk])
    assert memory.tldr.endswith(body) and body not in memory.memory
    assert memory.memory.endswith("Cleanup runs after 21 days.")
    kept = "It raises the download limit of Pebblecast 5.0 for shows of 400 episodes."
    (memory,) = memorized(MemoryDraft(title="limits", tldr=kept, memory=body), [chunk])
    assert memory.tldr.endswith(kept)
    short = "The document explains limits."  # two words left: it stays as said
    (memory,) = memorized(MemoryDraft(title="limits", tldr=short, memory=about), [chunk])
    assert memory.tldr.endswith(short)


def test_talk_about_the_text_is_found_whatever_names_the_text() -> None:
    """What a small model writes about the text names it by its title and kind ("The
    Pebblecast 5.0 release notes cover…", "The Widget 2.0 Extract outlines…") or calls it
    a document ("X is a document that outlines…"); "It specifies that…" states something,
    and is said directly. A passage's "the log file contains…" is about a file, not the
    text, and stays."""
    from gam_desktop.engine.ingest.context import stated_tldr, without_talk_about_the_text

    body = (
        "The Pebblecast 5.0 release notes cover limits and cleanup. "
        "It specifies that shows keep 400 episodes. Cleanup runs after 21 days."
    )
    for tldr in (
        "The Pebblecast 5.0 release notes cover limits and cleanup.",
        "The Widget 2.0 Extract outlines the limits of the app.",
        "Pebblecast 5.0 is a document that outlines limits and cleanup rules.",
        "Pebblecast's yearly summary outlines the escalation and the tools.",
        "The Pebblecast 5.0 extract is a text file that outlines the terms of the app.",
        "The extract is divided into several sections, including limits and cleanup.",
        "It emphasizes the need to keep the limits of the app.",
    ):
        assert stated_tldr(tldr, body, "Pebblecast 5.0") == "Shows keep 400 episodes.", tldr
    facts = "It specifies that shows keep 400 episodes. Cleanup runs after 21 days."
    assert without_talk_about_the_text(body, "Pebblecast 5.0") == facts
    plain = "The log file contains every action of the installer."
    assert stated_tldr(plain, body) == plain
    assert without_talk_about_the_text(plain) == plain


def test_a_tldr_is_one_sentence_and_the_body_says_the_rest() -> None:
    """A small model often writes a paragraph as its tldr, at times most of the passage,
    which every README listing the note then repeated. The tldr is its first sentence (an
    abbreviation such as "e.g." ends none); what the paragraph said is the body's, which no
    longer loses it to a repetition of the whole tldr."""
    (chunk,) = chunks_of(RELEASE, "pebblecast-5.0-release-notes.md", max_tokens=300)
    paragraph = (
        "Pebblecast 5.0 raises limits, e.g. the download limit. Shows keep 400 episodes. "
        "Cleanup runs after 21 days."
    )
    (memory,) = memorized(MemoryDraft(title="limits", tldr=paragraph, memory=paragraph), [chunk])
    assert memory.tldr.endswith("Pebblecast 5.0 raises limits, e.g. the download limit.")
    assert memory.memory.endswith("Shows keep 400 episodes. Cleanup runs after 21 days.")
    run_on = "Pebblecast keeps " + "many " * 100 + "episodes."
    (memory,) = memorized(MemoryDraft(title="limits", tldr=run_on, memory=paragraph), [chunk])
    assert memory.tldr.endswith("many…") and len(memory.tldr.split()) < 90


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


def two_parts(text: str, name: str, max_tokens: int, title: str) -> list[MemorizedChunk]:
    """The notes of a document cut in two parts, the model titling both `title`."""
    chunks = chunks_of(text, name, max_tokens=max_tokens)
    assert len(chunks) == 2
    return memorized(MemoryDraft(title=title, memory="m.", tldr="t."), chunks)


def test_notes_under_one_heading_are_told_apart_by_their_own_words() -> None:
    text = (
        "# Garden Notes\n\n## Harvest\n\nTomatoes ripen on Pell Bench in trusses counted along "
        "the rows. Tomato trusses were counted twice in August. The count was 84 trusses.\n\n"
        "Beans climb the Hazelmoor poles above the western fence. Bean pods were picked "
        "from the ladder. The count was 173 pods."
    )
    titles = [m.title for m in two_parts(text, "garden-notes.md", 50, "garden_notes_harvest")]
    assert titles[0] != titles[1] and not any(NUMBERED.search(t) for t in titles), titles
    # (the opening keeps the title: the other part has words of its own)
    # what the second part says most that the first does not: beans and their pods, not
    # whichever of its words come first
    assert titles == ["garden_notes_harvest", "garden_notes_harvest_beans_pods"]


def test_a_title_of_loose_keywords_becomes_the_heading_it_sits_under() -> None:
    """Qwen2.5-Coder-1.5B titled passages with two words picked from anywhere in them."""
    (chunk, *_rest) = chunks_of(POLICY, "acme-oncall.md", max_tokens=80)
    loose = MemoryDraft(title="shifts_lead", memory="Shifts last a week.", tldr="Shifts.")
    (memory,) = memorized(loose, [chunk])
    assert memory.title == "acme_robotics_rotation"


def test_a_heading_in_capitals_is_titled_as_a_reader_writes_it() -> None:
    """A sidebar's label ("TIP Pruning in frost", "BACK TO BASICS Graft unions") headed notes
    in capitals; a heading all in capitals stayed in capitals. A word the sentences write in
    capitals ("UV") is a name and stays."""
    text = (
        "# Orchard Care\n\n#### TIP Pruning in frost\n\nPrune the Marlow pears only above "
        "minus two degrees, or the cuts split along the bark.\n\n"
        "#### UV Netting\n\nThe UV netting over the Marlow pears is replaced every fourth "
        "spring, when its mesh turns brittle.\n\n"
        "#### WINTER WATERING\n\nYoung Marlow pears get ten litres every third week while "
        "the ground is not frozen."
    )
    chunks = chunks_of(text, "orchard-care.md", max_tokens=40)
    assert len(chunks) == 3
    loose = MemoryDraft(title="marlow_pears", memory="About pears.", tldr="Pears.")
    shown = [m.shown_title for m in memorized(loose, chunks)]
    ends = ("Marlow pears Pruning in frost", "Marlow pears UV Netting", "Winter Watering")
    assert all(t.endswith(end) for t, end in zip(shown, ends, strict=True)), shown
    assert not any("TIP" in t or "WINTER" in t for t in shown), shown


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
        "hollybrook_hostel_curfew.md": "Hollybrook Hostel sets a curfew at midnight.",
        "hollybrook_hostel_checkin_windows.md": "Hollybrook Hostel checks guests in by day.",
        "hollybrook_hostel_refunds.md": "Hollybrook Hostel refunds within 10 days.",
        "hollybrook_hostel_breakfast.md": "Hollybrook Hostel serves breakfast until nine.",
    }
    root = DirView("", subdirs={"hollybrook": DirView("hollybrook", files=dict(tldrs))})
    changes = ChangeSet()
    stage_readmes(changes, root, ["", "hollybrook"])
    description = parse_readme(changes.writes[f"hollybrook/{README}"]).description
    assert not COUNTED.match(description) and " on " not in description.split(":")[0][:3]
    assert description.startswith("Notes on Hollybrook Hostel: "), description
    for topic in ("curfew", "checkin windows", "refunds", "breakfast"):
        assert topic in description, description
    root_text = parse_readme(changes.writes[README]).description
    assert not COUNTED.match(root_text) and "Hollybrook" in root_text, root_text


def test_a_counted_description_of_an_earlier_version_is_written_again_in_words() -> None:
    files = {"acme_rotation.md": "Acme rotations last a week.", "acme_paging.md": "Acme pages."}
    old = "2 memories on acme, rotation and paging: Acme rotation and Acme paging."
    root = DirView("", subdirs={"acme": DirView("acme", description=old, files=files)})
    changes = ChangeSet()
    stage_readmes(changes, root, ["acme"])
    description = parse_readme(changes.writes[f"acme/{README}"]).description
    assert description == "Notes on Acme: rotation and paging.", description


def _gizmo_parts() -> list[MemorizedChunk]:
    return document_parts(
        {
            "Participant's Contributor Version": "The contributor version is defined.",
            "TERMINATION": "Rights end when terms are broken.",
        }
    )


PARTS_AS_WRITTEN = (
    "Notes from Gizmo Licence 2.0: Participant's Contributor Version and TERMINATION."
)


def test_a_readme_written_after_an_add_names_the_parts_as_their_titles_write_them() -> None:
    """A folder an add makes with no description of its own is described from its notes:
    each part as the title a reader sees writes it, not as its file name's lowercased
    words ("participant contributor version")."""
    root = DirView("", subdirs={"gizmo": DirView("gizmo")})
    changes = ChangeSet()
    for memory in _gizmo_parts():
        place_memory(changes, root.subdirs["gizmo"], memory)
    stage_readmes(changes, root, ["gizmo"])
    description = parse_readme(changes.writes[f"gizmo/{README}"]).description
    assert description == PARTS_AS_WRITTEN, description


def test_a_readme_rewritten_from_notes_on_disk_names_the_parts_as_written(tmp_path: Path) -> None:
    """The titles and documents come from the notes' front matter when a folder is read
    back from disk (a reorganization, a README a person emptied); a note not read leaves
    the description to the file names."""
    folder = MemoryFolder(tmp_path)
    changes = ChangeSet()
    view = DirView("", subdirs={"gizmo": DirView("gizmo")})
    for memory in _gizmo_parts():
        place_memory(changes, view.subdirs["gizmo"], memory)
    for rel, text in changes.writes.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    root = folder.load_view()
    unread = ChangeSet()
    stage_readmes(unread, root, ["gizmo"])
    by_names = parse_readme(unread.writes[f"gizmo/{README}"]).description
    assert by_names.lower().startswith("notes on gizmo licence: participant contributor"), by_names
    folder.read_fronts(root.subdirs["gizmo"])
    read = ChangeSet()
    stage_readmes(read, root, ["gizmo"])
    assert parse_readme(read.writes[f"gizmo/{README}"]).description == PARTS_AS_WRITTEN


def test_a_folder_a_reorganization_makes_names_the_parts_its_notes_carry(tmp_path: Path) -> None:
    """A reorganization's new folder with no description of its own is described from the
    notes moved into it: their titles and document travel with the move, so the README
    names the parts as written, not as the file names' lowercased words."""
    changes = ChangeSet()
    view = DirView("")
    for memory in _gizmo_parts():
        place_memory(changes, view, memory)
    for rel, text in changes.writes.items():
        (tmp_path / rel).write_text(text, encoding="utf-8")
    names = sorted(view.files)
    operation = ReorganizeOperation(
        directory="",
        new_directories=["gizmo"],
        moved_files=[(name, f"gizmo/{name}") for name in names],
    )
    staged, _ = stage_reorganization(MemoryFolder(tmp_path), operation)
    description = parse_readme(staged.writes[f"gizmo/{README}"]).description
    assert description == PARTS_AS_WRITTEN, description


def test_what_each_note_adds_is_said_without_function_words_at_its_edges() -> None:
    """Once the words every title says are out, what is left of a title ("with installing",
    "of a migration to testing") loses the function words at its edges."""
    files = {
        "tallyho_with_installing.md": "Tallyho installs from the ring.",
        "tallyho_of_a_migration_to_testing.md": "Tallyho moves to testing after 5 days.",
    }
    root = DirView("", subdirs={"tallyho": DirView("tallyho", files=files)})
    changes = ChangeSet()
    stage_readmes(changes, root, ["tallyho"])
    description = parse_readme(changes.writes[f"tallyho/{README}"]).description
    assert description == "Notes on Tallyho: installing and migration to testing.", description


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
    assert family.description.startswith("Notes from Acme on-call and Borealis on-call: ")


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
    memory = memorized_from(
        UPGRADE,
        "quillon-4.2-release-notes.md",
        MemoryDraft(
            title="quillon_4_2_release_notes_upgrading",
            tldr="Upgrading to Quillon 4.2 needs one reindex.",
            memory="Run the reindex tool once after upgrading from 4.1.",
        ),
    )
    assert memory.title == "quillon_4_2_release_notes_upgrading"
    assert memory.heading == "Quillon 4.2 Release Notes: Upgrading"
    changes, directory = ChangeSet(), DirView("notes")
    path = place_memory(changes, directory, memory)
    assert path == "notes/quillon_4_2_release_notes_upgrading.md"
    assert parse_memory(changes.writes[path]).front["title"] == memory.heading


def test_a_title_does_not_end_with_its_document_s_file_extension() -> None:
    """A small model shown "Document: quillon-upgrades.md" titles a note
    "quillon_upgrades_md": the file's extension is no word of what the note is about."""
    memory = memorized_from(
        UPGRADE,
        "quillon-upgrades.md",
        MemoryDraft(
            title="quillon_upgrades_md",
            tldr="Upgrading to Quillon 4.2 needs one reindex.",
            memory="Run the reindex tool once after upgrading from 4.1.",
        ),
    )
    assert not memory.title.endswith("_md"), memory.title
    assert "MD" not in memory.heading.split() and "md" not in memory.heading.split()


def test_a_title_keeps_how_its_words_are_written_in_as_few_phrases_as_can_be() -> None:
    from gam_desktop.engine.ingest.titles import written_title

    texts = ["Quillon 4.2 Release Notes", "Quillon's Log File", "A PTO day is eligible if …"]
    assert written_title("quillon_4_2_release_notes", texts) == "Quillon 4.2 Release Notes"
    assert written_title("quillon_s_log_file", texts) == "Quillon's Log File"
    assert written_title("notes_pto_eligible", texts) == "Notes PTO eligible"
    assert written_title("quillon_4_2_release_notes_log", texts) == (
        "Quillon 4.2 Release Notes: Log"  # the document's whole title, then the section
    )
    # two phrases one after the other keep what separates them; unknown words stay
    assert written_title("report_autumn_2019", ["Report: Autumn 2019"]) == "Report: Autumn 2019"
    assert written_title("zap_top_words", ["nothing alike"]) == "Zap top words"
    # a word no text writes in capitals and with no vowel is an initialism
    assert written_title("gpl_3_0_excerpt", ["gpl 3.0 excerpt", "Terms"]) == "GPL 3.0 excerpt"
    # a title from a file name (lowercase) takes its words' case from the passage
    assert written_title("abc_2_0_notes", ["abc 2.0 notes", "", "The ABC 2.0 says"]) == (
        "ABC 2.0 notes"
    )
    # a line break ends a phrase; a name with underscores is one word
    assert written_title("config_max_depth_a", ["CONFIG max_depth\n\nA"]) == ("CONFIG max_depth A")


def test_a_title_names_whose_document_it_is_without_its_kind() -> None:
    """The subject memory titles start with: the name, not what kind of document it is. A
    hyphenated word built on a function word describes (on-call, in-house, end-of-life);
    one without is a name and stays (Wi-Fi)."""
    from gam_desktop.engine.ingest.context import subject_of

    assert subject_of("Marlowe Lodge Check-In Policy") == ["Marlowe", "Lodge"]
    assert subject_of("Harbor Labs In-House Training Guide") == ["Harbor", "Labs", "Training"]
    assert subject_of("End-of-Life Procedure — Corvid Books") == ["Corvid", "Books"]
    assert subject_of("Wi-Fi Setup Guide") == ["Wi", "Fi", "Setup"]
    assert subject_of("Pebblecast 6.2 Release Notes") == ["Pebblecast", "6.2"]


def test_a_documents_opening_keeps_the_documents_title_when_its_parts_have_their_own() -> None:
    """Three notes of one release's notes titled alike: the opening was told apart by the
    first words its later parts lack ("widget_2_4_notes_release_date", from "Release date:
    … This release holds…"). It is what the document is: its title alone."""
    from gam_desktop.engine.ingest.titles import distinguish

    text = (
        "# Widget 2.4 notes\n\nRelease date: 2024-05-02. This release holds small fixes."
        + "\n\n" + "The spindle no longer squeaks when it turns slowly. " * 10
        + "\n\n" + "The hopper lid now closes with a softer click than before. " * 9
    )  # fmt: skip
    chunks = chunks_of(text, "widget-2.4-notes.md")
    assert len(chunks) == 3
    titles = distinguish(["widget_2_4_notes"] * len(chunks), chunks)
    assert titles[0] == "widget_2_4_notes"
    assert titles[1] == "widget_2_4_notes_spindle_no"
    assert titles[2] == "widget_2_4_notes_hopper_lid"


def test_notes_told_apart_by_their_own_words_never_take_a_section_number() -> None:
    """ "2.4" of "# 2.4. Lifecycle of a Starter" says where a passage sits, not what it is
    about: notes of a numbered document were titled with the section's number ("…: 2.4
    usually")."""
    from gam_desktop.engine.ingest.titles import distinguish

    text = (
        "# 2.4. Lifecycle of a Starter\n\nThe baker will usually keep three jars going."
        + "\n\n" + "A plain sentence follows here. " * 60
        + "\n\nThe head cook decides when a jar is retired."
    )  # fmt: skip
    chunks = chunks_of(text, "starter-lifecycle.md")
    titles = distinguish(["lifecycle_starter"] * len(chunks), chunks)
    assert len(set(titles)) == len(titles)
    assert titles[0] == "lifecycle_starter_baker_usually"
    assert not any(char.isdigit() for title in titles for char in title)


def test_notes_told_apart_by_their_headings_keep_each_heading_whole() -> None:
    """Two parts whose headings differ by a word are told apart by their whole headings as
    written ("Working with Several Hosts"), not by the words the other heading lacks
    ("several hosts"), which read as keywords."""
    text = (
        "# Tallyho Guide\n\n## Working with Several Hosts\n\nTallyho syncs every host in the "
        "ring each night at 02:00 and keeps the newest copy of each file.\n\n"
        "## Working with One Host\n\nA single Tallyho host keeps its files in one folder and "
        "never syncs; backups run weekly on Sundays at 04:00."
    )
    memories = two_parts(text, "tallyho-guide.md", 40, "tallyho_guide")
    assert [m.title for m in memories] == [
        "tallyho_guide_working_with_several_hosts",
        "tallyho_guide_working_with_one_host",
    ]
    assert [m.heading for m in memories] == [
        "Tallyho Guide: Working with Several Hosts",
        "Tallyho Guide: Working with One Host",
    ]


def test_a_file_named_by_an_initialism_titles_its_notes_in_capitals() -> None:
    """A lowercase file name gives the document's title; a word of it with no vowel is an
    initialism, and the notes' titles and the subject they are prefixed with say it so
    ("GPL 3.0 terms: …", not "gpl 3.0 terms: …" or "Gpl 3.0 terms")."""
    (chunk,) = chunks_of(
        "Copies may be sold for a fee of at most 10 euros.", "gpl-3.0-terms.txt", max_tokens=300
    )
    draft = MemoryDraft(title="fees", memory="Copies may be sold.", tldr="Copies may be sold.")
    (memory,) = memorized(draft, [chunk])
    assert memory.tldr == "GPL 3.0 terms: Copies may be sold."
    assert memory.heading == "GPL 3.0 fees"


def test_a_file_name_is_spelled_as_its_document_writes_it() -> None:
    """A lowercase file name's words are written as the document writes them inside its
    sentences ("zylodb" -> "ZyloDB", "vantor" -> "Vantor"), in the notes' titles and the
    subject their tldrs are prefixed with; a word the text capitalizes only where a sentence
    or a heading starts ("Release") stays as the file name has it."""
    text = (
        "# Release\n\nRelease 2.1 of ZyloDB was built by Vantor. The ZyloDB server now "
        "keeps 9 snapshots, as Vantor asked; this release drops the old cache.\n"
    )
    (chunk,) = chunks_of(text, "zylodb-vantor-2.1-release.md", max_tokens=300)
    draft = MemoryDraft(title="snapshots", memory="Snapshots are kept.", tldr="Nine are kept.")
    (memory,) = memorized(draft, [chunk])
    assert memory.tldr == "ZyloDB Vantor 2.1 release: Nine are kept."
    assert memory.heading.startswith("ZyloDB Vantor 2.1"), memory.heading


def test_a_folder_named_by_no_one_is_headed_by_its_name_as_its_notes_write_it() -> None:
    """A folder's README heading made from its name ("zylodb_2_1") writes the name as the
    notes it holds do ("ZyloDB 2.1"), not as "Zylodb 2 1"; a folder some title was given
    keeps it."""
    root = DirView("", title="Memory")
    root.subdirs["zylodb_2_1"] = DirView(
        "zylodb_2_1", files={"a.md": "zylodb 2.1: The ZyloDB 2.1 server keeps 9 snapshots."}
    )
    root.subdirs["gpl"] = DirView("gpl", files={"b.md": "Copies under the GPL may be sold."})
    root.subdirs["kept"] = DirView("kept", title="My own heading", files={"c.md": "Kept."})
    changes = ChangeSet()
    stage_readmes(changes, root, ["", "zylodb_2_1", "gpl", "kept"])
    titles = {p: parse_readme(t).title for p, t in changes.writes.items()}
    assert titles["zylodb_2_1/README.md"] == "ZyloDB 2.1"
    assert titles["gpl/README.md"] == "GPL"
    assert titles["kept/README.md"] == "My own heading"


def test_a_heading_the_title_already_says_in_the_plural_adds_nothing() -> None:
    """A part under "Backups" of notes titled "tallyho_backup" is told apart by words of its
    own, not by a "backups" that repeats the title."""
    text = (
        "# Tallyho\n\n## Backups\n\nTallyho copies the ring to the spare disk each night and "
        "keeps the copies for 9 nights.\n\n## Restores\n\nA restore picks one night's copy "
        "and writes it back over the ring after asking twice."
    )
    titles = [m.title for m in two_parts(text, "tallyho.md", 40, "tallyho_backup")]
    assert len(set(titles)) == 2 and not any("backup_backups" in t for t in titles), titles


def test_the_scripted_model_reads_a_plain_texts_first_line_as_its_title() -> None:
    """ "Tallyho sync" alone above its paragraphs is the title, as a model reads it: not the
    opening words of the note's tldr ("Tallyho sync Profiles hold settings.")."""
    user = "<document>\nTallyho sync\n\nProfiles hold settings. They sync daily.\n</document>"
    note = memorize(user)
    assert note["tldr"] == "Profiles hold settings."
    assert note["title"] == "tallyho_sync"
    sentence = "<document>\nProfiles hold settings.\n\nThey sync daily.\n</document>"
    assert memorize(sentence)["tldr"] == "Profiles hold settings."  # a sentence is no title
