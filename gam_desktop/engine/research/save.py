"""A research report as a memory file: research/<date>-<slug>.md with its front matter.

The front matter names the question, the files the report cites and the model, so a saved
report is found by search like any memory and says what it was built from.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from gam_desktop.engine.research.models import ResearchReport
from gam_desktop.engine.research.report import markdown
from gam_desktop.engine.store.changeset import ChangeSet
from gam_desktop.engine.store.folder import RESEARCH_DIR
from gam_desktop.engine.store.markdown import render_memory
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
    path = report_path(report, root, now)
    return path, ChangeSet(writes={path: render(report, now)})
