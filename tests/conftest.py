import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-snapshots",
        action="store_true",
        help="rewrite fixtures/*.findings and *.fixed.py from the current output (review the diff)",
    )


@pytest.fixture(autouse=True)
def _private_cache(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each test gets its own findings cache: no test sees another's entries or the user's."""
    monkeypatch.setenv("FLAKE8_JAX_CLOSURE_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
