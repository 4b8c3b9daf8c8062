"""Documents built to stall or swell the readers (tester's findings 21, 04/05 and 06): an
e-mail with a megabyte-long header, a small Word file whose body is 120 MB of tiny
paragraphs, text full of control codes. Each is read within bounds, or refused in one
line, and the rest of the drop goes on."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from gam_desktop.engine.ingest import mail, packages
from gam_desktop.engine.ingest.documents import DocumentError, load_file
from tests.documents import make_pptx

W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
_TYPES = (
    '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/'
    'package/2006/content-types"><Default Extension="rels" ContentType="application/'
    'vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType='
    '"application/xml"/><Override PartName="/word/document.xml" ContentType="application/'
    'vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>'
)
_RELS = (
    '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.'
    'openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://'
    "schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument"
    '" Target="word/document.xml"/></Relationships>'
)


def bare_docx(path: Path, body: bytes) -> Path:
    """A Word file of a body alone (no styles part), as the tester built it."""
    head = f'<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="{W}"><w:body>'
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as package:
        package.writestr("[Content_Types].xml", _TYPES)
        package.writestr("_rels/.rels", _RELS)
        package.writestr("word/document.xml", head.encode() + body + b"</w:body></w:document>")
    return path


# -- e-mail ------------------------------------------------------------------------------


def test_a_megabyte_subject_is_cut_not_parsed_for_minutes(tmp_path: Path) -> None:
    """The email package's header parser is quadratic: 300 KB of Subject took ~5 s, 2 MB
    more than ten minutes. The header is cut to 16 KB first, with a warning."""
    path = tmp_path / "long_subject.eml"
    path.write_text(
        "From: a@b\nTo: c@d\nSubject: " + "x " * 150_000 + "\n\nThe body about otters.\n"
    )
    doc = load_file(path)  # 0.1 s; it took ~5 s, and a 2 MB Subject more than ten minutes
    assert doc.warnings == ["long_subject.eml: headers longer than 16 KB were cut (Subject)"]
    title, rest = doc.text.split("\n\n", 1)
    assert title.startswith("# x x x") and title.endswith("…") and len(title) < 510
    assert rest.startswith("From: a@b\nTo: c@d\n\nThe body about otters.")


def test_a_message_of_endless_headers_is_refused_in_one_line(tmp_path: Path) -> None:
    """Hundreds of parts, each with a long header of its own: bounded per header is not
    enough (1,000 parts of 7 KB took six minutes); the whole message's header work is."""
    params = "; ".join(f"p{i}=v" for i in range(150))  # ~1 KB
    parts = "".join(f"--B\nContent-Type: text/plain; n={i}; {params}\n\nx\n" for i in range(600))
    path = tmp_path / "parts.eml"
    path.write_text(
        "From: a@b\nSubject: s\nMIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=B"
        f"\n\n--B\nContent-Type: text/plain\n\nhello\n{parts}--B--\n"
    )
    with pytest.raises(DocumentError) as refused:
        load_file(path)
    assert str(refused.value) == (
        "parts.eml: its headers are too many or too long to read (more than"
        f" {mail.MAX_HEADER_WORK:,} characters of headers)"
    )


def test_a_long_header_does_not_stall_the_rest_of_the_drop(
    make_workflow, memory_dir: Path, tmp_path: Path
) -> None:
    drop = tmp_path / "drop"
    drop.mkdir()
    (drop / "long_subject.eml").write_text(
        "From: a@b\nSubject: " + "x " * 150_000 + "\n\nThe body about otters.\n"
    )
    (drop / "good.txt").write_text("Llamas hum when they are content.\n")
    report = make_workflow().add(files=sorted(drop.iterdir()))
    assert sorted(report.documents) == ["good.txt", "long_subject.eml"]
    assert "long_subject.eml: headers longer than 16 KB were cut (Subject)" in report.warnings


# -- Word and PowerPoint: memory, not only bytes -----------------------------------------

_PEAK = """
import resource, sys
from pathlib import Path
from gam_desktop.engine.ingest import office
import docx, lxml.etree  # the libraries' own memory is not the document's
path = Path(sys.argv[1]); data = path.read_bytes()
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
doc = office.load_docx(path, data)
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"chars": len(doc.text), "grew_mb": (after - before) / 1024}))
""".replace("import resource", "import json, resource")


