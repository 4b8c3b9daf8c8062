"""The window's modules import one another one way only (issue 40): app, main_window, menus,
closing and selftest were one cycle, held together by imports inside functions and under
TYPE_CHECKING. grimp (import-linter's graph) counts both kinds, so a cycle cannot hide."""

from __future__ import annotations

import grimp


def test_no_gui_module_imports_itself_back() -> None:
    graph = grimp.build_graph("gam_desktop", cache_dir=None)
    gui = {m for m in graph.modules if m.startswith("gam_desktop.gui.")}
    cycles = sorted(
        f"{module} -> {imported}"
        for module in gui
        for imported in graph.find_modules_directly_imported_by(module) & gui
        if graph.chain_exists(importer=imported, imported=module)
    )
    assert cycles == []
