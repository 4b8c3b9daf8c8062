"""GAMTree: the lazy read-only view (spec 8)."""

from __future__ import annotations

from pathlib import Path

from gam_desktop.engine.models import NodeType
from gam_desktop.engine.tree import GAMTree
from tests.engine.test_agent import write_memory


def test_tree_opens_without_reading_contents(tmp_path: Path) -> None:
    tree = GAMTree.from_disk(write_memory(tmp_path / "m"))
    node = tree.get_node("nlp/bert_encoder.md")
    assert node is not None and node.node_type is NodeType.FILE and node.content is None
    assert node.meta["size"] > 0
    assert "2018" in tree.content_of("nlp/bert_encoder.md")
    assert tree.get_node("nlp/bert_encoder.md").content is not None  # now cached
    assert tree.get_node("nlp/missing.md") is None and tree.get_node("nope/x") is None
    assert ".gam_meta.json" not in tree.root.children


def test_tree_view_and_structure_summary(tmp_path: Path) -> None:
    tree = GAMTree.from_disk(write_memory(tmp_path / "m"))
    assert tree.memory_count() == 5
    view = tree.tree_view(depth=2).splitlines()
    assert view[0] == "m/"
    assert "├── foundations/ (2)" in view and "│   ├── sequences/ (1)" in view
    assert not any("recurrent_networks.md" in line for line in view)  # depth 3
    assert "recurrent_networks.md" in tree.tree_view(depth=3)
    summary = tree.get_structure_summary().splitlines()
    assert summary[0].startswith("- foundations/ (2 files): # Foundations Neural network")
    assert len(summary) == 3
