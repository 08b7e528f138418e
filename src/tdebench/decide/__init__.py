"""``tdebench decide``: one decision across encryption mechanisms on the user's own workload (docs/decide.md).

A decision directory holds ``decision.json`` (the request, the plan, how each sub-run went) and its sub-runs, each
a run directory: ``switch-<spec>`` (the switch on, measured by doing it), ``backups`` (when asked) and ``cost``
(the user's workload on the plain twin and every mechanism). The page (:mod:`tdebench.decide.build`) is computed
from these files alone, so ``tdebench report DECISION_DIR`` rebuilds it.
"""

from tdebench.decide.build import build_page, print_page, write_page
from tdebench.decide.model import Decision, load_decision
from tdebench.decide.record import is_decision

__all__ = ["Decision", "build_page", "is_decision", "load_decision", "print_page", "write_page"]
