"""AWS credentials from the same sign-in: a Cognito identity pool behind the
AWS CLI's and SDKs' credential_process, end to end.

moto implements cognito-identity, STS and S3, so the real AWS CLI (and
boto3) run against it with `credential_process = cog-cred aws-credentials`
in a temporary ~/.aws/config. moto's identity pool checks no login and
always hands out the same 90-second credentials; what it does not check
(the ID token in Logins, custom roles, the basic flow's STS call, every
error) is tested against the project's Cognito double.
"""
import json
import re
import subprocess
import threading
import urllib.request
from datetime import datetime, timezone
from pathlib import Path

import pytest

import fault_server
from support import configure_on_double, lock_collection, moto_identity_pool

AWS_KINDS = ("identity-id", "aws-credentials")


def aws_items(bus, profile="default"):
    return {kind for kind in AWS_KINDS
            if bus.secret_tool("lookup", "service", "cog-cred", "profile", profile, "kind", kind).returncode == 0}


@pytest.fixture
def identity_pool(signed_in):
    """An identity pool in moto whose provider is the signed-in user's pool."""
    signed_in.identity_pool_id = moto_identity_pool(signed_in)
    return signed_in


def aws_cli(cog, tmp_path, *args, extra_env=None):
    """The real AWS CLI, configured only through credential_process."""
    config = tmp_path / "aws-config"
    config.write_text(f"[profile cognito]\nregion = us-east-1\ncredential_process = {cog.binary} aws-credentials\n")
    env = {**cog.env, "AWS_CONFIG_FILE": str(config), "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "none"),
           "AWS_PROFILE": "cognito", **(extra_env or {})}
    return subprocess.run(["aws", *args], env=env, capture_output=True, text=True, timeout=120)


