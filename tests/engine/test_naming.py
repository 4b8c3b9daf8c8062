from __future__ import annotations

import pytest

from gam_desktop.engine.store.naming import (
    MAX_NAME_CHARS,
    memory_file_stem,
    sanitize_name,
    unique_name,
)


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


def test_a_memory_path_fits_windows_under_a_long_documents_folder() -> None:
    """Three 64-character folder levels and a 64-character title used to make a 200-character
    path inside the memory: under C:\\Users\\...\\OneDrive\\Documents it passed Windows' 260."""
    from gam_desktop.engine.ingest.planning import normalize_dir_path
    from gam_desktop.engine.store.naming import (
        MAX_PATH_CHARS,
        fit_stem,
        memory_file_stem,
        sanitize_folder_name,
    )

    long_words = "quarterly operational resilience review of the northern logistics hub"
    folder = normalize_dir_path("/".join([long_words] * 3))
    assert all(len(part) <= 28 for part in folder.split("/")) and folder.count("/") == 2
    stem = fit_stem(memory_file_stem(long_words * 3), folder)
    assert len(f"{folder}/{stem}_99.md") <= MAX_PATH_CHARS
    assert stem.startswith("quarterly")  # shortened, still saying what it is
    assert fit_stem("short_title", folder) == "short_title"
    assert sanitize_folder_name(long_words) == "quarterly_logistics_hub"  # both ends kept
    # A year or version at the end is what tells look-alikes apart: it is never cut off.
    assert sanitize_folder_name("garden-diary-brandt-holm-2021") == "garden_diary_holm_2021"
    assert fit_stem("cosyheat_user_guide_of_every_minor_version_" * 3 + "2_0", folder).endswith(
        "2_0"
    )
    assert sanitize_name("Hollybrook Hostel — Check-In Rules, keys & rota") == (
        "hollybrook_hostel_check_in_rules_keys_rota"
    )
