"""Find values that jax.jit and friends bake into compiled code while the program changes them."""

__version__ = "0.1.0"
