"""A scripted OpenAI-compatible server for tests, benchmarks, the demo and --self-test.

It answers `POST /v1/chat/completions` as a sensible small model would: it knows
the task by the stage our client names in a header (STAGE_HEADER, never by the wording of
a prompt), reads the material from the user message, and replies deterministically
(memories that keep the chunk's facts, taxonomies grouped by topic, placements by word
overlap). Faults can be switched on for the next N requests: malformed JSON, wrong
shape, an invalid taxonomy, 429 with Retry-After, 500, a slow reply, a stream that
stalls; and the server can refuse `json_schema`, `json_object`, `tools`, `stream` or
`stream_options` like servers that lack them. With slots (scripted_slots.py) it works on
N requests at a time, as llama-server does.

It is no model: it exists so that the app can be exercised end to end with no
network and no GPU. Standalone: python -m tests.llm_server --port 8089 --latency-ms 500
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from gam_desktop.engine.llm.protocol import STAGE_HEADER
from gam_desktop.engine.llm.tokenizer import count_tokens
from gam_desktop.engine.store.describing import describe_contents
from gam_desktop.engine.textutil import keywords
from gam_desktop.selfcheck import (
    scripted_agent,
    scripted_facts,
    scripted_reading,
    scripted_research,
)
from gam_desktop.selfcheck.scripted_embeddings import FakeEmbeddings
from gam_desktop.selfcheck.scripted_slots import Slots, write_stream

SENTENCE = re.compile(r"(?<=[.!?。！？])\s*")
# The task each stage our client names (STAGE_HEADER) is answered as. Every stage the
# engine sends has one (tests/engine/test_scripted_routing.py reads the engine's calls);
# a prompt may be reworded freely: its wording routes nothing.
STAGE_TASKS = {
    "memorize": "memorize",
    "split": "split",
    "organize": "organize",
    "place": "place",
    "describe": "describe",
    "summarize": "summarize",  # a conversation's running summary
    "read": "read",
    "chat": "chat",  # the exploring agent: tool calls, or its synthesis
    "probe": "chat",  # Test connection: the JSON it asks for, echoed
    "extract_facts": "extract_facts",
    "reconcile_facts": "reconcile_facts",
    "research_plan": "research_plan",
    "research_integrate": "research_integrate",
    "research_reflect": "research_reflect",
}
# A request without the header is another program's, forwarded by gam-serve with the
# memory's passages injected as a system message that opens with these words.
FORWARDED_TASKS = {"Passages from the user's memory": "recall"}


@dataclass
class Fault:
    # malformed_json, garbage, wrong_shape, cut_short (the reply ends inside its last
    # field but one, as at a token cap), 401, 429, 500, slow, stall (a stream that
    # stops after its first word until the client hangs up); for organize:
    # invalid_taxonomy, singleton_taxonomy, one_folder_taxonomy, generic_names
    kind: str
    times: int = 1
    task: str | None = None  # only requests of this task, or any
    seconds: float = 0.0  # for slow
    on_reask: bool = False  # also spoil the re-ask (a model that never recovers)


def _http_failure(fault: Fault | None) -> tuple[int, str, dict[str, str]] | None:
    """The HTTP error a fault stands for (429 with Retry-After, 401, 500), if any."""
    if fault is None:
        return None
    if fault.kind == "429":
        return 429, "rate limited", {"Retry-After": str(fault.seconds or 1)}
    if fault.kind == "401":
        return 401, "Incorrect API key provided", {}
    if fault.kind == "500":
        return 500, "internal error", {}
    return None


@dataclass
class ServerState:
    latency_s: float = 0.0
    # "json_schema", "json_object", "tools", "stream", "stream_options"
    reject: set[str] = field(default_factory=set)
    models: list[str] = field(default_factory=lambda: ["scripted"])  # what GET /models lists
    faults: list[Fault] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    in_flight: int = 0
    max_in_flight: int = 0  # the most requests served at once: proves client parallelism
    # Requests of a task past its count here wait for `released` (a test's fixed point in a
    # run, not a sleep): {"memorize": 2} answers two memorize calls, holds the rest.
    hold_after: dict[str, int] = field(default_factory=dict)
    released: threading.Event = field(default_factory=threading.Event)
    slots: Slots = field(default_factory=Slots)  # requests worked on at once, and counts

    def take_fault(self, task: str, named_only: bool = False) -> Fault | None:
        """The next fault for `task`: one naming it, or (unless `named_only`) one for any."""
        wanted = (task,) if named_only else (None, task)
        with self.lock:
            for fault in self.faults:
                if fault.times > 0 and fault.task in wanted:
                    fault.times -= 1
                    return fault
        return None

    def record(self, request: dict[str, Any]) -> None:
        """Keep `request`; if its task is held (`hold_after`), wait until `released`."""
        task = request["task"]
        with self.lock:
            self.requests.append(request)
            seen = len([r for r in self.requests if r["task"] == task])
        if task in self.hold_after and seen > self.hold_after[task]:
            self.released.wait(timeout=300)  # bounded: a test that forgets cannot hang a server

    def tasks(self) -> list[str]:
        return [r["task"] for r in self.requests]


# -- content-aware answers ---------------------------------------------------------


def sentences(text: str) -> list[str]:
    return [s.strip() for s in SENTENCE.split(" ".join(text.split())) if s.strip()]


def between(text: str, start: str, end: str) -> str:
    if start not in text:
        return text
    tail = text.split(start, 1)[1]
    return tail.split(end, 1)[0] if end in tail else tail


def memorize(user: str) -> dict[str, Any]:
    text = between(user, "<document>", "</document>").strip()
    lines = text.splitlines()
    # a plain text's title is its first line, alone and without a full stop, as a model
    # reads it ("Python concurrency" above its paragraphs); Markdown marks its headings
    titled = len(lines) > 2 and not lines[1].strip() and not lines[0].rstrip().endswith((".", ":"))
    if titled and not lines[0].startswith("#"):
        lines[0] = f"# {lines[0]}"
    heading = next((ln.lstrip("#").strip() for ln in lines if ln.startswith("#")), "")
    body = "\n".join(ln for ln in lines if not ln.startswith("#"))
    title_words = keywords(heading, 4) if heading else keywords(body, 3)
    # a sentence ends before a space: "4.7" and "v2.1" stay whole, as a model reads them
    parts = [s for s in re.split(r"(?<=[.!?])\s+|(?<=[。！？])", " ".join(body.split())) if s]
    parts = parts or [text[:200]]
    kept = parts[:3] + [s for s in parts[3:] if any(ch.isdigit() for ch in s)][:3]
    return {
        "title": "_".join(title_words) or "note",
        "memory": " ".join(kept),
        "tldr": parts[0][:200],
    }


def split(user: str) -> dict[str, Any]:
    stated = re.search(r"Token limit per part: (\d+)", user)
    if stated is None:
        raise ValueError("the split prompt states no token limit")
    limit = int(stated.group(1))
    starts, total = [], 0
    for match in re.finditer(r"^\[(\d+)\] \((\d+) tokens\)", user, re.MULTILINE):
        index, tokens = int(match.group(1)), int(match.group(2))
        if total and total + tokens > limit:
            starts.append(index)
            total = 0
        total += tokens
    return {"split_before": starts}


def chunk_items(user: str) -> list[dict[str, Any]]:
    items = []
    for line in user.splitlines():
        line = line.strip()
        if line.startswith("{") and '"index"' in line:
            items.append(json.loads(line))
    return items


def item_words(item: dict[str, Any]) -> set[str]:
    return set(keywords(f"{item['title'].replace('_', ' ')} {item.get('tldr', '')}", 6))


def cluster(items: list[dict[str, Any]]) -> dict[str, list[int]]:
    """Greedy grouping as a model reading titles would do it: an item joins the group of
    the item before it when they share a keyword that is not everywhere (neighbouring
    chunks usually come from one document), or any group sharing three keywords."""
    common = Counter(w for item in items for w in item_words(item))
    rare = {w for w, n in common.items() if len(items) < 6 or n <= len(items) / 3}
    groups: list[tuple[set[str], list[dict[str, Any]]]] = []
    for item in items:
        words = item_words(item)
        previous = groups[-1] if groups else None
        best = max(groups, key=lambda g: len(g[0] & words), default=None)
        if previous is not None and previous[0] & words & rare:
            target = previous
        elif best is not None and len(best[0] & words) >= 3:
            target = best
        else:
            groups.append((set(words), [item]))
            continue
        target[0].update(words & rare)
        target[1].append(item)
    named: dict[str, list[int]] = {}
    for _words, members in groups:
        counts: Counter[str] = Counter()
        position: dict[str, int] = {}
        for member in members:
            for i, word in enumerate(w for w in member["title"].split("_") if len(w) > 2):
                counts[word] += 1
                position[word] = min(position.get(word, i), i)
        name = min(counts, key=lambda w: (-counts[w], position[w], w)) if counts else "general"
        while name in named:
            name += "_more"
        named[name] = [m["index"] for m in members]
    return named


def organize(user: str) -> dict[str, Any]:
    items = chunk_items(user)
    groups = cluster(items)
    small = [t for t, idx in groups.items() if len(idx) < 3]
    if len(groups) > 1 and small:
        merged = [i for t in small for i in groups.pop(t)]
        if groups and len(merged) < 3:
            smallest = min(groups, key=lambda t: len(groups[t]))
            groups[smallest].extend(merged)
        else:  # the leftovers, named by what most of them share, as a model would
            name = group_name([it for it in items if it["index"] in merged], set(groups))
            groups[name] = merged
    by_index = {item["index"]: item for item in items}
    if len(groups) == 1 and len(next(iter(groups.values()))) > 7:  # split, don't nest
        ((topic, indices),) = groups.items()
        groups = {}
        for n, i in enumerate(range(0, len(indices), 5)):
            groups[part_name(topic, n, indices[i : i + 5], by_index, set(groups))] = indices[
                i : i + 5
            ]
    children: list[dict[str, Any]] = []
    for topic, indices in groups.items():
        node: dict[str, Any] = {
            "name": topic,
            "description": summary(by_index, indices),
            "chunk_indices": [],
        }
        if len(indices) > 7:
            parts = [indices[i : i + 5] for i in range(0, len(indices), 5)]
            taken: set[str] = {topic}
            node["children"] = []
            for n, p in enumerate(parts):
                name = part_name(topic, n, p, by_index, taken)
                taken.add(name)
                node["children"].append(
                    {
                        "name": name,
                        "chunk_indices": p,
                        "description": summary(by_index, p),
                        "children": [],
                    }
                )
        else:
            node["chunk_indices"], node["children"] = indices, []
        children.append(node)
    folders = ", ".join(node["name"].replace("_", " ") for node in children)
    return {"description": f"This memory holds {folders}.", "folders": flatten(children, "")}


def part_name(
    topic: str,
    n: int,
    indices: list[int],
    by_index: dict[int, dict[str, Any]],
    taken: set[str],
) -> str:
    """A part of a group too big for one folder, named for what is in it, as a model names
    a folder (the demo showed neural_part_1/ and neural_part_2/ for neural networks and
    transformers); numbered only when that word is taken."""
    members = [by_index[i] for i in indices if i in by_index]
    counts = Counter(w for m in members for w in set(m["title"].split("_")) if len(w) > 2)
    name = min(counts, key=lambda w: (-counts[w], w)) if counts else ""
    return name if name and name not in taken else f"{topic}_part_{n + 1}"


def group_name(members: list[dict[str, Any]], taken: set[str]) -> str:
    """The title word most of `members` share (alphabetically first on a tie), unique."""
    counts = Counter(w for m in members for w in set(m["title"].split("_")) if len(w) > 2)
    name = min(counts, key=lambda w: (-counts[w], w)) if counts else "assorted"
    while name in taken:
        name += "_more"
    return name


def summary(by_index: dict[int, dict[str, Any]], indices: list[int]) -> str:
    """A folder description as a model writes one: what its notes share, and what each
    adds ("Notes on neural networks: overfitting and training"), not a list of titles."""
    members = [by_index[i] for i in indices if i in by_index]
    return describe_contents(
        [], [m["title"] for m in members], [m.get("tldr", "") for m in members]
    )


def one_folder_taxonomy(user: str) -> dict[str, Any]:
    """What Qwen2.5-Coder-1.5B did with 37 look-alike chunks: one folder for all."""
    indices = [item["index"] for item in chunk_items(user)]
    return {
        "description": "General",
        "folders": [{"path": "topic", "description": "General", "chunks": indices}],
    }


GENERIC_FOLDERS = ("general", "misc", "other", "documents", "notes", "topics", "memories")


def generic_names(user: str) -> dict[str, Any]:
    """A sensible grouping under names that say nothing ("general", "misc", ...)."""
    plan = organize(user)
    renamed: dict[str, str] = {}
    for folder in plan["folders"]:
        top, _, rest = folder["path"].partition("/")
        if top not in renamed:
            n = len(renamed)
            word = GENERIC_FOLDERS[n % len(GENERIC_FOLDERS)]
            renamed[top] = word if n < len(GENERIC_FOLDERS) else f"{word}_{n}"
        folder["path"] = f"{renamed[top]}/{rest}" if rest else renamed[top]
        folder["description"] = "Other memories."
    return {"description": "General", "folders": plan["folders"]}


def flatten(nodes: list[dict[str, Any]], prefix: str) -> list[dict[str, Any]]:
    """A nested plan as the organize call's flat list of folders with "a/b" paths."""
    folders = []
    for node in nodes:
        path = f"{prefix}/{node['name']}" if prefix else node["name"]
        folders.append(
            {"path": path, "description": node["description"], "chunks": node["chunk_indices"]}
        )
        folders += flatten(node.get("children", []), path)
    return folders


