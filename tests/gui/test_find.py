"""Find (issue 13, item 8): the box over the tree filters it by title and path (matching
memories with their folders) and searches the text (BM25, with snippets) whose hits open in
the preview and are highlighted in the tree; the tree's context menu (item 7) opens an item
in the person's editor or shows it in the file manager."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import pytest
from PySide6.QtCore import Qt, QUrl
from PySide6.QtWidgets import QApplication, QListWidgetItem

from gam_desktop.engine.progress import CancelToken, OperationCancelled
from gam_desktop.engine.retrieval import find
from gam_desktop.engine.retrieval.find import Found, marks, title_of
from gam_desktop.engine.store.markdown import render_memory
from gam_desktop.engine.workflow import Workflow
from gam_desktop.gui import find_panel
from gam_desktop.gui.find_panel import PATH_ROLE as HIT_PATH
from gam_desktop.gui.tree_panel import MAX_MATCHES, PATH_ROLE, reveal
from tests.gui.test_main_window import SAMPLES, built, idle, wait

NOTE = "neural/island_notes.md"  # a memory whose title is not its name


def with_a_note(qtbot, window, memory: Path) -> None:
    """The three samples built, and a memory written by hand: "Quokka habitats"."""
    built(qtbot, window, memory, SAMPLES)
    (memory / NOTE).write_text(
        render_memory({"title": "Quokka habitats"}, "Quokkas live on Rottnest Island.")
    )
    wait(qtbot, lambda: window.tree.memory_count() == 11)


def shown_in_tree(window) -> list[str]:
    return window.tree.matches()


def type_in_box(qtbot, window, text: str) -> None:
    box = window.find_panel.box
    box.clear()
    qtbot.keyClicks(box, text)


def hits(window) -> list[str]:
    panel = window.find_panel
    return [panel.hits.item(i).data(HIT_PATH) for i in range(panel.hits.count())]


def click_hit(qtbot, window, item: QListWidgetItem) -> None:
    rect = window.find_panel.hits.visualItemRect(item)
    qtbot.mouseClick(
        window.find_panel.hits.viewport(), Qt.MouseButton.LeftButton, pos=rect.center()
    )


def test_the_filter_shows_matching_titles_and_paths_with_their_folders(
    qtbot, window, tmp_path
) -> None:
    with_a_note(qtbot, window, tmp_path / "memory")
    type_in_box(qtbot, window, "quokka")  # the title only: the file is island_notes.md
    wait(qtbot, lambda: shown_in_tree(window) == ["neural", NOTE])
    folder = window.tree.item_at("neural")
    assert folder.isExpanded() and folder.text(0) == "neural  (1 of 6)"
    assert window.tree.item_at(NOTE).text(0) == "Quokka habitats"
    type_in_box(qtbot, window, "BERT transformers_")  # the path, in any case, in any order
    wait(
        qtbot,
        lambda: shown_in_tree(window) == ["transformers", "transformers/transformers_bert.md"],
    )
    type_in_box(qtbot, window, "Neural")  # a folder's name: the folder, whole
    wait(qtbot, lambda: shown_in_tree(window)[:1] == ["neural"])
    window.tree.item_at("neural").setExpanded(True)
    assert NOTE in shown_in_tree(window) and len(shown_in_tree(window)) == 8  # + overview
    type_in_box(qtbot, window, "wombat")
    wait(qtbot, lambda: shown_in_tree(window) == [])
    assert window.find_panel.note.text() == "No title or path matches."


def test_clearing_the_filter_gives_the_tree_back_as_it_was(qtbot, window, tmp_path) -> None:
    memory = tmp_path / "memory"
    with_a_note(qtbot, window, memory)
    window.tree.item_at("transformers").setExpanded(True)
    window.open_file("transformers/transformers_gpt.md")
    before = shown_in_tree(window)
    type_in_box(qtbot, window, "quokka")
    wait(qtbot, lambda: shown_in_tree(window) == ["neural", NOTE])
    assert window.tree.currentItem() is None  # the memory on show does not match
    qtbot.keyClick(window.find_panel.box, Qt.Key.Key_Escape)
    assert window.find_panel.box.text() == ""
    assert shown_in_tree(window) == before
    assert not window.tree.item_at("neural").isExpanded()
    assert window.tree.currentItem().data(0, PATH_ROLE) == "transformers/transformers_gpt.md"
    assert not window.find_panel.results.isVisible()
    assert window.preview.path == "transformers/transformers_gpt.md"  # never left it


def test_a_search_hit_opens_in_the_preview_and_is_highlighted_in_the_tree(
    qtbot, window, tmp_path
) -> None:
    with_a_note(qtbot, window, tmp_path / "memory")
    type_in_box(qtbot, window, "released 2018")
    wait(qtbot, lambda: hits(window))
    panel = window.find_panel
    assert panel.results.isVisible() and panel.hits_title.text().startswith("In the text: ")
    best = panel.found[0]
    assert best.path == "transformers/transformers_bert.md"
    assert [best.snippet[a:b] for a, b in best.marks] == ["released", "2018"]
    assert "<b>2018</b>" in panel.hits.item(0).data(Qt.ItemDataRole.UserRole + 2)
    assert shown_in_tree(window) == []  # no title says so: the tree is empty...
    click_hit(qtbot, window, panel.hits.item(0))
    assert window.preview.path == best.path
    assert window.preview.original.isChecked() == best.original  # where the words are
    assert "2018" in window.preview.body.toPlainText()
    # ...but the file on show is listed and highlighted there
    assert window.tree.currentItem().data(0, PATH_ROLE) == best.path
    assert panel.hits.currentRow() == 0
    window.open_file("README.md")  # shown from elsewhere: no hit stays selected
    assert panel.hits.currentRow() == -1


def test_the_arrow_keys_go_through_the_hits(qtbot, window, tmp_path) -> None:
    with_a_note(qtbot, window, tmp_path / "memory")
    type_in_box(qtbot, window, "transformers")
    wait(qtbot, lambda: len(hits(window)) >= 3)
    panel = window.find_panel
    panel.hits.setFocus()
    panel.hits.setCurrentRow(0)
    assert window.preview.path == hits(window)[0]
    qtbot.keyClick(panel.hits, Qt.Key.Key_Down)
    assert window.preview.path == hits(window)[1]


def test_the_search_follows_the_memory(qtbot, window, tmp_path) -> None:
    memory = tmp_path / "memory"
    built(qtbot, window, memory, SAMPLES)
    type_in_box(qtbot, window, "wombats")
    wait(qtbot, lambda: window.find_panel.hits_title.text().startswith("Nothing in the text"))
    (memory / "neural" / "wombats.md").write_text(
        render_memory({"title": "Burrows"}, "Wombats dig burrows and leave cubic droppings.")
    )
    wait(qtbot, lambda: hits(window) == ["neural/wombats.md"])
    assert window.find_panel.found[0].title == "Burrows"
    assert shown_in_tree(window) == ["neural", "neural/wombats.md"]  # its name


def test_enter_opens_the_first_match_and_down_goes_to_the_tree(qtbot, window, tmp_path) -> None:
    with_a_note(qtbot, window, tmp_path / "memory")
    type_in_box(qtbot, window, "quokka")
    wait(qtbot, lambda: NOTE in shown_in_tree(window))
    qtbot.keyClick(window.find_panel.box, Qt.Key.Key_Return)
    assert window.preview.path == NOTE
    assert window.tree.currentItem().data(0, PATH_ROLE) == NOTE
    type_in_box(qtbot, window, "convolutional")
    wait(qtbot, lambda: "neural/neural_convolutional_networks.md" in shown_in_tree(window))
    window.activateWindow()
    window.find_panel.box.setFocus()
    qtbot.keyClick(window.find_panel.box, Qt.Key.Key_Down)
    wait(qtbot, lambda: window.tree.hasFocus())


def test_find_focuses_the_box(qtbot, window, tmp_path) -> None:
    built(qtbot, window, tmp_path / "memory", SAMPLES[:1])
    window.activateWindow()
    window.chat.input.setFocus()
    window.find_panel.box.setText("old words")
    window.show_find()  # Edit ▸ Find, Ctrl+F
    wait(qtbot, lambda: QApplication.focusWidget() is window.find_panel.box)
    assert window.find_panel.box.selectedText() == "old words"  # typing replaces them
    assert window.find_panel.box.accessibleName() == "Find in this memory"
    find = getattr(getattr(window, "menus", None), "find", None)
    if find is not None:  # the menu's action reaches the same box
        window.chat.input.setFocus()
        find.trigger()
        wait(qtbot, lambda: QApplication.focusWidget() is window.find_panel.box)


def test_another_memory_starts_with_an_empty_box(qtbot, window, tmp_path) -> None:
    built(qtbot, window, tmp_path / "memory", SAMPLES[:1])
    type_in_box(qtbot, window, "neural")
    wait(qtbot, lambda: idle(window) and window.tree.filtered)
    assert window.open_memory(tmp_path / "other")
    assert window.find_panel.box.text() == "" and not window.tree.filtered
    assert not window.find_panel.results.isVisible()


def test_the_tree_context_menu_opens_an_item_in_the_editor_and_its_folder(
    qtbot, window, recorder, tmp_path
) -> None:
    memory = tmp_path / "memory"
    built(qtbot, window, memory, SAMPLES)
    revealed: list[Path] = []
    window.show_in_folder = revealed.append
    path = "transformers/transformers_bert.md"
    menu = window.tree.menu_for(window.tree.item_at(path))
    actions = {action.text().replace("&", ""): action for action in menu.actions() if action.text()}
    assert list(actions) == ["Open in editor", "Show in folder"]
    actions["Open in editor"].trigger()
    assert recorder.opened == [QUrl.fromLocalFile(str(memory.resolve() / path))]
    assert window.preview.path == path
    actions["Show in folder"].trigger()
    assert revealed == [memory.resolve() / path]
    folder = window.tree.menu_for(window.tree.item_at("transformers"))
    actions = {a.text().replace("&", ""): a for a in folder.actions() if a.text()}
    assert list(actions) == ["Open overview in editor", "Show in folder", "Reorganize this folder…"]
    actions["Open overview in editor"].trigger()
    assert recorder.opened[-1] == QUrl.fromLocalFile(
        str(memory.resolve() / "transformers/README.md")
    )


@pytest.mark.skipif(sys.platform in ("win32", "darwin"), reason="Explorer and Finder select it")
def test_show_in_folder_opens_the_folder_holding_the_file(tmp_path) -> None:
    file = tmp_path / "a" / "b.md"
    file.parent.mkdir()
    file.write_text("x")
    opened: list[QUrl] = []
    reveal(file, opened.append)
    reveal(file.parent, opened.append)
    assert opened == [QUrl.fromLocalFile(str(file.parent))] * 2


def test_the_workflow_finds_by_text_and_by_title(make_workflow) -> None:
    workflow = make_workflow(max_tokens=200)
    workflow.add(SAMPLES)
    found = workflow.search("When was BERT released?")
    assert found[0].path == "transformers/transformers_bert.md"
    assert len({hit.path for hit in found}) == len(found)  # one per file
    assert not found[0].snippet.startswith("[")  # the wording, not the index's header
    titles = workflow.titles()
    assert titles["transformers/transformers_bert.md"] == "Transformers: BERT"  # as written
    assert titles["transformers/README.md"] == "Transformers"
    assert workflow.search("   ") == []


def test_titles_and_marks() -> None:
    assert title_of("a/x.md", "---\ntitle: 'BERT: it''s old'\n---\nbody") == "BERT: it's old"
    assert title_of("facts/f.md", "---\nstatement: The user likes jazz\n---\n") == (
        "The user likes jazz"
    )
    assert title_of("a/README.md", "# Transformers\n\nText") == "Transformers"
    assert title_of("a/plain.md", "no front matter") == "plain"
    text = "BERT was released in 2018; gil_python_thread"
    assert [text[a:b] for a, b in marks(text, {"releas", "2018", "thread"})] == [
        "released",
        "2018",
        "thread",
    ]


def write_by_hand(memory: Path, titles: dict[str, str]) -> None:
    for path, title in titles.items():
        (memory / path).parent.mkdir(parents=True, exist_ok=True)
        (memory / path).write_text(render_memory({"title": title}, f"{title}: by hand."))


def test_titles_read_for_one_memory_never_filter_the_next(
    qtbot, window, tmp_path, monkeypatch, request
) -> None:
    """A read of memory A's titles still under way when B opened used to hold B's back
    (B waited for it) and then be handed to B's tree: B's notes/a.md answered to A's title."""
    first, second = tmp_path / "first", tmp_path / "second"
    write_by_hand(first, {"notes/a.md": "Quokka habitats"})
    write_by_hand(second, {"notes/a.md": "Wombat burrows"})  # the same path, another title
    entered, release = threading.Event(), threading.Event()
    request.addfinalizer(release.set)  # never left waiting, whatever happens
    original = Workflow.titles

    def held(self: Workflow) -> dict[str, str]:
        if self.folder.root != first.resolve():
            return original(self)
        entered.set()  # the first memory's read: held, then answering whatever happened
        release.wait(60)  # (as a read past its last check for a cancel would)
        return find.titles(self.search_tools())

    monkeypatch.setattr(Workflow, "titles", held)
    assert window.open_memory(first)
    window.find_panel.box.setText("quokka")  # pasted: one read of the titles asked
    wait(qtbot, entered.is_set)  # A's titles are being read...
    assert window.open_memory(second)  # ...when B opens: B's are read at once
    type_in_box(qtbot, window, "wombat")
    wait(qtbot, lambda: shown_in_tree(window) == ["notes", "notes/a.md"])
    assert window.tree.item_at("notes/a.md").text(0) == "Wombat burrows"
    release.set()
    wait(qtbot, lambda: not window.tasks.running("titles"))  # A's read has ended: dropped
    assert shown_in_tree(window) == ["notes", "notes/a.md"]
    assert window.tree.item_at("notes/a.md").text(0) == "Wombat burrows"
    type_in_box(qtbot, window, "quokka")
    wait(qtbot, lambda: window.find_panel.note.text() == "No title or path matches.")
    assert shown_in_tree(window) == []


