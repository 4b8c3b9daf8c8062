"""A memory written by hand (no LLM, no build): five notes on machine learning and web
development, a README in every folder and the meta file, as a build would leave them."""

from __future__ import annotations

from pathlib import Path

from gam_desktop.engine.models import GamMeta, MemorizedChunk
from gam_desktop.engine.store.markdown import ReadmeEntry, render_memory, render_readme

MEMORIES = {
    "foundations/vision/convolutional_networks.md": (
        "Convolutional neural networks (CNNs) share weights across image positions. "
        "CNNs are efficient for vision."
    ),
    "foundations/sequences/recurrent_networks.md": (
        "Recurrent neural networks (RNNs) process sequences step by step with a hidden state. "
        "LSTM cells help RNNs keep long-range information."
    ),
    "nlp/transformer_attention.md": (
        "Transformer attention compares queries with keys and weights the values. "
        "Multi-head attention runs several attention functions in parallel."
    ),
    "nlp/bert_encoder.md": (
        "BERT is a bidirectional transformer encoder released by Google in 2018. "
        "It is pre-trained by masking 15 percent of the input tokens."
    ),
    "web/react_hooks.md": (
        "React hooks let function components use state. The useState hook returns a value "
        "and a setter. The useEffect hook runs side effects after render."
    ),
}
FOLDERS = {
    "": ("Memory", "Notes on machine learning and web development."),
    "foundations": (
        "Foundations",
        "Neural network architectures: convolutional and recurrent networks.",
    ),
    "foundations/vision": ("Vision", "Convolutional networks for images."),
    "foundations/sequences": ("Sequences", "Recurrent networks for sequences."),
    "nlp": ("NLP", "Language models: transformer attention and the BERT encoder."),
    "web": ("Web", "Web development with React hooks."),
}


def write_memory(root: Path) -> Path:
    """MEMORIES and FOLDERS written as a memory at `root`; returns `root`."""
    for path, body in MEMORIES.items():
        file = root / path
        file.parent.mkdir(parents=True, exist_ok=True)
        title = file.stem
        file.write_text(render_memory({"title": title, "tldr": body.split(". ")[0] + "."}, body))
    for folder, (title, description) in FOLDERS.items():
        directory = root / folder
        entries = [
            ReadmeEntry(c.name, True, FOLDERS[c.relative_to(root).as_posix()][1])
            for c in sorted(directory.iterdir())
            if c.is_dir()
        ]
        entries += [
            ReadmeEntry(
                f.stem, False, MEMORIES[f.relative_to(root).as_posix()].split(". ")[0] + "."
            )
            for f in sorted(directory.glob("*.md"))
            if f.name != "README.md"
        ]
        (directory / "README.md").write_text(render_readme(title, description, entries))
    (root / ".gam_meta.json").write_text(GamMeta(total_chunks=len(MEMORIES)).model_dump_json())
    return root


def document_parts(parts: dict[str, str]) -> list[MemorizedChunk]:
    """Notes of an invented licence's parts, each titled "Gizmo Licence 2.0: <part>" as a
    reader sees it and named by its file name's lowercased words."""
    return [
        MemorizedChunk(
            index=i,
            title=f"gizmo_licence_2_0_{heading.lower().replace(' ', '_')}",
            shown_title=f"Gizmo Licence 2.0: {heading}",
            memory=body,
            tldr=body,
            metadata={"source": "gizmo-licence-2.0.txt"},
        )
        for i, (heading, body) in enumerate(parts.items())
    ]
