"""Operation modes of the spec, parsed once (case-insensitive, PascalCase,
snake_case or UPPER_CASE) and refused with InvalidInput when unknown."""

from __future__ import annotations

from enum import Enum

from .errors import InvalidInputError


class _Mode(str, Enum):
    @classmethod
    def parse(cls, value: object, default: "_Mode | None" = None):
        if value is None or value == "":
            if default is None:
                raise InvalidInputError(f"{cls.__name__} is required")
            return default
        if isinstance(value, Enum):
            value = value.value
        key = str(value).replace("_", "").replace("-", "").lower()
        for member in cls:
            if member.value.replace("_", "") == key:
                return member
        allowed = ", ".join(m.name.title().replace("_", "") for m in cls)
        raise InvalidInputError(f"unknown {cls.__name__} {value!r}; expected one of: {allowed}")


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
