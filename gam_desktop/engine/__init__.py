"""The Qt-free core of GAM Desktop: documents in, a memory folder out, questions answered.

Nothing under this package may import Qt; tests/engine/test_architecture.py checks it.
"""
