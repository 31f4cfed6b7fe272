"""The runtime verifier: run the original and the fixed program and judge each finding.

Both programs run from a temporary copy, each in a fresh subprocess with a timeout (``programs``,
``child``), with every compiled function of the file instrumented (see ``..instrument``). A
finding is *confirmed* when the original's compiled output differs from its eager evaluation and
the fixed program's never does (``verifier``). What verify asks of the linter sits in one place
(``analysis``); its reports are rendered with the linter's other outputs (``formats``). The
user's file changes only with ``write``, and only when every exercised finding is confirmed.
"""
