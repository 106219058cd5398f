"""What code a run ran, as data (``RunResult.implemented_by``), so an analysis reads which
library and scipy method ran from fields, never from the text of ``RunResult.implementation``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

#: Libraries whose optimizers run natively, with the namespace their classes live in.
NAMESPACES = {"torch": "torch.optim", "keras": "keras.optimizers", "optax": "optax",
              "scipy": "scipy.optimize"}


@dataclass(frozen=True)
class Implementation:
    """The code that ran a run's steps."""

    library: str
    name: str
    method: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """``{"library", "name", "method"}`` (JSON-serializable)."""
        return {"library": self.library, "name": self.name, "method": self.method}

    @classmethod
    def from_dict(cls, d: Any) -> Implementation:
        """Inverse of :meth:`to_dict`."""
        ok = (isinstance(d, dict) and isinstance(d.get("library"), str)
              and isinstance(d.get("name"), str)
              and (d.get("method") is None or isinstance(d.get("method"), str)))
        if not ok:
            raise ValueError("run field 'implemented_by' must be {'library': str, 'name': str, "
                             f"'method': str or null}}, got {d!r}")
        return cls(d["library"], d["name"], d.get("method"))

    @classmethod
    def from_text(cls, text: str, impl: str = "", optimizer: str = "") -> Implementation | None:
        """The implementation a run saved before it was recorded ran, from its description."""
        if text.startswith("optcmp reference") or (not text and impl == "reference"):
            return cls("optcmp", optimizer)
        method = re.fullmatch(r"scipy\.optimize\.minimize\(method='([^']+)'\)", text)
        if method:
            return cls("scipy", "minimize", method.group(1))
        for library, space in NAMESPACES.items():
            found = re.match(re.escape(space) + r"\.(\w+)", text)
            if found:
                return cls(library, found.group(1))
        return None