def invalid_taxonomy(user: str) -> dict[str, Any]:
    items = chunk_items(user)
    indices = [i["index"] for i in items]
    kept = indices[1:] + indices[-1:]  # the first is missing, the last is duplicated
    return {
        "description": "broken",
        "folders": [{"path": "all", "description": "all", "chunks": kept}],
    }


def place(user: str) -> dict[str, Any]:
    dirs = re.findall(r"^- (\S+) \((leaf|parent), \d+ memories\): (.*)$", user, re.MULTILINE)
    leaves = [
        (p, set(keywords(f"{p.replace('_', ' ').replace('/', ' ')} {d}", 12)))
        for p, kind, d in dirs
        if kind == "leaf" and p != "/"
    ]
    placements = []
    for item in chunk_items(between(user, "New chunks:", "\u0000")):
        words = item_words(item)
        score, match = max(((len(w & words), p) for p, w in leaves), default=(0, None))
        fits = score >= 2
        topic = item["title"].split("_")[0] or "general"
        placements.append(
            {
                "index": item["index"],
                "directory": match if fits else topic,
                "description": "" if fits else f"Memories about {topic}.",
            }
        )
    return {"placements": placements}


# "- **name/** (5 notes): what it holds" or "- **name**: tldr", as the describe prompt lists
_LISTED = re.compile(r"^- \*\*([^*]+)\*\*(?: \((\d+) notes?\))?: ?(.*)$", re.MULTILINE)


