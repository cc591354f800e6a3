"""Credential vending: temporary storage credentials for one table's location only.

Configured with pylance's ``DirectoryNamespace`` property names, on any lance-ns
backend (the catalog layer calls :meth:`CredentialVendor.answer` for DescribeTable,
DeclareTable and CreateTable)::

    credential_vendor.enabled = true
    credential_vendor.aws_role_arn = arn:aws:iam::123456789012:role/lake-tables
    credential_vendor.permission = read            # read | write | admin (default read)
    credential_vendor.aws_duration_millis = 3600000
    credential_vendor.aws_external_id / aws_region / aws_role_session_name   (optional)
    credential_vendor.aws_sts_endpoint              (lance-ns: an STS endpoint other than AWS's)
    credential_vendor.cache_enabled = true          (reuse a table's credentials for half their life)

For an ``s3://`` table location the vendor calls STS AssumeRole with a session
policy limited to the table's prefix (:func:`session_policy`: ``s3:ListBucket``
with an ``s3:prefix`` condition, objects under the prefix: read, plus
``PutObject`` for ``write``, plus ``DeleteObject`` for ``admin``).  The answer's
``storage_options`` then carry ``aws_access_key_id``, ``aws_secret_access_key``,
``aws_session_token`` and ``expires_at_millis`` instead of any credential the
namespace itself was configured with; pylance calls DescribeTable again for new
ones before ``expires_at_millis``.  Other locations (local paths) get no credentials.

The permission is the namespace's, lowered for a caller who may only read: the
REST server runs a read-only principal's calls inside :func:`capped` (``read``).
A request with ``vend_credentials=false`` gets none; unset means yes (as pylance's
own namespaces do, since pylance's clients do not set it).  Calls the namespace
makes to itself (a data operation describing its table) say ``false``: they use
the namespace's own credentials.

STS refuses sessions shorter than 15 minutes or longer than 12 hours: the
requested duration is clamped to that, and ``expires_at_millis`` is the earlier
of STS's expiry and now + ``aws_duration_millis`` (a shorter duration makes
clients refresh sooner; the credentials themselves live at least 15 minutes).
Secrets are never logged; the log line names the table location, permission
and expiry only.
"""

from __future__ import annotations

import contextvars
import enum
import json
import logging
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Mapping
from urllib.parse import urlparse

from .errors import InvalidInputError, PermissionDeniedError, ServiceUnavailableError
from .modes import is_true
from .redact import is_secret_key

log = logging.getLogger("lance_ns.vending")

PREFIX = "credential_vendor."
#: the storage option naming when vended credentials expire (milliseconds since the epoch)
EXPIRES_AT = "expires_at_millis"
DEFAULT_DURATION_MILLIS = 3_600_000
#: what STS AssumeRole accepts as DurationSeconds
STS_MIN_SECONDS, STS_MAX_SECONDS = 900, 43_200
DEFAULT_SESSION_NAME = "lance-ns-credential-vending"
#: the storage options a vended AWS credential consists of
AWS_KEYS = ("aws_access_key_id", "aws_secret_access_key", "aws_session_token")
_S3_SCHEMES = ("s3", "s3a")


class Permission(enum.IntEnum):
    """What vended credentials allow; each level includes the ones before it."""

    READ = 1  # get and list the table's objects
    WRITE = 2  # and put new ones (Lance's commits are new objects)
    ADMIN = 3  # and delete them (cleanup, dropping versions)

    @classmethod
    def parse(cls, raw: str) -> "Permission":
        try:
            return cls[str(raw).strip().upper()]
        except KeyError:
            raise InvalidInputError(f"{PREFIX}permission must be read, write or admin, got {raw!r}") from None


#: the most a caller may be vended (set by the REST server per principal); None: no cap
_cap: contextvars.ContextVar[Permission | None] = contextvars.ContextVar("lance_ns_vending_cap", default=None)


def capped(permission: Permission | None, fn: Callable, *args: Any) -> Any:
    """Call ``fn(*args)`` with vended permissions at most ``permission`` (None: no cap)."""
    token = _cap.set(permission)
    try:
        return fn(*args)
    finally:
        _cap.reset(token)


