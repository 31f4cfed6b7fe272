"""``# noqa`` comments, read exactly the way flake8 reads them, for the standalone command line
and the language server (flake8 applies ``# noqa`` itself; the plugin never filters again).

flake8 finds the comment case-insensitively (``# NOQA``), but compares the codes after the colon
as written: ``# noqa: jc102`` names no code flake8 reports, so it hides nothing, there or here.

A comment line of its own ``# flake8: noqa`` or ``# ruff: noqa`` exempts the whole file, as in
flake8 and ruff; with codes (``# ruff: noqa: JC102``) it exempts those codes, as in ruff.
"""

from __future__ import annotations

import re

from .diagnostics import Finding

# flake8's ``defaults.NOQA_INLINE_REGEXP``: a bare comment, or one with codes after a colon.
_NOQA = re.compile(r"# noqa(?::[\s]?(?P<codes>([A-Z]+[0-9]+(?:[,\s]+)?)+))?", re.IGNORECASE)
_SEPARATORS = re.compile(r"[,\s]")
# ruff's file-level exemption (flake8's ``NOQA_FILE`` without codes).
_FILE_NOQA = re.compile(
    r"^[ \t]*#[ \t]*(?:flake8|ruff)[:=][ \t]*noqa"
    r"(?:[ \t]*:[ \t]*(?P<codes>[A-Z]+[0-9]+(?:[ \t]*,[ \t]*[A-Z]+[0-9]+)*))?[ \t]*(?:#|$)",
    re.IGNORECASE | re.MULTILINE,
)
EVERY_CODE = frozenset({""})  # a prefix of every code


def file_exemption(source: str) -> frozenset[str]:
    """Codes (and prefixes) exempted for the whole file; ``EVERY_CODE`` for all of them."""
    exempt: set[str] = set()
    for match in _FILE_NOQA.finditer(source):
        codes = match.group("codes")
        if codes is None:
            return EVERY_CODE
        exempt.update(code.strip().upper() for code in codes.split(","))
    return frozenset(exempt)


def is_suppressed(finding: Finding, lines: list[str]) -> bool:
    if not 1 <= finding.line <= len(lines):
        return False
    match = _NOQA.search(lines[finding.line - 1])
    if match is None:
        return False
    codes = match.group("codes")
    if codes is None:
        return True
    named = {code.strip() for code in _SEPARATORS.split(codes) if code.strip()}
    return finding.code in named or finding.code.startswith(tuple(named))


def noqa_comment(line: str, code: str) -> str:
    """``line`` with ``code`` added to its ``# noqa`` comment (or a new one)."""
    body = line.rstrip("\r\n")
    ending = line[len(body) :]
    match = _NOQA.search(body)
    if match is None:
        return f"{body}  # noqa: {code}{ending}"
    codes = match.group("codes")
    if codes is None:
        return line  # a bare noqa comment hides everything already
    end = match.start("codes") + len(codes.rstrip(", \t"))
    return f"{body[:end]},{code}{body[end:]}{ending}"