def describe(user: str) -> dict[str, Any]:
    out = []
    for block in user.split("## ")[1:]:
        path, _, body = block.partition("\n")
        listed_here = _LISTED.findall(body)
        folders = [(n.strip("/"), int(c or 0)) for n, c, _t in listed_here if n.endswith("/")]
        titles = [n for n, _c, _t in listed_here if not n.endswith("/")]
        label = path.strip().strip("/").rsplit("/", 1)[-1]
        out.append(
            {
                "path": path.strip(),
                "title": label.replace("_", " ").title() or "Memory",
                # what the folder holds, in words, as a model says it: "Notes on neural,
                # neural overfitting, neural training" listed titles and said nothing
                "description": describe_contents(folders, titles, [t for *_, t in listed_here]),
            }
        )
    return {"directories": out}


ANSWERS = {
    "memorize": memorize,
    "split": split,
    "organize": organize,
    "place": place,
    "describe": describe,
    "extract_facts": scripted_facts.extract,
    "reconcile_facts": scripted_facts.reconcile,
    "research_plan": scripted_research.plan,
    "research_integrate": scripted_research.integrate,
    "research_reflect": scripted_research.reflect,
    "read": scripted_reading.read,
}
# Every task a request may be answered as: those of ANSWERS, and the three `_complete`
# answers itself (the exploring agent, gam-serve's forwarded request, the running summary).
ANSWERED = frozenset(ANSWERS) | {"chat", "recall", "summarize"}

