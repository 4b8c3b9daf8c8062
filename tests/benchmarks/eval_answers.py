"""Answer quality on look-alike documents (issue 10): the project (gam-add + gam-request)
beside a one-call BM25-top-5 baseline, on the same OpenAI-compatible server.
Prints figures; asserts nothing.

    # a real server (any OpenAI-compatible endpoint; a key only if it needs one)
    .venv/bin/python tests/benchmarks/eval_answers.py \\
        --base-url http://127.0.0.1:8089/v1 --model qwen2.5-coder-1.5b-instruct \\
        --workers 2 --timeout 300 --min-tokens 100 --max-tokens 400 --memory /tmp/lookalike-mem
    # ask again without rebuilding
    .venv/bin/python tests/benchmarks/eval_answers.py ... --memory /tmp/lookalike-mem --skip-build
    # quick smoke run against the scripted server, in-process
    .venv/bin/python tests/benchmarks/eval_answers.py --scripted --limit 5

What it does:
1. builds a memory from tests/lookalike/docs with the real `gam-add` entry point
   (`gam_desktop.cli.add_main`, in-process), unless --skip-build reuses --memory;
2. asks every question of tests/lookalike/questions.json with `gam-request --json`
   (`gam_desktop.cli.request_main`, in-process, or one subprocess per question with
   --isolate, which --question-timeout needs);
3. asks the same questions of the baseline: BM25 (rank-bm25, the project's tokenizer)
   over the paragraphs of the original documents, the top 5 paragraphs (with their file
   names) in one prompt, one chat call.

LLM calls and tokens are counted by a small HTTP proxy on 127.0.0.1 in front of the server,
from the `usage` of each reply (calls without `usage` are counted and reported as such), so
the count covers everything the project sends, whatever the engine does inside.

Scoring (automatic; answers are printed so that a person can re-judge):
- text is normalized on both sides: lowercase, Markdown emphasis dropped, "1,315" ->
  "1315", "30-minute"/"30 mins" -> "30 min", "78°C"/"78 degrees" -> "78 c", "GB",
  "days", "hours" likewise, number words two..twenty -> digits;
- a gold string matches at word boundaries (so "10 min" never matches inside "110 min");
- `answer_any`: one of them must occur; `answer_all`: each item must occur (an item may
  itself be a list of alternatives); `answer_none`: none may occur (enumerations: naming
  every look-alike is not an answer);
- kind "unanswerable": correct when the system abstains: the answer says the memory or
  documents do not hold it, or (project) the confidence is below 0.3.
Citation validity: a citation is valid when the cited file exists in the memory folder
(or, for the baseline, is one of the documents) and, for answerable questions, comes from a
gold source document: the memory's front matter `source:` (or the original text under
.gam/sources/ it points to) is one of the question's `source_docs`. A README or any file
without a `source:` exists but is not evidence and counts as off-source.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import io
import json
import os
import re
import select
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

LOOKALIKE = ROOT / "tests" / "lookalike"
DOCS = LOOKALIKE / "docs"
QUESTIONS = LOOKALIKE / "questions.json"
DOCUMENTS = LOOKALIKE / "documents.json"
TOP_K = 5
ABSTAIN_CONFIDENCE = 0.3

# -- scoring ------------------------------------------------------------------------------

_NUMBER_WORDS = {
    w: str(n)
    for n, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen "
        "fourteen fifteen sixteen seventeen eighteen nineteen twenty".split()
    )
    if n >= 2
}
_UNITS = [
    (r"minutes?|mins?", "min"),
    (r"hours?|hrs?", "h"),
    (r"days?", "day"),
    (r"weeks?", "week"),
    (r"gigabytes?|gb", "gb"),
    (r"°\s*c|º\s*c|degrees?\s+celsius|degrees?\s+c|degrees?|deg\s*c|celsius|c", "c"),
]
ABSTAIN_PHRASES = [  # an answer holding one of these says it does not know
    p.strip()
    for p in """not in the memory; not in this memory; not in the documents; not in the passages;
    no information; no specific information; no relevant information; does not contain;
    doesn't contain; do not contain; don't contain; could not find; couldn't find; cannot find;
    can't find; unable to find; did not find; didn't find; not found; not mentioned;
    does not mention; doesn't mention; do not mention; no mention; not specified;
    does not specify; doesn't specify; not provided; does not provide; doesn't provide;
    not available; do not say; does not say; doesn't say; don't say; don't know; do not know;
    not stated; does not state; not described; not covered; not included; no data; no record;
    unknown; cannot be determined; cannot answer; can't answer; unable to answer;
    unable to determine""".split(";")
]
SCAFFOLDING = [  # the agent's own tool hints, plans and protocol, given back as an answer
    p.strip()
    for p in """top-level folders are; try something else; or call answer; i'll follow;
    i will follow; let's start by; let me start by; i need to; you ran out of; {"tool";
    "arguments"; to answer this question; to determine; step-by-step; ```json; "text":;
    <tools>; </tool""".split(";")
]


def normalize(text: str) -> str:
    """The comparable form of an answer or a gold string."""
    text = text.lower().replace("\u00a0", " ").replace("\u2011", "-").replace("\u2013", "-")
    text = re.sub(r"[*`]+", "", text)
    text = re.sub(r"(?<=\d),(?=\d{3}\b)", "", text)  # 1,315 -> 1315
    text = re.sub(r"\b(" + "|".join(_NUMBER_WORDS) + r")\b", lambda m: _NUMBER_WORDS[m[1]], text)
    text = re.sub(r"(?<=\d)-(?=[a-z°º])", " ", text)  # 30-minute -> 30 minute
    for pattern, unit in _UNITS:
        text = re.sub(rf"(\d)\s*(?:{pattern})(?![a-z])", rf"\1 {unit}", text)
    return " ".join(text.split())


def occurs(gold: str, answer_norm: str) -> bool:
    """`gold` in the normalized answer at word boundaries ("10 min" is not in "110 min",
    "3.1" is not in "13.1" nor in "3.15")."""
    g = normalize(gold)
    if not g:
        return False
    before = r"(?<![\w.])" if g[0].isalnum() else ""
    after = r"(?!\w|\.\d)" if g[-1].isalnum() else ""
    return re.search(before + re.escape(g) + after, answer_norm) is not None


