from __future__ import annotations

import pytest

from gam_desktop.engine.naming import MAX_NAME_CHARS, memory_file_stem, sanitize_name, unique_name


@pytest.mark.parametrize(
    "raw,expected",
    [
        ("Neural Networks", "neural_networks"),
        ("a/b\\c:d*e?f", "a_b_c_d_e_f"),
        ("../../etc/passwd", "etc_passwd"),
        ("CON", "con_"),
        ("lpt1", "lpt1_"),
        ("aux.txt", "aux_txt"),
        ("  trailing dots...  ", "trailing_dots"),
        ("日本語 テキスト", "日本語_テキスト"),
        ("", "untitled"),
        ("///", "untitled"),
        ("ﬁle", "file"),  # NFKC folds ligatures so equal-looking names are equal
    ],
)
def test_sanitize_name(raw: str, expected: str) -> None:
    assert sanitize_name(raw) == expected


def test_long_names_are_cut() -> None:
    assert len(sanitize_name("word_" * 40)) <= MAX_NAME_CHARS


def test_readme_is_not_a_memory_name() -> None:
    assert memory_file_stem("README") == "readme_note"


def test_unique_name_is_case_insensitive() -> None:
    assert unique_name("notes", ["Notes.md"], ".md") == "notes_2.md"
    assert unique_name("notes", ["notes.md", "NOTES_2.md"], ".md") == "notes_3.md"
    assert unique_name("other", ["notes.md"], ".md") == "other.md"
