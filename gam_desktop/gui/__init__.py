"""The PySide6 desktop app: the only package that imports Qt. It holds no memory logic."""
