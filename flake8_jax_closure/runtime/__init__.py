"""The code that runs the user's program under JAX, or watches it run.

- ``verify``: run the original and the fixed program in subprocesses and judge each finding;
- ``instrument``: compile transforms that compare each compiled call with its eager evaluation
  (verify's child and ``pytest --jax-stale-check``);
- ``guard``: the runtime guard, which catches a stale capture at the compiled call that would
  return it (public API: ``flake8_jax_closure.guard``);
- ``pytest_plugin``: ``pytest --jax-stale-check`` and ``pytest --jax-guard``.

JAX is imported lazily, only when a program is run or a transform is installed.
"""