# (task, fault kind) -> the answer of a model making that mistake
FAULTY_ANSWERS = {
    ("organize", "invalid_taxonomy"): invalid_taxonomy,
    ("organize", "one_folder_taxonomy"): one_folder_taxonomy,
    ("organize", "generic_names"): generic_names,
    ("research_integrate", "made_up_source"): scripted_research.integrate_made_up,
    ("research_integrate", "other_figure"): scripted_research.integrate_other_figure,
    ("research_integrate", "other_name"): scripted_research.integrate_other_name,
    ("research_integrate", "repeated"): scripted_research.integrate_repeated,
}


def task_of(messages: list[dict[str, Any]], stage: str | None = None) -> str:
    """The task of a call: the one of the stage our client names in its header
    (STAGE_HEADER; a stage of no task, a test's own, is a chat), else, for a request without
    one (another program's, through gam-serve), the opening words of what gam-serve injects
    (FORWARDED_TASKS), else a chat."""
    if stage is not None:
        return STAGE_TASKS.get(stage, "chat")
    system = next((m.get("content") or "" for m in messages if m.get("role") == "system"), "")
    opening = (task for words, task in FORWARDED_TASKS.items() if system.startswith(words))
    return next(opening, "chat")


def last_user(messages: list[dict[str, Any]]) -> str:
    return next((m.get("content") or "" for m in reversed(messages) if m.get("role") == "user"), "")


