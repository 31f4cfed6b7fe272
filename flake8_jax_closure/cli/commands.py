"""``rule`` and ``lsp``: the commands that check no files."""

from __future__ import annotations

from typing import TextIO

from .output import EXIT_CLEAN, EXIT_ERROR


def rule(code: str | None, stdout: TextIO, stderr: TextIO, *, every: bool = False) -> int:
    from ..rules import SUMMARIES, rule_documentation

    if every:
        stdout.write("\n".join(rule_documentation(known) or "" for known in SUMMARIES))
        return EXIT_CLEAN
    if code is None:
        for known, summary_text in SUMMARIES.items():
            stdout.write(f"{known}  {summary_text}\n")
        return EXIT_CLEAN
    text = rule_documentation(code.upper())
    if text is None:
        print(f"flake8-jax-closure: unknown rule '{code}'", file=stderr)
        return EXIT_ERROR
    stdout.write(text)
    return EXIT_CLEAN


def lsp(stderr: TextIO) -> int:
    try:
        from ..lsp import main as serve
    except ImportError:
        print(
            "the language server needs pygls: install the [lsp] extra "
            "(pip install '.[lsp]' in a checkout of flake8-jax-closure)",
            file=stderr,
        )
        return EXIT_ERROR
    serve()
    return EXIT_CLEAN
