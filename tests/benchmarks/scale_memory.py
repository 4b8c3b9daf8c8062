"""A synthetic memory as a build leaves it, at any size: documents whose extracted text is
kept under .gam/sources, memories with the front matter a build writes (source, its hash,
the span of the original wording, tokens, hash, created), two levels of folders with
their READMEs, the meta file and one commit. Used by bench_scale.py.

The words follow a Zipf law over a vocabulary of made-up words (real text has a few very
common words and a long tail of rare ones, which is what search and grep costs depend
on); each folder has its own topic words, each document its own company and version.
"""

from __future__ import annotations

import hashlib
import random
import re
from dataclasses import dataclass
from itertools import accumulate
from pathlib import Path

import yaml

from gam_desktop.engine.models import GamMeta
from gam_desktop.engine.store.folder import SOURCES_DIR
from gam_desktop.engine.store.markdown import ReadmeEntry, render_memory, render_readme

FUNCTION_WORDS = (
    "the of and to in is that for it as with was on be by this are or from at an which "
    "not have has can when if its their more than all also after before each per"
).split()
_ONSETS = ("b", "c", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z", "br",
           "ch", "cl", "dr", "gr", "pl", "pr", "sh", "st", "tr", "th", "qu", "sn")  # fmt: skip
_VOWELS = ("a", "e", "i", "o", "u", "ai", "ea", "io", "ou", "y")
_CODAS = ("", "", "n", "r", "s", "t", "l", "x", "nd", "rk", "st", "ng", "m")
CHUNKS_PER_DOCUMENT = 10


def vocabulary(size: int, rng: random.Random) -> list[str]:
    words: dict[str, None] = {}
    while len(words) < size:
        syllables = rng.choice((1, 2, 2, 3, 3, 4))
        word = "".join(rng.choice(_ONSETS) + rng.choice(_VOWELS) for _ in range(syllables))
        words[word + rng.choice(_CODAS)] = None
    return list(words)


@dataclass
class Language:
    """Words drawn by a Zipf law, each folder with its topic words, function words between."""

    words: list[str]
    cumulative: list[float]
    rng: random.Random

    @classmethod
    def make(cls, size: int, seed: int) -> Language:
        rng = random.Random(seed)
        words = vocabulary(size, rng)
        return cls(words, list(accumulate(1 / (r + 1) ** 1.07 for r in range(size))), rng)

    def common(self, k: int) -> list[str]:
        return self.rng.choices(self.words, cum_weights=self.cumulative, k=k)

    def sentence(self, topic: list[str], entity: str) -> str:
        rng = self.rng
        n = rng.randint(8, 20)
        picks = self.common(n)
        words = [
            rng.choice(FUNCTION_WORDS)
            if r < 0.35
            else rng.choice(topic)
            if r < 0.5
            else entity
            if r < 0.53
            else str(rng.randint(2, 9999))
            if r < 0.57
            else picks[i]
            for i, r in enumerate(rng.random() for _ in range(n))
        ]
        return " ".join(words).capitalize() + "."


def _sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=\.)\s+", text) if s]