def abstained(answer: str, confidence: float | None = None) -> bool:
    """The system said it does not know (or, for the project, was not confident)."""
    if confidence is not None and confidence < ABSTAIN_CONFIDENCE:
        return True
    text = normalize(answer)
    return not text or any(p in text for p in ABSTAIN_PHRASES)


def flags_of(answer: str) -> list[str]:
    """What is wrong with the form of an answer, whatever its content."""
    text = answer.strip()
    flags = []
    if not text:
        flags.append("empty")
    lower = text.lower()
    if any(s in lower for s in SCAFFOLDING):
        flags.append("scaffolding")
    if text.endswith("…") or text.endswith("..."):
        flags.append("cut")
    elif text and re.search(r"[A-Za-z]$", text) and len(text) > 40:
        flags.append("no-final-punctuation")
    return flags


def score(question: dict, answer: str, confidence: float | None = None) -> dict[str, Any]:
    """The verdict on one answer: correct, abstained, and what matched or was missing."""
    did_abstain = abstained(answer, confidence)
    if question["kind"] == "unanswerable":
        return {"correct": did_abstain, "abstained": did_abstain, "missing": [], "forbidden": []}
    norm = normalize(answer)
    missing: list[str] = []
    if question.get("answer_any") and not any(occurs(g, norm) for g in question["answer_any"]):
        missing.append(" | ".join(question["answer_any"]))
    for item in question.get("answer_all", []):
        options = item if isinstance(item, list) else [item]
        if not any(occurs(g, norm) for g in options):
            missing.append(" | ".join(options))
    forbidden = [g for g in question.get("answer_none", []) if occurs(g, norm)]
    return {
        "correct": not missing and not forbidden,
        "abstained": did_abstain,
        "missing": missing,
        "forbidden": forbidden,
    }


def load_questions(path: Path = QUESTIONS) -> list[dict]:
    return json.loads(Path(path).read_text(encoding="utf-8"))


def load_documents(path: Path = DOCUMENTS) -> dict[str, dict]:
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    return {k: v for k, v in data.items() if not k.startswith("_")}


def pick(questions: list[dict], wanted: str | None, limit: int | None) -> list[dict]:
    """--questions: ids, id prefixes or kinds, comma-separated; --limit: the first N."""
    if wanted:
        keys = [k.strip() for k in wanted.split(",") if k.strip()]
        questions = [
            q for q in questions if any(q["id"].startswith(k) or q["kind"] == k for k in keys)
        ]
    return questions[:limit] if limit else questions


# -- counting proxy -----------------------------------------------------------------------


@dataclass
class Usage:
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    failed: int = 0  # non-200 replies, transport errors and abandoned calls
    no_usage: int = 0  # 200 replies without a `usage` object
    abandoned: int = 0  # the client hung up first (its own timeout): no reply, no usage

    def __sub__(self, other: Usage) -> Usage:
        return Usage(*(a - b for a, b in zip(self.astuple(), other.astuple(), strict=True)))

    def astuple(self) -> tuple[int, ...]:
        return (
            self.calls,
            self.prompt_tokens,
            self.completion_tokens,
            self.failed,
            self.no_usage,
            self.abandoned,
        )

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class _ProxyHandler(BaseHTTPRequestHandler):
    server: _ProxyServer
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def log_message(self, *_args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self._forward("GET", None)

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        self._forward("POST", self.rfile.read(length))

    def _forward(self, method: str, body: bytes | None) -> None:
        proxy = self.server.proxy
        counted = method == "POST" and self.path.rstrip("/").endswith("/chat/completions")
        headers = {
            k: v
            for k, v in self.headers.items()
            # x-gam-stage: the stage of the call, which the scripted server answers by
            if k.lower() in ("authorization", "content-type", "accept", "api-key", "x-gam-stage")
        }
        # The upstream call runs in a thread so that a client that hangs up (its timeout)
        # hangs up upstream too: a server like llama.cpp's then stops generating, as it
        # would without the proxy, instead of working on for nobody.
        upstream = proxy.connection()
        box: dict[str, Any] = {}

        def call() -> None:
            try:
                upstream.request(method, self.path, body, headers)
                response = upstream.getresponse()
                box["reply"] = (response.status, response.getheaders(), response.read())
            except (OSError, http.client.HTTPException) as exc:
                box["error"] = exc
            finally:
                upstream.close()

        worker = threading.Thread(target=call, daemon=True)
        worker.start()
        while worker.is_alive():
            worker.join(0.5)
            if worker.is_alive() and self._client_gone():
                with contextlib.suppress(OSError, AttributeError):
                    upstream.sock.shutdown(socket.SHUT_RDWR)
                if counted:
                    proxy.record(499, b"", abandoned=True)
                self.close_connection = True
                return
        if "error" in box:
            if counted:
                proxy.record(502, b"")
            message = f"proxy: upstream failed: {box['error']}"
            data = json.dumps({"error": {"message": message}}).encode()
            self._reply(502, {"Content-Type": "application/json"}, data)
            return
        status, reply_headers, data = box["reply"]
        if counted:
            proxy.record(status, data)
        keep = {k: v for k, v in reply_headers if k.lower() in ("content-type", "retry-after")}
        self._reply(status, keep, data)

    def _client_gone(self) -> bool:
        """The client closed its connection while waiting (HTTP/1.1 clients send nothing
        while a reply is pending, so a readable socket means end of file)."""
        try:
            readable, _, _ = select.select([self.connection], [], [], 0)
            return bool(readable) and self.connection.recv(1, socket.MSG_PEEK) == b""
        except OSError:
            return True

    def _reply(self, status: int, headers: dict[str, str], data: bytes) -> None:
        with contextlib.suppress(OSError):  # the client gave up (its own timeout)
            self.send_response(status)
            for key, value in headers.items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)


class _ProxyServer(ThreadingHTTPServer):
    daemon_threads = True
    proxy: CountingProxy


