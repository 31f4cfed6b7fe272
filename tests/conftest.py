import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-snapshots",
        action="store_true",
        help="rewrite fixtures/*.findings and *.fixed.py from the current output (review the diff)",
    )
