"""Self-checks of git_server.py with the real git CLI and moto's Cognito, no cog-cred.

Fixtures are local to this file on purpose (conftest.py's are for the cog-cred
binary tests). A throw-away credential helper script stands in for cog-cred: it
answers `get` with the token in a file and logs every call with what git sent.
"""
import base64
import gzip
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from http.server import ThreadingHTTPServer
from pathlib import Path

import boto3
import pytest
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding, rsa

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import git_server  # noqa: E402
from serving import QuietHandler  # noqa: E402
from support import b64url, claims  # noqa: E402

REGION = "us-east-1"
NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_for(url, what):
    for _ in range(400):
        try:
            NO_PROXY.open(url, timeout=1).read()
            return
        except urllib.error.HTTPError:
            return
        except Exception:
            time.sleep(0.05)
    raise RuntimeError(f"{what} did not start")


def sign(body, key, kid="dummy"):
    header = {"alg": "RS256", "kid": kid, "typ": "JWT"}
    signing_input = ".".join(b64url(json.dumps(p, separators=(",", ":")).encode()) for p in (header, body))
    signature = key.sign(signing_input.encode(), padding.PKCS1v15(), hashes.SHA256())
    return f"{signing_input}.{b64url(signature)}"


def moto_private_key():
    """moto signs every pool's tokens with one key shipped in its package."""
    import moto.cognitoidp
    path = Path(moto.cognitoidp.__file__).parent / "resources" / "jwks-private.json.gz"
    jwk = json.loads(gzip.decompress(path.read_bytes()))
    n, e, d = (git_server.b64url_uint(jwk[k]) for k in ("n", "e", "d"))
    p, q = rsa.rsa_recover_prime_factors(n, e, d)
    return rsa.RSAPrivateNumbers(p, q, d, rsa.rsa_crt_dmp1(d, p), rsa.rsa_crt_dmq1(d, q),
                                 rsa.rsa_crt_iqmp(p, q), rsa.RSAPublicNumbers(e, n)).private_key()


# ------------------------------------------------------------------ fixtures
@pytest.fixture(scope="module")
def moto_url():
    port = _free_port()
    url = f"http://127.0.0.1:{port}/"
    proc = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait_for(url + "moto-api/", "moto")
        yield url
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


class Pool:
    def __init__(self, moto_url):
        self.idp = boto3.client("cognito-idp", endpoint_url=moto_url, region_name=REGION,
                                aws_access_key_id="testing", aws_secret_access_key="testing")
        self.pool_id = self.idp.create_user_pool(PoolName="git-server-selfcheck")["UserPool"]["Id"]
        self.client_id = self.idp.create_user_pool_client(
            UserPoolId=self.pool_id, ClientName="cog-cred",
            ExplicitAuthFlows=["ALLOW_USER_PASSWORD_AUTH", "ALLOW_REFRESH_TOKEN_AUTH"],
        )["UserPoolClient"]["ClientId"]
        self.username, self.password = "alice", "Correct-Horse-1"
        self.idp.admin_create_user(UserPoolId=self.pool_id, Username=self.username, MessageAction="SUPPRESS")
        self.idp.admin_set_user_password(UserPoolId=self.pool_id, Username=self.username,
                                         Password=self.password, Permanent=True)
        self.issuer = f"https://cognito-idp.{REGION}.amazonaws.com/{self.pool_id}"
        self.jwks_url = f"{moto_url}{self.pool_id}/.well-known/jwks.json"

    def sign_in(self):
        return self.idp.initiate_auth(
            ClientId=self.client_id, AuthFlow="USER_PASSWORD_AUTH",
            AuthParameters={"USERNAME": self.username, "PASSWORD": self.password},
        )["AuthenticationResult"]

    def access_token(self):
        return self.sign_in()["AccessToken"]


@pytest.fixture(scope="module")
def pool(moto_url):
    return Pool(moto_url)


def git(*args, cwd=None, env=None, check=True):
    proc = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    if check and proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed ({proc.returncode}):\n{proc.stderr}")
    return proc


