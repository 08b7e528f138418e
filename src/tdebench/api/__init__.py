"""The ground floor: the contracts every other package imports and nothing else defines.

Engines import only this package (and :mod:`tdebench.encryption`, :mod:`tdebench.errors`); workloads import it
and the engines' public registry; the runner, results, stats and report packages build on it. Nothing here
imports from any other tdebench package but ``errors`` and ``encryption``.
"""
