"""The scripted server's exploring agent: what a careful small model would do.

It reads the root README first, greps acronyms ("BERT"), otherwise follows the
README whose entries share words with the question, reads the best memory files,
falls back to bm25_search, and answers from sentences that contain the question's
words, with low confidence when nothing matched. It is deliberately gullible: a
file saying "cat <path>" makes it try that path, as a prompt-injected model would,
so that tests prove the sandbox, not the model, keeps documents from reaching out.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from gam_desktop.engine.store.markdown import parse_memory
from gam_desktop.engine.textutil import keywords

PRONOUNS = re.compile(r"\b(it|its|they|them|their|that|this|these|those)\b", re.IGNORECASE)
ACRONYM = re.compile(r"\b([A-Z][A-Z0-9]{1,})s?\b")
INJECTION = re.compile(r"\bcat\s+(\S+)")
ENTRY = re.compile(r"^- \*\*([^*]+)\*\*[^:]*: (.*)$", re.MULTILINE)


@dataclass
class History:
    question: str = ""
    earlier: list[str] = field(default_factory=list)  # earlier questions and the summary
    done: list[tuple[str, dict, str]] = field(default_factory=list)  # (tool, args, result)

    def called(self, name: str, **args: Any) -> bool:
        return any(
            n == name and all(a.get(k) == v for k, v in args.items()) for n, a, _ in self.done
        )

    def results(self, name: str) -> list[tuple[dict, str]]:
        return [(a, r) for n, a, r in self.done if n == name]

    @property
    def read(self) -> dict[str, str]:
        return {
            a.get("file", "").lstrip("/"): r
            for a, r in self.results("cat")
            if not r.startswith("error:")
        }


def stem(word: str) -> str:
    word = word.lower()
    return word[:-1] if len(word) > 3 and word.endswith("s") else word


def terms_of(text: str) -> set[str]:
    return {stem(w) for w in keywords(text, 30)} - {"explain", "compare", "work", "tell"}


def parse_history(messages: list[dict[str, Any]]) -> History:
    """What the agent asked and the tools answered so far, from either protocol."""
    history = History()
    pending: list[tuple[str, dict[str, Any]]] = []
    for message in messages:
        role, content = message.get("role"), message.get("content") or ""
        if role == "assistant":
            pending = _calls_of(message, content) or pending
        elif role == "tool" and pending:
            name, args = pending.pop(0)
            history.done.append((name, args, content))
        elif role == "user" and content.startswith("Result of ") and pending:
            for (name, args), block in zip(pending, content.split("\n\nResult of "), strict=False):
                history.done.append((name, args, block.split(":\n", 1)[-1]))
            pending = []
        elif role == "user":
            _read_user_turn(history, content)
    return history


def _calls_of(message: dict[str, Any], content: str) -> list[tuple[str, dict[str, Any]]]:
    """The tool calls of an assistant turn: native tool_calls or a JSON action."""
    if message.get("tool_calls"):
        return [
            (c["function"]["name"], json.loads(c["function"]["arguments"] or "{}"))
            for c in message["tool_calls"]
        ]
    if content.startswith("{"):
        action = json.loads(content)
        return [(action.get("tool", ""), action.get("arguments", {}))]
    return []


def _read_user_turn(history: History, content: str) -> None:
    """A question (with the root README the app read for us) or the conversation summary."""
    if content.startswith("Question: "):
        if history.question:
            history.earlier.append(history.question)
        question, _, readme = content.removeprefix("Question: ").partition(
            "\n\nThe memory's root README.md"
        )
        # Passages found by the app's search come first; this agent explores on its own.
        history.question = question.partition("\n\nPassages found by searching")[0]
        if readme:  # the app read the root README for us
            history.done.append(("cat", {"file": "README.md"}, readme.split("\n", 1)[-1]))
    elif content.startswith("Summary of the earlier conversation"):
        history.earlier.append(content)


def question_terms(history: History) -> tuple[set[str], list[str]]:
    text = history.question
    if PRONOUNS.search(text) and history.earlier:
        text += " " + history.earlier[-1]  # a follow-up: "its" refers to the last topic
    acronyms = list(dict.fromkeys(m.group(1) for m in ACRONYM.finditer(text)))
    return terms_of(text), acronyms


def next_action(history: History) -> tuple[str, dict[str, Any]]:
    """A plausible next step: obey injected instructions (the gullible part a careful
    engine must contain), read the root README, grep acronyms, read what matched,
    follow READMEs, search, read the best hits, then answer."""
    terms, acronyms = question_terms(history)
    step = (
        _injected_read(history)
        or _first_reads(history, acronyms)
        or (None if acronyms else follow_readmes(history, terms))
        or _search_step(history, terms)
    )
    return step or ("answer", compose_answer(history, terms))


def _injected_read(history: History) -> tuple[str, dict[str, Any]] | None:
    for text in history.read.values():
        for target in INJECTION.findall(text):
            if not history.called("cat", file=target):
                return "cat", {"file": target}
    return None


def _first_reads(history: History, acronyms: list[str]) -> tuple[str, dict[str, Any]] | None:
    if not history.called("cat", file="README.md"):
        return "cat", {"file": "README.md"}
    for acronym in acronyms:
        if not history.called("grep", pattern=acronym):
            return "grep", {"pattern": acronym}
    read = history.read
    return next((("cat", {"file": p}) for p in matched_files(history)[:3] if p not in read), None)


def _search_step(history: History, terms: set[str]) -> tuple[str, dict[str, Any]] | None:
    read = history.read
    if not history.results("bm25_search") and not relevant(read, terms):
        return "bm25_search", {"query": history.question}
    for _args, result in history.results("bm25_search"):
        for line in result.splitlines()[:2]:
            path = line.split(" (score", 1)[0]
            if path.endswith(".md") and path not in read and terms & terms_of(line):
                return "cat", {"file": path}
    return None


def matched_files(history: History) -> list[str]:
    paths: list[str] = []
    for _, result in history.results("grep"):
        for line in result.splitlines():
            path = line.split(":", 1)[0]
            if path.endswith(".md") and not path.endswith("README.md") and path not in paths:
                paths.append(path)
    return paths


def follow_readmes(history: History, terms: set[str]) -> tuple[str, dict] | None:
    """From each README read, step into the best-matching folder or file."""
    for readme, text in list(history.read.items()):
        if not readme.endswith("README.md"):
            continue
        folder = readme.removesuffix("README.md").rstrip("/")
        scored = sorted(
            (
                (len(terms & terms_of(f"{name.replace('_', ' ')} {desc}")), name)
                for name, desc in ENTRY.findall(text)
            ),
            reverse=True,
        )
        for score, name in scored:
            if score == 0:
                break
            path = f"{folder}/{name}" if folder else name
            if name.endswith("/"):
                sub = path.rstrip("/")
                if not history.called("ls", path=sub):
                    return "ls", {"path": sub}
                if not history.called("cat", file=f"{sub}/README.md"):
                    return "cat", {"file": f"{sub}/README.md"}
            elif not history.called("cat", file=f"{path}.md"):
                return "cat", {"file": f"{path}.md"}
    return None


def relevant(read: dict[str, str], terms: set[str]) -> list[str]:
    return [p for p, text in read.items() if not p.endswith("README.md") and terms & terms_of(text)]


def _note(text: str) -> str:
    """What a model reads in a memory file: its summary (the tldr: the body goes on from
    it) and its body; the rest of the front matter is bookkeeping."""
    parsed = parse_memory(text)
    return f"{parsed.front.get('tldr') or ''} {parsed.body}" if parsed.front else parsed.body


def compose_answer(history: History, terms: set[str]) -> dict[str, Any]:
    sentences, sources = [], []
    for path in relevant(history.read, terms):
        body = _note(history.read[path])
        for sentence in re.split(r"(?<=[.!?。])\s+", " ".join(body.split())):
            if terms & terms_of(sentence) and sentence not in sentences:
                sentences.append(sentence)
                if path not in sources:
                    sources.append(path)
    if not sentences:
        topic = " ".join(sorted(terms)) or "that"
        return {
            "text": f"I could not find information about {topic} in this memory.",
            "confidence": 0.1,
            "sources": [],
        }
    return {
        "text": " ".join(sentences[:5]),
        "sources": sources,
        "confidence": 0.9 if len(sources) > 1 else 0.8,
    }


def summarize(messages: list[dict[str, Any]]) -> str:
    user = next((m["content"] for m in messages if m.get("role") == "user"), "")
    running = user.split("New exchange:", 1)[0].removeprefix("Running summary:").strip()
    exchange = user.split("New exchange:", 1)[-1].strip()
    question = exchange.split("\n", 1)[0].removeprefix("Q: ")
    running = "" if running == "(empty)" else running
    return f"{running} Asked: {question}".strip()


def synthesize(messages: list[dict[str, Any]]) -> str:
    history = parse_history(messages)
    terms, _ = question_terms(history)
    return compose_answer(history, terms)["text"]
