"""A headless demo of the main job: documents in, an organized memory folder out.

    python -m gam_desktop.selfcheck.demo [--gam-dir DIR] [--base-url URL --model NAME]

Without --base-url it starts the scripted local endpoint (no network, no key),
builds a memory from two sample documents, adds a third incrementally, prints the
resulting tree and root README, then asks the memory one question and prints the answer
with the files it comes from. Progress goes to stderr: a line updated in place on a
terminal, one line per stage in a log.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from contextlib import ExitStack
from pathlib import Path
from typing import TextIO

from gam_desktop.engine.ingest.builder import BuildOptions
from gam_desktop.engine.llm import LLMSettings
from gam_desktop.engine.llm.tokenizer import resources_dir
from gam_desktop.engine.models import ChunkConfig
from gam_desktop.engine.progress import ProgressEvent
from gam_desktop.engine.workflow import Workflow
from gam_desktop.selfcheck.scripted_llm import RunningServer


def print_tree(root: Path) -> None:
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if rel.parts[0].startswith("."):
            continue
        print(f"  {'    ' * (len(rel.parts) - 1)}{path.name}{'/' if path.is_dir() else ''}")


QUESTION = "When was BERT released, and by whom?"


class StageLines:
    """Progress on stderr. In a terminal, one line rewritten as the work goes; in a log (not
    a terminal) one line per stage: a bar's hundreds of "\\r" frames filled the log."""

    def __init__(self, stream: TextIO = sys.stderr) -> None:
        self.stream = stream
        self.live = stream.isatty()
        self.stage = ""

    def __call__(self, event: ProgressEvent) -> None:
        said = event.message or event.stage.capitalize()
        if self.live:
            self.stream.write(f"\r\x1b[2K  {said[:100]}")
            self.stream.flush()
        elif event.stage != self.stage:
            print(f"  {said}", file=self.stream, flush=True)
        self.stage = event.stage

    def done(self) -> None:
        if self.live and self.stage:
            self.stream.write("\r\x1b[2K")
            self.stream.flush()
        self.stage = ""


def ask(workflow: Workflow, question: str) -> None:
    """One question, its answer and the files it comes from (with their documents)."""
    result = workflow.request(question)
    print(f"\nQ: {question}\nA: {result.answer.strip()}")
    cited = result.citations or []
    for citation in cited:
        print(f"   from {citation.describe()}")
    for source in result.sources[len(cited) :]:
        print(f"   from {source}")
    print(f"   (confidence {round(result.confidence * 100)}%)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gam-dir", help="where to build (default: a new temporary folder)")
    parser.add_argument("--base-url", help="a real OpenAI-compatible endpoint to use instead")
    parser.add_argument("--model", default="scripted")
    args = parser.parse_args(argv)
    samples = resources_dir() / "samples"
    with ExitStack() as stack:
        base_url = args.base_url
        if not base_url:
            base_url = stack.enter_context(RunningServer()).base_url
            print(f"Using the scripted local endpoint at {base_url}", flush=True)
        root = Path(args.gam_dir or stack.enter_context(tempfile.TemporaryDirectory()))
        root = root / "memory" if not args.gam_dir else root
        settings = LLMSettings.from_env("builder", base_url=base_url, model=args.model)
        options = BuildOptions(chunk=ChunkConfig(min_tokens=40, max_tokens=200))
        progress = StageLines()
        workflow = Workflow(gam_dir=root, settings=settings, options=options, progress=progress)
        first = workflow.add(files=[samples / "neural_networks.md", samples / "transformers.md"])
        progress.done()
        print(f"1. {first.summary()} — {first.usage.summary()}")
        second = workflow.add(files=[samples / "python_concurrency.txt"])
        progress.done()
        print(f"2. {second.summary()} — {second.usage.summary()}")
        print(f"\nThe memory folder {root}:")
        print_tree(root)
        print("\nREADME.md:\n" + (root / "README.md").read_text(encoding="utf-8"))
        ask(workflow, QUESTION)
        workflow.close()
        if not args.gam_dir:  # the temporary folder goes with the demo: say how to keep one
            print(
                "\n(That folder is temporary: it goes when the demo ends. To keep a memory: "
                "--gam-dir FOLDER; to open it in the app: gam-desktop.)"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