@pytest.fixture
def root(tmp_path):
    """ROOT/project.git, a bare repository with one commit on main."""
    root = tmp_path / "repos"
    root.mkdir()
    bare = root / "project.git"
    env = git_env(tmp_path / "seed-home")
    git("init", "--bare", "-q", "-b", "main", str(bare), env=env)
    work = tmp_path / "seed"
    git("init", "-q", "-b", "main", str(work), env=env)
    (work / "README").write_text("hello from the git server\n")
    git("add", "README", cwd=work, env=env)
    git("commit", "-q", "-m", "first", cwd=work, env=env)
    git("push", "-q", bare.as_uri(), "main", cwd=work, env=env)
    return root


@pytest.fixture
def server(root, pool):
    srv, base_url = git_server.start_git_server(root, pool.jwks_url, [pool.issuer], pool.client_id)
    srv.base_url = base_url
    yield srv
    srv.shutdown()
    srv.server_close()


def git_env(home):
    home = Path(home)
    home.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("GIT_") and k.lower() not in ("http_proxy", "https_proxy", "all_proxy")
           and k not in ("SSH_ASKPASS", "DISPLAY")}
    env.update({"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"), "GIT_CONFIG_NOSYSTEM": "1",
                "GIT_TERMINAL_PROMPT": "0", "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost",
                "GIT_AUTHOR_NAME": "Test", "GIT_AUTHOR_EMAIL": "test@example.invalid",
                "GIT_COMMITTER_NAME": "Test", "GIT_COMMITTER_EMAIL": "test@example.invalid"})
    return env


class Helper:
    """A credential helper script: `get` answers with the token file; every call is logged."""

    SCRIPT = """#!/bin/sh
dir="$(dirname "$0")"
input="$(cat)"
printf '%s\\n%s\\n--\\n' "== $*" "$input" >> "$dir/calls.log"
if [ "$1" = get ]; then
    echo "username=$(cat "$dir/username")"
    echo "password=$(cat "$dir/token")"
fi
"""

    def __init__(self, directory, username, token):
        self.dir = Path(directory)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.path = self.dir / "helper.sh"
        self.path.write_text(self.SCRIPT)
        self.path.chmod(0o755)
        (self.dir / "username").write_text(username)
        self.set_token(token)

    def set_token(self, token):
        (self.dir / "token").write_text(token)

    def calls(self):
        """[(action, {key: [values]})] in call order."""
        log = self.dir / "calls.log"
        out = []
        for block in log.read_text().split("--\n") if log.exists() else []:
            lines = [l for l in block.splitlines() if l]
            if not lines:
                continue
            fields = {}
            for line in lines[1:]:
                k, _, v = line.partition("=")
                fields.setdefault(k, []).append(v)
            out.append((lines[0][3:], fields))
        return out

    def actions(self):
        return [a for a, _ in self.calls()]

    def reset(self):
        (self.dir / "calls.log").unlink(missing_ok=True)


@pytest.fixture
def client(tmp_path, pool):
    """(env, helper, run_git) for a git user with only the helper configured."""
    env = git_env(tmp_path / "home")
    helper = Helper(tmp_path / "helper", pool.username, pool.access_token())

    def run_git(*args, cwd=None, check=True):
        return git("-c", "credential.helper=", "-c", f"credential.helper={helper.path}", *args,
                   cwd=cwd, env=env, check=check)

    return env, helper, run_git


def admin(server, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(server.base_url + "_admin/" + path, data=data,
                                 method="GET" if body is None else "POST")
    with NO_PROXY.open(req, timeout=10) as r:
        return json.loads(r.read())


def git_log(server):
    return admin(server, "log")


def curl_status(url, *headers):
    args = ["curl", "-s", "--noproxy", "*", "-o", "/dev/null", "-w", "%{http_code}"]
    for h in headers:
        args += ["-H", h]
    return int(subprocess.run(args + [url], capture_output=True, text=True, timeout=30).stdout)


# --------------------------------------------------------------------- tests
def test_cli_prints_listening_and_stops_on_sigterm(root, pool):
    proc = subprocess.Popen(
        [sys.executable, str(HERE / "git_server.py"), "--root", str(root), "--jwks-url", pool.jwks_url,
         "--issuer", "https://example.invalid/other-pool", "--issuer", pool.issuer,
         "--client-id", pool.client_id, "--port", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "GIT_SERVER_VERBOSE": "0"})
    try:
        line = proc.stdout.readline()
        m = re.fullmatch(r"LISTENING (http://127\.0\.0\.1:(\d+)/)\n", line)
        assert m, line
        url = m.group(1) + "project.git/info/refs?service=git-upload-pack"
        assert curl_status(url, f"Authorization: Bearer {pool.access_token()}") == 200
        assert curl_status(url) == 401
    finally:
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=10)
    assert proc.returncode == 0
    assert out == "" and err == ""