class CountingProxy:
    """An OpenAI-compatible pass-through on 127.0.0.1 that counts chat completions and
    the tokens in their `usage`, per phase ("build", "project", "baseline")."""

    def __init__(self, upstream_base_url: str, timeout: float = 3600) -> None:
        parts = urllib.parse.urlsplit(upstream_base_url.rstrip("/"))
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) URL: {upstream_base_url}")
        self.upstream = parts
        self.prefix = parts.path  # the proxy serves the same path: /v1/chat/completions
        self.timeout = timeout
        self.lock = threading.Lock()
        self.total = Usage()
        self.phases: dict[str, Usage] = defaultdict(Usage)
        self.phase = "other"
        self.httpd = _ProxyServer(("127.0.0.1", 0), _ProxyHandler)
        self.httpd.proxy = self
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}{self.prefix}"

    def connection(self) -> http.client.HTTPConnection:
        kind = http.client.HTTPSConnection if self.upstream.scheme == "https" else None
        kind = kind or http.client.HTTPConnection
        return kind(self.upstream.hostname, self.upstream.port, timeout=self.timeout)

    def record(self, status: int, data: bytes, abandoned: bool = False) -> None:
        prompt = completion = 0
        missing = False
        if status == 200:
            usage = _usage_of(data)
            missing = usage is None
            prompt, completion = usage or (0, 0)
        with self.lock:
            for usage in (self.total, self.phases[self.phase]):
                usage.calls += 1
                usage.prompt_tokens += prompt
                usage.completion_tokens += completion
                usage.failed += status != 200
                usage.no_usage += missing
                usage.abandoned += abandoned

    def snapshot(self) -> Usage:
        with self.lock:
            return Usage(*self.total.astuple())

    def __enter__(self) -> CountingProxy:
        self.thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def _usage_of(data: bytes) -> tuple[int, int] | None:
    """(prompt, completion) tokens from a JSON reply or the last usage of an SSE stream."""
    payloads: list[Any] = []
    with contextlib.suppress(ValueError):
        payloads.append(json.loads(data))
    if not payloads:
        for line in data.decode("utf-8", "replace").splitlines():
            if line.startswith("data:") and "usage" in line:
                with contextlib.suppress(ValueError):
                    payloads.append(json.loads(line[5:]))
    for payload in reversed(payloads):
        usage = payload.get("usage") if isinstance(payload, dict) else None
        if isinstance(usage, dict) and usage.get("prompt_tokens") is not None:
            return int(usage["prompt_tokens"]), int(usage.get("completion_tokens") or 0)
    return None


# -- the project --------------------------------------------------------------------------


@dataclass
class Server:
    base_url: str  # the proxy's
    model: str
    timeout: float | None = None
    api_key: str | None = None


def build_memory(
    memory: Path,
    docs: Path,
    server: Server,
    workers: int | None = None,
    min_tokens: int | None = None,
    max_tokens: int | None = None,
    files: list[Path] | None = None,
) -> dict[str, Any]:
    """`gam-add` through its real entry point, in-process."""
    from gam_desktop.cli import add_main

    argv = ["--gam-dir", str(memory), "--base-url", server.base_url, "--model", server.model]
    argv += ["--files", *[str(f) for f in (files or [docs])], "-q"]
    if workers:
        argv += ["--workers", str(workers)]
    if server.timeout:
        argv += ["--timeout", str(server.timeout)]
    if min_tokens:
        argv += ["--min-tokens", str(min_tokens)]
    if max_tokens:
        argv += ["--max-tokens", str(max_tokens)]
    out, err = io.StringIO(), io.StringIO()
    start = time.perf_counter()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = add_main(argv)
    return {
        "exit_code": code,
        "seconds": time.perf_counter() - start,
        "stdout": out.getvalue().strip(),
        "stderr": err.getvalue().strip(),
        "argv": ["gam-add", *argv],
    }


_REQUEST_SNIPPET = (
    "import sys; from gam_desktop.cli import request_main; sys.exit(request_main(sys.argv[1:]))"
)


def ask_project(
    memory: Path,
    question: str,
    server: Server,
    max_iterations: int | None = None,
    isolate: bool = False,
    question_timeout: float | None = None,
    extra: list[str] | None = None,
) -> dict[str, Any]:
    """`gam-request --json` (with `extra` arguments) through its real entry point; the
    ChatResult as a dict, or {"error": ...}."""
    argv = ["--gam-dir", str(memory), "--query", question, "--json", *(extra or [])]
    argv += ["--base-url", server.base_url, "--model", server.model, "-q"]
    if server.timeout:
        argv += ["--timeout", str(server.timeout)]
    if max_iterations:
        argv += ["--max-iterations", str(max_iterations)]
    if isolate:
        env = dict(
            os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
        )
        try:
            done = subprocess.run(
                [sys.executable, "-c", _REQUEST_SNIPPET, *argv],
                capture_output=True,
                text=True,
                timeout=question_timeout,
                env=env,
            )
        except subprocess.TimeoutExpired:
            return {"error": f"no answer within {question_timeout} s (killed)"}
        code, stdout, stderr = done.returncode, done.stdout, done.stderr
    else:
        from gam_desktop.cli import request_main

        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = request_main(argv)
            except SystemExit as exc:  # argparse
                code = exc.code if isinstance(exc.code, int) else 2
            except Exception as exc:  # an engine bug is a result too, not a crashed benchmark
                code = 1
                print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
        stdout, stderr = out.getvalue(), err.getvalue()
    if code != 0:
        return {"error": f"exit {code}: {stderr.strip()[-300:]}"}
    try:
        return json.loads(stdout)
    except ValueError:
        return {"error": f"not JSON: {stdout[:200]!r}"}


# -- the baseline -------------------------------------------------------------------------

BASELINE_SYSTEM = (
    "You answer questions using only the numbered passages you are given. Each passage "
    "says which document it comes from. Answer briefly, in one to three sentences. If the "
    "passages do not contain the answer, reply: The documents do not say. End with a line "
    '"Sources:" followed by the numbers of the passages you used, for example: Sources: [2], [4]'
)


def paragraphs(text: str) -> list[str]:
    """Blocks separated by blank lines; a heading alone joins the block after it."""
    blocks = [b.strip() for b in re.split(r"\n\s*\n", text) if b.strip()]
    out: list[str] = []
    pending = ""
    for block in blocks:
        lines = block.splitlines()
        is_heading = len(lines) <= 2 and (
            lines[0].startswith("#") or (len(lines) == 2 and set(lines[1].strip()) <= {"-", "="})
        )
        if is_heading:
            pending = f"{pending}\n{block}".strip()
            continue
        out.append(f"{pending}\n{block}".strip() if pending else block)
        pending = ""
    if pending:
        out.append(pending)
    return out


