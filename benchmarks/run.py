"""Benchmark: flake8-jax-closure against flake8 and ruff, side by side in one run.

    python benchmarks/run.py [--target DIR] [--repeat 3] [--jobs N] [--output table.md]

Measures, with medians over ``--repeat`` runs of each command:
- flake8 without the plugin against flake8 with it, over the target (default: the installed
  ``jax`` package);
- ``flake8-jax-closure check`` cold (no cache) and warm (cache filled) against
  ``ruff check --select F,E,W,B --no-cache`` (ruff is a benchmark-only dependency);
- generated modules of 12,500, 25,000 and 50,000 lines, to show that time grows linearly;
- peak memory of single-process runs, files that needed libcst, lines per second;
- that the pre-pass changes no finding: ``check`` with and without it must agree exactly.

Prints a Markdown table with each goal and whether it is met, as ratios from this one run.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# Launches a command and prints its peak resident memory (KiB) on the last line of stderr.
_MEASURE = (
    "import resource, subprocess, sys\n"
    "quiet = subprocess.DEVNULL\n"
    "subprocess.run(sys.argv[1:], stdout=quiet, stderr=quiet)\n"
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr)\n"
)

# flake8 with our plugin left out of its plugin search, for the "without" side.
_FLAKE8_WITHOUT_PLUGIN = (
    "import sys\n"
    "from flake8.plugins import finder\n"
    "found = finder._find_importlib_plugins\n"
    "ours = 'flake8-jax-closure'\n"
    "finder._find_importlib_plugins = lambda: (p for p in found() if p.package != ours)\n"
    "from flake8.main.cli import main\n"
    "sys.exit(main(sys.argv[1:]))\n"
)


def timed(command: list[str], repeat: int, env: dict[str, str] | None = None) -> float:
    durations = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        durations.append(time.perf_counter() - start)
    return statistics.median(durations)


def peak_memory_kib(command: list[str], env: dict[str, str] | None = None) -> int:
    completed = subprocess.run(
        [sys.executable, "-c", _MEASURE, *command], capture_output=True, text=True, env=env
    )
    return int(completed.stderr.strip().splitlines()[-1])


def generated_module(lines: int) -> str:
    block = (
        "SCALE_{i} = 1.0\n\n\n"
        "@jax.jit\n"
        "def step_{i}(x, y):\n"
        "    z = x * SCALE_{i} + y\n"
        "    for k in range(3):\n"
        "        z = jnp.tanh(z) + k\n"
        "    return z\n\n\n"
        "def set_scale_{i}(value):\n"
        "    global SCALE_{i}\n"
        "    SCALE_{i} = value\n\n\n"
    )
    per_block = block.count("\n")
    body = "".join(block.format(i=i) for i in range(max(1, (lines - 3) // per_block)))
    return "import jax\nimport jax.numpy as jnp\n\n" + body


def count_lines(target: Path) -> tuple[int, int]:
    files = [p for p in target.rglob("*.py")]
    return len(files), sum(p.read_bytes().count(b"\n") for p in files)


def libcst_files(target: Path) -> int:
    """Files that pass both cheap passes and so need the libcst analysis."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from flake8_jax_closure.prefilter import needs_analysis

    from flake8_jax_closure.engine import _mentions_compile
    from flake8_jax_closure.settings import Settings

    settings = Settings()
    needed = 0
    for path in target.rglob("*.py"):
        source = path.read_text(encoding="utf-8", errors="replace")
        if _mentions_compile(source, settings) and needs_analysis(
            source, settings.compile_functions
        ):
            needed += 1
    return needed


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--target", type=Path, help="folder to check (default: the installed jax)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--output", type=Path, help="also write the Markdown table here")
    args = parser.parse_args()
    if args.target is None:
        import jax

        args.target = Path(jax.__file__).parent
    ruff = shutil.which("ruff") or str(Path(sys.executable).parent / "ruff")
    if not Path(ruff).exists():
        print("ruff is needed: pip install ruff", file=sys.stderr)
        return 2
    target = str(args.target)
    jobs = str(args.jobs)
    tool = [sys.executable, "-m", "flake8_jax_closure"]
    cache = tempfile.mkdtemp(prefix="jc-bench-cache-")
    env = {**os.environ, "FLAKE8_JAX_CLOSURE_CACHE_DIR": cache}
    files, lines = count_lines(args.target)
    print(
        f"target {target}: {files} files, {lines} lines; {args.repeat} runs each, jobs {jobs}",
        file=sys.stderr,
    )

    flake8_without = [sys.executable, "-c", _FLAKE8_WITHOUT_PLUGIN, f"--jobs={jobs}", target]
    flake8_with = [sys.executable, "-m", "flake8", f"--jobs={jobs}", target]
    ruff_check = [ruff, "check", "--select", "F,E,W,B", "--no-cache", "--exit-zero", "-q", target]
    cold = [*tool, "check", "--no-cache", "--jobs", jobs, target]
    warm = [*tool, "check", "--jobs", jobs, target]

    results: dict[str, float] = {}
    results["flake8"] = timed(flake8_without, args.repeat)
    results["flake8 + plugin"] = timed(flake8_with, args.repeat)
    results["ruff"] = timed(ruff_check, args.repeat)
    results["check cold"] = timed(cold, args.repeat, env)
    subprocess.run(warm, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)  # fill
    results["check warm"] = timed(warm, args.repeat, env)
    for name, seconds in results.items():
        print(f"{name}: {seconds:.2f} s", file=sys.stderr)

    memory = {
        "flake8": peak_memory_kib(
            [sys.executable, "-c", _FLAKE8_WITHOUT_PLUGIN, "--jobs=1", target]
        ),
        "check": peak_memory_kib([*tool, "check", "--no-cache", "--jobs", "1", target], env),
    }

    scaling: list[tuple[int, float]] = []
    with tempfile.TemporaryDirectory() as folder:
        for size in (12_500, 25_000, 50_000):
            module = Path(folder) / f"generated_{size}.py"
            module.write_text(generated_module(size))
            seconds = timed(
                [*tool, "check", "--no-cache", "--jobs", "1", str(module)], args.repeat, env
            )
            scaling.append((size, seconds))

    same = _same_findings(tool, target, env)
    needed = libcst_files(args.target)

    overhead = results["flake8 + plugin"] / results["flake8"] - 1
    rows = [
        ("plugin overhead over flake8", f"{overhead:+.1%}", "at most +5%", overhead <= 0.05),
        (
            "cold check / ruff",
            f"{results['check cold'] / results['ruff']:.1f}x",
            "at most 10x",
            results["check cold"] <= 10 * results["ruff"],
        ),
        (
            "warm check / ruff",
            f"{results['check warm'] / results['ruff']:.1f}x",
            "at most 1x",
            results["check warm"] <= results["ruff"],
        ),
        (
            "peak memory check / flake8",
            f"{memory['check'] / memory['flake8']:.2f}x",
            "at most 2x",
            memory["check"] <= 2 * memory["flake8"],
        ),
    ]
    per_line = [seconds / size for size, seconds in scaling]
    linear = max(per_line) <= 1.3 * min(per_line)
    rows.append(
        (
            "time per line, 12.5k vs 50k lines",
            f"{per_line[-1] / per_line[0]:.2f}x",
            "about 1x (linear)",
            linear,
        )
    )
    rows.append(
        (
            "findings with and without the pre-pass",
            "identical" if same else "DIFFERENT",
            "identical",
            same,
        )
    )

    table = [
        f"Target: `{args.target.name}` ({files} files, {lines:,} lines); "
        f"medians of {args.repeat} runs; "
        f"{jobs} jobs; Python {sys.version.split()[0]}.",
        "",
        "| command | seconds | lines/s |",
        "| --- | ---: | ---: |",
        *(
            f"| {name} | {seconds:.2f} | {lines / seconds:,.0f} |"
            for name, seconds in results.items()
        ),
        *(
            f"| check, generated {size:,}-line module | {seconds:.2f} | {size / seconds:,.0f} |"
            for size, seconds in scaling
        ),
        "",
        f"Peak memory (one process): flake8 {memory['flake8'] / 1024:.0f} MiB, "
        f"check {memory['check'] / 1024:.0f} MiB. "
        f"Files that needed libcst: {needed} of {files}.",
        "",
        "| goal | measured | target | met |",
        "| --- | ---: | --- | --- |",
        *(
            f"| {goal} | {value} | {wanted} | {'yes' if ok else 'no'} |"
            for goal, value, wanted, ok in rows
        ),
    ]
    text = "\n".join(table) + "\n"
    print(text)
    if args.output:
        args.output.write_text(text)
    shutil.rmtree(cache, ignore_errors=True)
    return 0


def _same_findings(tool: list[str], target: str, env: dict[str, str]) -> bool:
    outputs = [
        subprocess.run(
            [*tool, "check", "--no-cache", *extra, target], capture_output=True, text=True, env=env
        ).stdout
        for extra in ([], ["--no-prefilter"])
    ]
    return outputs[0] == outputs[1]


if __name__ == "__main__":
    sys.exit(main())