def test_curl_bearer_gets_refs_and_no_token_gets_both_challenges(server, pool):
    url = server.base_url + "project.git/info/refs?service=git-upload-pack"
    token = pool.access_token()
    assert curl_status(url, f"Authorization: Bearer {token}") == 200
    proc = subprocess.run(["curl", "-s", "--noproxy", "*", "-H", f"Authorization: Bearer {token}", url],
                          capture_output=True, timeout=30)
    assert b"# service=git-upload-pack" in proc.stdout and b"refs/heads/main" in proc.stdout

    with pytest.raises(urllib.error.HTTPError) as info:
        NO_PROXY.open(url, timeout=10)
    assert info.value.code == 401
    assert info.value.headers.get_all("WWW-Authenticate") == [
        'Bearer realm="cog-cred-test"', 'Basic realm="cog-cred-test"']

    basic = base64.b64encode(f"anyone:{token}".encode()).decode()
    assert curl_status(url, f"Authorization: Basic {basic}") == 200
    receive = server.base_url + "project.git/info/refs?service=git-receive-pack"
    assert curl_status(receive, f"Authorization: Bearer {token}") == 200
    assert curl_status(server.base_url + "nothing.git/info/refs?service=git-upload-pack",
                       f"Authorization: Bearer {token}") == 404

    log = git_log(server)
    assert [(e["scheme"], e["status"]) for e in log] == [
        ("Bearer", 200), ("Bearer", 200), (None, 401), ("Basic", 200), ("Bearer", 200), ("Bearer", 404)]
    assert {e["jti"] for e in log if e["scheme"]} == {claims(token)["jti"]}
    assert all(e["username"] == pool.username for e in log if e["status"] == 200)
    assert token not in json.dumps(log)


def test_clone_and_push_with_a_credential_helper(server, client, tmp_path, pool):
    env, helper, run_git = client
    token = (helper.dir / "token").read_text()
    work = tmp_path / "clone"
    run_git("clone", "-q", server.base_url + "project.git", str(work))
    assert (work / "README").read_text() == "hello from the git server\n"

    (work / "NEW").write_text("pushed over http\n")
    git("add", "NEW", cwd=work, env=env)
    git("commit", "-q", "-m", "second", cwd=work, env=env)
    run_git("push", "-q", "origin", "main", cwd=work)
    bare = Path(server.root) / "project.git"
    assert git("--git-dir", str(bare), "log", "-1", "--format=%s", "main").stdout.strip() == "second"

    log = git_log(server)
    # Each command starts without credentials and gets 401; git asks the helper,
    # then libcurl (CURLAUTH_ANY) probes once more without credentials, gets 401
    # with both challenges, picks Basic (never Bearer: git sets no bearer token)
    # and sends the helper's password as Basic from then on.
    assert [(e["method"], e["scheme"], e["status"]) for e in log] == [
        ("GET", None, 401), ("GET", None, 401), ("GET", "Basic", 200),  # clone: info/refs (v2)
        ("POST", "Basic", 200), ("POST", "Basic", 200),                 # ls-refs, fetch
        ("GET", None, 401), ("GET", None, 401), ("GET", "Basic", 200),  # push: info/refs (v0)
        ("POST", "Basic", 200)]                                         # receive-pack
    assert [e["path"] for e in log if e["method"] == "POST"] == [
        "/project.git/git-upload-pack", "/project.git/git-upload-pack", "/project.git/git-receive-pack"]
    assert {e["jti"] for e in log if e["scheme"]} == {claims(token)["jti"]}

    calls = helper.calls()
    assert [a for a, _ in calls] == ["get", "store", "get", "store"]
    for _, fields in calls:
        assert fields["protocol"] == ["http"] and fields["host"] == [server.base_url[7:-1]]
        # git 2.39 announces no capabilities (capability[]=authtype came with 2.46)
        # and passes no WWW-Authenticate challenges (wwwauth[] came with 2.41).
        assert not any(k.startswith(("capability", "wwwauth")) for k in fields), fields
    assert calls[1][1]["password"] == [token]


