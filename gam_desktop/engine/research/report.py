"""The research report: sections of checked claims, what the memory does not say, limits.

Built from the notes without another LLM call: every sentence in it is a claim that passed
`claims.check_claims`, shown with the sentences of its sources it rests on, so the report
states nothing its sources do not and cites nothing the run never read.
"""

from __future__ import annotations

from collections.abc import Callable

from gam_desktop.engine.models import Citation
from gam_desktop.engine.research.models import Claim, Notes, ReportSection, ResearchReport
from gam_desktop.engine.textutil import plural

NOT_SAID = "What the memory does not say"
MARK = "*Research report: "  # how a report without its title begins


def confidence(claims: list[Claim], partial: bool) -> float:
    """More distinct files agreeing, more confidence; a run stopped by a limit, less."""
    files = {s.path for c in claims for s in c.sources}
    score = min(0.9, 0.55 + 0.15 * len(files))
    return round(score * (0.75 if partial else 1.0), 2)


def build(
    question: str,
    notes: Notes,
    missing: dict[int, str],
    limits_hit: list[str],
    citation_of: Callable[[str], Citation],
) -> ResearchReport:
    """The report of `notes`; `missing` says why a sub-question found nothing (by index)."""
    partial = bool(limits_hit)
    sections, not_said = [], []
    for i, section in enumerate(notes.sections):
        if section.claims:
            score = confidence(section.claims, partial)
            sections.append(
                ReportSection(title=section.question, claims=section.claims, confidence=score)
            )
        else:
            if i in missing:
                why = missing[i]
            elif section.left_out:  # its passages were there; what was made of them was not
                why = "every claim made of its passages failed the check (see “Claims left out”)"
            elif section.integrated or (section.searched and not partial):
                why = "no passage of the memory answers it"
            else:
                why = "not answered: the run stopped before its evidence was read"
            not_said.append(f"{section.question} — {why}")  # (": " after a "?" reads badly)
    sources = list(dict.fromkeys(s.path for sec in sections for c in sec.claims for s in c.sources))
    return ResearchReport(
        question=question,
        sections=sections,
        not_said=not_said,
        limits_hit=limits_hit,
        dropped=list(notes.dropped),
        sources=sources,
        citations=[citation_of(path) for path in sources],
    )


def markdown(
    report: ResearchReport, link_prefix: str = "", title: bool = True, level: int = 2
) -> str:
    """The report as Markdown; each claim followed by its citations, links to the memory
    files (`link_prefix` makes them relative to where the report is saved, or a scheme);
    without `title` where the question is shown already; sections at heading `level`."""
    where = {c.path: c.where() for c in report.citations}
    heading = "#" * level
    out = [f"# {report.question}", ""] if title else []
    out.append(
        f"{MARK}{plural(len(report.sections) + len(report.not_said), 'sub-question')}, "
        f"{plural(report.iterations, 'iteration')}, {plural(report.llm_calls, 'LLM call')}.*"
    )
    if report.partial:
        out += ["", "**Partial report:** the run stopped at " + "; ".join(report.limits_hit) + "."]
    for section in report.sections:
        out += [
            "",
            f"{heading} {section.title}",
            "",
            f"Confidence: {_level(section.confidence)}",
            "",
        ]
        for claim in section.claims:
            cited = "; ".join(
                _cite(s.path, s.lines, where.get(s.path), link_prefix) for s in claim.sources
            )
            shown = [" ".join(q.sentence.split()) for q in claim.quotes]  # on the item's line
            quoted = "".join(f" “{s}”" for s in dict.fromkeys(shown) if s not in claim.text)
            out.append(f"- {claim.text}{quoted} ({cited})")
    if report.not_said:
        out += ["", f"{heading} {NOT_SAID}", ""] + [f"- {line}" for line in report.not_said]
    if report.dropped:
        out += ["", f"{heading} Claims left out", "", "Their sources do not say them:", ""]
        out += [f"- {line}" for line in report.dropped]
    if report.sources:
        out += ["", f"{heading} Sources", ""]
        out += [
            f"{n}. [{path}]({link_prefix}{path})" + (f" — {where[path]}" if where.get(path) else "")
            for n, path in enumerate(report.sources, start=1)
        ]
    return "\n".join(out).strip() + "\n"


def is_report(text: str) -> bool:
    """Whether `text` is a report as `markdown` writes it without its title: a report kept
    in a conversation, read back (the window shows it as a report, not as an answer)."""
    return text.lstrip().startswith(MARK)


def _cite(path: str, lines: tuple[int, int], where: str | None, prefix: str) -> str:
    span = f":{lines[0]}" + (f"-{lines[1]}" if lines[1] != lines[0] else "")
    name = path.rsplit("/", 1)[-1]
    link = f"[{name}{span}]({prefix}{path})"
    return f"{link}, {where}" if where else link


def _level(score: float) -> str:
    word = "high" if score >= 0.7 else "medium" if score >= 0.5 else "low"
    return f"{word} ({score:.2f})"