def test_the_filter_narrows_the_tree_already_read(qtbot, window, tmp_path) -> None:
    """Each keystroke used to read the whole folder again (load_view): now only a change
    to the memory does."""
    memory = tmp_path / "memory"
    write_by_hand(memory, {"animals/a.md": "Quokka habitats", "animals/b.md": "Wombat burrows"})
    assert window.open_memory(memory)
    type_in_box(qtbot, window, "quokka")
    wait(qtbot, lambda: shown_in_tree(window) == ["animals", "animals/a.md"])
    view = window.tree.view  # the whole tree, read for the filter
    qtbot.keyClicks(window.find_panel.box, " hab")
    wait(qtbot, lambda: not window.find_panel.filter_timer.isActive() and idle(window))
    assert shown_in_tree(window) == ["animals", "animals/a.md"]
    assert window.tree.view is view  # filtered, not read again
    write_by_hand(memory, {"animals/c.md": "Quokka diet"})  # the memory changed: read again
    wait(qtbot, lambda: window.tree.view is not view)
    type_in_box(qtbot, window, "quokka")
    wait(qtbot, lambda: shown_in_tree(window) == ["animals", "animals/a.md", "animals/c.md"])


def test_the_filter_lists_the_first_matches_and_says_how_many_there_are(
    qtbot, window, tmp_path
) -> None:
    memory = tmp_path / "memory"
    count = MAX_MATCHES + 1
    write_by_hand(memory, {f"many/n{i:03d}.md": f"Note {i}" for i in range(count)})
    assert window.open_memory(memory)
    type_in_box(qtbot, window, "note")  # every title, no path
    note = window.find_panel.note
    wait(qtbot, lambda: window.tree.capped)
    assert note.text() == (
        f"The first {MAX_MATCHES} of {count} matches are listed — type more to narrow."
    )
    assert not note.isHidden()
    listed = [path for path in shown_in_tree(window) if path.endswith(".md")]
    assert len(listed) == MAX_MATCHES and window.tree.item_at("many").text(0) == (
        f"many  ({MAX_MATCHES} of {count})"
    )
    qtbot.keyClicks(window.find_panel.box, " 42")  # narrower: all of them listed
    wait(qtbot, lambda: "many/n042.md" in shown_in_tree(window) and not window.tree.capped)
    with_42 = [f"many/n{i:03d}.md" for i in range(count) if "42" in str(i)]  # 42, 142, …
    assert note.isHidden() and shown_in_tree(window) == ["many", *with_42]