def _bad_tokens(pool):
    real = pool.sign_in()
    good = claims(real["AccessToken"])
    key = moto_private_key()
    assert git_server.TokenVerifier(pool.jwks_url, [pool.issuer], pool.client_id).verify(sign(good, key))
    head, body, sig = real["AccessToken"].split(".")
    other_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return {
        "garbage": "not-a-token",
        "tampered": f"{head}.{b64url(json.dumps({**good, 'username': 'mallory'}).encode())}.{sig}",
        "expired": sign({**good, "exp": int(time.time()) - 5}, key),
        "id_token": real["IdToken"],
        "other_client": sign({**good, "client_id": "someone-else"}, key),
        "other_issuer": sign({**good, "iss": good["iss"] + "x"}, key),
        "other_key": sign(good, other_key),
        "unknown_kid": sign(good, other_key, kid="rotated"),
        "hs256": ".".join([b64url(b'{"alg":"HS256","kid":"dummy"}'), body, sig]),
    }


BAD = ["garbage", "tampered", "expired", "id_token", "other_client", "other_issuer", "other_key",
       "unknown_kid", "hs256"]


@pytest.mark.parametrize("kind", BAD)
def test_bad_token_fails_authentication(server, client, tmp_path, pool, kind):
    env, helper, run_git = client
    token = _bad_tokens(pool)[kind]
    helper.set_token(token)
    url = server.base_url + "project.git/info/refs?service=git-upload-pack"
    assert curl_status(url, f"Authorization: Bearer {token}") == 401

    proc = run_git("clone", server.base_url + "project.git", str(tmp_path / "clone"), check=False)
    assert proc.returncode == 128
    assert "Authentication failed for" in proc.stderr
    # git 2.39 on a 401 with the helper's credentials: erase (given the refused
    # password), then give up; no second get within the command.
    calls = helper.calls()
    assert [a for a, _ in calls] == ["get", "erase"]
    assert calls[1][1]["password"] == [token] and calls[1][1]["username"] == [pool.username]
    assert [(e["scheme"], e["status"]) for e in git_log(server)] == [
        ("Bearer", 401), (None, 401), (None, 401), ("Basic", 401)]


def test_revoked_token_is_refused_and_a_new_one_works(server, client, tmp_path, pool):
    env, helper, run_git = client
    token = (helper.dir / "token").read_text()
    run_git("clone", "-q", server.base_url + "project.git", str(tmp_path / "clone"))
    assert admin(server, "accepted") == {"jtis": [claims(token)["jti"]]}
    assert admin(server, "revoke", {"jti": claims(token)["jti"]}) == {"revoked": [claims(token)["jti"]]}
    helper.reset()

    proc = run_git("fetch", cwd=tmp_path / "clone", check=False)
    assert proc.returncode == 128 and "Authentication failed" in proc.stderr
    assert helper.actions() == ["get", "erase"]
    assert git_log(server)[-1]["error"] == "revoked"

    helper.set_token(pool.access_token())
    run_git("fetch", cwd=tmp_path / "clone")


def test_revoke_current_refuses_every_token_seen_so_far(server, client, tmp_path, pool):
    env, helper, run_git = client
    url = server.base_url + "project.git/info/refs?service=git-upload-pack"
    first, second, unseen = pool.access_token(), pool.access_token(), pool.access_token()
    assert curl_status(url, f"Authorization: Bearer {first}") == 200
    assert curl_status(url, f"Authorization: Bearer {second}") == 200
    assert admin(server, "revoke_current", {}) == {"revoked": 2}
    assert curl_status(url, f"Authorization: Bearer {first}") == 401
    assert curl_status(url, f"Authorization: Bearer {second}") == 401
    assert curl_status(url, f"Authorization: Bearer {unseen}") == 200
    admin(server, "clear_log", {})
    assert git_log(server) == []


