"""setup-git and setup-kubectl, checked with the real programs: the git
configuration they write makes a real git clone over HTTPS work against the
project's test git server (git_server.py, over TLS here), and the kubeconfig
they write makes the real kubectl (the one on PATH, and Debian's 1.20 with
the v1beta1 it needs) run cog-cred as its exec plugin against the API server
stand-in (token_servers.py). git and kubectl write their own files; these
tests read them back with git and kubectl too.
"""
import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

import git_server
import token_servers
from fault_server import make_tls_material
from support import KUBECTL_120, V1, admitted, claims, stored


def run_in(cog, directory, *args, env=None):
    """cog-cred run in a directory (setup-git --local writes the repository it is run in)."""
    return subprocess.run([cog.binary, *args], cwd=directory, env={**cog.env, **(env or {})}, capture_output=True,
                          text=True, timeout=60)


# --- setup-git ------------------------------------------------------------------------------------------

@pytest.fixture
def https_server(repos, signed_in, tmp_path):
    pool = signed_in
    tls = tmp_path / "tls"
    tls.mkdir()
    ca, cert, key = make_tls_material(str(tls))
    issuer = f"https://cognito-idp.us-east-1.amazonaws.com/{pool.pool_id}"
    srv, url = git_server.start_git_server(repos, f"{pool.url}{pool.pool_id}/.well-known/jwks.json", [issuer],
                                           pool.client_id, tls=(cert, key))
    srv.url = url
    srv.host = url.split("//")[1].rstrip("/")
    srv.ca = ca
    yield srv
    srv.shutdown()
    srv.server_close()


def git(cog, server, *args, cwd=None):
    """The real git, with the test's HOME (its global configuration) and no system one; no prompt."""
    env = {**cog.env, "GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "/bin/false",
           "GIT_SSL_CAINFO": server.ca, "NO_PROXY": "127.0.0.1", "no_proxy": "127.0.0.1"}
    return subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


def helpers(cog, server, key, *scope, cwd=None):
    result = git(cog, server, "config", *(scope or ("--global",)), "-z", "--get-all", key, cwd=cwd)
    return result.stdout.split("\0")[:-1]


def test_setup_git_makes_a_real_clone_over_https_work_once_and_for_that_host_only(cog, bus, https_server, helper_bin,
                                                                                  tmp_path):
    server = https_server
    key = f"credential.https://{server.host}.helper"
    cog.remember_secret(stored(bus, "access"), stored(bus, "refresh"))
    # Before: git has nothing to answer the server's 401 with.
    assert git(cog, server, "ls-remote", server.url + "project.git").returncode != 0
    # Another host's helper and the global helper list are not cog-cred's to touch.
    git(cog, server, "config", "--global", "credential.https://other.example.com.helper", "store")
    git(cog, server, "config", "--global", "credential.helper", "store")
    gitconfig = Path(cog.env["HOME"]) / ".gitconfig"
    other_lines = [line for line in gitconfig.read_text().splitlines()]

    first = cog.ok("setup-git", server.host)
    assert first.stdout == ""
    assert f"wrote {key}" in first.stderr
    second = cog.ok("setup-git", server.host)
    assert "nothing changed" in second.stderr
    # One cog-cred entry, after the empty one that drops the inherited `store` for this host.
    assert helpers(cog, server, key) == ["", "cog-cred --profile default"]
    assert helpers(cog, server, "credential.https://other.example.com.helper") == ["store"]
    assert helpers(cog, server, "credential.helper") == ["store"]
    assert all(line in gitconfig.read_text().splitlines() for line in other_lines)

    listed = git(cog, server, "ls-remote", server.url + "project.git")
    assert listed.returncode == 0, listed.stderr
    assert "refs/heads/main" in listed.stdout
    work = tmp_path / "clone"
    clone = git(cog, server, "clone", "-q", server.url + "project.git", str(work))
    assert clone.returncode == 0, clone.stderr
    assert (work / "README").read_text() == "hello\n"
    log = git_server_log(server)
    assert {entry["jti"] for entry in log if entry["status"] == 200} == {claims(stored(bus, "access"))["jti"]}
    # The reset entry kept git from handing the token to `store`: nothing in plain text.
    assert not (Path(cog.env["HOME"]) / ".git-credentials").exists()
    assert stored(bus, "access") not in gitconfig.read_text()


def git_server_log(server):
    return list(server.request_log)


