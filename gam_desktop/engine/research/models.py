"""The typed steps of a research run: what each phase hands the next.

The model writes only the small objects (`PlanReply`, `IntegrateReply`, `ReflectReply`),
validated with pydantic; everything it cites is mapped back to files and line spans by
the engine, so a claim's source is never the model's word alone.
"""

from __future__ import annotations

from pydantic import BaseModel, Field, field_validator
from pydantic.json_schema import SkipJsonSchema

from gam_desktop.engine.models import Citation

# -- what the model writes -----------------------------------------------------------


class SubQuestion(BaseModel):
    question: str = Field(min_length=3)
    keywords: list[str] = Field(default_factory=list)  # exact terms to grep for
    folders: list[str] = Field(default_factory=list)  # where to look ("" or "/" is everywhere)
    # Set by the engine, never asked of the planner: only this source document's memories
    # are searched (research/documents.py).
    document: SkipJsonSchema[str] = ""

    @field_validator("keywords", "folders", mode="before")
    @classmethod
    def _listed(cls, value: object) -> object:
        """A small model writes one string where a list belongs."""
        return [value] if isinstance(value, str) else value


class PlanReply(BaseModel):
    sub_questions: list[SubQuestion] = Field(min_length=1, max_length=8)


class ClaimReply(BaseModel):
    text: str = Field(min_length=3)
    sources: list[str] = Field(default_factory=list)  # "E3", or a memory path

    @field_validator("sources", mode="before")
    @classmethod
    def _listed(cls, value: object) -> object:
        return [value] if isinstance(value, str) else value


class IntegrateReply(BaseModel):
    claims: list[ClaimReply] = Field(default_factory=list)


class ReflectReply(BaseModel):
    enough: bool
    new_requests: list[str] = Field(default_factory=list)  # follow-up sub-questions


# -- what the engine keeps -----------------------------------------------------------


class Excerpt(BaseModel):
    """A piece of evidence the search step found: a memory file and its line span."""

    id: str  # "E3": what the model cites
    path: str  # the memory file (relative to the memory root)
    lines: tuple[int, int]  # first and last line of the file it comes from
    text: str  # what the model is shown
    read: bool = False  # the whole file was read (cat), not only matched
    document: str | None = None  # the source document it was written from (front matter)


class SearchResult(BaseModel):
    sub_question: int  # its index in the plan
    excerpts: list[Excerpt] = Field(default_factory=list)
    missing_names: list[str] = Field(default_factory=list)  # named, and nowhere in the memory


class Claim(BaseModel):
    text: str
    sources: list[Excerpt]  # checked: every one exists and was read or matched in the run


class SectionNotes(BaseModel):
    """The running notes of one sub-question: its claims, each with its sources."""

    question: str
    claims: list[Claim] = Field(default_factory=list)
    searched: bool = False
    integrated: bool = False  # its evidence went through the integrator
    left_out: int = 0  # claims of it that failed their check


class Notes(BaseModel):
    sections: list[SectionNotes] = Field(default_factory=list)
    dropped: list[str] = Field(default_factory=list)  # claims whose citations failed the check

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
    dropped: list[str] = Field(default_factory=list)  # claims whose citation failed
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
