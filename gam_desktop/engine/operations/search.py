"""Finding files for a person (the window's find box): the files matching a query, every
file's title, and what to tell about search. Reads only; stops (OperationCancelled) between
its steps once the Workflow's token is cancelled."""

from __future__ import annotations

from gam_desktop.engine.operations.context import OperationContext
from gam_desktop.engine.retrieval import find
from gam_desktop.engine.retrieval.find import Found


class SearchOperations:
    def __init__(self, context: OperationContext) -> None:
        self.context = context

    def files(self, query: str, limit: int = 20) -> list[Found]:
        """The files whose text best matches `query` (BM25 over the memories, their original
        wording, READMEs, conversations and facts), best first, one per file, each with its
        title and a snippet with the query's words marked."""
        return find.search(self.context.search_tools(), query, limit, self.context.cancel)

    def notices(self) -> list[str]:
        """What the user should be told about search and was not yet, each thing once (no
        embedding model, the embedding endpoint failing: search is BM25 alone meanwhile)."""
        tools = self.context.tools
        return tools.index.notices() if tools is not None else []

    def titles(self) -> dict[str, str]:
        """Every Markdown file's title by path, for filtering the tree by name."""
        return find.titles(self.context.search_tools(), self.context.cancel)