def test_a_word_body_of_a_million_elements_is_read_in_little_memory(tmp_path: Path) -> None:
    """The tester's file is 120 MB of tiny paragraphs (a 2 GB peak); here 5 MB of empty
    formatting elements, a million of them: python-docx's whole tree grew the process by
    30 to 85 MB, read block by block it grows by none."""
    para = b"<w:p><w:r><w:rPr>" + b"<w:b/>" * 2500 + b"</w:rPr><w:t>a</w:t></w:r></w:p>"
    path = bare_docx(tmp_path / "xmlbulk.docx", para * 400)
    out = subprocess.run(
        [sys.executable, "-c", _PEAK, str(path)], capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr
    measured = json.loads(out.stdout)
    assert measured["chars"] == 3 * 400 - 2  # every "a", apart by blank lines
    assert measured["grew_mb"] < 10, measured


def test_one_block_too_large_for_memory_is_refused_by_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The limit is one block's (a table, a paragraph), not the body's: a long body of
    small paragraphs is read, one huge table refused."""
    monkeypatch.setattr(packages, "MAX_TREE_ELEMENTS", 5_000)
    many = bare_docx(tmp_path / "many.docx", b"<w:p><w:r><w:t>b</w:t></w:r></w:p>" * 20_000)
    assert load_file(many).text.count("b") == 20_000
    cell = b"<w:tc><w:p><w:r><w:t>c</w:t></w:r></w:p></w:tc>"
    table = bare_docx(tmp_path / "table.docx", b"<w:tbl><w:tr>" + cell * 2_000 + b"</w:tr></w:tbl>")
    with pytest.raises(DocumentError, match=r"^table\.docx: a paragraph or table in it holds"):
        load_file(table)


def test_a_deck_of_too_many_elements_is_refused_before_python_pptx_parses_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """python-pptx parses every part whole: their elements are counted first."""
    monkeypatch.setattr(packages, "MAX_TREE_ELEMENTS", 20_000)
    path = make_pptx(tmp_path / "deck.pptx", [("Lines", "\n".join(["line"] * 8_000))])
    with pytest.raises(DocumentError, match=r"^deck\.pptx: its XML holds more than 20,000"):
        load_file(path)


# -- control codes -----------------------------------------------------------------------

CONTROLS = "".join(chr(c) for c in range(1, 32) if c not in (9, 10, 13))


def control_text() -> str:
    """The tester's controls.txt: under 5% of control codes (ESC among them), read as
    text, not refused as binary."""
    return CONTROLS * 10 + "text " * 1000 + "\x1b[31mred\x1b[0m \x1b]0;TITLE\x07end\n"


def test_control_codes_are_taken_out_of_the_text(tmp_path: Path) -> None:
    path = tmp_path / "controls.txt"
    path.write_text(control_text())
    text = load_file(path).text
    assert not [c for c in text if not c.isprintable() and c not in "\t\n"]
    assert text.endswith("text red end\n")  # escape sequences go whole


def test_control_codes_never_reach_a_note(make_workflow, memory_dir: Path, tmp_path: Path) -> None:
    path = tmp_path / "controls.txt"
    path.write_text(control_text())
    make_workflow().add(files=[path])
    written = [  # notes, READMEs, the source's text, the memory's state
        p
        for p in memory_dir.rglob("*")
        if p.suffix in (".md", ".txt", ".json") and ".git" not in p.parts
    ]
    assert [p for p in written if p.suffix == ".md"] and [p for p in written if p.suffix == ".txt"]
    dirty = [
        p.relative_to(memory_dir).as_posix()
        for p in written
        if any(chr(c) in p.read_text(errors="replace") for c in (*range(1, 9), 0x1B, 0x7F))
    ]
    assert dirty == []


# -- what the report says ----------------------------------------------------------------


def test_a_first_build_reuses_no_earlier_result(
    make_workflow, llm_server, memory_dir: Path, tmp_path: Path
) -> None:
    """Identical passages in one document are summarized once, but that is no "earlier LLM
    result reused" on a memory's first build (the tester saw "91 ... reused")."""
    section = "## Same\n\nOtters hold hands while they sleep so they do not drift apart.\n\n"
    path = tmp_path / "repeats.md"
    path.write_text("# Repeats\n\n" + section * 6)
    report = make_workflow(min_tokens=5, max_tokens=30).add(files=[path])
    assert report.chunks > llm_server.state.tasks().count("memorize")  # some paid once
    assert report.reused == 0 and "reused" not in report.summary()
