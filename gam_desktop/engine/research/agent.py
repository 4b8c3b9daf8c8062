"""ResearchAgent: plan → search → integrate → reflect, until the reflection says enough.

Each phase is a typed step (`research.steps`); the loop keeps the running notes, the
budget and the bookkeeping (the files read, every claim checked by `research.claims`),
reports every step live to `on_step`, and stops between steps when the cancel token is
set (OperationCancelled: nothing was written) or a limit is reached (a partial report
naming the limit).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from gam_desktop.engine.llm import LLM
from gam_desktop.engine.models import Citation
from gam_desktop.engine.progress import CancelToken
from gam_desktop.engine.research import report as reports
from gam_desktop.engine.research import steps
from gam_desktop.engine.research.budget import Budget, Limits
from gam_desktop.engine.research.claims import check_claims
from gam_desktop.engine.research.models import (
    Claim,
    ClaimReply,
    Notes,
    ResearchReport,
    SearchResult,
    SectionNotes,
    SubQuestion,
)
from gam_desktop.engine.retrieval import MemoryTools
from gam_desktop.engine.store.markdown import parse_memory
from gam_desktop.engine.textutil import plural


@dataclass
class ResearchStep:
    """One step, reported live: the phase, what it did, and the plan so far with each
    sub-question's state (ticked when answered)."""

    phase: str  # "plan", "search", "integrate", "reflect", "limit", "report"
    message: str
    iteration: int
    sub_questions: list[str] = field(default_factory=list)
    answered: list[bool] = field(default_factory=list)
    files: list[str] = field(default_factory=list)  # the files this step read


ResearchCallback = Callable[[ResearchStep], None]


class ResearchAgent:
    def __init__(
        self,
        tools: MemoryTools,
        llm: LLM,
        limits: Limits | None = None,
        on_step: ResearchCallback | None = None,
        cancel: CancelToken | None = None,
    ) -> None:
        self.tools = tools
        self.llm = llm
        self.limits = limits or Limits()
        self.on_step = on_step or (lambda _step: None)
        self.cancel = cancel or CancelToken()

    def run(self, question: str) -> ResearchReport:
        self.tools.corpus.refresh()
        budget = Budget(self.limits, self.llm.usage)
        run = _Run(question)
        self._loop(run, budget)
        report = reports.build(question, run.notes, run.missing, run.limits_hit, self._citation)
        report.notes = run.remarks
        report.files_read = sorted(run.read)
        report.iterations = run.iteration
        report.llm_calls, report.tokens = budget.calls, budget.tokens
        report.seconds = round(budget.seconds, 2)
        report.model = self.llm.settings.model
        self._emit(run, "report", f"report: {plural(len(report.sections), 'section')}")
        return report

    # -- the loop -----------------------------------------------------------------------

    def _loop(self, run: _Run, budget: Budget) -> None:
        self.cancel.raise_if_cancelled()
        if self._stopped(run, budget):
            return
        readme = self.tools.run("cat", {"file": "README.md"})
        run.saw(readme.read)
        subs, note = steps.plan(self.llm, run.question, readme.text, self.cancel)
        run.remark(note)
        run.add_sections(subs)
        self._emit(run, "plan", f"plan: {plural(len(subs), 'sub-question')}")
        for iteration in range(1, self.limits.iterations + 1):
            run.iteration = iteration
            self._search(run)
            if self._integrate(run, budget):
                return
            self.cancel.raise_if_cancelled()
            if self._stopped(run, budget):
                return
            reflection = steps.reflect(self.llm, run.question, run.notes.sections, self.cancel)
            run.remark(reflection.note)
            asked = [s.question for s in run.notes.sections]
            follow = [] if reflection.enough else steps.follow_ups(reflection.new_requests, asked)
            if not follow:
                self._emit(run, "reflect", "reflection: the evidence is enough")
                return
            shown = "; ".join(s.question for s in follow)
            if iteration == self.limits.iterations:
                run.limits_hit.append(
                    f"the iteration limit ({self.limits.iterations}) with questions open: {shown}"
                )
                self._emit(run, "limit", f"iteration limit reached; still open: {shown}")
                return
            run.add_sections(follow)
            self._emit(run, "reflect", f"reflection: not enough; next: {shown}")

    def _search(self, run: _Run) -> None:
        for i, section in enumerate(run.notes.sections):
            if section.searched:
                continue
            self.cancel.raise_if_cancelled()
            found = steps.search(self.tools, run.question, i, run.subs[i], run.ids)
            run.saw([e.path for e in found.excerpts])  # every passage shown is a file read
            section.searched = True
            run.found[i] = found
            if found.missing_names:
                run.missing[i] = "nothing in the memory mentions " + ", ".join(found.missing_names)
            files = list(dict.fromkeys(e.path for e in found.excerpts))
            self._emit(
                run,
                "search",
                f"searched “{section.question}”: {plural(len(files), 'file')} read",
                files,
            )

    def _integrate(self, run: _Run, budget: Budget) -> bool:
        """Merge what was found into the notes; True when a limit stopped the run."""
        pending = [i for i in run.found if run.found[i].excerpts and i not in run.missing]
        for i in [i for i in run.found if i not in pending]:  # nothing to integrate
            run.notes.sections[i].integrated = True
            del run.found[i]
        if not pending:
            return False
        self.cancel.raise_if_cancelled()
        if self._stopped(run, budget):
            return True
        room = budget.calls_left()
        if room < len(pending):
            run.limits_hit.append(
                f"the LLM call limit ({self.limits.llm_calls}): "
                f"{plural(len(pending) - room, 'sub-question')} not integrated"
            )
        chosen = pending[:room]

        def one(i: int) -> tuple[int, list[ClaimReply], str | None]:
            section, found = run.notes.sections[i], run.found[i]
            claims, note = steps.integrate(self.llm, run.question, section, found, self.cancel)
            return i, claims, note

        results = self.llm.parallel_map(one, chosen, cancel=self.cancel)
        for i, claims, note in results:
            run.remark(note)
            found = run.found.pop(i)
            section = run.notes.sections[i]
            section.integrated = True
            checked, dropped = check_claims(
                claims, run.question, section.question, found.excerpts, run.ids.by_id
            )
            section.claims = _merged(section.claims, checked)
            left = len(claims) - len(checked)
            section.left_out += left
            run.notes.dropped += dropped
            self._emit(
                run,
                "integrate",
                f"“{section.question}”: {plural(len(section.claims), 'claim')}"
                + (f", {plural(left, 'claim')} left out" if left else ""),
            )
        return bool(run.limits_hit)

    def _stopped(self, run: _Run, budget: Budget) -> bool:
        why = budget.exceeded()
        if why is None:
            return False
        run.limits_hit.append(why)
        self._emit(run, "limit", f"stopped at {why}")
        return True

    # -- helpers ------------------------------------------------------------------------

    def _emit(self, run: _Run, phase: str, message: str, files: list[str] | None = None) -> None:
        self.on_step(
            ResearchStep(
                phase,
                message,
                run.iteration,
                [s.question for s in run.notes.sections],
                run.notes.answered(),
                files or [],
            )
        )

    def _citation(self, path: str) -> Citation:
        """The memory's source document, span and pages, from its front matter."""
        try:
            text = (self.tools.sandbox.root / path).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return Citation(path=path)
        return Citation.from_front(path, parse_memory(text).front)


