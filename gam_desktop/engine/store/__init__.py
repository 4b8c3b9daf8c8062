"""The memory folder: its layout (memories, READMEs, the meta file, `.gam/`), Markdown with
front matter, safe names, links treated as absent, change sets applied atomically and
undoably, the writer lock, and the watcher for edits made outside the app."""
