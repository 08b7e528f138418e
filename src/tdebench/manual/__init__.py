"""Manual mode for servers tdebench cannot start: generated scripts, console-log import, TDE setup steps.

* :mod:`tdebench.manual.script` writes one runnable script per TPC-H stream (``tdebench script``);
* :mod:`tdebench.manual.importer` reads the console logs back into a run directory (``tdebench import``);
* :mod:`tdebench.manual.tdesetup` prints the steps a DBA follows to turn encryption on (``tdebench tde-setup``).
"""
