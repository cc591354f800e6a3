"""One conformance scenario for ``tests/conformance`` and ``lance-ns check``.

* :mod:`.model`: what a check is (steps, the request fields it exercises);
* :mod:`.scenario`: the ordered checks (:data:`CHECKS`);
* :mod:`.targets`: what runs them (a backend or a REST server) and the
  capabilities backends declare as class attributes;
* :mod:`.runner`: :func:`run_checks`, one result per check.
"""

from .model import FAIL, NS, OK, PASS, SKIP, Call, Check, CheckResult, Failed, Fn, Http, Skipped
from .runner import CLEANUP, RESULT_NAMES, SETUP, Run, passed, run_checks, summary, target_lacks, unique_namespace
from .scenario import CHECKS, scenario
from .targets import CAPABILITY_ATTRIBUTES, Target, capabilities

__all__ = [
    "CAPABILITY_ATTRIBUTES", "CHECKS", "CLEANUP", "FAIL", "NS", "OK", "PASS", "RESULT_NAMES", "SETUP", "SKIP",
    "Call", "Check", "CheckResult", "Failed", "Fn", "Http", "Run", "Skipped", "Target", "capabilities",
    "passed", "run_checks", "scenario", "summary", "target_lacks", "unique_namespace",
]
