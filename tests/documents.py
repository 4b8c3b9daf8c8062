"""Generated test documents with known topics, facts and structure."""

from __future__ import annotations

from pathlib import Path

from gam_desktop.engine.retrieval.tools import MemoryTools

# Word, PowerPoint, EPUB, HTML and e-mail documents: written by the self-check (the
# packaged app's self-test drops them too), shared here.
from gam_desktop.selfcheck.formats import (  # noqa: F401
    html_page,
    make_docx,
    make_eml,
    make_epub,
    make_pptx,
)

TOPIC_FACTS = {
    "python": "Python is an interpreted programming language. The Python GIL prevents true "
    "multi-threading in CPython. Python code uses indentation for blocks.",
    "javascript": "JavaScript runs in every web browser. JavaScript promises handle "
    "asynchronous work. JavaScript closures capture variables.",
    "rust": "Rust has a borrow checker. Rust ownership rules prevent data races at compile "
    "time. Rust compiles to native machine code.",
    "haskell": "Haskell is a pure functional language. Haskell uses lazy evaluation by "
    "default. Haskell type classes describe behaviour.",
    "docker": "Docker packages applications into containers. Docker images are built in "
    "layers. Docker compose runs several containers together.",
    "git": "Git records snapshots of a project. Git branches are cheap pointers to commits. "
    "Git merges combine the histories of branches.",
}
FILLER = (
    "This section adds more detail with examples, caveats and history so that the "
    "passage reads like a real chapter of a technical book. "
)


def section(topic: str, number: int, repeats: int = 3) -> str:
    facts = TOPIC_FACTS[topic]
    body = " ".join([facts, f"Detail {number} concerns {topic} in practice.", FILLER * repeats])
    return f"# {topic.title()} notes {number}\n\n{body}\n"


def topic_document(counts: dict[str, int], repeats: int = 3) -> str:
    """Sections with headers, `counts[topic]` sections per topic, grouped by topic."""
    return "\n".join(section(t, i, repeats) for t, n in counts.items() for i in range(n))


def words_document(words: int) -> str:
    """About `words` words of plain paragraphs on machine learning, no headers."""
    sentence = (
        "Neural networks learn weights by gradient descent on a loss function over "
        "many training examples. "
    )
    per_paragraph = 8
    paragraphs = max(1, words // (len(sentence.split()) * per_paragraph))
    return "\n\n".join(f"Paragraph {i}. " + sentence * per_paragraph for i in range(paragraphs))


def make_pdf(path: Path, pages: list[str], image: Path | None = None) -> Path:
    """A PDF at `path` with one page per text of `pages` (its lines drawn as text), each
    page also showing `image` when given."""
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    pdf = canvas.Canvas(str(path), pagesize=A4)
    for text in pages:
        if image is not None:
            pdf.drawImage(str(image), 50, 400, width=300, height=300)
        y = 780
        for line in text.splitlines():
            pdf.drawString(50, y, line)
            y -= 14
        pdf.showPage()
    pdf.save()
    return path


def document_files(folder: Path, count: int, repeats: int = 1, first: int = 0) -> list[Path]:
    """`count` Markdown files of one section each, the topics taking turns, every file's
    text its own (numbered from `first`: a big drop of small documents)."""
    folder.mkdir(parents=True, exist_ok=True)
    topics = list(TOPIC_FACTS)
    files = []
    for number in range(first, first + count):
        topic = topics[number % len(topics)]
        path = folder / f"{topic}_{number:03d}.md"
        path.write_text(section(topic, number, repeats), encoding="utf-8")
        files.append(path)
    return files


# Look-alike release notes whose every figure sits in its own list item: the refresh
# interval below the episode length limit, which a hasty model gives for it.
PEBBLECAST_NOTES = {
    "pebblecast-5.1-release-notes.md": (
        "# Pebblecast 5.1 release notes\n\n## Limits\n\n- Longest single episode: 12 hours.\n\n"
        "## Defaults\n\n- Refresh interval: every 45 minutes.\n"
    ),
    "pebblecast-6.0-release-notes.md": (
        "# Pebblecast 6.0 release notes\n\n## Limits\n\n- Longest single episode: 20 hours.\n\n"
        "## Defaults\n\n- Refresh interval: every 10 minutes.\n"
    ),
}


def built_documents(make_workflow, folder: Path, documents: dict[str, str], max_tokens: int = 90):
    """`documents` (file name -> text) written into `folder` and built into a memory."""
    files = []
    for name, text in documents.items():
        (folder / name).write_text(text)
        files.append(folder / name)
    workflow = make_workflow(min_tokens=20, max_tokens=max_tokens)
    workflow.add(files=files)
    return workflow


def built_tools(make_workflow, folder: Path, memory_dir: Path, documents: dict[str, str]):
    """`documents` built into the memory at `memory_dir`, and the agent's tools over it."""
    built_documents(make_workflow, folder, documents)
    return MemoryTools(memory_dir)


def built_pebblecast_notes(make_workflow, folder: Path):
    """The Pebblecast notes built into a memory, one memory each."""
    return built_documents(make_workflow, folder, PEBBLECAST_NOTES, max_tokens=200)