class Baseline:
    """BM25 over the paragraphs of the original documents, top 5 in one chat call."""

    def __init__(self, docs: Path, server: Server, files: list[Path] | None = None) -> None:
        from rank_bm25 import BM25Okapi

        from gam_desktop.engine.retrieval.search import tokenize

        self.tokenize = tokenize
        self.server = server
        self.passages: list[tuple[str, str]] = []  # (document file name, paragraph)
        for path in sorted(files or [p for p in Path(docs).iterdir() if p.is_file()]):
            for paragraph in paragraphs(path.read_text(encoding="utf-8")):
                self.passages.append((path.name, paragraph))
        self.model = BM25Okapi([tokenize(p) or ["\u0000"] for _, p in self.passages])

    def retrieve(self, question: str, k: int = TOP_K) -> list[tuple[str, str]]:
        scores = self.model.get_scores(self.tokenize(question))
        ranked = sorted(range(len(scores)), key=lambda i: -scores[i])[:k]
        return [self.passages[i] for i in ranked if scores[i] > 0]

    def ask(self, question: str, temperature: float) -> dict[str, Any]:
        hits = self.retrieve(question)
        context = "\n\n".join(
            f"[{n}] (from {doc})\n{text}" for n, (doc, text) in enumerate(hits, 1)
        )
        messages = [
            {"role": "system", "content": BASELINE_SYSTEM},
            {"role": "user", "content": f"Passages:\n\n{context}\n\nQuestion: {question}"},
        ]
        try:
            reply = chat(self.server, messages, temperature)
        except RuntimeError as exc:
            return {"error": str(exc)}
        answer, cited = split_sources(reply)
        numbers = [n for n in cited if 1 <= n <= len(hits)] or list(range(1, len(hits) + 1))
        return {
            "answer": answer,
            "raw": reply,
            "sources": list(dict.fromkeys(hits[n - 1][0] for n in numbers)),
            "confidence": None,
            "retrieved": [doc for doc, _ in hits],
        }


def split_sources(reply: str) -> tuple[str, list[int]]:
    """The answer without its "Sources: [n]" line and [n] markers; the cited numbers."""
    parts = re.split(r"\n?\s*\**\s*sources?\s*\**\s*:", reply, maxsplit=1, flags=re.IGNORECASE)
    cited = [int(n) for n in re.findall(r"\[(\d+)\]", reply)]
    answer = re.sub(r"\s*\[\d+\](,\s*\[\d+\])*", "", parts[0]).strip()
    return answer, list(dict.fromkeys(cited))


def chat(server: Server, messages: list[dict], temperature: float, retries: int = 2) -> str:
    body = json.dumps(
        {"model": server.model, "messages": messages, "temperature": temperature, "max_tokens": 512}
    ).encode()
    headers = {"Content-Type": "application/json"}
    headers["Authorization"] = f"Bearer {server.api_key or 'not-needed'}"
    last = ""
    for attempt in range(retries + 1):
        request = urllib.request.Request(
            server.base_url.rstrip("/") + "/chat/completions", data=body, headers=headers
        )
        try:
            with urllib.request.urlopen(request, timeout=server.timeout or 300) as response:
                data = json.loads(response.read())
            message = data["choices"][0]["message"]
            return message.get("content") or ""
        except urllib.error.HTTPError as exc:
            last = f"HTTP {exc.code}: {exc.read()[:200]!r}"
            if exc.code < 500 and exc.code != 429:
                break
        except (OSError, ValueError, KeyError, IndexError, http.client.HTTPException) as exc:
            last = f"{type(exc).__name__}: {exc}"
        time.sleep(1 + attempt)
    raise RuntimeError(f"baseline call failed: {last}")


# -- citations and memory quality ---------------------------------------------------------


def front_matter(text: str) -> dict[str, Any]:
    import yaml

    if not text.startswith("---"):
        return {}
    end = text.find("\n---", 3)
    if end < 0:
        return {}
    try:
        data = yaml.safe_load(text[3:end])
    except yaml.YAMLError:
        return {}
    return data if isinstance(data, dict) else {}


def body_of(text: str) -> str:
    if text.startswith("---"):
        end = text.find("\n---", 3)
        if end >= 0:
            return text[end + 4 :].lstrip("-\n")
    return text


class MemoryIndex:
    """What the citation check needs to know about a built memory."""

    def __init__(self, memory: Path) -> None:
        self.root = Path(memory).resolve()
        self.source_of_hash: dict[str, str] = {}
        self._fm: dict[str, dict] = {}

    def front(self, path: Path) -> dict[str, Any]:
        key = str(path)
        if key not in self._fm:
            try:
                self._fm[key] = front_matter(path.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError):
                self._fm[key] = {}
            fm = self._fm[key]
            if fm.get("source_hash") and fm.get("source"):
                self.source_of_hash[str(fm["source_hash"])] = Path(str(fm["source"])).name
        return self._fm[key]

    def sources_hashes(self) -> dict[str, str]:
        if not self.source_of_hash:
            for path in self.root.rglob("*.md"):
                if not any(part.startswith(".") for part in path.relative_to(self.root).parts):
                    self.front(path)
        return self.source_of_hash

    def resolve(self, cited: str) -> Path | None:
        """The file a citation names: the string itself, or its first path-like token
        (a citation may carry a span or a page: "a/b.md#120-560", "a/b.md (chars 1-9)")."""
        candidates = [cited.strip(), cited.split("#", 1)[0].strip()]
        candidates += re.findall(r"[^\s#:()\[\],]+\.(?:md|txt)", cited)
        for candidate in candidates:
            path = (self.root / candidate.lstrip("/")).resolve()
            if path.is_file() and (path == self.root or self.root in path.parents):
                return path
        return None

    def document_of(self, path: Path) -> str | None:
        """The source document a memory (or an original under .gam/sources/) comes from."""
        if path.parent.name == "sources" and path.parent.parent.name == ".gam":
            return self.sources_hashes().get(path.stem)
        source = self.front(path).get("source")
        return Path(str(source)).name if source else None


def check_citations(
    sources: list[str], question: dict, memory: MemoryIndex | None, docs: Path | None = None
) -> dict[str, Any]:
    """Each citation: valid, missing (no such file) or off-source (not from a gold doc)."""
    gold = set(question.get("source_docs", []))
    answerable = question["kind"] != "unanswerable"
    detail = []
    for cited in sources:
        if memory is not None:
            path = memory.resolve(str(cited))
            document = memory.document_of(path) if path else None
        else:  # the baseline cites documents by name
            path = (docs / cited) if docs and (docs / cited).is_file() else None
            document = cited if path else None
        if path is None:
            status = "missing"
        elif answerable and document not in gold:
            status = "off-source"
        else:
            status = "valid"
        detail.append({"cited": cited, "document": document, "status": status})
    counts = Counter(d["status"] for d in detail)
    return {
        "total": len(detail),
        "valid": counts["valid"],
        "missing": counts["missing"],
        "off_source": counts["off-source"],
        "all_valid": bool(detail) and counts["valid"] == len(detail),
        "detail": detail,
    }