def test_setup_git_with_another_profile_switches_the_host(cog, bus, https_server, helper_bin, signed_in):
    cog.ok("configure", "--profile", "work", "--user-pool-id", signed_in.pool_id, "--client-id", signed_in.client_id,
           "--endpoint-url", signed_in.url, "--username", signed_in.username)
    key = f"credential.https://{https_server.host}.helper"
    git(cog, https_server, "config", "--global", "--add", key, "cache")
    cog.ok("setup-git", https_server.host)
    switched = cog.ok("setup-git", "-p", "work", f"https://{https_server.host}/")
    assert "Replaced the host's other helpers: cog-cred --profile default" in switched.stderr
    assert helpers(cog, https_server, key) == ["", "cog-cred --profile work"]


def test_setup_git_takes_the_remotes_url_and_writes_the_entry_git_matches_for_it(cog, bus, https_server, helper_bin,
                                                                                   tmp_path):
    """The remote's URL, user name, password, port and path and all: git's
    entry for its host and port, the password nowhere."""
    server = https_server
    remote = server.url + "project.git"
    host, port = server.host.split(":")
    typed = f"https://alice:s3cret@{host.upper()}:{port}/project.git?x=1#y"
    first = cog.ok("setup-git", typed)
    assert f"wrote credential.https://{server.host}.helper" in first.stderr
    second = cog.ok("setup-git", remote)  # the same entry, named by the plain URL
    assert "nothing changed" in second.stderr and "your global git configuration" in second.stderr
    for output in (first, second):
        assert "s3cret" not in output.stderr and "alice" not in output.stderr and output.stdout == ""
    gitconfig = (Path(cog.env["HOME"]) / ".gitconfig").read_text()
    assert "s3cret" not in gitconfig and "alice" not in gitconfig
    # git itself finds the helper for the remote, and for no other port.
    matched = git(cog, server, "config", "--get-urlmatch", "credential.helper", remote)
    assert matched.stdout == "cog-cred --profile default\n", matched.stderr
    other_port = git(cog, server, "config", "--get-urlmatch", "credential.helper", f"https://{host}:1/project.git")
    assert other_port.returncode == 1 and other_port.stdout == ""
    cog.remember_secret(stored(bus, "access"))
    listed = git(cog, server, "ls-remote", remote)
    assert listed.returncode == 0 and "refs/heads/main" in listed.stdout, listed.stderr


def test_setup_git_drops_https_own_port_as_git_does(cog, tmp_path):
    """https://HOST:443/... is git's https://HOST: one entry, which git matches for both."""
    cog.ok("configure", "--user-pool-id", "us-east-1_Abc123", "--client-id", "1example23456789")
    env = {**cog.env, "GIT_CONFIG_NOSYSTEM": "1"}
    assert "wrote credential.https://git.example.com.helper" in cog.ok("setup-git", "https://git.example.com:443/a.git").stderr
    assert "nothing changed" in cog.ok("setup-git", "git.example.com").stderr
    for url in ("https://git.example.com/a.git", "https://git.example.com:443/b.git"):
        matched = subprocess.run(["git", "config", "--get-urlmatch", "credential.helper", url], env=env,
                                 capture_output=True, text=True, timeout=60)
        assert matched.stdout == "cog-cred --profile default\n", (url, matched.stderr)


def test_setup_git_local_writes_the_repository_only(cog, bus, https_server, helper_bin, tmp_path):
    server = https_server
    key = f"credential.https://{server.host}.helper"
    repository = tmp_path / "repository"
    assert git(cog, server, "init", "-q", str(repository)).returncode == 0
    git(cog, server, "remote", "add", "origin", server.url + "project.git", cwd=repository)
    # Outside a repository: a usage error, nothing written anywhere.
    outside = tmp_path / "outside"
    outside.mkdir()
    refused = run_in(cog, outside, "setup-git", "--local", server.host, env={"GIT_CEILING_DIRECTORIES": str(tmp_path)})
    assert refused.returncode == 64, refused.stderr
    assert refused.stderr.count("\n") == 1 and "inside a git repository" in refused.stderr

    for _ in range(2):
        written = run_in(cog, repository, "setup-git", "--local", server.host)
        assert written.returncode == 0, written.stderr
    assert helpers(cog, server, key, "--local", cwd=repository) == ["", "cog-cred --profile default"]
    assert helpers(cog, server, key) == []  # the global configuration is untouched
    fetched = git(cog, server, "fetch", "-q", "origin", cwd=repository)
    assert fetched.returncode == 0, fetched.stderr


