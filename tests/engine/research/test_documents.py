"""Each look-alike document a research question is about is searched on its own: one
sub-question per document of the kind a question spans, and a sub-question about one
listed name kept to the document named after it."""

from __future__ import annotations

from pathlib import Path

from gam_desktop.engine.research.documents import by_document, kind_of
from gam_desktop.engine.research.models import SubQuestion
from gam_desktop.engine.research.steps import ExcerptIds, search
from tests.serve.test_retrieval import memory as tools_over

NOTE = "---\ntitle: {title}\nsource: {source}\n---\n{body}\n"


def reports(root: Path, authors: dict[str, int], extra: int = 0):
    """Field reports of the same colony by several authors (each count in two memories:
    the count, and a summary that never names the author), and unrelated notes."""
    files = {}
    for author, count in authors.items():
        source = f"field-report-{author.lower()}-2022.md"
        files[f"reports/{author}_counts.md"] = NOTE.format(
            title=f"{author} counts",
            source=source,
            body=f"Mote Isle puffin colony: {count} occupied burrows counted in the plots.",
        )
        files[f"reports/{author}_summary.md"] = NOTE.format(
            title=f"{author} summary",
            source=source,
            body="Seabird survey of the Skerrow Islands; author of this field report.",
        )
    for i in range(extra):
        files[f"kitchen/note_{i}.md"] = NOTE.format(
            title=f"Kitchen {i}", source=f"kitchen-{i}.txt", body="Fridges at 3 °C."
        )
    return tools_over(root, files)


def test_the_documents_of_the_kind_a_question_is_about(tmp_path: Path) -> None:
    tools = reports(tmp_path / "m", {"Varga": 1240, "Okafor-Lind": 1315, "Maalouf": 980}, 3)
    kind = kind_of(tools, "How many occupied puffin burrows did each field report count?")
    assert sorted(kind) == [
        "field-report-maalouf-2022.md",
        "field-report-okafor-lind-2022.md",
        "field-report-varga-2022.md",
    ]


def test_a_question_spanning_documents_is_asked_of_each(tmp_path: Path) -> None:
    tools = reports(tmp_path / "m", {"Varga": 1240, "Maalouf": 980}, 3)
    question = "How many occupied puffin burrows did each field report count?"
    subs = by_document(tools, question, [SubQuestion(question=question)])
    assert sorted(s.document for s in subs) == [
        "field-report-maalouf-2022.md",
        "field-report-varga-2022.md",
    ]
    assert all(s.question == f"{question} (in {s.document})" for s in subs)


def test_a_sub_question_about_one_name_keeps_to_the_document_named_after_it(
    tmp_path: Path,
) -> None:
    tools = reports(tmp_path / "m", {"Varga": 1240, "Okafor-Lind": 1315})
    question = "Compare the occupied puffin burrows counted by Varga and Okafor-Lind."
    subs = [
        SubQuestion(question="The burrows counted by Varga.", keywords=["Varga"]),
        SubQuestion(question="The burrows counted by Okafor-Lind.", keywords=["Okafor-Lind"]),
        SubQuestion(question="Where is Mote Isle?", keywords=["Mote", "Isle"]),
    ]
    kept = by_document(tools, question, subs)
    assert [s.document for s in kept] == [
        "field-report-varga-2022.md",
        "field-report-okafor-lind-2022.md",
        "",  # not about one name: searched everywhere
    ]


def test_a_search_kept_to_a_document_reads_only_its_memories(tmp_path: Path) -> None:
    """Okafor-Lind's memories never name him, and Varga's count ranks above them: kept to
    his report, the search reads his count, never hers."""
    tools = reports(tmp_path / "m", {"Varga": 1240, "Okafor-Lind": 1315})
    sub = SubQuestion(
        question="How many occupied puffin burrows on Mote Isle?",
        document="field-report-okafor-lind-2022.md",
    )
    found = search(tools, sub.question, 0, sub, ExcerptIds(), lambda read, matched: None)
    assert {e.document for e in found.excerpts} == {"field-report-okafor-lind-2022.md"}
    assert any("1315" in e.text for e in found.excerpts)
    everywhere = sub.model_copy(update={"document": ""})
    found = search(tools, sub.question, 0, everywhere, ExcerptIds(), lambda read, matched: None)
    assert "field-report-varga-2022.md" in {e.document for e in found.excerpts}


def test_a_kept_search_ignores_what_its_keywords_grep_in_a_look_alike(tmp_path: Path) -> None:
    """The keyword "Mote" is in every report: kept to Okafor-Lind's, the grep matches of
    Varga's memories are neither read nor counted as touched."""
    tools = reports(tmp_path / "m", {"Varga": 1240, "Okafor-Lind": 1315})
    sub = SubQuestion(
        question="How many occupied puffin burrows on Mote Isle?",
        keywords=["Mote"],
        document="field-report-okafor-lind-2022.md",
    )
    touched: list[str] = []
    found = search(tools, sub.question, 0, sub, ExcerptIds(), lambda r, m: touched.extend(r + m))
    assert {e.document for e in found.excerpts} == {"field-report-okafor-lind-2022.md"}
    assert touched and not any("Varga" in path for path in touched)
