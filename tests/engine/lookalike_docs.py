"""Look-alike documents: families that share their headings and differ in their values.

Three families (on-call policies of three companies, release notes of three versions of
one app, field reports of three researchers on the same islands), three documents each,
every document cut into the same sections. A taxonomy worth having puts each family
together; one that reads headings only sees a single family.
"""

from __future__ import annotations

from pathlib import Path

ONCALL = {
    "acme": ("Acme Robotics", 7, 15, "PagerDuty", "Dana Whitfield", 30),
    "globex": ("Globex Shipping", 14, 5, "Opsgenie", "Marco Bellini", 45),
    "initech": ("Initech Payroll", 10, 20, "VictorOps", "Priya Raman", 60),
}
RELEASES = {
    "2_1": ("2.1", 64, "sync_interval", 300, "Dark mode for the editor"),
    "2_2": ("2.2", 128, "upload_limit_mb", 50, "Offline drafts on mobile"),
    "3_0": ("3.0", 256, "retention_days", 90, "Shared workspaces for teams"),
}
FIELD = {
    "okafor": ("Dr. Amara Okafor", "North Kestrel", 41, "shearwaters", "March 2023"),
    "lindqvist": ("Dr. Erik Lindqvist", "South Kestrel", 27, "storm petrels", "June 2023"),
    "tanaka": ("Dr. Yui Tanaka", "Kestrel Reef", 63, "fur seals", "October 2023"),
}


def oncall_policy(company: str, rotation: int, ack: int, tool: str, lead: str, esc: int) -> str:
    return f"""# {company} on-call policy

## Rotation

{company} engineers join the on-call rotation for {rotation} days at a time. The rotation
is published four weeks in advance and swaps need the approval of {lead}, the on-call lead.

## Paging

Pages are sent through {tool}. An engineer acknowledges a page within {ack} minutes, day or
night; an unacknowledged page goes to the secondary engineer of the rotation.

## Escalation

An incident still open after {esc} minutes escalates to {lead}. Severity one incidents at
{company} also notify the chief technology officer and the customer support desk.
"""


def release_notes(version: str, memory: int, setting: str, default: int, feature: str) -> str:
    return f"""# Lumen Notes release {version}

## New features

Lumen Notes {version} adds one headline feature: {feature}. The desktop client now starts
with {memory} MB of cache and indexes attachments in the background.

## Changed defaults

In release {version} the setting {setting} defaults to {default}. Administrators who relied
on the previous default must set it again in the workspace configuration file.

## Fixed bugs

Release {version} fixes crashes when importing large notebooks, repairs the export of
tables to Markdown and stops duplicate reminders after the laptop wakes from sleep.
"""


def field_report(author: str, site: str, count: int, species: str, when: str) -> str:
    return f"""# Field report by {author}

## Site

{author} surveyed {site} island in the Kestrel archipelago in {when}. The landing was made
from the research vessel at dawn and the survey team camped on the eastern beach.

## Observations

The team counted {count} breeding pairs of {species} along the cliffs of {site}. Nests were
marked with numbered flags and photographed for the long term monitoring database.

## Weather

Strong westerly winds kept the boats ashore for two days of the survey on {site}. Rain
fell on most afternoons and the temperature stayed between eight and fourteen degrees.
"""


def lookalike_documents() -> dict[str, str]:
    """file name -> text, nine documents in three families."""
    docs = {f"{key}_oncall_policy.md": oncall_policy(*v) for key, v in ONCALL.items()}
    docs |= {f"lumen_release_{key}.md": release_notes(*v) for key, v in RELEASES.items()}
    docs |= {f"field_report_{key}.md": field_report(*v) for key, v in FIELD.items()}
    return docs


def family_of(source: str) -> str:
    if "oncall" in source:
        return "oncall"
    return "release" if "release" in source else "field"


def write_lookalike_documents(folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, text in lookalike_documents().items():
        path = folder / name
        path.write_text(text, encoding="utf-8")
        paths.append(path)
    return paths
