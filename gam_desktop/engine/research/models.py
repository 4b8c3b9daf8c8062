"""The typed steps of a research run: what each phase hands the next.

The model writes only the small objects (`PlanReply`, `IntegrateReply`, `ReflectReply`),
validated with pydantic; every claim it writes is checked against the excerpts it was shown
(`research.claims`) and keeps the sentences that support it, as the sources write them.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field, field_validator

from gam_desktop.engine.models import Citation


def _listed(value: object) -> object:
    """A small model writes one string where a list belongs."""
    return [value] if isinstance(value, str) else value


# -- what the model writes -----------------------------------------------------------


class SubQuestion(BaseModel):
    question: str = Field(min_length=3)
    keywords: list[str] = Field(default_factory=list)  # exact terms to search for

    _keywords = field_validator("keywords", mode="before")(_listed)


class PlanReply(BaseModel):
    sub_questions: list[SubQuestion] = Field(min_length=1, max_length=8)


class ClaimReply(BaseModel):
    text: str = Field(min_length=3)
    sources: list[str] = Field(default_factory=list)  # excerpt ids: "E3"
    quotes: list[str] = Field(default_factory=list)  # its sentences, copied word for word

    _lists = field_validator("sources", "quotes", mode="before")(_listed)


class IntegrateReply(BaseModel):
    claims: list[ClaimReply] = Field(default_factory=list)


class ReflectReply(BaseModel):
    enough: bool
    new_requests: list[str] = Field(default_factory=list)  # follow-up sub-questions


# -- what the engine keeps -----------------------------------------------------------


class Excerpt(BaseModel):
    """A passage the search step found: a window of a memory's original wording."""

    id: str  # "E3": what the model cites
    path: str  # the memory file (relative to the memory root)
    lines: tuple[int, int]  # first and last line of the memory file it answers from
    text: str  # what the model is shown
    label: str = ""  # what the model is told it is: "<document> — <title>"
    document: str = ""  # its source document as a reader names it ("" for a README)


class Quote(BaseModel):
    """A sentence a claim rests on, as its excerpt writes it."""

    source: str  # the excerpt's id
    sentence: str


class Claim(BaseModel):
    text: str
    sources: list[Excerpt]  # the excerpts its sentences come from
    quotes: list[Quote] = Field(default_factory=list)


class SearchResult(BaseModel):
    sub_question: int  # its index in the plan
    excerpts: list[Excerpt] = Field(default_factory=list)
    missing_names: list[str] = Field(default_factory=list)  # asked, and nowhere in the memory


class SectionNotes(BaseModel):
    """The running notes of one sub-question: its claims, each with its sources."""

    question: str
    claims: list[Claim] = Field(default_factory=list)
    searched: bool = False
    integrated: bool = False  # its evidence went through the integrator
    left_out: int = 0  # claims of it that failed their check


class Notes(BaseModel):
    sections: list[SectionNotes] = Field(default_factory=list)
    dropped: list[str] = Field(default_factory=list)  # claims that failed their check, and why

    def answered(self) -> list[bool]:
        return [bool(s.claims) for s in self.sections]


class Reflection(BaseModel):
    enough: bool
    new_requests: list[str] = Field(default_factory=list)
    note: str | None = None  # why it decided so without the model (a failure, no budget)


class ReportSection(BaseModel):
    title: str
    claims: list[Claim]
    confidence: float


class ResearchReport(BaseModel):
    question: str
    sections: list[ReportSection] = Field(default_factory=list)
    not_said: list[str] = Field(default_factory=list)  # sub-questions with no evidence
    limits_hit: list[str] = Field(default_factory=list)  # "the token limit (4,000): …"
    dropped: list[str] = Field(default_factory=list)  # claims that failed their check
    notes: list[str] = Field(default_factory=list)  # fallbacks taken (plan failed, …)
    sources: list[str] = Field(default_factory=list)  # memory paths cited, in order
    citations: list[Citation] = Field(default_factory=list)
    files_read: list[str] = Field(default_factory=list)
    iterations: int = 0
    llm_calls: int = 0
    tokens: int = 0
    seconds: float = 0.0
    model: str = ""

    @property
    def partial(self) -> bool:
        return bool(self.limits_hit)

    def kept_form(self) -> dict[str, Any]:
        """The report as its conversation keeps it: all of it but the excerpts' text
        (windows of the notes' wording, which the report shows through its claims and
        quotes, and which would make the conversation a hit for every search of them)."""
        form = self.model_dump(mode="json")
        for section in form["sections"]:
            for claim in section["claims"]:
                for excerpt in claim["sources"]:
                    excerpt["text"] = ""
        return form

    @classmethod
    def from_kept(cls, form: dict[str, Any] | None) -> ResearchReport | None:
        """The report a conversation kept (None when there is none, or it was edited into
        something that is not a report any more)."""
        if not form:
            return None
        try:
            return cls.model_validate(form)
        except ValueError:
            return None
