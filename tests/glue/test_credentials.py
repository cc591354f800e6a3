"""The spec's four authentication methods, against moto's real STS and Glue.

moto accepts any signature, so each test reads the credentials a Glue request
was actually signed with (botocore's ``before-send`` event) instead.
"""

from __future__ import annotations

import datetime

import pytest

import lance_ns
from lance_ns.impls import glue as glue_impl
from tests.services.moto import REGION, no_ambient_aws_credentials

ROLE = "arn:aws:iam::123456789012:role/lance-reader"


class Signed:
    """Records the access key and session token of every Glue request."""

    def __init__(self, ns):
        self.keys, self.tokens = [], []
        ns.glue.meta.events.register("before-send.glue", self)

    def __call__(self, request, **kwargs):
        auth = request.headers.get("Authorization", b"")
        auth = auth.decode() if isinstance(auth, bytes) else auth
        self.keys.append(auth.split("Credential=")[1].split("/")[0])
        token = request.headers.get("X-Amz-Security-Token")
        self.tokens.append(token.decode() if isinstance(token, bytes) else token)


def _base(endpoint):
    return {"endpoint": endpoint, "region": REGION, "catalog_id": "123456789012"}


def test_static_and_session_credentials(endpoint):
    ns = lance_ns.connect("glue", {**_base(endpoint), "access_key_id": "AKSTATIC", "secret_access_key": "s"})
    signed = Signed(ns)
    ns.list_namespaces({"id": []})
    assert set(signed.keys) == {"AKSTATIC"} and set(signed.tokens) == {None}
    ns = lance_ns.connect(
        "glue", {**_base(endpoint), "access_key_id": "ASIASESSION", "secret_access_key": "s", "session_token": "tok"}
    )
    signed = Signed(ns)
    ns.list_namespaces({"id": []})
    assert set(signed.keys) == {"ASIASESSION"} and set(signed.tokens) == {"tok"}


def test_default_provider_chain(endpoint, monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKFROMENV")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "s")
    monkeypatch.delenv("AWS_SESSION_TOKEN", raising=False)
    ns = lance_ns.connect("glue", _base(endpoint))
    signed = Signed(ns)
    ns.list_namespaces({"id": []})
    assert set(signed.keys) == {"AKFROMENV"}


def test_no_credentials_anywhere_is_unauthenticated(endpoint, monkeypatch, tmp_path):
    no_ambient_aws_credentials(monkeypatch, tmp_path)
    ns = lance_ns.connect("glue", _base(endpoint))
    from .conftest import code_of

    assert code_of(ns.list_namespaces, {"id": []}) == 16


@pytest.fixture
def role_ns(endpoint, monkeypatch):
    monkeypatch.setenv("AWS_ENDPOINT_URL_STS", endpoint)  # botocore's per-service endpoint variable
    props = {
        **_base(endpoint),
        "access_key_id": "AKBASE",
        "secret_access_key": "s",
        "assume_role_arn": ROLE,
        "assume_role_region": "eu-west-1",
        "assume_role_external_id": "ext-42",
        "assume_role_session_name": "lance-test",
        "assume_role_timeout_sec": "900",
    }
    ns = lance_ns.connect("glue", props)
    calls = []
    ns._sts.meta.events.register("provide-client-params.sts.AssumeRole", lambda params, **kw: calls.append(dict(params)))
    return ns, calls


def test_assume_role_signs_with_the_role_and_refreshes_before_expiry(role_ns, monkeypatch):
    ns, calls = role_ns
    assert ns._sts.meta.region_name == "eu-west-1"
    signed = Signed(ns)
    ns.list_namespaces({"id": []})
    ns.list_namespaces({"id": []})
    assert len(calls) == 1  # fetched once, reused while fresh
    assert calls[0] == {
        "RoleArn": ROLE, "RoleSessionName": "lance-test", "DurationSeconds": 900, "ExternalId": "ext-42",
    }  # fmt: skip
    first = signed.keys[0]
    assert first != "AKBASE" and set(signed.keys) == {first} and all(signed.tokens)
    # 13 minutes later the 15-minute session is within its refresh window
    real = glue_impl._now
    monkeypatch.setattr(glue_impl, "_now", lambda: real() + datetime.timedelta(seconds=800))
    ns.list_namespaces({"id": []})
    assert len(calls) == 2
    assert signed.keys[-1] not in (first, "AKBASE") and all(signed.tokens)


def test_assume_role_default_duration_is_an_hour(endpoint, monkeypatch):
    monkeypatch.setenv("AWS_ENDPOINT_URL_STS", endpoint)
    ns = lance_ns.connect(
        "glue", {**_base(endpoint), "access_key_id": "AK", "secret_access_key": "s", "assume_role_arn": ROLE}
    )
    calls = []
    ns._sts.meta.events.register("provide-client-params.sts.AssumeRole", lambda params, **kw: calls.append(dict(params)))
    ns.list_namespaces({"id": []})
    assert calls == [{"RoleArn": ROLE, "RoleSessionName": "lance-ns-glue", "DurationSeconds": 3600}]
    real = glue_impl._now
    monkeypatch.setattr(glue_impl, "_now", lambda: real() + datetime.timedelta(seconds=2000))
    ns.list_namespaces({"id": []})
    assert len(calls) == 1  # 26 minutes left of 60: still fresh
