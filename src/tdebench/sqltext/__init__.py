"""SQL text, in one place: the only package that speaks to sqlglot, so that a dialect rule lives once.

* :mod:`~tdebench.sqltext.dialects` -- the dialects tdebench writes SQL for, sqlglot's name for each and for
  each family of tdebench's own SQL texts;
* :mod:`~tdebench.sqltext.statements` -- a text split into statements and parsed in a family's dialect
  (syntax errors with line and column), the tables a statement reads or writes;
* :mod:`~tdebench.sqltext.transpile` -- a statement rewritten for another dialect, with
  :mod:`~tdebench.sqltext.sqlite` for what sqlglot leaves out for SQLite (dates, decimals);
* :mod:`~tdebench.sqltext.normal` -- a statement's form without its values (capture's groups, replay's digests);
* :mod:`~tdebench.sqltext.serverlog` -- statements read from a server's slow, general, stderr or csv log;
* :mod:`~tdebench.sqltext.credentials` -- statements that carry a password or a key, recognised before any
  parser sees them;
* :mod:`~tdebench.sqltext.tree` -- the node types of a parsed statement, for code that reads one.

It imports nothing of tdebench but :mod:`tdebench.errors`; engines (through their toolkit), workloads, capture
and manual mode import it, never sqlglot.
"""
