"""A research report as a memory file: research/<date>-<slug>.md with its front matter.

The front matter names the question, the files the report cites and the model, so a saved
report is found by search like any memory and says what it was built from. A report saved
once is known by its text (`saved_copy`): saved again, its file is given back, never a
numbered copy; its conversation read back after a restart shows where it was saved.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from gam_desktop.engine.chats.record import ConversationRecord
from gam_desktop.engine.research.models import ResearchReport
from gam_desktop.engine.research.report import markdown
from gam_desktop.engine.store.changeset import ChangeSet
from gam_desktop.engine.store.folder import RESEARCH_DIR
from gam_desktop.engine.store.markdown import parse_memory, render_memory
from gam_desktop.engine.store.naming import sanitize_name, unique_name

KIND = "research"


def report_path(report: ResearchReport, root: Path, now: datetime) -> str:
    """research/<yyyy-mm-dd>-<slug>.md, numbered when that name is taken."""
    slug = sanitize_name(report.question, fallback="research", max_chars=50).replace("_", "-")
    folder = root / RESEARCH_DIR
    taken = [p.name for p in folder.iterdir()] if folder.is_dir() else []
    return f"{RESEARCH_DIR}/{unique_name(f'{now:%Y-%m-%d}-{slug}', taken, '.md')}"


def render(report: ResearchReport, now: datetime) -> str:
    front = {
        "title": report.question[:120],
        "kind": KIND,
        "question": report.question,
        "files": list(report.sources),
        "model": report.model,
        "created": now.isoformat(timespec="seconds"),
        "partial": report.partial,
    }
    # the title is the front matter's (a preview shows it above the body)
    return render_memory(front, markdown(report, link_prefix="../", title=False))


def stage_save(report: ResearchReport, root: Path, now: datetime) -> tuple[str, ChangeSet]:
    """The report's file and its write; a report saved already: that file, nothing written
    (a second Save made "…-2.md")."""
    saved = saved_copy(report, root)
    if saved is not None:
        return saved, ChangeSet()
    path = report_path(report, root, now)
    return path, ChangeSet(writes={path: render(report, now)})


def saved_copy(report: ResearchReport, root: Path) -> str | None:
    """The file under research/ that holds `report` as saved (its question and its text;
    one edited since is not it), or None."""
    folder = root / RESEARCH_DIR
    if not folder.is_dir() or folder.is_symlink():
        return None
    body = markdown(report, link_prefix="../", title=False).strip()
    for file in sorted(folder.glob("*.md")):
        if not file.is_file() or file.is_symlink():
            continue
        try:
            parsed = parse_memory(file.read_text(encoding="utf-8", errors="replace"))
        except OSError:
            continue
        if parsed.front.get("question") == report.question and parsed.body.strip() == body:
            return f"{RESEARCH_DIR}/{file.name}"
    return None


def saved_reports(record: ConversationRecord, root: Path) -> dict[int, str]:
    """Where each research report a conversation keeps was saved, by turn number (the
    turns whose report is in no file are left out): read back after a restart, a saved
    report shows its file, not "Save to memory" again."""
    saved = {}
    for number, turn in enumerate(record.turns, start=1):
        report = ResearchReport.from_kept(turn.report)
        path = saved_copy(report, root) if report is not None else None
        if path is not None:
            saved[number] = path
    return saved