def test_only_the_latest_search_runs(qtbot, window, tmp_path, monkeypatch, request) -> None:
    """Each pause in typing started a search that was never cancelled: a slow one kept
    running (and holding the corpus) behind the newer ones."""
    memory = tmp_path / "memory"
    others = {f"animals/other_{i}.md": f"Animal {i}" for i in range(4)}  # (BM25 needs a few)
    write_by_hand(memory, {"animals/a.md": "Quokka habitats", **others})
    asked: list[tuple[str, CancelToken]] = []
    stopped: list[str] = []
    release = threading.Event()
    request.addfinalizer(release.set)
    original = Workflow.search

    def held(self: Workflow, query: str, limit: int = 20) -> list[Found]:
        asked.append((query, self.cancel))
        if len(asked) == 1:  # the first search: held until the test lets it go
            release.wait(60)
        try:
            return original(self, query, limit)
        except OperationCancelled:
            stopped.append(query)
            raise

    monkeypatch.setattr(Workflow, "search", held)
    assert window.open_memory(memory)
    type_in_box(qtbot, window, "quokka")
    wait(qtbot, lambda: len(asked) == 1)
    qtbot.keyClicks(window.find_panel.box, " habitats")  # a pause later, a second search
    wait(qtbot, lambda: len(asked) == 2)
    assert asked[1][0] == "quokka habitats"
    assert asked[0][1].cancelled and not asked[1][1].cancelled  # the first is cancelled
    wait(qtbot, lambda: hits(window) == ["animals/a.md"])
    release.set()
    wait(qtbot, lambda: stopped == ["quokka"])  # it stopped without searching
    wait(qtbot, lambda: not window.tasks.running("find"))
    assert hits(window) == ["animals/a.md"]


