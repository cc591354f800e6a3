"""The data model of a conformance check.

A :class:`Check` is a named expectation about one operation, run as steps:
a :class:`Call` (an operation and the error code it must answer, or
success), an :class:`Http` request (raw protocol: status and integer
``code``) or a :class:`Fn` (a predicate over what the run has seen).  Each
check names the request fields it exercises (:attr:`Check.fields`): the keys
of its calls' requests, plus what an Http/Fn step declares.  The
field-coverage test reads exactly that.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

PASS, FAIL, SKIP = "pass", "fail", "skip"
OK = None  # ``Call.expect`` for "the operation succeeds"
#: what a check may need of the run, besides a capability (see :attr:`Check.needs`)
RUN_NEEDS = frozenset({"http", "direct", "data", "auth", "nested"})
NS = "{ns}"  # placeholder: the run's namespace id (spliced into id lists / paths)


@dataclass(frozen=True)
class Call:
    """Run an operation; it must succeed (``expect=OK``) or fail with ``expect``."""

    op: str  # OperationId, e.g. "CreateNamespace"
    request: Mapping[str, Any] = field(default_factory=dict)  # "{ns}" and "{var}" placeholders
    expect: int | tuple[int, ...] | None = OK  # a tuple: any of these codes
    #: (response dict, vars) -> problem message or None
    verify: Callable[[dict, dict], str | None] | None = None
    save: Mapping[str, str] = field(default_factory=dict)  # var name -> response field
    arrow: bool = False  # send a small valid Arrow IPC stream as the body (CreateTable)
    raw: bool = False  # REST targets: names are sent as given (this client validates nothing anyway)
    data: bytes | None = None  # an Arrow IPC stream to send as the body (InsertIntoTable, MergeInsertIntoTable...)

    def fields(self) -> set[str]:
        return {f"{self.op}.{k}" for k in self.request}


@dataclass(frozen=True)
class Http:
    """A raw REST request (REST targets only): expected status and error code."""

    method: str
    path: str  # "{ns}" becomes the '$'-joined, URL-quoted namespace id
    status: int
    code: int | None = None  # the integer ``code`` the error body must carry
    body: bytes | None = None
    content_type: str | None = None
    exercises: tuple[str, ...] = ()  # "Operation.field" the body carries

    def fields(self) -> set[str]:
        return set(self.exercises)


@dataclass(frozen=True)
class Fn:
    """A predicate over the run: ``fn(run) -> problem message or None``."""

    fn: Callable[[Any], str | None]
    exercises: tuple[str, ...] = ()  # "Operation.field" the function's own calls send

    def fields(self) -> set[str]:
        return set(self.exercises)


@dataclass(frozen=True)
class Check:
    name: str
    operation: str
    expectation: str
    steps: tuple
    setup: tuple = ()  # Calls that must succeed first (failure: the check fails, named "setup")
    #: what the target must offer (:data:`RUN_NEEDS`): "http" (a REST target), "direct" (not a
    #: REST target), "data" (a Lance table could be written), "auth" (a token), "nested", or a
    #: capability (see targets.CAPABILITY_ATTRIBUTES)
    needs: frozenset = frozenset()
    unless: frozenset = frozenset()  # capabilities under which the spec allows other behaviour
    #: the operation is optional in the spec: an Unsupported (code 0) answer skips the check
    optional: bool = False
    after: str | None = None  # skipped unless this earlier check passed (no cascading noise)

    @property
    def fields(self) -> frozenset[str]:
        """``Operation.field`` names this check's steps send (setup excluded)."""
        out: set[str] = set()
        for step in self.steps:
            out |= step.fields()
        return frozenset(out)

    def codes(self) -> set[int]:
        """The error codes this check expects."""
        codes: set[int] = set()
        for step in self.steps:
            expect = step.expect if isinstance(step, Call) else step.code if isinstance(step, Http) else None
            codes.update(expect if isinstance(expect, tuple) else () if expect is None else (expect,))
        return codes


@dataclass
class CheckResult:
    name: str
    operation: str
    expectation: str
    status: str  # pass / fail / skip
    detail: str = ""
    seconds: float = 0.0

    def to_dict(self) -> dict:
        return dict(self.__dict__)


class Skipped(Exception):
    """Raised by a step: the check has nothing to judge here (reported as skip)."""


class Failed(Exception):
    """Raised by a step: the target departs from the check's expectation."""
