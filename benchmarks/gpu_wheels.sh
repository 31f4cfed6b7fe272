#!/usr/bin/env bash
# Download into .whl/ the wheels of the project's own dependencies (libcst, PyYAML, flake8 and
# its plugins), for CPython 3.12 on manylinux x86_64: benchmarks/gpu_check.sh installs them on
# a GPU machine that cannot reach a package index. JAX itself is expected there already.
#
#   benchmarks/gpu_wheels.sh          # then carry .whl/ (git-ignored) to the GPU machine
#
# The versions are those the tests run with; PYTHON_VERSION=3.11 fetches wheels for 3.11.
set -euo pipefail
cd "$(dirname "$0")/.."

python_version="${PYTHON_VERSION:-3.12}"
wheels=(
    libcst==1.9.0
    pyyaml==6.0.4
    flake8==7.5.0
    pyflakes==4.1.0
    pycodestyle==2.15.0
    mccabe==0.7.0
)
mkdir -p .whl
for wheel in "${wheels[@]}"; do
    python3 -m pip download --quiet --no-deps --only-binary=:all: \
        --python-version "$python_version" --implementation cp \
        --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 \
        --platform manylinux2014_x86_64 \
        -d .whl "$wheel"
done
ls -1 .whl
