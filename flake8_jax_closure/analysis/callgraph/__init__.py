"""Which code runs what, in module order: where functions and compiled objects are called or
handed on."""
