"""The runtime guard: catch a stale capture at the compiled call that would return it.

The linter judges code it cannot run. The guard watches code that runs: when JAX traces a
compiled function, it records every value the trace read from outside the function's arguments
(closure cells, module globals, attributes of ``self`` and of classes and modules, dict and list
items read by path, NumPy arrays, also inside helpers and the bodies handed to ``lax.scan``,
``fori_loop``, ``tree_map`` or ``vmap``); on each later call that reuses that trace, it checks
that those values are still what the trace read. A call that traces afresh (new shapes, new
static arguments) is never stale.

How, and why this way:

- *When a trace happens*: JAX is handed a probe in place of the function (one per function, so
  JAX's caches are shared exactly as without the guard). The probe runs only when JAX runs the
  Python function, that is when it traces; a call during which the probe did not run reused a
  trace. This is exact, where counting ``_cache_size()`` would miss traces that JAX keeps in its
  other caches (``lower``, nested calls). See ``probes`` and ``guarded``.
- *What a trace read*: a watch, on only while the probe runs, notes the frames of user code
  the trace ran and their lines (``sys.monitoring`` events from CPython 3.12 on, see
  ``monitor``; a ``sys.settrace`` function before); the bytecode of each frame says which
  globals, closure variables and attribute or item paths those lines read (``bytecode``,
  ``tracing``, ``resolve``). Frames tell exactly which helpers ran, with which ``self``;
  bytecode names the values exactly, for lambdas and notebook cells too. The linter's static
  facts could only say what *might* run.
- *Watching cheaply*: what the watch costs is bounded by what the trace reads, not by the
  size of what JAX does or of the pytrees read: library frames get no line events, binds of
  JAX's own primitives run without the trace function (``binds``), and whether an object a
  frame received holds tracers is looked for once per object and trace, in a bounded number of
  nodes (``tracer_search``).
- *Traces JAX keeps apart*: the bodies of ``lax.scan``, ``fori_loop`` and the like are cached
  by JAX on their own and reused when the compiled function traces again; what each body trace
  read is kept under JAX's key for it (``nested``), and joins every trace that reuses it.
- *State the trace stores to*: where the code reads a path and then stores to it
  (``self.n += 1``), the value read before the store is recorded (``tracing``); a change of it
  is stale only if running the function as Python now gives another result (``guarded``).
- *Checking cheaply*: each trace's reads become one generated Python function of identity
  tests, plus a bounded fingerprint for mutable values (``values``). A call costs a few hundred
  nanoseconds per value (see ``benchmarks/guard_bench.py``); only when a test fails does the
  guard compare by value, find the trace JAX will reuse (JAX's own cache signature, for
  ``jax.jit``, see ``signatures``) and decide.

Modes: ``error`` raises :class:`StaleCaptureError`; ``warn`` warns once per function and value;
``retrace`` drops the stale traces and traces again with the current values, and warns with the
fix when one value changes before most calls.

Entry points: ``flake8-jax-closure guard [--mode MODE] SCRIPT|-m MODULE [ARGS]`` (``runner``),
``pytest --jax-guard[=MODE]`` (``pytest_support``), and the public module
``flake8_jax_closure.guard``: ``install`` / ``uninstall`` / ``guarding`` (``install``),
``StaleCaptureError`` (``errors``), ``statistics`` (``state``), and ``%load_ext
flake8_jax_closure.guard`` in IPython (``ipython``). Importing this package imports nothing of
JAX; ``install`` does.
"""