NUMBER = re.compile(r"\d+(?:[.,:]\d+)*")
GENERIC_FOLDERS = {"topic", "topics", "general", "misc", "miscellaneous", "other", "others"}
GENERIC_FOLDERS |= {"uncategorized", "notes", "memories", "documents", "docs"}


def numbers_in(text: str) -> set[str]:
    return {re.sub(r"(?<=\d),(?=\d{3}\b)", "", n).rstrip(".,:") for n in NUMBER.findall(text)}


def memory_quality(memory: Path, documents: dict[str, dict]) -> dict[str, Any]:
    """The shape of a built memory: taxonomy, titles, identity, facts kept."""
    root = Path(memory)
    memories, readmes = [], []
    for path in sorted(root.rglob("*.md")):
        rel = path.relative_to(root)
        if any(part.startswith(".") for part in rel.parts):
            continue
        (readmes if path.name == "README.md" else memories).append(path)
    per_folder: Counter[str] = Counter()
    titles: list[str] = []
    named = kept_total = orig_total = 0
    fractions: list[float] = []
    lacking_identity: list[str] = []
    for path in memories:
        text = path.read_text(encoding="utf-8")
        fm, body = front_matter(text), body_of(text)
        rel = path.relative_to(root)
        per_folder[rel.parent.as_posix() if rel.parent.parts else "/"] += 1
        title = str(fm.get("title") or path.stem)
        titles.append(title)
        doc = Path(str(fm.get("source", ""))).name
        entities = documents.get(doc, {}).get("entity", [])
        visible = f"{title} {fm.get('tldr', '')} {body}".lower()
        if entities and any(e.lower() in visible for e in entities):
            named += 1
        elif entities:
            lacking_identity.append(rel.as_posix())
        original = original_text(root, fm)
        if original is not None:
            wanted = numbers_in(original)
            if wanted:
                have = numbers_in(f"{title} {fm.get('tldr', '')} {body}")
                kept = len(wanted & have)
                kept_total += kept
                orig_total += len(wanted)
                fractions.append(kept / len(wanted))
    top = Counter(p.split("/")[0] for p in per_folder.elements() if p != "/")
    generic_readmes = sum(
        "memories about" in r.read_text(encoding="utf-8").lower() for r in readmes
    )
    suffixed = [t for t in titles if re.search(r"_(?:[2-9]|1\d)$", t)]  # name_2, not _2023
    return {
        "memories": len(memories),
        "folders": len(per_folder),
        "top_level_folders": dict(top.most_common()),
        "largest_folder": per_folder.most_common(1)[0] if per_folder else ("", 0),
        "largest_folder_share": (per_folder.most_common(1)[0][1] / len(memories))
        if memories
        else 0.0,
        "generic_folder_names": sorted(
            {
                part
                for p in per_folder
                for part in p.split("/")
                if part.lower().strip("_-") in GENERIC_FOLDERS
            }
        ),
        "readmes": len(readmes),
        "readmes_saying_memories_about": generic_readmes,
        "titles_with_number_suffix": suffixed,
        "duplicate_titles": sorted(t for t, n in Counter(titles).items() if n > 1),
        "memories_naming_their_entity": named,
        "memories_not_naming_their_entity": lacking_identity,
        "numbers_kept_micro": (kept_total / orig_total) if orig_total else None,
        "numbers_kept_macro": statistics.mean(fractions) if fractions else None,
        "memories_with_original": len(fractions),
    }


def original_text(root: Path, fm: dict[str, Any]) -> str | None:
    sha, span = fm.get("source_hash"), fm.get("span")
    if not sha or not isinstance(span, list | tuple) or len(span) != 2:
        return None
    try:
        text = (root / ".gam" / "sources" / f"{sha}.txt").read_text(encoding="utf-8")
    except OSError:
        return None
    return text[int(span[0]) : int(span[1])]


# -- running and reporting ----------------------------------------------------------------


@dataclass
class Outcome:
    id: str
    kind: str
    question: str
    answer: str = ""
    confidence: float | None = None
    sources: list[str] = field(default_factory=list)
    seconds: float = 0.0
    usage: Usage = field(default_factory=Usage)
    verdict: dict[str, Any] = field(default_factory=dict)
    citations: dict[str, Any] = field(default_factory=dict)
    flags: list[str] = field(default_factory=list)
    error: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        d = dict(self.__dict__)
        d["usage"] = dict(zip(USAGE_KEYS, self.usage.astuple(), strict=True))
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Outcome:
        fields = {k: v for k, v in d.items() if k in cls.__dataclass_fields__}
        fields["usage"] = Usage(*(int(d.get("usage", {}).get(k, 0)) for k in USAGE_KEYS))
        return cls(**fields)


USAGE_KEYS = ("calls", "prompt", "completion", "failed", "no_usage", "abandoned")


def judge(out: Outcome, question: dict, cite_check) -> None:
    """Score an answer, check its citations and flag its form (also for --rescore)."""
    out.verdict = score(question, out.answer, out.confidence)
    if out.error:  # no answer at all is wrong, even for a question without one
        out.verdict["correct"] = False
    out.citations = cite_check(out.sources, question)
    out.flags = flags_of(out.answer) + (["error"] if out.error else [])


def run_questions(
    name: str,
    questions: list[dict],
    ask,  # question text -> dict(answer, confidence, sources, ...) or dict(error)
    proxy: CountingProxy,
    cite_check,  # (sources, question) -> citations dict
    echo: bool = True,
) -> list[Outcome]:
    return run_systems([(name, ask, cite_check)], questions, proxy, echo)[name]