def first_user(messages: list[dict[str, Any]]) -> str:
    return next((m.get("content") or "" for m in messages if m.get("role") == "user"), "")


def answer_for(task: str, messages: list[dict[str, Any]], fault: Fault | None) -> str:
    user = first_user(messages)
    if task == "read":  # the passages come last, after the conversation so far
        earlier = [m.get("content") or "" for m in messages[:-1] if m.get("role") == "user"]
        user = "\n".join(f"Earlier: {e}" for e in earlier) + "\n" + last_user(messages)
    if fault and fault.kind == "garbage":
        return "Sure! I would be happy to help with that."
    if fault and fault.kind == "wrong_shape":
        return json.dumps({"result": "ok", "items": []})
    spoilt = FAULTY_ANSWERS.get((task, fault.kind if fault else ""))
    if spoilt is not None:
        return json.dumps(spoilt(user))
    if task == "organize" and fault and fault.kind == "singleton_taxonomy":
        folders = [
            {
                "path": f"{item['title']}_{item['index']}",
                "description": item["tldr"],
                "chunks": [item["index"]],
            }
            for item in chunk_items(user)
        ]
        return json.dumps({"description": "one folder each", "folders": folders})
    if task == "memorize" and fault and fault.kind == "headings_only":  # a lazy small model
        text = between(user, "<document>", "</document>")
        heads = [ln.lstrip("#").strip() for ln in text.splitlines() if ln.startswith("#")]
        contents = "Covers: " + ", ".join(heads or ["the section"]) + "."
        return json.dumps({"title": "overview", "memory": contents, "tldr": contents})
    if task not in ANSWERS:
        return "I can only help with memory building tasks."
    text = json.dumps(ANSWERS[task](user), ensure_ascii=False)
    if fault and fault.kind == "cut_short":  # the token cap ends the reply in its last field
        return text[: text.rfind('", "')]
    if fault and fault.kind == "malformed_json":
        return "Here you go:\n```json\n" + text[:-1].replace('":', '" :', 1) + ",\n```"
    return text


