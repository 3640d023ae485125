"""The one error type user input raises: file, field or line, what was wrong, what is allowed."""

from __future__ import annotations


class InputError(Exception):
    """Bad user input. The CLI prints `str(err)` on one line and exits 2."""

    def __init__(self, source: str, field: str, problem: str, allowed: str = "") -> None:
        self.source = source
        self.field = field
        self.problem = problem
        self.allowed = allowed
        super().__init__(self.message())

    def __reduce__(self):
        # Rebuilt from its fields when it crosses a process boundary (sweep and app workers).
        return (type(self), (self.source, self.field, self.problem, self.allowed))

    def message(self) -> str:
        where = f"{self.source}: {self.field}" if self.field else self.source
        text = f"{where}: {self.problem}"
        if self.allowed:
            text += f" (allowed: {self.allowed})"
        return text