def test_a_hit_in_the_original_text_opens_the_original(qtbot, window, tmp_path) -> None:
    """A hit found in a memory's original wording did nothing when that memory's summary
    was already on show (only the path was compared)."""
    with_a_note(qtbot, window, tmp_path / "memory")
    type_in_box(qtbot, window, "attention")
    wait(qtbot, lambda: any(hit.original for hit in window.find_panel.found))
    panel = window.find_panel
    row = next(i for i, hit in enumerate(panel.found) if hit.original)
    path = panel.found[row].path
    window.open_file(path)  # its summary, shown first
    assert window.preview.path == path and not window.preview.original.isChecked()
    summary = window.preview.body.toPlainText()
    click_hit(qtbot, window, panel.hits.item(row))
    assert window.preview.original.isChecked()  # where the words were found
    assert window.preview.body.toPlainText() != summary
    window.preview.original.setChecked(False)  # the person goes back to the summary
    assert (panel.shown, panel.shown_original) == (path, False)
    click_hit(qtbot, window, panel.hits.item(row))
    assert window.preview.original.isChecked()


def test_down_goes_to_the_tree_or_to_the_hits_when_no_title_matches(
    qtbot, window, tmp_path
) -> None:
    with_a_note(qtbot, window, tmp_path / "memory")
    window.activateWindow()
    type_in_box(qtbot, window, "quokka")  # a title: Down goes to the tree
    wait(qtbot, lambda: NOTE in shown_in_tree(window) and hits(window))
    window.find_panel.box.setFocus()
    qtbot.keyClick(window.find_panel.box, Qt.Key.Key_Down)
    wait(qtbot, lambda: window.tree.hasFocus())
    assert window.preview.path == NOTE
    type_in_box(qtbot, window, "released 2018")  # no title, but the text: to the hits
    wait(qtbot, lambda: hits(window) and shown_in_tree(window) == [] and idle(window))
    window.find_panel.box.setFocus()
    qtbot.keyClick(window.find_panel.box, Qt.Key.Key_Down)
    wait(qtbot, lambda: window.find_panel.hits.hasFocus())
    assert window.preview.path == hits(window)[0]  # the first hit, opened