def recall(messages: list[dict[str, Any]]) -> str:
    """An answer from the memory's passages gam-serve injected: the first one, named by
    its path (a model quoting its source)."""
    system = next((m.get("content") or "" for m in messages if m.get("role") == "system"), "")
    found = re.search(r"^### (\S+) \(.*\)\n(.+)$", system, re.MULTILINE)
    if found is None:
        return "I could not find that in your memory."
    first = sentences(found.group(2))
    return f"From {found.group(1)}: {first[0] if first else found.group(2)}"


# -- HTTP ----------------------------------------------------------------------------


class Handler(BaseHTTPRequestHandler):
    server: LLMHTTPServer
    protocol_version = "HTTP/1.1"
    # Headers and body go out in two writes; with Nagle on, the client's delayed ACK
    # stalls every reply by ~40 ms, which real providers do not do.
    disable_nagle_algorithm = True

    def log_message(self, *_args: Any) -> None:
        pass

    # Called once, just before a completion's reply is written: from then on the client may
    # send its next request, so the request no longer counts as in flight.
    replying: Callable[[], None] = staticmethod(lambda: None)
    # How the request being answered wants its reply: streamed, with the usage at the end;
    # and whether a "stall" fault cuts the stream off.
    streamed: tuple[bool, bool] = (False, False)
    stall: bool = False

    def _send(self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None):
        data = json.dumps(body).encode()
        self.replying()
        if status == 200 and self.streamed[0] and "choices" in body:
            write_stream(self, body, self.streamed[1], self.stall)
            return
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def _stream(self, model: str, content: str) -> None:
        """The reply as server-sent events, a word per chunk, as OpenAI streams it."""
        self.replying()
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        words = re.findall(r"\S+\s*", content) or [""]
        deltas = [{"role": "assistant", "content": ""}, *({"content": w} for w in words), {}]
        for n, delta in enumerate(deltas):
            finish = "stop" if n == len(deltas) - 1 else None
            chunk = {
                "id": "chatcmpl-stream",
                "object": "chat.completion.chunk",
                "created": int(time.time()),
                "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }
            self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
            self.wfile.flush()
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()

    def _error(self, status: int, message: str, headers: dict[str, str] | None = None):
        self._send(
            status,
            {"error": {"message": message, "type": "invalid_request_error", "code": status}},
            headers,
        )

    def do_GET(self) -> None:
        props = self.server.state.slots.props()
        if props is not None and self.path.rstrip("/").endswith("/props"):  # llama-server's
            self._send(200, props)
            return
        if not self.path.rstrip("/").endswith("/models"):
            self._error(404, "not found")
            return
        # Only faults naming "models" spoil the list: the others are for completions.
        failure = _http_failure(self.server.state.take_fault("models", named_only=True))
        if failure is not None:
            self._error(*failure)
            return
        listed = [{"id": name, "object": "model"} for name in self.server.state.models]
        self._send(200, {"object": "list", "data": listed})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        request = json.loads(self.rfile.read(length) or b"{}")
        if self.path.rstrip("/").endswith("/embeddings"):  # the fake embedding model
            self.server.embeddings.answer(self, request)
            return
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._error(404, f"no route {self.path}")
            return
        self.server.handle_completion(self, request)


class LLMHTTPServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, port: int = 0, state: ServerState | None = None) -> None:
        super().__init__(("127.0.0.1", port), Handler)
        self.state = state or ServerState()
        self.embeddings = FakeEmbeddings()  # what /v1/embeddings answers and saw

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def handle_completion(self, handler: Handler, request: dict[str, Any]) -> None:
        state = self.state
        with state.lock:
            state.in_flight += 1
            state.max_in_flight = max(state.max_in_flight, state.in_flight)
        done = threading.Event()

        def replied() -> None:
            # Not after the reply is written: the client, answered, may already have sent its
            # next request, which would then count twice (max_in_flight one too high).
            if not done.is_set():
                done.set()
                with state.lock:
                    state.in_flight -= 1

        def before_reply() -> None:
            state.slots.before_reply(handler)  # a client gone gets no reply
            replied()

        handler.replying = before_reply  # type: ignore[method-assign]
        options = request.get("stream_options") or {}
        handler.streamed = (bool(request.get("stream")), bool(options.get("include_usage")))
        try:  # waits for a slot, and counts how the call ended
            state.slots.serve(handler, lambda: self._complete(handler, request))
        finally:
            replied()

    def _refusal(self, request: dict[str, Any], fmt: str | None) -> tuple[int, str] | None:
        """What a server lacking `json_schema`, `json_object` or `tools` answers."""
        if fmt in self.state.reject:
            return 400, f"response_format type '{fmt}' is not supported"
        if request.get("tools") and "tools" in self.state.reject:
            return 400, "tools are not supported by this server"
        if request.get("stream") and "stream" in self.state.reject:
            return 400, "streaming is not supported by this server"
        if request.get("stream_options") and "stream_options" in self.state.reject:
            return 400, "Unrecognized request argument supplied: stream_options"
        return None

    def _complete(self, handler: Handler, request: dict[str, Any]) -> None:
        state = self.state
        messages = request.get("messages") or []
        task = task_of(messages, handler.headers.get(STAGE_HEADER))
        fmt = (request.get("response_format") or {}).get("type")
        state.record(
            {
                "task": task,
                "response_format": fmt,
                "tools": bool(request.get("tools")),
                "max_tokens": request.get("max_tokens"),
                "messages": messages,
                "stream": handler.streamed,  # (streamed, with the usage asked for)
            }
        )
        refusal = self._refusal(request, fmt)
        if refusal is not None:
            handler._error(*refusal)
            return
        state.slots.work(handler, state.latency_s)  # in its slot; ClientGone on a hang-up
        fault = state.take_fault(task)
        handler.stall = bool(fault and fault.kind == "stall")
        failure = _http_failure(fault)
        if failure is not None:
            handler._error(*failure)
            return
        if fault and fault.kind == "slow":
            time.sleep(fault.seconds)
        echo = re.search(r"Reply with the JSON (\{.*\})", last_user(messages))
        if task == "chat" and echo and not request.get("tools"):  # a connection test
            self._reply(handler, request, {"role": "assistant", "content": echo.group(1)})
            return
        if task == "chat":
            self._send_chat(handler, request, fault)
            return
        if task == "recall":
            content = recall(messages)
            self._reply(handler, request, {"role": "assistant", "content": content})
            return
        if task == "summarize":
            content = scripted_agent.summarize(messages)
            self._reply(handler, request, {"role": "assistant", "content": content})
            return
        reask = "That reply was invalid" in last_user(messages)
        spoil = fault if (not reask or (fault and fault.on_reask)) else None
        content = answer_for(task, messages, spoil)
        prompt_tokens = sum(count_tokens(str(m.get("content") or "")) for m in messages)
        handler._send(
            200,
            {
                "id": f"chatcmpl-{len(state.requests)}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": request.get("model", "scripted"),
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "stop",
                        "message": {"role": "assistant", "content": content},
                    }
                ],
                "usage": {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": count_tokens(content),
                    "total_tokens": prompt_tokens + count_tokens(content),
                },
            },
        )

    def _send_chat(
        self, handler: Handler, request: dict[str, Any], fault: Fault | None = None
    ) -> None:
        """The exploring agent: a native tool call, a JSON action, or plain text. The
        "stuck_tool" fault imitates a small model repeating a made-up path."""
        messages = request.get("messages") or []
        last = last_user(messages)
        message: dict[str, Any] = {"role": "assistant"}
        if "You ran out of exploration steps" in last:
            message["content"] = scripted_agent.synthesize(messages)
        else:
            name, args = scripted_agent.next_action(scripted_agent.parse_history(messages))
            if fault and fault.kind == "stuck_tool":
                name, args = "ls", {"path": "gamedata/research"}
            if request.get("tools"):
                message["content"] = None
                message["tool_calls"] = [
                    {
                        "id": f"call_{len(messages)}",
                        "type": "function",
                        "function": {"name": name, "arguments": json.dumps(args)},
                    }
                ]
            else:
                message["content"] = json.dumps({"tool": name, "arguments": args})
        self._reply(handler, request, message)

    def _reply(self, handler: Handler, request: dict[str, Any], message: dict[str, Any]) -> None:
        if request.get("stream") and not (message.get("tool_calls") or handler.streamed[1]):
            handler._stream(request.get("model", "scripted"), message.get("content") or "")
            return  # (else `_send` streams the whole completion, tool calls and usage too)
        messages = request.get("messages") or []
        prompt_tokens = sum(count_tokens(str(m.get("content") or "")) for m in messages)
        completion = count_tokens(json.dumps(message))
        handler._send(
            200,
            {
                "id": f"chatcmpl-{len(self.state.requests)}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": request.get("model", "scripted"),
                "choices": [
                    {
                        "index": 0,
                        "message": message,
                        "finish_reason": "tool_calls" if message.get("tool_calls") else "stop",
                    }
                ],
                "usage": {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": completion,
                    "total_tokens": prompt_tokens + completion,
                },
            },
        )


