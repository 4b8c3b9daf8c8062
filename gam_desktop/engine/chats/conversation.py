"""A conversation's working memory.

Recent turns are kept verbatim within a token budget; older turns are folded into
a running summary by the LLM (or, when it fails, by keeping each answer's first
sentence), and the summary itself is capped, so a 100-turn conversation never
outgrows the context window.
"""

from __future__ import annotations

import logging

from gam_desktop.engine.chats.record import ConversationRecord
from gam_desktop.engine.llm import LLM, LLMCallFailed
from gam_desktop.engine.llm.tokenizer import count_tokens
from gam_desktop.engine.progress import CancelToken
from gam_desktop.engine.textutil import first_sentence

log = logging.getLogger(__name__)

SUMMARIZE_SYSTEM = """You are a conversation summarizer. Fold the new exchange into the \
running summary of a conversation about a knowledge base. Keep the topics, entities and \
conclusions that later questions may refer to. Reply with the new summary only, at most \
150 words."""


class Conversation:
    def __init__(self, llm: LLM | None = None, budget_tokens: int = 1500) -> None:
        self.llm = llm
        self.budget_tokens = budget_tokens
        self.turns: list[tuple[str, str]] = []  # (question, answer), oldest first
        self.summary = ""
        self.total_turns = 0
        self.folded = 0  # how many of the oldest turns the summary stands for

    @classmethod
    def restore(
        cls,
        turns: list[tuple[str, str]],
        summary: str = "",
        folded: int = 0,
        llm: LLM | None = None,
        budget_tokens: int = 1500,
    ) -> Conversation:
        """The working memory of a saved conversation: its summary, then its latest turns
        verbatim. Turns the summary does not cover yet and that do not fit the budget are
        folded without the LLM, all at once (reopening makes no call and stays fast for
        1,000 turns)."""
        conversation = cls(llm, budget_tokens)
        later = turns[folded:]
        kept = _latest_within(later, budget_tokens - _summary_cost(summary))
        if len(kept) < len(later):  # the summary will take its share of the budget
            kept = _latest_within(later, budget_tokens - _summary_cost("") - budget_tokens // 3)
        older = later[: len(later) - len(kept)]
        if older:  # folded without the LLM; only the newest of them survive the cap
            lines: list[str] = []
            for question, answer in reversed(older):
                lines.insert(0, f"Q: {question} A: {first_sentence(answer)}")
                if count_tokens(" ".join(lines)) > budget_tokens // 3:
                    break
            summary = _cap(" ".join([summary, *lines]).strip(), budget_tokens // 3)
        conversation.summary, conversation.folded = summary, folded + len(older)
        conversation.turns, conversation.total_turns = kept, len(turns)
        return conversation

    def last_question(self) -> str | None:
        return self.turns[-1][0] if self.turns else None

    def context_messages(self) -> list[dict[str, str]]:
        messages: list[dict[str, str]] = []
        if self.summary:
            messages += [
                {"role": "user", "content": "Summary of the earlier conversation: " + self.summary},
                {"role": "assistant", "content": "Noted."},
            ]
        for question, answer in self.turns:
            messages += [
                {"role": "user", "content": f"Question: {question}"},
                {"role": "assistant", "content": answer},
            ]
        return messages

    def tokens(self) -> int:
        return sum(count_tokens(m["content"]) for m in self.context_messages())

    def add(self, question: str, answer: str, cancel: CancelToken | None = None) -> None:
        self.turns.append((question, answer))
        self.total_turns += 1
        while len(self.turns) > 1 and self.tokens() > self.budget_tokens:
            self._fold(self.turns.pop(0), cancel)

    def _fold(self, turn: tuple[str, str], cancel: CancelToken | None) -> None:
        question, answer = turn
        exchange = f"Q: {question}\nA: {answer}"
        summary = None
        if self.llm is not None:
            user = f"Running summary:\n{self.summary or '(empty)'}\n\nNew exchange:\n{exchange}"
            try:
                summary = self.llm.text(
                    [
                        {"role": "system", "content": SUMMARIZE_SYSTEM},
                        {"role": "user", "content": user},
                    ],
                    stage="summarize",
                    max_tokens=400,
                    cancel=cancel,
                )
            except LLMCallFailed as exc:
                log.info("summary without the LLM: %s", exc)
        if not summary or not summary.strip():
            summary = f"{self.summary} Q: {question} A: {first_sentence(answer)}".strip()
        self.summary = _cap(summary.strip(), self.budget_tokens // 3)
        self.folded += 1

    def clear(self) -> None:
        self.turns.clear()
        self.summary = ""
        self.total_turns = 0
        self.folded = 0


def _latest_within(turns: list[tuple[str, str]], budget: int) -> list[tuple[str, str]]:
    """The latest turns whose context fits `budget` (always the last one)."""
    kept: list[tuple[str, str]] = []
    for question, answer in reversed(turns):
        budget -= count_tokens(f"Question: {question}") + count_tokens(answer)
        if kept and budget < 0:
            break
        kept.insert(0, (question, answer))
    return kept


def _summary_cost(summary: str) -> int:
    """What the summary adds to the context (as context_messages sends it)."""
    return count_tokens(f"Summary of the earlier conversation: {summary}") + count_tokens("Noted.")


def working_memory(
    record: ConversationRecord, llm: LLM | None = None, budget_tokens: int = 1500
) -> Conversation:
    """A saved conversation's working memory, rebuilt from its file without an LLM call."""
    turns = [(turn.question, turn.answer) for turn in record.turns]
    return Conversation.restore(turns, record.summary, record.summarized, llm, budget_tokens)


def _cap(text: str, tokens: int) -> str:
    """Keep the end of `text` (the most recent topics) within `tokens`."""
    if count_tokens(text) <= tokens:
        return text
    words = text.split()
    while words and count_tokens(" ".join(words)) > tokens:
        words = words[len(words) // 8 + 1 :]
    return "… " + " ".join(words)
