"""``# noqa`` comments, read the way flake8 reads them, for the standalone command line.

flake8 applies ``# noqa`` itself; the plugin never filters again.
"""

from __future__ import annotations

import re

from .diagnostics import Finding

# flake8's own pattern: a bare noqa comment, or one with codes after a colon (JC101,JC102).
_NOQA = re.compile(
    r"# noqa"
    r"(?::[\s]?(?P<codes>([A-Z][0-9]+(?:[,\s]+)?)+))?",
    re.IGNORECASE,
)
_CODE = re.compile(r"[A-Z][0-9]+", re.IGNORECASE)


def is_suppressed(finding: Finding, lines: list[str]) -> bool:
    if not 1 <= finding.line <= len(lines):
        return False
    match = _NOQA.search(lines[finding.line - 1])
    if match is None:
        return False
    codes = match.group("codes")
    if not codes:
        return True
    return any(finding.code.startswith(code.upper()) for code in _CODE.findall(codes))