def run_systems(
    systems: list[tuple[str, Any, Any]],  # (name, ask, cite_check)
    questions: list[dict],
    proxy: CountingProxy,
    echo: bool = True,
    interleave: bool = False,
) -> dict[str, list[Outcome]]:
    """Every question of every system: system by system, or (`interleave`) question by
    question, each asked of every system in turn, so that both meet the same load on a
    shared machine and their times compare."""
    outcomes: dict[str, list[Outcome]] = {name: [] for name, _, _ in systems}
    order = (
        [(q, system) for q in questions for system in systems]
        if interleave
        else [(q, system) for system in systems for q in questions]
    )
    shown = None
    for q, (name, ask, cite_check) in order:
        first = shown is None if interleave else shown != name
        if echo and first:
            print_header(" + ".join(n for n, _, _ in systems) if interleave else name)
        shown = name
        proxy.phase = name
        out = ask_one(q, ask, proxy, cite_check)
        outcomes[name].append(out)
        if echo:
            print(line_for(out) + (f"  [{name}]" if interleave else ""), flush=True)
    return outcomes


def ask_one(q: dict, ask, proxy: CountingProxy, cite_check) -> Outcome:
    before = proxy.snapshot()
    start = time.perf_counter()
    result = ask(q["question"])
    seconds = time.perf_counter() - start
    usage = proxy.snapshot() - before
    out = Outcome(q["id"], q["kind"], q["question"], seconds=seconds, usage=usage)
    if result.get("error"):
        out.error = result["error"]
    out.answer = str(result.get("answer") or "")
    conf = result.get("confidence")
    out.confidence = float(conf) if isinstance(conf, int | float) else None
    out.sources = [str(s) for s in result.get("sources") or []]
    judge(out, q, cite_check)
    out.extra = {
        k: result[k]
        for k in ("notes", "files_read", "trajectory", "retrieved", "raw")
        if k in result
    }
    return out


def print_header(name: str) -> None:
    print(f"\n== {name}: per question ==")
    print(
        f"  {'id':<34} {'ok':<3} {'sec':>6} {'calls':>5} {'tokens':>7} {'conf':>5}"
        f" {'cites':>6}  answer"
    )


def rescore(path: Path, questions_file: Path, docs: Path, echo: bool = True) -> dict[str, Any]:
    """Judge a saved report (--json-out) again with the current gold and scorer, without
    asking anything: the citations are checked against the memory if it still exists."""
    report = json.loads(Path(path).read_text(encoding="utf-8"))
    questions = {q["id"]: q for q in load_questions(questions_file)}
    memory = Path(report.get("memory", ""))
    index = MemoryIndex(memory) if (memory / ".gam_meta.json").is_file() else None
    checks = {
        "project": lambda sources, q: (
            check_citations(sources, q, index)
            if index
            else {"total": 0, "valid": 0, "missing": 0, "off_source": 0, "all_valid": False}
        ),
        "baseline": lambda sources, q: check_citations(sources, q, None, docs),
    }
    if echo:
        print(f"rescoring {path} (memory {memory}{'' if index else ': gone'})")
    summaries = {}
    for name, check in checks.items():
        if name not in report:
            continue
        if echo:
            print_header(name)
        outcomes = []
        for d in report[name]["outcomes"]:
            if d["id"] not in questions:
                continue
            out = Outcome.from_dict(d)
            out.kind = questions[d["id"]]["kind"]
            judge(out, questions[d["id"]], check)
            outcomes.append(out)
            if echo:
                print(line_for(out))
        report[name]["outcomes"] = [o.as_dict() for o in outcomes]
        report[name]["summary"] = summaries[name] = summarize(outcomes)
    if echo and summaries:
        print_totals(summaries)
    return report


def line_for(out: Outcome) -> str:
    conf = f"{out.confidence:.2f}" if out.confidence is not None else "-"
    cites = f"{out.citations.get('valid', 0)}/{out.citations.get('total', 0)}"
    mark = "OK" if out.verdict.get("correct") else "--"
    shown = out.error or out.answer
    shown = " ".join(shown.split())
    shown = shown[:110] + ("…" if len(shown) > 110 else "")
    extra = ""
    if out.verdict.get("forbidden"):
        extra += f" [look-alike named: {', '.join(out.verdict['forbidden'])}]"
    if out.flags:
        extra += f" [{', '.join(out.flags)}]"
    return (
        f"  {out.id:<34} {mark:<3} {out.seconds:6.1f} {out.usage.calls:5d} {out.usage.tokens:7d}"
        f" {conf:>5} {cites:>6}  {shown!r}{extra}"
    )


def summarize(outcomes: list[Outcome]) -> dict[str, Any]:
    answerable = [o for o in outcomes if o.kind != "unanswerable"]
    unanswerable = [o for o in outcomes if o.kind == "unanswerable"]
    kinds: dict[str, list[int]] = {}
    for o in outcomes:
        kinds.setdefault(o.kind, [0, 0])
        kinds[o.kind][0] += bool(o.verdict.get("correct"))
        kinds[o.kind][1] += 1
    seconds = [o.seconds for o in outcomes]
    cites = [o.citations for o in outcomes]
    with_cites = [c for c in cites if c.get("total")]
    usage = Usage()
    for o in outcomes:
        usage = Usage(*(a + b for a, b in zip(usage.astuple(), o.usage.astuple(), strict=True)))
    flags = Counter(f for o in outcomes for f in o.flags)
    return {
        "questions": len(outcomes),
        "correct": sum(bool(o.verdict.get("correct")) for o in outcomes),
        "answerable_correct": sum(bool(o.verdict.get("correct")) for o in answerable),
        "answerable": len(answerable),
        "abstained_on_unanswerable": sum(bool(o.verdict.get("abstained")) for o in unanswerable),
        "unanswerable": len(unanswerable),
        "abstained_on_answerable": sum(bool(o.verdict.get("abstained")) for o in answerable),
        "by_kind": kinds,
        "citations_total": sum(c.get("total", 0) for c in cites),
        "citations_valid": sum(c.get("valid", 0) for c in cites),
        "citations_missing": sum(c.get("missing", 0) for c in cites),
        "citations_off_source": sum(c.get("off_source", 0) for c in cites),
        "answers_with_citations": len(with_cites),
        "answers_all_citations_valid": sum(bool(c.get("all_valid")) for c in with_cites),
        "answers_without_citations": sum(1 for o in answerable if not o.citations.get("total")),
        "looked_alike": sum(bool(o.verdict.get("forbidden")) for o in outcomes),
        "flags": dict(flags),
        "errors": sum(1 for o in outcomes if o.error),
        "calls": usage.calls,
        "failed_calls": usage.failed,
        "calls_without_usage": usage.no_usage,
        "abandoned_calls": usage.abandoned,
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "median_seconds": statistics.median(seconds) if seconds else 0.0,
        "total_seconds": sum(seconds),
    }