def test_the_hits_are_counted_in_words(qtbot, window, tmp_path, monkeypatch) -> None:
    with_a_note(qtbot, window, tmp_path / "memory")
    title = window.find_panel.hits_title
    type_in_box(qtbot, window, "quokkas")
    wait(qtbot, lambda: title.text() == "In the text: 1 file")
    monkeypatch.setattr(find_panel, "LIMIT", 3)  # as many as the list holds: the best
    type_in_box(qtbot, window, "transformers")
    wait(qtbot, lambda: title.text() == "In the text: the 3 best matches")


def test_an_overview_is_named_alike_in_the_tree_the_preview_and_the_hits(
    qtbot, window, tmp_path
) -> None:
    with_a_note(qtbot, window, tmp_path / "memory")
    readme = "transformers/README.md"
    window.tree.item_at("transformers").setExpanded(True)
    assert window.tree.item_at(readme).text(0) == "Overview of transformers"
    assert window.tree.item_at("README.md").text(0) == "Overview of this memory"
    window.open_file(readme)
    assert window.preview.title.text() == "Overview of transformers"
    window.open_file("README.md")
    assert window.preview.title.text() == "Overview of this memory"
    type_in_box(qtbot, window, "transformers")
    wait(qtbot, lambda: readme in hits(window))
    row = hits(window).index(readme)
    assert window.find_panel.hits.item(row).text().startswith("Overview of transformers: ")
    hit = window.find_panel.found[row]
    assert "<b>Overview of transformers</b>" in find_panel.hit_html(hit)