def session_policy(location: str, permission: Permission) -> dict:
    """The IAM session policy for one table: its objects only, listing only under its prefix."""
    bucket, prefix = split_s3(location)
    objects = f"arn:aws:s3:::{bucket}/{prefix}/*" if prefix else f"arn:aws:s3:::{bucket}/*"
    actions = ["s3:GetObject", "s3:GetObjectVersion"]
    if permission >= Permission.WRITE:
        actions += ["s3:PutObject", "s3:AbortMultipartUpload", "s3:ListMultipartUploadParts"]
    if permission >= Permission.ADMIN:
        actions += ["s3:DeleteObject", "s3:DeleteObjectVersion"]
    listing = {"StringLike": {"s3:prefix": [prefix, f"{prefix}/*"]}} if prefix else None
    statements = [
        {"Effect": "Allow", "Action": "s3:ListBucket", "Resource": f"arn:aws:s3:::{bucket}",
         **({"Condition": listing} if listing else {})},
        {"Effect": "Allow", "Action": "s3:GetBucketLocation", "Resource": f"arn:aws:s3:::{bucket}"},
        {"Effect": "Allow", "Action": actions, "Resource": objects},
    ]  # fmt: skip
    return {"Version": "2012-10-17", "Statement": statements}


def split_s3(location: str) -> tuple[str, str]:
    """(bucket, key prefix without slashes at either end) of an ``s3://`` location."""
    parsed = urlparse(location)
    if parsed.scheme not in _S3_SCHEMES or not parsed.netloc:
        raise InvalidInputError(f"not an s3:// location: {location!r}")
    return parsed.netloc, parsed.path.strip("/")


def is_vended(storage_options: Mapping[str, str] | None) -> bool:
    """Whether storage options carry vended (expiring) credentials."""
    return bool(storage_options) and EXPIRES_AT in storage_options


@dataclass(frozen=True)
class VendorConfig:
    role_arn: str
    permission: Permission = Permission.READ
    duration_millis: int = DEFAULT_DURATION_MILLIS
    external_id: str | None = None
    region: str | None = None
    session_name: str = DEFAULT_SESSION_NAME
    sts_endpoint: str | None = None
    cache: bool = True

    @classmethod
    def from_properties(cls, properties: Mapping[str, str]) -> "VendorConfig | None":
        """The configuration in ``credential_vendor.*`` properties (None: vending is off)."""
        conf = {k[len(PREFIX):]: v for k, v in properties.items() if k.startswith(PREFIX)}
        if not is_true(conf.get("enabled")):
            return None
        role = conf.get("aws_role_arn")
        if not role:
            raise InvalidInputError(f"{PREFIX}enabled needs {PREFIX}aws_role_arn (the role whose credentials are vended)")
        raw_duration = conf.get("aws_duration_millis", str(DEFAULT_DURATION_MILLIS))
        try:
            duration = int(raw_duration)
        except ValueError:
            duration = 0
        if duration < 1:
            raise InvalidInputError(f"{PREFIX}aws_duration_millis must be a positive integer, got {raw_duration!r}")
        return cls(
            role_arn=role,
            permission=Permission.parse(conf.get("permission", "read")),
            duration_millis=duration,
            external_id=conf.get("aws_external_id") or None,
            region=conf.get("aws_region") or None,
            session_name=(conf.get("aws_role_session_name") or DEFAULT_SESSION_NAME)[:64],
            sts_endpoint=conf.get("aws_sts_endpoint") or None,
            cache=str(conf.get("cache_enabled", "true")).strip().lower() not in ("false", "0", "no", "off"),
        )