def test_setup_git_without_git_or_with_a_bad_host_or_profile(cog, signed_in, helper_bin, tmp_path):
    missing = cog.run("setup-git", "git.example.com", env={"PATH": str(helper_bin)})
    assert missing.returncode == 69
    assert missing.stderr.count("\n") == 1 and "cannot run git" in missing.stderr
    for bad in ("http://git.example.com", "ssh://git.example.com/team/repo.git", "git@git.example.com:team/repo.git",
                "git.example.com/team/repo.git", "-x.example", "https://alice:s3cret@bad host/team/repo.git"):
        result = cog.run("setup-git", "--", bad)
        assert result.returncode == 64, (bad, result.stderr)
        assert result.stderr.count("\n") == 1 and "not a host or https:// URL" in result.stderr, result.stderr
        assert "s3cret" not in result.stderr and "alice" not in result.stderr
    assert cog.run("setup-git", "-p", "nosuch", "git.example.com").returncode == 78
    assert not (Path(cog.env["HOME"]) / ".gitconfig").exists()


def test_git_and_kubectl_get_no_descriptor_of_cog_creds(cog, signed_in, tmp_path):
    """setup-git and setup-kubectl run git and kubectl with 0, 1 and 2
    only, as the browser and qrencode are run: a descriptor cog-cred holds
    (here one its caller left open to it) stays cog-cred's."""
    shims = tmp_path / "shims"
    shims.mkdir()
    seen = tmp_path / "seen"
    for program in ("git", "kubectl"):
        real = shutil.which(program, path=cog.env["PATH"])
        assert real, program
        shim = shims / program
        shim.write_text(f'#!/bin/sh\nfor f in /proc/$$/fd/*; do readlink "$f"; done >> {seen}.{program}\n'
                        f'exec {real} "$@"\n')
        shim.chmod(0o755)
    env = {**cog.env, "PATH": f"{shims}:{cog.env['PATH']}"}
    left_open = tmp_path / "left-open"
    left_open.write_text("")
    fd = os.open(left_open, os.O_RDONLY)
    try:
        for args in (["setup-git", "git.example.com"], ["setup-kubectl", "--kubeconfig", str(tmp_path / "kubeconfig")]):
            result = subprocess.run([cog.binary, *args], env=env, pass_fds=(fd,), capture_output=True, text=True,
                                    timeout=60)
            assert result.returncode == 0, result.stderr
    finally:
        os.close(fd)
    for program in ("git", "kubectl"):
        targets = Path(f"{seen}.{program}").read_text().splitlines()
        assert targets, program  # the program ran and listed its descriptors
        assert str(left_open) not in targets and not any(t.startswith("socket:") for t in targets), (program, targets)


# --- setup-kubectl --------------------------------------------------------------------------------------

@pytest.fixture
def cluster(signed_in, tmp_path):
    server = token_servers.start_kubernetes(signed_in, tmp_path)
    yield server
    server.stop()


def kubeconfig_with_cluster(path, cluster, mode=0o640):
    """A kubeconfig holding the cluster `prod` and someone else's user, as kubectl would have it."""
    config = {
        "apiVersion": "v1", "kind": "Config", "current-context": "",
        "clusters": [{"name": "prod", "cluster": {"server": cluster.url,
                                                  "certificate-authority-data": cluster.certificate_data}}],
        "users": [{"name": "someone", "user": {"token": "someone-elses-token"}}],
        "contexts": [{"name": "prod", "context": {"cluster": "prod", "user": "someone", "namespace": "team"}}],
    }
    path.write_text(json.dumps(config))
    path.chmod(mode)
    return path


