from pathlib import Path
from typing import Any

import pytest

# Modules whose every test is slow, left uncollected (not even imported: hypothesis alone costs
# each test process most of a second) when a run leaves the slow tests out.
SLOW_MODULES = frozenset({"test_fuzz.py"})


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    if collection_path.name in SLOW_MODULES and config.getoption("markexpr") == "not slow":
        return True
    return None


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-snapshots",
        action="store_true",
        help="rewrite the fixtures' snapshots (*.findings, *.fixed.py, *.nbfindings, "
        "*.fixed.ipynb) from the current output (review it)",
    )


@pytest.fixture(autouse=True)
def _private_cache(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each test gets its own findings cache: no test sees another's entries or the user's."""
    monkeypatch.setenv("FLAKE8_JAX_CLOSURE_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))


@pytest.fixture
def followed_frames(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the code of every frame the guard's trace watch follows from now on."""
    from flake8_jax_closure.runtime.guard import tracing

    visited: list[str] = []
    visit = tracing.Session.visit

    def counting(self: tracing.Session, frame: Any) -> Any:
        visited.append(frame.f_code.co_name)
        return visit(self, frame)

    monkeypatch.setattr(tracing.Session, "visit", counting)
    return visited