class CredentialVendor:
    """Vends table-scoped temporary credentials (see the module docstring)."""

    def __init__(self, config: VendorConfig, storage_options: Mapping[str, str] | None = None):
        try:  # at construction: a missing extra is told when the namespace opens, not at the first describe
            import boto3
        except ModuleNotFoundError as e:
            missing = (e.name or "boto3").split(".")[0]
            raise InvalidInputError(f"credential vending needs the {missing!r} package: pip install 'lance-ns[vending]'") from None
        self._boto3 = boto3
        self.config = config
        self._own = dict(storage_options or {})  # the namespace's identity calls STS
        self._sts = None
        self._lock = threading.Lock()
        #: (location, permission) -> (credential options, expires_at_millis, good until monotonic)
        self._cache: dict[tuple[str, Permission], tuple[dict[str, str], int, float]] = {}

    @classmethod
    def from_properties(cls, properties: Mapping[str, str], storage_options: Mapping[str, str] | None = None):
        config = VendorConfig.from_properties(properties)
        return cls(config, storage_options) if config else None

    def __repr__(self) -> str:
        return f"CredentialVendor(role={self.config.role_arn!r}, permission={self.config.permission.name.lower()})"

    def permission(self) -> Permission:
        """The configured permission, lowered to the caller's cap (:func:`capped`)."""
        cap = _cap.get()
        return self.config.permission if cap is None else min(self.config.permission, cap)

    def answer(self, response: Any, location: str | None, request: Any) -> Any:
        """``response`` with vended credentials in its ``storage_options`` when the
        request does not refuse them and the location is on S3."""
        if getattr(request, "vend_credentials", None) is False or not location:
            return response
        if urlparse(location).scheme not in _S3_SCHEMES:
            return response  # a local path needs no credentials
        kept = {k: v for k, v in (response.storage_options or {}).items() if not is_secret_key(k)}
        response.storage_options = {**kept, **self.vend(location)}
        return response

    def vend(self, location: str) -> dict[str, str]:
        """Storage options with credentials for ``location`` (and ``expires_at_millis``)."""
        permission = self.permission()
        key = (location.rstrip("/"), permission)
        if self.config.cache:
            with self._lock:
                cached = self._cache.get(key)
            if cached and time.monotonic() < cached[2]:
                return dict(cached[0])
        options, expires_at = self._assume(location, permission)
        if self.config.cache:
            lifetime = max(0.0, expires_at / 1000 - time.time())
            with self._lock:
                self._cache[key] = (options, expires_at, time.monotonic() + lifetime / 2)
        return dict(options)

    def _client(self):
        if self._sts is None:
            own = self._own
            kwargs: dict[str, Any] = {
                "region_name": self.config.region or own.get("aws_region") or own.get("region") or "us-east-1",
            }
            if self.config.sts_endpoint:
                kwargs["endpoint_url"] = self.config.sts_endpoint
            if own.get("aws_access_key_id") and own.get("aws_secret_access_key"):
                kwargs.update(aws_access_key_id=own["aws_access_key_id"],
                              aws_secret_access_key=own["aws_secret_access_key"],
                              aws_session_token=own.get("aws_session_token"))
            self._sts = self._boto3.client("sts", **kwargs)
        return self._sts

    def _assume(self, location: str, permission: Permission) -> tuple[dict[str, str], int]:
        seconds = min(max(-(-self.config.duration_millis // 1000), STS_MIN_SECONDS), STS_MAX_SECONDS)
        request: dict[str, Any] = dict(
            RoleArn=self.config.role_arn,
            RoleSessionName=self.config.session_name,
            Policy=json.dumps(session_policy(location, permission), separators=(",", ":")),
            DurationSeconds=seconds,
        )
        if self.config.external_id:
            request["ExternalId"] = self.config.external_id
        asked_at = time.time()
        try:
            creds = self._client().assume_role(**request)["Credentials"]
        except Exception as e:  # noqa: BLE001 - mapped to a spec error, the cause is kept
            raise _sts_error(e, self.config.role_arn) from e
        sts_expiry = int(creds["Expiration"].timestamp() * 1000)
        expires_at = min(sts_expiry, int(asked_at * 1000) + self.config.duration_millis)
        options = {
            "aws_access_key_id": creds["AccessKeyId"],
            "aws_secret_access_key": creds["SecretAccessKey"],
            "aws_session_token": creds["SessionToken"],
            EXPIRES_AT: str(expires_at),
        }
        if self.config.region:
            options["aws_region"] = self.config.region
        log.info("vended %s credentials for %s, expiring at %d", permission.name.lower(), location, expires_at)
        return options, expires_at


def _sts_error(exc: Exception, role: str):
    code = ""
    response = getattr(exc, "response", None)
    if isinstance(response, Mapping):
        code = str((response.get("Error") or {}).get("Code", ""))
    if code in ("AccessDenied", "AccessDeniedException"):
        return PermissionDeniedError(f"credential vending: the namespace may not assume {role} ({code})")
    if code in ("InvalidParameterValue", "MalformedPolicyDocument", "ValidationError"):
        return InvalidInputError(f"credential vending: STS refused the request for {role} ({code})")
    return ServiceUnavailableError(f"credential vending: STS did not answer for {role}: {type(exc).__name__} {code}".strip())
