"""The one-sentence tldr rule (`ingest.context.one_sentence`) applied to a copy of memories
already built, without a model: each memory's tldr in its front matter, and the README lines
that list it. Measures what the rule does to retrieval and answers without a rebuild, which
makes it a lower bound: a real build also keeps in the body the sentences of a tldr the
model repeated there. Prints counts; asserts nothing.

    cp -a /tmp/evalmem52 /tmp/evalmem-tldr
    .venv/bin/python tests/benchmarks/rewrite_tldrs.py /tmp/evalmem-tldr
"""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from gam_desktop.engine.ingest.context import one_sentence  # noqa: E402


def rewritten(front: str, tldr: str) -> str:
    """The front matter with its tldr (and the lines it wraps onto) replaced."""
    out: list[str] = []
    skipping = False
    for line in front.split("\n"):
        if line.startswith("tldr:"):
            out.append(yaml.safe_dump({"tldr": tldr}, allow_unicode=True, width=100).rstrip())
            skipping = True
        elif not (skipping and line.startswith("  ")):
            skipping = False
            out.append(line)
    return "\n".join(out)


def main(root: Path) -> int:
    shortened: dict[str, str] = {}
    for path in root.rglob("*.md"):
        if path.name == "README.md" or {".git", ".gam"} & set(path.parts):
            continue
        text = path.read_text(encoding="utf-8")
        if not text.startswith("---"):
            continue
        _, front, body = text.split("---", 2)
        tldr = " ".join(str((yaml.safe_load(front) or {}).get("tldr") or "").split())
        if one_sentence(tldr) != tldr:
            shortened[tldr] = one_sentence(tldr)
            path.write_text(f"---{rewritten(front, shortened[tldr])}---{body}", encoding="utf-8")
    listed = 0
    for readme in root.rglob("README.md"):
        lines = readme.read_text(encoding="utf-8").split("\n")
        for i, line in enumerate(lines):
            flat = " ".join(line.split())
            old = next((t for t in shortened if t and t in flat), None)
            if old is not None:
                lines[i], listed = flat.replace(old, shortened[old]), listed + 1
        readme.write_text("\n".join(lines), encoding="utf-8")
    print(f"tldrs shortened to one sentence: {len(shortened)}; README lines: {listed}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(Path(sys.argv[1])))