def test_admin_rejects_bad_requests(server):
    for path, body, code in [("revoke", {}, 400), ("revoke", {"jti": 5}, 400), ("nope", {}, 404)]:
        with pytest.raises(urllib.error.HTTPError) as info:
            admin(server, path, body)
        assert info.value.code == code


def test_large_push_is_chunked_and_large_fetch_request_is_gzipped(server, client, tmp_path):
    env, helper, run_git = client
    work = tmp_path / "clone"
    run_git("clone", "-q", server.base_url + "project.git", str(work))
    (work / "big.bin").write_bytes(os.urandom(3 * 1024 * 1024))  # > http.postBuffer (1 MiB)
    git("add", "big.bin", cwd=work, env=env)
    git("commit", "-q", "-m", "big", cwd=work, env=env)
    for i in range(60):  # many refs: the fetch request's want lines exceed 1 KiB
        git("branch", f"topic-with-a-longish-name-{i:03}", cwd=work, env=env)
    run_git("push", "-q", "origin", "--all", cwd=work)
    bare = Path(server.root) / "project.git"
    assert git("--git-dir", str(bare), "cat-file", "-s", "main:big.bin").stdout.strip() == str(3 * 1024 * 1024)

    run_git("clone", "-q", "--no-single-branch", server.base_url + "project.git", str(tmp_path / "again"))
    assert (tmp_path / "again" / "big.bin").stat().st_size == 3 * 1024 * 1024
    log = git_log(server)
    receive = [e for e in log if e["path"].endswith("git-receive-pack") and e["method"] == "POST"]
    assert any(e["chunked"] and e["status"] == 200 for e in receive), receive
    upload = [e for e in log if e["path"].endswith("git-upload-pack") and e["method"] == "POST"]
    assert any(e["content_encoding"] == "gzip" and e["status"] == 200 for e in upload), upload


class _Jwks(QuietHandler):
    def do_GET(self):
        self.server.fetches += 1
        self.send(200, "application/json", json.dumps({"keys": self.server.keys}).encode())


def _jwk(key, kid):
    numbers = key.public_key().public_numbers()
    as_b64 = lambda i: b64url(i.to_bytes((i.bit_length() + 7) // 8, "big"))  # noqa: E731
    return {"kty": "RSA", "alg": "RS256", "use": "sig", "kid": kid, "n": as_b64(numbers.n), "e": as_b64(numbers.e)}


def test_unknown_kid_refetches_the_jwks(root):
    jwks = ThreadingHTTPServer(("127.0.0.1", 0), _Jwks)
    jwks.fetches, old, new = 0, *(rsa.generate_private_key(public_exponent=65537, key_size=2048) for _ in range(2))
    jwks.keys = [_jwk(old, "old")]
    threading.Thread(target=jwks.serve_forever, daemon=True).start()
    srv, base_url = git_server.start_git_server(root, f"http://127.0.0.1:{jwks.server_address[1]}/jwks.json",
                                                "https://issuer.test/pool", "cid")
    try:
        assert jwks.fetches == 1
        claims = {"iss": "https://issuer.test/pool", "token_use": "access", "client_id": "cid",
                  "username": "bob", "jti": "j1", "exp": int(time.time()) + 60}
        url = base_url + "project.git/info/refs?service=git-upload-pack"
        assert curl_status(url, f"Authorization: Bearer {sign(claims, old, 'old')}") == 200
        assert jwks.fetches == 1
        assert curl_status(url, f"Authorization: Bearer {sign(claims, new, 'new')}") == 401
        assert jwks.fetches == 2
        jwks.keys.append(_jwk(new, "new"))
        assert curl_status(url, f"Authorization: Bearer {sign(claims, new, 'new')}") == 200
        assert jwks.fetches == 3
    finally:
        srv.shutdown()
        srv.server_close()
        jwks.shutdown()
        jwks.server_close()


def test_refuses_a_jwks_url_off_loopback(root):
    with pytest.raises(ValueError):
        git_server.make_git_server(root, "https://cognito-idp.us-east-1.amazonaws.com/p/.well-known/jwks.json",
                                   ["iss"], "cid")