def _frac(a: int, b: int) -> str:
    return f"{a}/{b} ({100 * a / b:.0f}%)" if b else "-"


def print_totals(summaries: dict[str, dict[str, Any]]) -> None:
    names = list(summaries)
    width = 26

    def row(label: str, values: list[str]) -> None:
        print(f"  {label:<34}" + "".join(f"{v:>{width}}" for v in values))

    print("\n== totals ==")
    row("", names)
    s = [summaries[n] for n in names]
    row("accuracy, all questions", [_frac(x["correct"], x["questions"]) for x in s])
    row("accuracy, answerable", [_frac(x["answerable_correct"], x["answerable"]) for x in s])
    row(
        "abstained on unanswerable",
        [_frac(x["abstained_on_unanswerable"], x["unanswerable"]) for x in s],
    )
    row(
        "abstained on answerable", [_frac(x["abstained_on_answerable"], x["answerable"]) for x in s]
    )
    kinds = sorted({k for x in s for k in x["by_kind"]})
    for kind in kinds:
        row(f"  {kind}", [_frac(*x["by_kind"].get(kind, [0, 0])) for x in s])
    row("named a look-alike (answer_none)", [str(x["looked_alike"]) for x in s])
    row("citations valid", [_frac(x["citations_valid"], x["citations_total"]) for x in s])
    row(
        "  missing / off-source",
        [f"{x['citations_missing']} / {x['citations_off_source']}" for x in s],
    )
    row(
        "answers all citations valid",
        [_frac(x["answers_all_citations_valid"], x["answers_with_citations"]) for x in s],
    )
    row("answerable, no citation", [str(x["answers_without_citations"]) for x in s])
    row(
        "LLM calls (failed, abandoned, no usage)",
        [
            f"{x['calls']} ({x['failed_calls']}, {x['abandoned_calls']}, "
            f"{x['calls_without_usage']})"
            for x in s
        ],
    )
    row("calls per question", [f"{x['calls'] / max(x['questions'], 1):.1f}" for x in s])
    row(
        "prompt + completion tokens",
        [f"{x['prompt_tokens']} + {x['completion_tokens']}" for x in s],
    )
    row(
        "tokens per question",
        [
            f"{(x['prompt_tokens'] + x['completion_tokens']) / max(x['questions'], 1):.0f}"
            for x in s
        ],
    )
    row("seconds per question, median", [f"{x['median_seconds']:.1f}" for x in s])
    row("seconds, total", [f"{x['total_seconds']:.1f}" for x in s])
    row(
        "answer flags",
        [", ".join(f"{k} {v}" for k, v in sorted(x["flags"].items())) or "-" for x in s],
    )
    row("errors", [str(x["errors"]) for x in s])


