"""GAM Desktop: a local-first, LLM-organized memory of your documents."""

__version__ = "0.1.0"
