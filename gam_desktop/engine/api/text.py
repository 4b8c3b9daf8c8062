"""What the front ends call on text and names: words for counts, durations and money;
which documents the app reads (and those in a folder a person chose); a note's front
matter (read by `parse_memory` alone; `split_front` only says where it ends); a research
report as Markdown; what an undo is called. None reads or writes a memory."""

from gam_desktop.engine.history.log import restore_summary, rollback_summary
from gam_desktop.engine.ingest.documents import READABLE, SUPPORTED_SUFFIXES, files_in, is_supported
from gam_desktop.engine.ingest.estimate import duration, money
from gam_desktop.engine.ingest.summarize_again import notes_in
from gam_desktop.engine.research.report import is_report
from gam_desktop.engine.research.report import markdown as report_markdown
from gam_desktop.engine.store.markdown import (
    README,
    parse_memory,
    parse_time,
    split_front,
)
from gam_desktop.engine.store.naming import stored_name
from gam_desktop.engine.textutil import plural

__all__ = [
    "READABLE",
    "README",
    "SUPPORTED_SUFFIXES",
    "duration",
    "files_in",
    "is_report",
    "is_supported",
    "money",
    "notes_in",
    "parse_memory",
    "parse_time",
    "plural",
    "report_markdown",
    "restore_summary",
    "rollback_summary",
    "split_front",
    "stored_name",
]
