"""The memory's tools for MCP clients (Claude Desktop, Cursor, editors' assistants), on the
official `mcp` SDK: `search`, `read`, `list`, `ask`, and `remember` when it is allowed;
the root README and the folder tree as resources.

Every path goes through the agent's sandbox (`MemoryTools`): `../`, absolute paths, links
out of the folder and the app's private folders are refused with the sandbox's words.
`remember` is a normal add (the text memorized, placed and committed as one operation),
so History shows what another app taught the memory and can undo it.
"""

from __future__ import annotations

from pathlib import Path

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations

from gam_desktop.engine.api import (
    EmbeddingSettings,
    GamError,
    LLMError,
    LLMSettings,
    MemoryTools,
    Redactor,
    ToolResult,
    Workflow,
)

INSTRUCTIONS = (
    "A GAM memory: Markdown notes organized in folders by topic, each folder with a "
    "README.md, plus saved conversations (conversations/) and facts the user stated "
    "(facts/). Search it, list folders, read files by their path, or ask it a question."
)
READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)
TREE_LIMIT = 2000  # folders listed in the tree resource


class MemoryServer:
    """The MCP server of one memory. Reads share one set of search tools (thread-safe);
    each `ask` and `remember` gets a Workflow of its own (the SDK runs tools on threads)."""

    def __init__(
        self,
        root: Path,
        settings: LLMSettings,
        *,
        allow_remember: bool = False,
        embeddings: EmbeddingSettings | None = None,  # search by meaning; None: BM25 alone
    ) -> None:
        self.root = Path(root)
        self.settings = settings
        self.embeddings = embeddings
        self.tools = MemoryTools(self.root, embeddings=embeddings)
        # what no answer may carry: the LLM's key (and the HTTP token: `keep_secret`)
        self.redactor = Redactor.for_settings(settings)
        self.mcp = MCPServer("gam-memory", instructions=INSTRUCTIONS)
        self.mcp.add_tool(self.search, annotations=READ_ONLY)
        self.mcp.add_tool(self.read, annotations=READ_ONLY)
        self.mcp.add_tool(self.list, annotations=READ_ONLY)
        self.mcp.add_tool(self.ask, annotations=READ_ONLY)
        if allow_remember:
            self.mcp.add_tool(self.remember)
        self.mcp.resource(
            "gam://readme",
            name="README",
            mime_type="text/markdown",
            description="The memory's root README: what it holds",
        )(self.readme)
        self.mcp.resource(
            "gam://tree",
            name="Folder tree",
            mime_type="text/plain",
            description="Every folder of the memory",
        )(self.tree)

    def keep_secret(self, secret: str) -> None:
        """Also keep `secret` (the bearer token over HTTP) out of every answer."""
        self.redactor = Redactor([*self.redactor.secrets, secret])

    def _workflow(self) -> Workflow:
        return Workflow(
            gam_dir=self.root, settings=self.settings, tools=self.tools, embeddings=self.embeddings
        )

    # -- tools (their docstrings are what the client's model reads) --------------------

    def search(self, query: str, limit: int = 10) -> str:
        """Search the memory (BM25 over notes, their original wording, READMEs, saved
        conversations and facts, and by meaning where an embedding model is set up). Returns
        the best files, each with its path and a snippet."""
        found = self._workflow().search(query, max(1, min(limit, 50)))
        if not found:
            return f"No results for '{query}'."
        return "\n".join(f"{f.path} — {f.title}\n  {f.snippet}" for f in found)

    def read(self, path: str) -> str:
        """Read one file of the memory by its path relative to the memory's root (as search
        and list give it), e.g. 'projects/README.md'."""
        return _text(self.tools.run("cat", {"file": path}))

    def list(self, path: str = "/") -> str:
        """List a folder of the memory: its subfolders and files, with sizes."""
        return _text(self.tools.run("ls", {"path": path}))

    def ask(self, question: str) -> str:
        """Ask the memory a question: its agent reads the relevant notes and answers, with
        the files it used as sources."""
        try:
            result = self._workflow().request(question)
        except (GamError, LLMError) as exc:
            raise ToolError(f"The memory could not answer: {exc}") from exc
        sources = [c.describe() for c in result.citations] or result.sources
        return self.redactor.text(
            f"{result.answer}\n\nSources: {', '.join(sources) or '(none)'}\n"
            f"Confidence: {result.confidence:.2f}"
        )

    def remember(self, text: str) -> str:
        """Add a note or a text to the memory: it is summarized, filed in the right folder
        and recorded as one operation in the memory's history (which can undo it)."""
        if not text.strip():
            raise ToolError("There is nothing to remember: the text is empty.")
        try:
            report = self._workflow().add(text=text)
        except (GamError, LLMError, OSError) as exc:
            raise ToolError(f"The memory could not add it: {exc}") from exc
        if not report.memories:
            said = "; ".join(report.warnings) or "nothing new to add"
            return self.redactor.text(f"Nothing was added: {said}.")
        return self.redactor.text(f"{report.summary()}: " + ", ".join(report.memories) + ".")

    # -- resources -----------------------------------------------------------------------

    def readme(self) -> str:
        return _text(self.tools.run("cat", {"file": "README.md"}))

    def tree(self) -> str:
        """The folders, one per line, indented by depth (files are listed by `list`)."""
        lines = []
        for folder in sorted(self._folders()):
            depth = folder.count("/")
            lines.append("  " * depth + folder.rsplit("/", 1)[-1] + "/")
            if len(lines) >= TREE_LIMIT:
                lines.append("…")
                break
        return "\n".join(lines) or "(the memory has no folders yet)"

    def _folders(self) -> set[str]:
        self.tools.corpus.refresh_if_stale()
        folders: set[str] = set()
        for key in self.tools.corpus.snapshot():
            parts = key.split("#", 1)[0].split("/")[:-1]
            folders.update("/".join(parts[: n + 1]) for n in range(len(parts)))
        return folders


def _text(result: ToolResult) -> str:
    if result.error:  # a refusal the client's model should read, not a crash
        raise ToolError(result.text.removeprefix("error: "))
    return result.text