def generate(
    root: Path, memories: int, folders: int, seed: int = 14, vocabulary_size: int = 30_000
) -> list[str]:
    """Write the memory into `root` (empty); returns the memory files' paths."""
    language = Language.make(vocabulary_size, seed)
    rng = language.rng
    groups = max(1, folders // 50)
    per_folder = max(1, memories // folders)
    documents = max(1, memories // CHUNKS_PER_DOCUMENT)
    topics = [language.words[200 + f * 7 : 200 + f * 7 + 30] for f in range(folders)]
    (root / SOURCES_DIR).mkdir(parents=True)
    folder_entries: list[list[ReadmeEntry]] = [[] for _ in range(folders)]
    paths: list[str] = []
    names: list[set[str]] = [set() for _ in range(folders)]
    for d in range(documents):
        entity = language.words[rng.randrange(2000, len(language.words))].capitalize()
        version = f"{rng.randint(1, 9)}.{rng.randint(0, 20)}"
        document = f"{entity.lower()}-{language.common(1)[0]}-{version}.pdf"
        home = d * CHUNKS_PER_DOCUMENT // per_folder % folders
        chunks = []
        for _ in range(CHUNKS_PER_DOCUMENT):
            sentences = [
                language.sentence(topics[home], entity) for _ in range(rng.randint(10, 24))
            ]
            chunks.append(f"{entity} {version}. " + " ".join(sentences))
        text = "\n\n".join(chunks)
        digest = hashlib.sha256(text.encode()).hexdigest()
        (root / SOURCES_DIR / f"{digest}.txt").write_text(text, encoding="utf-8")
        at = 0
        for c, chunk in enumerate(chunks):
            if len(paths) >= memories:
                break
            f = min(folders - 1, len(paths) // per_folder)
            span = [at, at + len(chunk)]
            at = span[1] + 2
            picked = _sentences(chunk)[1:]
            body = f"{entity} {version} ({document}): " + " ".join(
                rng.sample(picked, min(len(picked), rng.randint(4, 7)))
            )
            title_words = [entity.lower(), *rng.sample(topics[f], 3)]
            stem = "_".join(title_words)
            name = stem
            while name in names[f]:
                name = f"{stem}_{rng.randint(2, 999)}"
            names[f].add(name)
            tldr = f"{entity} {version}: " + _sentences(chunk)[1][:150]
            front = {
                "title": name,
                "index": len(paths),
                "tldr": tldr,
                "source": document,
                "source_hash": digest,
                "span": span,
                "pages": [c * 2 + 1, c * 2 + 2],
                "tokens": len(chunk.split()) * 4 // 3,
                "hash": hashlib.sha256(chunk.encode()).hexdigest(),
                "created": f"2025-11-{1 + d % 28:02d}T10:{d % 60:02d}:00+00:00",
            }
            folder = _folder(root, f, groups, folders)
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"{name}.md").write_text(_render(front, body, check=not paths), "utf-8")
            folder_entries[f].append(ReadmeEntry(name, False, tldr))
            paths.append(f"{folder.relative_to(root).as_posix()}/{name}.md")
    _readmes(root, folder_entries, groups, folders, topics)
    (root / ".gam_meta.json").write_text(
        GamMeta(total_chunks=len(paths), total_directories=folders + groups).model_dump_json()
    )
    return paths


def _render(front: dict[str, object], body: str, check: bool) -> str:
    """render_memory's text, through libyaml (PyYAML's pure-Python emitter would take
    minutes for 100,000 files); checked against render_memory once."""
    header = yaml.dump(
        front,
        Dumper=yaml.CSafeDumper,
        sort_keys=False,
        allow_unicode=True,
        width=100,
        default_flow_style=None,
    )
    text = f"---\n{header}---\n\n{body.strip()}\n"
    if check and text != render_memory(front, body):
        raise AssertionError("the fast rendering differs from render_memory")
    return text


def _folder(root: Path, f: int, groups: int, folders: int) -> Path:
    per_group = max(1, folders // groups)
    return root / f"area_{f // per_group:02d}" / f"subject_{f:04d}"


def _readmes(
    root: Path,
    entries: list[list[ReadmeEntry]],
    groups: int,
    folders: int,
    topics: list[list[str]],
) -> None:
    for f, listed in enumerate(entries):
        folder = _folder(root, f, groups, folders)
        if listed:
            about = ", ".join(topics[f][:4])
            (folder / "README.md").write_text(
                render_readme(folder.name, f"Memories about {about}.", listed), encoding="utf-8"
            )
    areas = sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))
    for area in areas:
        subs = [
            ReadmeEntry(s.name, True, f"Subject {s.name}.", count=len(list(s.glob("*.md"))) - 1)
            for s in sorted(p for p in area.iterdir() if p.is_dir())
        ]
        (area / "README.md").write_text(
            render_readme(area.name, "An area of the memory.", subs), encoding="utf-8"
        )
    top = [ReadmeEntry(a.name, True, "An area.") for a in areas]
    (root / "README.md").write_text(
        render_readme("Scale benchmark", "A synthetic memory.", top), encoding="utf-8"
    )
