"""What compiled code reads and when it can change: the facts and the questions, nothing about
output. ``pipeline.analyse`` runs the whole analysis for one module. Nothing is imported here,
so that the light modules (``names``, ``words``) load alone."""
