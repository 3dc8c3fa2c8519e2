"""Replies of the wrong types from whatever owns org.freedesktop.secrets.

The Secret Service is another program; cog-cred checks the type of every
value in every reply against the API. A service that answers with other
types (fake_secret_service.py breaks one method at a time) gets a one-line
error and exit 69 from every read path, never a crash or a token.
"""
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import Bus, bus_config_without_activation, wait_until

HERE = Path(__file__).resolve().parent
BROKEN = ["ReadAlias", "OpenSession", "SearchItems", "GetSecrets", "GetSecretsStruct", "Locked"]


@pytest.fixture
def fake_service(tmp_path, request):
    bus = Bus(tmp_path / "bus", secrets=False, config_file=bus_config_without_activation(tmp_path / "bus.conf"))
    proc = subprocess.Popen([sys.executable, str(HERE / "fake_secret_service.py"), "--address", bus.address,
                             "--break", request.param], stderr=subprocess.PIPE)
    try:
        wait_until(bus.has_secret_service, "the fake Secret Service", attempts=500)
        yield bus
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        bus.stop()


@pytest.mark.parametrize("fake_service", BROKEN, indirect=True)
@pytest.mark.parametrize("command", [["token"], ["get-header"], ["exec", "--", "true"], ["kubectl-credential"],
                                     ["status"], ["refresh"]])
def test_a_service_answering_other_types_is_an_error_not_a_crash(cog, fake_service, command):
    cog.ok("configure", "--user-pool-id", "us-east-1_Fake", "--client-id", "fakeclient",
           "--endpoint-url", "http://127.0.0.1:9/")
    result = cog.run(*command, env=fake_service.env, timeout=30)
    assert result.returncode == 69, (result.returncode, result.stderr)
    assert result.stdout == ""
    assert result.stderr.startswith("cog-cred: error: ") and result.stderr.count("\n") == 1
    assert "Secret Service" in result.stderr


@pytest.mark.parametrize("fake_service", ["AliasFlickers", "NoDefault"], indirect=True)
def test_a_default_alias_that_flickers_is_asked_again(cog, fake_service, request):
    # gnome-keyring 42 answers ReadAlias with "/" for a moment while a new
    # client connects; found by the soak as "no default keyring" once in
    # 20,000 calls. Only a keyring that always answers "/" has no default.
    cog.ok("configure", "--user-pool-id", "us-east-1_Fake", "--client-id", "fakeclient",
           "--endpoint-url", "http://127.0.0.1:9/")
    result = cog.run("status", "--offline", env=fake_service.env, timeout=30)
    no_default = "has no default keyring" in result.stderr
    if request.node.callspec.params["fake_service"] == "NoDefault":
        assert result.returncode == 69 and no_default, result.stderr
    else:
        # Asked again, the alias names the collection, and its items are read.
        assert result.returncode == 0 and not no_default, result.stderr
        assert "signed in:     yes" in result.stdout and "access token:  expires" in result.stdout, result.stdout