def test_the_aws_cli_and_boto3_get_credentials_through_credential_process(cog, bus, identity_pool, tmp_path):
    cog.ok("configure", "--identity-pool-id", identity_pool.identity_pool_id)
    moto = {"AWS_ENDPOINT_URL": identity_pool.url}
    printed = cog.run("aws-credentials", env=moto)
    assert printed.returncode == 0, printed.stderr
    answer = json.loads(printed.stdout)
    assert set(answer) == {"Version", "AccessKeyId", "SecretAccessKey", "SessionToken", "Expiration"}
    assert answer["Version"] == 1
    expiration = datetime.fromisoformat(answer["Expiration"].replace("Z", "+00:00"))
    assert expiration.tzinfo == timezone.utc and expiration > datetime.now(timezone.utc)
    assert aws_items(bus) == set(AWS_KINDS)
    assert answer["SecretAccessKey"] not in printed.stderr
    # The real AWS CLI, credentials from cog-cred only.
    who = aws_cli(cog, tmp_path, "sts", "get-caller-identity", extra_env=moto)
    assert who.returncode == 0, who.stderr
    assert "Arn" in json.loads(who.stdout)
    made = aws_cli(cog, tmp_path, "s3", "mb", "s3://cog-cred-e2e", extra_env=moto)
    assert made.returncode == 0, made.stderr
    listed = aws_cli(cog, tmp_path, "s3", "ls", extra_env=moto)
    assert listed.returncode == 0 and "cog-cred-e2e" in listed.stdout
    # boto3 the same way.
    config = tmp_path / "aws-config"
    script = ("import boto3; s = boto3.Session(profile_name='cognito'); "
              f"print(s.client('s3', endpoint_url='{identity_pool.url}').list_buckets()['Buckets'][0]['Name'])")
    boto = subprocess.run(["python3", "-c", script], env={**cog.env, "AWS_CONFIG_FILE": str(config),
                                                           "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "none"), **moto},
                          capture_output=True, text=True, timeout=60)
    assert boto.returncode == 0 and boto.stdout.strip() == "cog-cred-e2e", boto.stderr
    # exec --aws: the three variables beside the token ones.
    shown = cog.ok("exec", "--aws", "--", "sh", "-c",
                   'printf %s "$AWS_ACCESS_KEY_ID:${AWS_SESSION_TOKEN:+set}:${COG_CRED_ACCESS_TOKEN:+set}"', env=moto).stdout
    assert shown.split(":")[1:] == ["set", "set"] and shown.startswith(answer["AccessKeyId"][:4])
    # status names the identity; sign-out takes the credentials with it.
    status = cog.ok("status", env=moto).stdout
    assert f"identity pool: {identity_pool.identity_pool_id}" in status and "identity id:   us-east-1:" in status
    cog.ok("sign-out", "--local")
    assert aws_items(bus) == set()
    assert cog.run("aws-credentials", env=moto).returncode == 77


# --- against the double: what moto does not check ------------------------------------------------

PASSWORD = "Identity-Password-3"
USER = "ida@example.com"


@pytest.fixture
def identity(cog, double):
    double.add_user(USER, PASSWORD)
    cog.remember_secret(PASSWORD)
    pool_id = double.admin("config")["identity_pool_id"]
    configure_on_double(cog, double.url, "--username", USER, "--identity-pool-id", pool_id)
    cog.ok("sign-in", "--password-stdin", input=PASSWORD + "\n")
    # The services' own variables, as a user pointing at an emulator would set them.
    cog.env["AWS_ENDPOINT_URL_COGNITO_IDENTITY"] = cog.env["AWS_ENDPOINT_URL_STS"] = double.url
    double.pool_id = pool_id
    return double


def test_the_id_token_buys_the_credentials_and_they_are_reused(cog, bus, identity):
    first = json.loads(cog.ok("aws-credentials").stdout)
    issued = identity.admin(f"aws_credentials?access_key_id={first['AccessKeyId']}")
    assert issued["identity_id"].startswith("us-east-1:")
    assert identity.calls("GetId") == 1 and identity.calls("GetCredentialsForIdentity") == 1
    # Fresh: answered from the keyring, no call; the front and cog-cred-cli give the same bytes.
    asked = len(identity.requests())
    front = cog.ok("aws-credentials").stdout
    cli = subprocess.run([str(Path(cog.binary).resolve().parent / "cog-cred-cli"), "aws-credentials"], env=cog.env,
                         capture_output=True, text=True, timeout=60)
    assert json.loads(front) == first and cli.returncode == 0 and cli.stdout == front
    assert identity.requests(since=asked) == [] and identity.calls("GetCredentialsForIdentity") == 1
    # Asked for more life than they have: new ones, same identity (GetId once for good).
    second = json.loads(cog.ok("aws-credentials", "--min-ttl", "43200").stdout)
    assert second["AccessKeyId"] != first["AccessKeyId"]
    assert identity.calls("GetId") == 1 and identity.calls("GetCredentialsForIdentity") == 2


def test_exec_aws_keeps_min_ttl_and_tells_the_sdk_the_expiry(cog, bus, identity):
    """The AWS SDKs read AWS_CREDENTIAL_EXPIRATION beside the keys (and
    refuse expired ones); --min-ttl means the same as for aws-credentials."""
    first = json.loads(cog.ok("aws-credentials").stdout)
    show = ["--", "sh", "-c", 'printf "%s %s" "$AWS_ACCESS_KEY_ID" "$AWS_CREDENTIAL_EXPIRATION"']
    assert cog.ok("exec", "--aws", *show).stdout.split(" ") == [first["AccessKeyId"], first["Expiration"]]
    assert identity.calls("GetCredentialsForIdentity") == 1
    # More life asked for than they have (an hour): new ones, as aws-credentials --min-ttl does.
    key, expiration = cog.ok("exec", "--aws", "--min-ttl", "7200", *show).stdout.split(" ")
    assert identity.calls("GetCredentialsForIdentity") == 2 and key != first["AccessKeyId"]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", expiration)
    kept = json.loads(cog.ok("aws-credentials").stdout)  # the ones exec was given, stored for the next call
    assert (kept["AccessKeyId"], kept["Expiration"]) == (key, expiration)


def test_credentials_taken_away_are_never_handed_out(cog, own_bus, identity):
    """The front answers stored credentials itself: a locked keyring, an item
    deleted by another tool, a sign-out must show on the very next call."""
    first = json.loads(cog.ok("aws-credentials").stdout)
    # Deleted in another tool: the next call fetches new ones, never the old.
    assert own_bus.secret_tool("clear", "service", "cog-cred", "profile", "default", "kind", "aws-credentials").returncode == 0
    second = json.loads(cog.ok("aws-credentials").stdout)
    assert second["AccessKeyId"] != first["AccessKeyId"] and identity.calls("GetCredentialsForIdentity") == 2
    # Locked: 69, nothing on stdout (not the stored credentials).
    lock_collection(own_bus)
    locked = cog.run("aws-credentials", "--no-prompt")
    assert locked.returncode == 69 and locked.stdout == "" and "locked" in locked.stderr


def test_credentials_are_the_signed_in_users_only(cog, bus, identity):
    """Another user signing in on the same profile: the first user's identity
    and IAM credentials go before the new tokens are stored, and stored
    credentials of another user than the ID token's (put back by another
    tool, or left by an older cog-cred) are never handed out by either
    binary."""
    first = json.loads(cog.ok("aws-credentials").stdout)
    first_identity = identity.admin(f"aws_credentials?access_key_id={first['AccessKeyId']}")["identity_id"]
    [first_item] = bus.items(service="cog-cred", profile="default", kind="aws-credentials")
    other = "otto@example.com"
    identity.add_user(other, PASSWORD)
    cog.ok("configure", "--username", other)
    cog.ok("sign-in", "--password-stdin", input=PASSWORD + "\n")
    assert aws_items(bus) == set()
    second = json.loads(cog.ok("aws-credentials").stdout)
    second_identity = identity.admin(f"aws_credentials?access_key_id={second['AccessKeyId']}")["identity_id"]
    assert second["AccessKeyId"] != first["AccessKeyId"] and second_identity != first_identity
    assert identity.calls("GetId") == 2
    # The first user's credentials, fresh, put back beside the second user's tokens.
    bus.store({k: v for k, v in first_item["attributes"].items() if k != "xdg:schema"}, first_item["secret"])
    cli = str(Path(cog.binary).resolve().parent / "cog-cred-cli")
    for binary in (cog.binary, cli):
        answer = subprocess.run([binary, "aws-credentials"], env=cog.env, capture_output=True, text=True, timeout=60)
        assert answer.returncode == 0, answer.stderr
        handed = json.loads(answer.stdout)
        assert handed["AccessKeyId"] != first["AccessKeyId"], binary
        assert identity.admin(f"aws_credentials?access_key_id={handed['AccessKeyId']}")["identity_id"] == second_identity


def test_expired_credentials_are_fetched_again(cog, bus, identity):
    identity.configure(identity_credentials_lifetime=0)  # expired as soon as issued
    first = json.loads(cog.ok("aws-credentials", "--min-ttl", "0").stdout)
    identity.configure(identity_credentials_lifetime=3600)
    second = json.loads(cog.ok("aws-credentials", "--min-ttl", "0").stdout)
    assert second["AccessKeyId"] != first["AccessKeyId"]
    assert identity.calls("GetCredentialsForIdentity") == 2 and identity.calls("GetId") == 1


def test_a_custom_role_and_the_basic_flow(cog, bus, identity):
    role = "arn:aws:iam::123456789012:role/Cognito_Admin"
    cog.ok("configure", "--role-arn", role)
    key = json.loads(cog.ok("aws-credentials").stdout)["AccessKeyId"]
    assert identity.admin(f"aws_credentials?access_key_id={key}")["role_arn"] == role
    cog.ok("configure", "--basic-flow")
    basic = cog.run("aws-credentials")
    assert basic.returncode == 0, basic.stderr
    assert identity.calls("GetOpenIdToken") == 1 and identity.calls("sts:AssumeRoleWithWebIdentity") == 1
    assert json.loads(basic.stdout)["Version"] == 1


def test_64_parallel_aws_commands_make_one_fetch(cog, bus, identity, tmp_path):
    proxy, url, _ = fault_server.start_fault_server(identity.url)
    try:
        env = {"AWS_ENDPOINT_URL_COGNITO_IDENTITY": url}
        results = [None] * 64

        def run(i):
            results[i] = cog.run("aws-credentials", env=env, timeout=90)

        threads = [threading.Thread(target=run, args=(i,)) for i in range(64)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert all(r.returncode == 0 for r in results), [r.stderr for r in results if r.returncode]
        assert len({json.loads(r.stdout)["AccessKeyId"] for r in results}) == 1
        with urllib.request.urlopen(url + "_fault/log", timeout=10) as answer:
            log = json.loads(answer.read())
        assert [e["action"] for e in log].count("GetCredentialsForIdentity") == 1
    finally:
        proxy.shutdown()
        proxy.server_close()


@pytest.mark.parametrize("config, code, phrase", [
    ({"identity_client_ids": ["someotherclient"]}, 77, "the identity pool does not accept this user pool's ID token"),
    ({"identity_pool_id": "us-east-1:0a1b2c3d-0000-4000-8000-0000000000ff"}, 78, "the identity pool (or the identity in it) does not exist"),
    ({"identity_pool_misconfigured": True}, 78, "the identity pool's IAM roles are not set up"),
    ({"fail_next": {"status": 400, "content_type": "application/x-amz-json-1.1", "count": 20,
                    "body": json.dumps({"__type": "TooManyRequestsException", "message": "Rate exceeded"})}}, 75, "try again later"),
])
def test_errors_keep_the_services_code_and_change_nothing(cog, bus, identity, config, code, phrase):
    identity.configure(**config)
    before = aws_items(bus)
    result = cog.run("aws-credentials")
    assert result.returncode == code, result.stderr
    assert phrase in result.stderr and result.stdout == ""
    assert result.stderr.count("\n") == 1
    assert aws_items(bus) <= before | {"identity-id"}


def test_secrets_stay_off_argv_files_and_stderr(cog, bus, identity, tmp_path):
    answer = json.loads(cog.ok("aws-credentials").stdout)
    secret = answer["SecretAccessKey"]
    for root in (Path(cog.env["XDG_CONFIG_HOME"]), cog.home, Path(cog.env.get("XDG_RUNTIME_DIR", tmp_path))):
        for path in root.rglob("*"):
            if path.is_file():
                assert secret.encode() not in path.read_bytes(), f"the secret key is in {path}"
    assert secret not in cog.ok("status").stdout