class RunningServer:
    """The server on a background thread; use as a context manager."""

    def __init__(self, latency_ms: float = 0, port: int = 0, slots: int = 0) -> None:
        state = ServerState(latency_s=latency_ms / 1000, slots=Slots(slots))
        self.httpd = LLMHTTPServer(port, state)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def state(self) -> ServerState:
        return self.httpd.state

    @property
    def base_url(self) -> str:
        return self.httpd.base_url

    @property
    def embeddings(self) -> FakeEmbeddings:
        return self.httpd.embeddings

    def __enter__(self) -> RunningServer:
        self.thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def main() -> None:
    parser = argparse.ArgumentParser(description="Scripted OpenAI-compatible test server")
    # a free port unless one is asked for (8089 is where a real local model usually is)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--latency-ms", type=float, default=0)
    parser.add_argument(
        "--reject", nargs="*", default=[], help="features to refuse: json_schema json_object tools"
    )
    parser.add_argument(
        "--slots", type=int, default=0, help="requests worked on at once, the rest queued"
    )
    args = parser.parse_args()
    state = ServerState(
        latency_s=args.latency_ms / 1000, reject=set(args.reject), slots=Slots(args.slots)
    )
    httpd = LLMHTTPServer(args.port, state)
    print(f"scripted LLM server on {httpd.base_url} (model: any name)", flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        httpd.serve_forever()


if __name__ == "__main__":
    main()