def view(binary, cog, config):
    result = subprocess.run([str(binary), "--kubeconfig", str(config), "config", "view", "--raw", "-o", "json"],
                            env=cog.env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def get_pods(binary, cog, config, *context):
    return subprocess.run([str(binary), "--kubeconfig", str(config), *context, "get", "--raw",
                           "/api/v1/namespaces/default/pods"], env=cog.env, capture_output=True, text=True, timeout=60)


def test_setup_kubectl_binds_the_cluster_and_the_real_kubectl_uses_the_plugin(cog, signed_in, cluster, helper_bin,
                                                                             tmp_path):
    config = kubeconfig_with_cluster(tmp_path / "kubeconfig", cluster)
    first = cog.ok("setup-kubectl", "--cluster", "prod", "--kubeconfig", str(config))
    assert first.stdout == "" and f"Wrote kubectl user 'cog-cred-default' (profile 'default', {V1}) in {config}." in first.stderr
    after_first = config.read_bytes()
    # The same settings again: nothing written, and it says so, naming the file.
    second = cog.ok("setup-kubectl", "--cluster", "prod", "--kubeconfig", str(config))
    assert second.stdout == "" and second.stderr.count("\n") == 1
    assert second.stderr == (f"kubectl already has user 'cog-cred-default' (profile 'default', {V1}) and context 'prod' "
                             f"uses it for cluster 'prod' in {config}; nothing changed.\n")
    assert config.read_bytes() == after_first
    # Another setting is written again.
    third = cog.ok("setup-kubectl", "--cluster", "prod", "--kubeconfig", str(config), "--id-token")
    assert "nothing changed" not in third.stderr and "Wrote kubectl user" in third.stderr
    cog.ok("setup-kubectl", "--cluster", "prod", "--kubeconfig", str(config))
    written = view("kubectl", cog, config)
    ours = [user for user in written["users"] if user["name"] == "cog-cred-default"]
    assert len(ours) == 1 and len(written["users"]) == 2
    assert ours[0]["user"]["exec"]["apiVersion"] == V1
    assert ours[0]["user"]["exec"]["args"] == ["kubectl-credential", "--profile", "default"]
    assert ours[0]["user"]["exec"]["interactiveMode"] == "Never"
    assert {user["name"]: user["user"] for user in written["users"]}["someone"] == {"token": "someone-elses-token"}
    assert written["contexts"] == [{"name": "prod", "context": {"cluster": "prod", "user": "cog-cred-default",
                                                                "namespace": "team"}}]
    assert stat.S_IMODE(config.stat().st_mode) == 0o640  # kubectl kept the file's mode

    pods = get_pods("kubectl", cog, config, "--context", "prod")
    assert pods.returncode == 0, pods.stderr
    assert json.loads(pods.stdout)["kind"] == "PodList"
    assert admitted(cluster, signed_in), cluster.seen


def test_setup_kubectl_follows_kubeconfig_and_creates_files_0600(cog, signed_in, cluster, helper_bin, tmp_path):
    config = kubeconfig_with_cluster(tmp_path / "from-env", cluster)
    cog.ok("setup-kubectl", "--cluster", "prod", "--user", "alice", env={"KUBECONFIG": str(config)})
    assert sorted(user["name"] for user in view("kubectl", cog, config)["users"]) == ["alice", "someone"]
    # Several files in $KUBECONFIG: the one kubectl keeps the user in is named, on a repeat too.
    first_file = tmp_path / "first"
    first_file.write_text(json.dumps({"apiVersion": "v1", "kind": "Config",
                                      "users": [{"name": "bob", "user": {"token": "bobs-token"}}]}))
    both = {"KUBECONFIG": f"{first_file}:{config}"}
    repeat = cog.ok("setup-kubectl", "--cluster", "prod", "--user", "alice", env=both)
    assert repeat.stderr.endswith(f"in {config}; nothing changed.\n"), repeat.stderr
    assert [user["name"] for user in view("kubectl", cog, first_file)["users"]] == ["bob"]
    # Only the user, in a file that did not exist: kubectl creates it 0600, directory and all.
    fresh = tmp_path / "new" / "kube" / "config"
    result = cog.ok("setup-kubectl", "--kubeconfig", str(fresh), "--id-token")
    assert "set-context --current --user=cog-cred-default" in result.stderr
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o600
    assert view("kubectl", cog, fresh)["users"][0]["user"]["exec"]["args"][-1] == "--id-token"
    # Neither: kubectl's ~/.kube/config.
    default = Path(cog.env["HOME"]) / ".kube" / "config"
    kubeconfig_with_cluster(default, cluster, mode=0o600)
    written = cog.ok("setup-kubectl", "--cluster", "prod", env={"KUBECONFIG": None})
    assert f"in {default}." in written.stderr
    assert "cog-cred-default" in [user["name"] for user in view("kubectl", cog, default)["users"]]
    repeat = cog.ok("setup-kubectl", "--cluster", "prod", env={"KUBECONFIG": None})
    assert repeat.stderr.endswith(f"in {default}; nothing changed.\n"), repeat.stderr


def test_setup_kubectl_with_debian_kubectl_1_20_says_to_write_the_user_by_hand(cog, signed_in, cluster, helper_bin,
                                                                                tmp_path):
    """Debian 12's kubectl 1.20 crashes in every `config set-credentials` (a nil map in its Go build)."""
    (helper_bin / "kubectl").symlink_to(KUBECTL_120)
    config = kubeconfig_with_cluster(tmp_path / "kubeconfig", cluster)
    before = config.read_text()
    result = cog.run("setup-kubectl", "--cluster", "prod", "--kubeconfig", str(config))
    assert result.returncode == 69, result.stderr
    assert result.stderr.count("\n") == 1 and "by hand" in result.stderr
    assert config.read_text() == before


def test_setup_kubectl_refusals_write_nothing(cog, signed_in, cluster, helper_bin, tmp_path):
    config = kubeconfig_with_cluster(tmp_path / "kubeconfig", cluster)
    before = config.read_text()
    unknown = cog.run("setup-kubectl", "--cluster", "prdo", "--kubeconfig", str(config))
    assert unknown.returncode == 78 and "no cluster 'prdo'" in unknown.stderr
    assert cog.run("setup-kubectl").returncode == 64
    assert cog.run("setup-kubectl", "--context", "x", "--kubeconfig", str(config)).returncode == 64
    assert cog.run("setup-kubectl", "--cluster", "prod", "-p", "nosuch", "--kubeconfig", str(config)).returncode == 78
    missing = cog.run("setup-kubectl", "--cluster", "prod", "--kubeconfig", str(config), env={"PATH": str(helper_bin)})
    assert missing.returncode == 69 and "cannot run kubectl" in missing.stderr
    assert config.read_text() == before


# --- setup-docker ---------------------------------------------------------------------------------------

@pytest.fixture
def registry(signed_in):
    """The registry stand-in (plain HTTP), mapped to no profile and in no docker config yet."""
    server = token_servers.start_registry(signed_in)
    server.host = server.url.split("//")[1]
    yield server
    server.stop()


def skopeo_tags(cog, registry, env=None):
    """The real skopeo listing the registry's tags, with no auth file of its own: only docker's config counts."""
    env = {**cog.env, "REGISTRY_AUTH_FILE": str(Path(cog.env["HOME"]) / "no-auth.json"), **(env or {})}
    return subprocess.run(["skopeo", "list-tags", "--tls-verify=false", f"docker://{registry.host}/team/app"],
                          env=env, capture_output=True, text=True, timeout=60)


def docker_py_auth(cog, registry, env=None):
    """docker-py's own reading of docker's config for the registry (load_config, then resolve_authconfig,
    which runs the helper credHelpers names), in its own process: (helper, credential)."""
    program = ("import sys, json, docker.auth as a\n"
               "config = a.load_config()\n"
               "print(json.dumps([config.get_credential_store(sys.argv[1]), a.resolve_authconfig(config, sys.argv[1])]))\n")
    result = subprocess.run([sys.executable, "-c", program, registry.host], env={**cog.env, **(env or {})},
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def profile_registries(cog, name="default"):
    config = Path(cog.env["XDG_CONFIG_HOME"]) / "cog-cred" / "config.json"
    return json.loads(config.read_text())["profiles"][name].get("docker-registries")


OTHER_DOCKER_SETTINGS = {
    "auths": {"other.example.com": {"auth": "b3RoZXI6cGFzcw=="}, "https://index.docker.io/v1/": {}},
    "credsStore": "secretservice",
    "credHelpers": {"gcr.io": "gcloud"},
    "proxies": {"default": {"httpProxy": "http://proxy.example.com:3128", "noProxy": "127.0.0.1"}},
    "detachKeys": "ctrl-e,e", "psFormat": "table {{.ID}}", "features": {"buildkit": True}, "currentContext": "default",
    "someFutureKey": [1, 2.5, None, False, {"nested": "kept"}],
}


@pytest.mark.skipif(shutil.which("skopeo") is None, reason="skopeo is installed by scripts/install-deps")
def test_setup_docker_makes_skopeo_and_docker_py_use_the_helper_and_keeps_the_rest(cog, bus, signed_in, registry,
                                                                                    helper_bin):
    docker = Path(cog.env["HOME"]) / ".docker"
    docker.mkdir(mode=0o755)
    config = docker / "config.json"
    config.write_text(json.dumps(OTHER_DOCKER_SETTINGS, indent="\t"))
    config.chmod(0o644)
    cog.remember_secret(stored(bus, "access"))
    # Before: no helper for the registry, which then refuses skopeo.
    assert skopeo_tags(cog, registry).returncode != 0

    typed = f"http://alice:s3cret@{registry.host}/v2/"
    first = cog.ok("setup-docker", typed)
    assert first.stdout == ""
    assert f"docker now asks cog-cred (profile 'default') for {registry.host}: wrote credHelpers in {config}." \
        in first.stderr
    assert "s3cret" not in first.stderr and "alice" not in first.stderr
    written = json.loads(config.read_text())
    assert written == {**OTHER_DOCKER_SETTINGS,
                       "credHelpers": {"gcr.io": "gcloud", registry.host: "cog-cred"}}
    assert "s3cret" not in config.read_text()
    assert stat.S_IMODE(config.stat().st_mode) == 0o644  # the file's mode kept, as docker keeps it
    assert profile_registries(cog) == [registry.host]
    assert [p.name for p in docker.iterdir()] == ["config.json"]  # no temporary file left

    # A second run changes nothing, names the file and leaves it byte for byte.
    before = config.read_bytes()
    second = cog.ok("setup-docker", registry.host)
    assert second.stderr == (f"docker already asks cog-cred (profile 'default') for {registry.host} in {config}; "
                             "nothing changed.\n")
    assert config.read_bytes() == before

    # The real clients now ask cog-cred for the registry, and it opens.
    listed = skopeo_tags(cog, registry)
    assert listed.returncode == 0, listed.stderr
    assert json.loads(listed.stdout)["Tags"] == ["latest"]
    assert admitted(registry, signed_in), registry.seen
    helper, credential = docker_py_auth(cog, registry)
    assert helper == "cog-cred"
    assert credential["Password"] == stored(bus, "access") and credential["ServerAddress"] == registry.host


def test_setup_docker_follows_docker_config_and_creates_it_private(cog, signed_in, registry, helper_bin, tmp_path):
    directory = tmp_path / "docker-config" / "nested"
    env = {"DOCKER_CONFIG": str(directory)}
    cog.ok("configure", "--profile", "work", "--user-pool-id", signed_in.pool_id, "--client-id", signed_in.client_id,
           "--endpoint-url", signed_in.url, "--docker-registry", registry.host)
    result = cog.ok("setup-docker", "-p", "default", f"https://{registry.host}/v2/", env=env)
    config = directory / "config.json"
    assert f"wrote credHelpers in {config}." in result.stderr
    assert "No longer answered by profile 'work'." in result.stderr  # moved: one profile answers for a registry
    assert json.loads(config.read_text()) == {"credHelpers": {registry.host: "cog-cred"}}
    assert stat.S_IMODE(config.stat().st_mode) == 0o600
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    assert not (Path(cog.env["HOME"]) / ".docker").exists()
    assert profile_registries(cog, "work") is None and profile_registries(cog) == [registry.host]
    # docker-py reads DOCKER_CONFIG too, and finds the helper there.
    helper, credential = docker_py_auth(cog, registry, env=env)
    assert helper == "cog-cred" and credential["ServerAddress"] == registry.host


@pytest.mark.parametrize("content", ["{", "[]", '{"credHelpers": ["x"]}', '{"auths": {}} trailing'])
def test_setup_docker_refuses_a_malformed_config_and_changes_nothing(cog, signed_in, registry, content):
    docker = Path(cog.env["HOME"]) / ".docker"
    docker.mkdir()
    config = docker / "config.json"
    config.write_text(content)
    result = cog.run("setup-docker", registry.host)
    assert result.returncode == 78, result.stderr
    assert result.stderr.count("\n") == 1 and str(config) in result.stderr and "nothing was changed" in result.stderr
    assert config.read_text() == content
    assert [p.name for p in docker.iterdir()] == ["config.json"]
    assert profile_registries(cog) is None


def test_setup_docker_refusals(cog, signed_in, tmp_path):
    for bad in ("docker://registry.example.com", "registry.example.com/team/image", "a b",
                "https://alice:s3cret@bad host/v2/"):
        result = cog.run("setup-docker", "--", bad)
        assert result.returncode == 64, (bad, result.stderr)
        assert result.stderr.count("\n") == 1 and "not a registry" in result.stderr
        assert "s3cret" not in result.stderr and "alice" not in result.stderr
    assert cog.run("setup-docker").returncode == 64
    assert cog.run("setup-docker", "-p", "nosuch", "registry.example.com").returncode == 78
    assert not (Path(cog.env["HOME"]) / ".docker").exists()
