"""A document's file name is stored safely (issue 36, the adversarial passes): a newline,
a tab, an ESC or a bidirectional override in it never reaches a note's `source:` line, the
meta file or a commit's trailers as is; it is written as an escape ("new\\nline.txt"), so
the line stays one line, a terminal showing the note is not recoloured, and the name can
still be matched to its file."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

from gam_desktop.engine.store.markdown import front_value
from gam_desktop.engine.store.naming import stored_name

NAMES = {
    "new\nline.txt": "new\\nline.txt",
    "esc\x1b]0;TITLE\x07.txt": "esc\\x1b]0;TITLE\\x07.txt",
    "tab\there.txt": "tab\\there.txt",
    "evil\u202etxt.md": "evil\\u202etxt.md",
    "café 日本.txt": "café 日本.txt",  # letters of any script stay as they are
}
_RAW = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def test_a_name_is_stored_with_its_controls_escaped() -> None:
    assert {name: stored_name(name) for name in NAMES} == NAMES


def test_names_with_controls_reach_no_note_meta_or_commit(
    make_workflow, memory_dir: Path, tmp_path: Path
) -> None:
    drop = tmp_path / "drop"
    drop.mkdir()
    for n, name in enumerate(NAMES):
        (drop / name).write_text(
            f"# Otters {n}\n\nOtters of river {n} hold hands while they sleep so they do not"
            " drift apart.\n"
        )
    report = make_workflow().add(files=sorted(drop.iterdir()))
    assert sorted(report.documents) == sorted(NAMES)  # every one added
    notes = [p for p in memory_dir.rglob("*.md") if p.name != "README.md" and ".git" not in p.parts]
    sources = {}
    for note in notes:
        text = note.read_text(encoding="utf-8")
        line = next(line for line in text.splitlines() if line.startswith("source:"))
        assert not _RAW.search(line), line
        sources[front_value(text, "source")] = line
    assert sorted(sources) == sorted(NAMES.values())  # each traceable to its file
    meta = json.loads((memory_dir / ".gam_meta.json").read_text(encoding="utf-8"))
    assert sorted(meta["source_files"]) == sorted(NAMES.values())
    log = subprocess.run(
        ["git", "log", "-1", "--format=%B"], cwd=memory_dir, capture_output=True, text=True
    ).stdout
    sources_trailer = next(line for line in log.splitlines() if line.startswith("Gam-Sources:"))
    assert not _RAW.search(sources_trailer) and "new\\nline.txt" in sources_trailer
