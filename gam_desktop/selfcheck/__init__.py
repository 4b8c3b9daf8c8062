"""Self-check support, not product logic: the app exercised with no network and no model.

- `scripted_llm`: a scripted OpenAI-compatible server that answers each building task as a
  sensible small model would, deterministically, with faults to switch on (bad JSON, 429,
  500, broken taxonomies, slow replies, refused `json_schema` or `tools`).
- `scripted_agent`: its answers to questions (tool calls over the memory).
- `demo`: the headless demo of the README's first command (`python -m gam_desktop.selfcheck.demo`).

`gam-desktop --self-test` (gui/selftest.py), the tests and the benchmarks use them. The
product never imports this package (an import-linter contract in pyproject.toml).
"""
