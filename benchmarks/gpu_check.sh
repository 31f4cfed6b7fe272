#!/usr/bin/env bash
# On a machine with one NVIDIA GPU and JAX (with CUDA) installed: verify the runnable fixtures
# on the GPU (flake8-jax-closure verify --platform gpu --require-accelerator) and run the
# guard benchmark there, in under 5 minutes.
#
#   benchmarks/gpu_wheels.sh    # on a machine that reaches PyPI: wheels into .whl/
#   benchmarks/gpu_check.sh     # on the GPU machine, from a checkout with .whl/ beside it
#
# The project's own dependencies (libcst, flake8, ...) are installed from .whl/ into a temporary
# folder put on PYTHONPATH; nothing else is installed. The output goes to stdout, and to
# $OUT/gpu_check.log when OUT is set. Exit status: 0 when every fixture was verified and the
# benchmark ran, 1 when something failed, 2 when there is no JAX or no GPU.
# GPU_CHECK_PLATFORM=cpu runs the same checks on the CPU (to try the script without a GPU).
set -uo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
started=$SECONDS

if [[ -n "${OUT:-}" ]]; then
    mkdir -p "$OUT"
    exec > >(tee "$OUT/gpu_check.log") 2>&1
fi

say() { printf '%s\n' "$*"; }
stop() {
    say "gpu_check: $1"
    say "gpu_check: finished in $((SECONDS - started)) s"
    exit "$2"
}

python="${PYTHON:-python3}"
say "gpu_check: $("$python" --version 2>&1) at $(command -v "$python")"
if command -v nvidia-smi > /dev/null; then
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>&1 |
        sed 's/^/gpu_check: nvidia-smi: /'
else
    say "gpu_check: nvidia-smi not found"
fi

# -- JAX and a GPU -------------------------------------------------------------------------------
devices="$(timeout 120 "$python" -c 'import jax; print(jax.__version__, jax.default_backend(), jax.devices())' 2>&1)"
status=$?
if [[ $status -ne 0 ]]; then
    say "$devices" | tail -n 3
    stop "jax is not installed or does not start: install jax with CUDA (pip install 'jax[cuda12]')" 2
fi
say "gpu_check: jax $devices"
platform="${GPU_CHECK_PLATFORM:-gpu}"
if [[ "$platform" == gpu && "$devices" != *" gpu "* ]]; then
    stop "no GPU: JAX runs on '$(cut -d' ' -f2 <<< "$devices")' only" 2
fi
accelerator=(--require-accelerator)
[[ "$platform" == cpu ]] && accelerator=()

# -- the project's dependencies, from wheels ------------------------------------------------------
site="$(mktemp -d)/site"
if compgen -G ".whl/*.whl" > /dev/null; then
    if ! "$python" -m pip install --quiet --no-index --no-deps --target "$site" .whl/*.whl; then
        stop "cannot install the wheels in .whl/ (built for another Python? see gpu_wheels.sh)" 1
    fi
fi
export PYTHONPATH="$site:$root${PYTHONPATH:+:$PYTHONPATH}"
if ! "$python" -c 'import libcst, flake8, flake8_jax_closure' 2> /dev/null; then
    stop "libcst or flake8 missing: run benchmarks/gpu_wheels.sh where PyPI is reachable, then carry .whl/ here" 1
fi

# -- verify on the GPU -----------------------------------------------------------------------------
# The runnable fixtures (as tests/test_runtime_fixtures.py picks them), four at a time: each
# JAX process takes GPU memory as it needs it instead of most of it up front.
export XLA_PYTHON_CLIENT_PREALLOCATE=false
results="$(mktemp -d)"
fixtures=()
for path in fixtures/*/*.py; do
    name="$(basename "$path" .py)"
    [[ "$name" == *.fixed ]] && continue
    [[ "$name" == seed_solution2* || "$name" == seed_solution3* || "$name" == verify_* ]] && continue
    grep -q "__name__ == ['\"]__main__['\"]" "$path" || continue
    fixtures+=("$path")
done
say "gpu_check: verifying ${#fixtures[@]} runnable fixtures on $platform"
printf '%s\n' "${fixtures[@]}" | xargs -P 4 -I{} sh -c '
    out="$1/$(basename "$2").txt"
    python="$3"
    shift 3
    timeout 150 "$python" -m flake8_jax_closure verify --timeout 120 "$@" > "$out" 2>&1
    echo "exit status $?" >> "$out"
' sh "$results" {} "$python" --platform "$platform" "${accelerator[@]}" {}
failed=0
for path in "${fixtures[@]}"; do
    out="$results/$(basename "$path").txt"
    cat "$out"
    code="$(tail -n 1 "$out" | awk '{print $3}')"
    # 0: every exercised finding confirmed; 1: a verdict other than confirmed (or no finding).
    if [[ "$code" != 0 && "$code" != 1 ]]; then
        failed=1
    fi
done
say "gpu_check: verify done at $((SECONDS - started)) s"

# -- the guard benchmark on the GPU ---------------------------------------------------------------
jax_platform="$platform"
[[ "$platform" == gpu ]] && jax_platform=cuda  # JAX reads "gpu" as CUDA and ROCm together
if ! JAX_PLATFORMS="$jax_platform" timeout 150 "$python" benchmarks/guard_bench.py --rounds 7 \
        --batch 4096 --hidden 4096; then  # an MLP step of a few ms on a large GPU
    say "gpu_check: the guard benchmark failed"
    failed=1
fi

if [[ $failed -ne 0 ]]; then
    stop "some checks could not run (see above)" 1
fi
stop "all checks ran" 0