@dataclass
class _Run:
    question: str
    notes: Notes = field(default_factory=Notes)
    subs: list[SubQuestion] = field(default_factory=list)
    found: dict[int, SearchResult] = field(default_factory=dict)  # searched, not integrated
    missing: dict[int, str] = field(default_factory=dict)  # why a sub-question has no evidence
    ids: steps.ExcerptIds = field(default_factory=steps.ExcerptIds)
    read: set[str] = field(default_factory=set)
    limits_hit: list[str] = field(default_factory=list)
    remarks: list[str] = field(default_factory=list)
    iteration: int = 0

    def saw(self, read: list[str]) -> None:
        self.read.update(read)

    def add_sections(self, subs: list[SubQuestion]) -> None:
        self.subs += subs
        self.notes.sections += [SectionNotes(question=s.question) for s in subs]

    def remark(self, note: str | None) -> None:
        if note and note not in self.remarks:
            self.remarks.append(note)


def _merged(old: list[Claim], new: list[Claim]) -> list[Claim]:
    """The notes kept and the new claims, a claim stated twice kept once with the sources
    of both (a small model repeats a claim within one reply too)."""
    merged: dict[str, Claim] = {}
    for claim in [*old, *new]:
        key = claim.text.casefold().rstrip(" .")
        if key in merged:
            sources = {s.id: s for s in [*merged[key].sources, *claim.sources]}
            quotes = {(q.source, q.sentence): q for q in [*merged[key].quotes, *claim.quotes]}
            update = {"sources": list(sources.values()), "quotes": list(quotes.values())}
            merged[key] = merged[key].model_copy(update=update)
        else:
            merged[key] = claim
    return list(merged.values())
