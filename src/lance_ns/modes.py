"""Operation modes of the spec, parsed once (case-insensitive, PascalCase,
snake_case or UPPER_CASE) and refused with InvalidInput when unknown; and the one
reading of true/false words, for properties, options, query values and context flags."""

from __future__ import annotations

from enum import Enum

from .invalid_input import invalid_input


#: the words that say true or false, wherever a setting is text (case-insensitive)
TRUE_WORDS = frozenset({"true", "1", "yes", "on"})
FALSE_WORDS = frozenset({"false", "0", "no", "off"})


def parse_bool(raw: object, what: str) -> bool:
    """A true/false word -> bool; anything else is InvalidInput naming ``what``."""
    word = str(raw).strip().lower()
    if word in TRUE_WORDS:
        return True
    if word in FALSE_WORDS:
        return False
    raise invalid_input(f"{what} must be true or false, got {raw!r}")


def is_true(raw: object) -> bool:
    """Whether ``raw`` is a true word (a flag that is only looked at, never refused)."""
    return raw is not None and str(raw).strip().lower() in TRUE_WORDS


class _Mode(str, Enum):
    @classmethod
    def parse(cls, value: object, default: "_Mode | None" = None):
        if value is None or value == "":
            if default is None:
                raise invalid_input(f"{cls.__name__} is required")
            return default
        if isinstance(value, Enum):
            value = value.value
        key = str(value).replace("_", "").replace("-", "").lower()
        for member in cls:
            if member.value.replace("_", "") == key:
                return member
        allowed = ", ".join(m.name.title().replace("_", "") for m in cls)
        raise invalid_input(f"unknown {cls.__name__} {value!r}; expected one of: {allowed}")


class CreateMode(_Mode):
    CREATE = "create"
    EXIST_OK = "exist_ok"
    OVERWRITE = "overwrite"


class DropMode(_Mode):
    FAIL = "fail"
    SKIP = "skip"


class DropBehavior(_Mode):
    RESTRICT = "restrict"
    CASCADE = "cascade"


class RegisterMode(_Mode):
    CREATE = "create"
    OVERWRITE = "overwrite"


class WriteMode(_Mode):
    """CreateTable / InsertIntoTable write modes."""

    CREATE = "create"
    EXIST_OK = "exist_ok"
    OVERWRITE = "overwrite"
    APPEND = "append"


class TransactionStatus(_Mode):
    QUEUED = "queued"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELED = "canceled"


class SetPropertyMode(_Mode):
    OVERWRITE = "overwrite"
    FAIL = "fail"
    SKIP = "skip"


class UnsetPropertyMode(_Mode):
    SKIP = "skip"
    FAIL = "fail"