def print_quality(quality: dict[str, Any]) -> None:
    print("\n== memory quality ==")
    q = quality
    print(
        f"  memories {q['memories']}, folders holding memories {q['folders']},"
        f" READMEs {q['readmes']}"
    )
    print(f"  top-level folders: {q['top_level_folders']}")
    name, count = q["largest_folder"]
    print(
        f"  largest folder: {name} with {count}"
        f" ({100 * q['largest_folder_share']:.0f}% of memories)"
    )
    print(f"  generic folder names: {q['generic_folder_names'] or 'none'}")
    print(f"  READMEs saying 'Memories about …': {q['readmes_saying_memories_about']}")
    print(
        f"  titles ending in _N: {len(q['titles_with_number_suffix'])}"
        f" {q['titles_with_number_suffix'][:8]}"
    )
    print(f"  duplicate titles: {q['duplicate_titles'] or 'none'}")
    print(
        "  memories naming their document's entity:"
        f" {_frac(q['memories_naming_their_entity'], q['memories'])}"
    )
    micro, macro = q["numbers_kept_micro"], q["numbers_kept_macro"]
    if micro is not None:
        print(
            f"  numbers of the original kept in the memory: {100 * micro:.0f}% overall, "
            f"{100 * macro:.0f}% per memory on average ({q['memories_with_original']} memories)"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base-url", help="OpenAI-compatible endpoint (default $OPENAI_BASE_URL)")
    parser.add_argument("--model", help="model name (default $OPENAI_MODEL)")
    parser.add_argument(
        "--api-key", help="API key (default $OPENAI_API_KEY; local servers need none)"
    )
    parser.add_argument(
        "--scripted", action="store_true", help="use the in-process scripted server"
    )
    parser.add_argument("--memory", type=Path, help="the memory folder (default: a temporary one)")
    parser.add_argument("--skip-build", action="store_true", help="reuse the memory in --memory")
    parser.add_argument("--docs", type=Path, default=DOCS)
    parser.add_argument("--questions-file", type=Path, default=QUESTIONS)
    parser.add_argument("--documents-file", type=Path, default=DOCUMENTS)
    parser.add_argument("--questions", help="ids, id prefixes or kinds, comma-separated")
    parser.add_argument("--limit", type=int, help="only the first N questions")
    parser.add_argument("--workers", type=int, help="gam-add --workers")
    parser.add_argument("--timeout", type=float, help="seconds per LLM call (all three parts)")
    parser.add_argument("--min-tokens", type=int, help="gam-add --min-tokens")
    parser.add_argument("--max-tokens", type=int, help="gam-add --max-tokens")
    parser.add_argument("--max-iterations", type=int, help="gam-request --max-iterations")
    parser.add_argument("--isolate", action="store_true", help="each gam-request in a subprocess")
    parser.add_argument(
        "--question-timeout", type=float, help="kill a question after N s (--isolate)"
    )
    parser.add_argument("--no-baseline", action="store_true")
    parser.add_argument("--no-project", action="store_true")
    parser.add_argument(
        "--interleave",
        action="store_true",
        help="ask each question of the project, then of the baseline (fair times when busy)",
    )
    parser.add_argument("--json-out", type=Path, help="write every answer and figure here")
    parser.add_argument(
        "--rescore", type=Path, metavar="REPORT", help="judge a saved --json-out report again"
    )
    args = parser.parse_args(argv)
    if args.rescore:
        report = rescore(args.rescore, args.questions_file, args.docs)
    else:
        report = evaluate(args)
    if args.json_out:
        args.json_out.write_text(json.dumps(report, indent=1, default=str), encoding="utf-8")
        print(f"\ndetails written to {args.json_out}")
    return 0


def _upstream(args: argparse.Namespace, stack: contextlib.ExitStack) -> tuple[str, str]:
    """The server to evaluate (the scripted one, in-process, with --scripted) and its model."""
    if args.scripted:
        from gam_desktop.selfcheck.scripted_llm import RunningServer

        return stack.enter_context(RunningServer()).base_url, args.model or "scripted"
    upstream = args.base_url or os.environ.get("OPENAI_BASE_URL")
    model = args.model or os.environ.get("OPENAI_MODEL")
    if not upstream or not model:
        raise SystemExit("give --base-url and --model (or --scripted)")
    return upstream, model


def _build_phase(
    args: argparse.Namespace, memory: Path, proxy: CountingProxy, server: Server, echo: bool
) -> dict[str, Any]:
    """gam-add into an empty `memory`, with the LLM usage it caused."""
    if memory.exists() and any(memory.iterdir()):
        raise SystemExit(
            f"{memory} is not empty: use --skip-build to reuse it, or another --memory"
        )
    proxy.phase = "build"
    before = proxy.snapshot()
    build = build_memory(memory, args.docs, server, args.workers, args.min_tokens, args.max_tokens)
    usage = proxy.snapshot() - before
    build["calls"], build["prompt_tokens"], build["completion_tokens"] = (
        usage.calls,
        usage.prompt_tokens,
        usage.completion_tokens,
    )
    build["failed_calls"], build["abandoned_calls"] = usage.failed, usage.abandoned
    if echo:
        print("\n== build ==")
        print(f"  {' '.join(build['argv'])}")
        print(
            f"  exit {build['exit_code']} in {build['seconds']:.1f} s;"
            f" {usage.calls} LLM calls ({usage.failed} failed,"
            f" {usage.abandoned} abandoned by a client timeout),"
            f" {usage.prompt_tokens} prompt"
            f" + {usage.completion_tokens} completion tokens"
        )
        if build["stdout"]:
            print(f"  gam-add: {build['stdout']}")
        for line in build["stderr"].splitlines()[-8:]:
            print(f"  gam-add stderr: {line}")
    if build["exit_code"] != 0 and not (memory / ".gam_meta.json").is_file():
        raise SystemExit("the build failed; nothing to ask")
    return build


def _quality(memory: Path, documents: dict[str, Any], echo: bool) -> dict[str, Any]:
    quality = memory_quality(memory, documents)
    if echo:
        print_quality(quality)
    return quality


def _project_system(args: argparse.Namespace, memory: Path, server: Server) -> tuple[str, Any, Any]:
    """gam-request over the built memory, as a system to ask."""
    index = MemoryIndex(memory)
    return (
        "project",
        lambda text: ask_project(
            memory, text, server, args.max_iterations, args.isolate, args.question_timeout
        ),
        lambda sources, q: check_citations(sources, q, index),
    )


def _baseline_system(
    args: argparse.Namespace, server: Server
) -> tuple[tuple[str, Any, Any], dict[str, Any]]:
    """The one-call BM25 baseline as a system to ask, and what the report says of it."""
    from gam_desktop.engine.llm import LLMSettings

    temperature = LLMSettings.from_env("chat").temperature  # what gam-request uses
    baseline = Baseline(args.docs, server)
    system = (
        "baseline",
        lambda text: baseline.ask(text, temperature),
        lambda sources, q: check_citations(sources, q, None, args.docs),
    )
    return system, {"temperature": temperature, "passages": len(baseline.passages)}


def evaluate(args: argparse.Namespace, echo: bool = True) -> dict[str, Any]:
    """The whole evaluation; returns the report (what it printed, as data)."""
    if args.api_key:
        os.environ["OPENAI_API_KEY"] = args.api_key
    if args.question_timeout and not args.isolate:
        args.isolate = True
    questions = pick(load_questions(args.questions_file), args.questions, args.limit)
    documents = load_documents(args.documents_file)
    with contextlib.ExitStack() as stack:
        upstream, model = _upstream(args, stack)
        proxy = stack.enter_context(CountingProxy(upstream))
        server = Server(
            proxy.base_url, model, args.timeout, args.api_key or os.environ.get("OPENAI_API_KEY")
        )
        memory = (
            args.memory
            or Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="gam-eval-"))) / "memory"
        )
        report: dict[str, Any] = {
            "server": upstream,
            "model": model,
            "memory": str(memory),
            "questions": len(questions),
            "engine": engine_state(),
        }
        if echo:
            print(f"server {upstream}  model {model}  memory {memory}")
            print(f"engine: {report['engine']}")
            print(f"questions: {len(questions)}  documents: {len(list(Path(args.docs).iterdir()))}")
        systems: list[tuple[str, Any, Any]] = []
        if not args.no_project:
            if not args.skip_build:
                report["build"] = _build_phase(args, memory, proxy, server, echo)
            elif not (memory / ".gam_meta.json").is_file():
                raise SystemExit(f"--skip-build: {memory} is not a built memory")
            report["memory_quality"] = _quality(memory, documents, echo)
            systems.append(_project_system(args, memory, server))
        if not args.no_baseline:
            system, report["baseline"] = _baseline_system(args, server)
            systems.append(system)
        answered = run_systems(systems, questions, proxy, echo, args.interleave)
        for name, outcomes in answered.items():
            report[name] = {
                **report.get(name, {}),
                "summary": summarize(outcomes),
                "outcomes": [o.as_dict() for o in outcomes],
            }
        summaries = {n: report[n]["summary"] for n in ("project", "baseline") if n in report}
        if echo and summaries:
            print_totals(summaries)
    return report


def engine_state() -> str:
    """The commit measured and whether the engine had uncommitted changes (or what
    $GAM_EVAL_ENGINE says, for a snapshot made with `git archive`)."""
    if os.environ.get("GAM_EVAL_ENGINE"):
        return f"{ROOT}: {os.environ['GAM_EVAL_ENGINE']}"
    try:
        head = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, timeout=10
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--short", "gam_desktop"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return f"{ROOT} (not a git checkout)"
    if not head:
        return f"{ROOT} (not a git checkout)"
    return f"{ROOT} at {head[:12]}" + (
        f", uncommitted engine changes: {len(dirty.splitlines())} files" if dirty else ", clean"
    )


if __name__ == "__main__":
    sys.exit(main())
