#!/usr/bin/env python3
"""The performance targets of cog-cred, each measured side by side with
its reference in one run (absolute times drift between machines; ratios
measured together do not). Run through bench/run, inside scripts/sandbox.
"""
import json
import os
import platform
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

from figures import ms, summary

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "Tests" / "EndToEnd"))

SMOKE = "--smoke" in sys.argv
# --only slow-link, --only proxy: that section alone (bench/slow_link_rows.py,
# bench/proxy_rows.py), reported to a temporary folder like a smoke run, so
# docs/ keeps the full run's.
ONLY = (sys.argv[sys.argv.index("--only") + 1:] + [""])[0] if "--only" in sys.argv else None
if ONLY not in (None, "slow-link", "proxy"):
    sys.exit(f"bench: --only {ONLY}: the sections that run alone are slow-link and proxy")
COG = os.environ["COG_CRED"]
FANOUT = os.environ["FANOUT"]
EMULATOR = os.environ["COG_CRED_EMULATOR_URL"]
OUT = Path(tempfile.mkdtemp(prefix="cog-cred-bench-")) if SMOKE or ONLY else REPO / "docs"
PASSWORD = "Bench-Password-1"
AWS_ENV = {**os.environ, "AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench", "AWS_DEFAULT_REGION": "us-east-1"}


def runs(full, smoke=3):
    return smoke if SMOKE else full


def cog(*args, input=None, env=None):
    return subprocess.run([COG, *args], input=input, capture_output=True, text=True, check=True,
                          env={**os.environ, **(env or {})})


def hyperfine(commands, count, warmup, shell=False, blocks=1, env=None):
    """Times in seconds per command, from hyperfine's JSON export. hyperfine
    runs all of one command's runs, then the next one's; with `blocks`, it
    is called that many times for count/blocks runs each (and `warmup`
    runs each time), the commands' order turning round each time, so a slow
    minute of the shared host lands on both sides of a ratio while every
    run still follows runs of its own command."""
    times = [[] for _ in commands]
    for block in range(blocks):
        order = list(range(len(commands)))
        if block % 2:
            order.reverse()
        with tempfile.NamedTemporaryFile(suffix=".json") as export:
            args = ["hyperfine", "--style", "none", "--export-json", export.name, "-w", str(warmup),
                    "-r", str(count // blocks)]
            if not shell:
                args.append("-N")
            subprocess.run(args + [commands[i] for i in order], check=True, stdout=subprocess.DEVNULL, env={**AWS_ENV, **(env or {})})
            for i, result in zip(order, json.load(open(export.name))["results"]):
                times[i] += result["times"]
    return times


def alternate(commands, count, warmup):
    """Times in seconds per command, the commands taking turns (see
    bench/alternate.c): for two of our own commands compared with each other,
    where a slow stretch of the shared host must weigh on both alike."""
    out = subprocess.run([os.environ["ALTERNATE"], str(count), str(warmup), *commands], check=True,
                         capture_output=True, text=True, env=AWS_ENV).stdout
    return [[float(t) for t in line.split()] for line in out.splitlines()]


def peak_rss_kib(command, count, env=None):
    """Median peak resident set size over `count` runs. Measured by GNU time,
    a small parent: a child forked from this Python process would report
    Python's own peak (Linux carries the maximum across exec)."""
    samples = []
    for _ in range(count):
        out = subprocess.run(["/usr/bin/time", "-f", "%M", *command], stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True, check=True, env={**os.environ, **(env or {})})
        samples.append(int(out.stderr.strip().splitlines()[-1]))
    return statistics.median(samples)



def setup_pool():
    import boto3

    idp = boto3.client("cognito-idp", endpoint_url=EMULATOR, region_name="us-east-1",
                       aws_access_key_id="bench", aws_secret_access_key="bench")
    pool = idp.create_user_pool(PoolName="bench")["UserPool"]["Id"]
    client = idp.create_user_pool_client(UserPoolId=pool, ClientName="bench", ExplicitAuthFlows=[
        "ALLOW_USER_PASSWORD_AUTH", "ALLOW_USER_SRP_AUTH", "ALLOW_REFRESH_TOKEN_AUTH"])["UserPoolClient"]["ClientId"]
    idp.admin_create_user(UserPoolId=pool, Username="bench", MessageAction="SUPPRESS")
    idp.admin_set_user_password(UserPoolId=pool, Username="bench", Password=PASSWORD, Permanent=True)
    return pool, client


def main():
    if ONLY == "slow-link":
        slow = slow_link()
        report([], slow)
        return slow_link_verdict(slow)
    from proxy_rows import missing_tools

    # The proxy rows need wrk and nginx (scripts/install-deps --bench, which
    # bench/run runs but for --smoke): a full run stops before measuring
    # anything without them; a smoke run skips those rows and says so.
    if missing_tools() and not SMOKE:
        sys.exit(f"bench: the proxy rows need {' and '.join(missing_tools())}: scripts/install-deps --bench installs them")
    pool, client = setup_pool()
    if ONLY == "proxy":
        proxy = proxy_section(pool, client)
        report([], [], proxy)
        return proxy_verdict(proxy)
    cog("configure", "--user-pool-id", pool, "--client-id", client, "--endpoint-url", EMULATOR, "--username", "bench")
    cog("sign-in", "--password-stdin", "--auth-flow", "password", input=PASSWORD + "\n")
    cog("refresh")  # learns once that the emulator has no GetTokensFromRefreshToken
    results = []

    # 1: every read path against libsecret's own client reading one item.
    # Measured right after a `configure` (which changes nothing the tokens
    # depend on): nothing is cached, so there is no cliff to fall from.
    cog("configure", "--request-timeout", "15")
    cog("configure", "--profile", "git", "--user-pool-id", pool, "--client-id", client, "--endpoint-url", EMULATOR,
        "--username", "bench", "--git-url", "https://git.example.com/", "--docker-registry", "registry.example.com")
    cog("sign-in", "--profile", "git", "--password-stdin", "--auth-flow", "password", input=PASSWORD + "\n")
    inputs = Path(tempfile.mkdtemp(prefix="cog-cred-bench-input-"))
    (inputs / "git").write_text("protocol=https\nhost=git.example.com\npath=team/repo.git\n\n")
    (inputs / "docker").write_text("https://registry.example.com\n")
    (inputs / "empty").write_text("")
    with_stdin = os.environ["WITH_STDIN"]
    lookup = "secret-tool lookup service cog-cred profile default kind access"
    read_paths = [
        ("token", f"{COG} token", None),
        ("get-header", f"{COG} get-header", None),
        ("token --format json", f"{COG} token --format json", None),
        ("kubectl-credential", f"{COG} kubectl-credential", None),
        ("exec -- true", f"{COG} exec -- true", None),
        ("git-credential get", f"{COG} git-credential get", "git"),  # the profile whose --git-url matches
        ("docker-credential get", f"{COG} docker-credential get", "docker"),
    ]
    for name, command, stdin in read_paths:
        reference = lookup
        if stdin:
            # Both through the same stdin helper, so both pay for it.
            command = f"{with_stdin} {inputs / stdin} {command}"
            reference = f"{with_stdin} {inputs / 'empty'} {lookup}"
        # Each answers (exec runs `true`, which prints nothing) before it is timed.
        check = subprocess.run(command.split(), capture_output=True, text=True)
        assert check.returncode == 0 and ("eyJ" in check.stdout or name.startswith("exec")), f"{name}: {check.stderr}"
        ours, ref = hyperfine([command, reference], runs(300, 5), runs(10, 1), blocks=runs(6, 1))
        rss_ours = peak_rss_kib(command.split(), runs(30, 2))
        rss_ref = peak_rss_kib(reference.split(), runs(30, 2))
        results.append({"name": f"`cog-cred {name}` (valid token)", "reference": "`secret-tool lookup`",
                        "ours": summary(ours), "ref": summary(ref), "target": 0.25,
                        "rss": (rss_ours, rss_ref), "rss_target": 1.5})

    # 1b: `token` through an agent that keeps the session in memory
    # (COG_CRED_AGENT): no D-Bus at all, one request on its socket. The
    # variable is set for both commands; secret-tool does not read it.
    agent = subprocess.run([COG, "agent", "--memory", "--daemon", "--socket", str(inputs / "agent")], capture_output=True,
                           text=True, check=True).stdout
    agent_pid = int(agent.split("COG_CRED_AGENT_PID=")[1].split(";")[0])
    try:
        through = {"COG_CRED_AGENT": str(inputs / "agent")}
        cog("sign-in", "--password-stdin", "--auth-flow", "password", input=PASSWORD + "\n", env=through)
        assert "eyJ" in cog("token", env=through).stdout
        ours, ref = hyperfine([f"{COG} token", lookup], runs(300, 5), runs(10, 1), blocks=runs(6, 1), env=through)
        rss_ours = peak_rss_kib([COG, "token"], runs(30, 2), env=through)
        rss_ref = peak_rss_kib(lookup.split(), runs(30, 2))
        results.append({"name": "`cog-cred token` through a memory agent (valid token)", "reference": "`secret-tool lookup`",
                        "ours": summary(ours), "ref": summary(ref), "target": 0.10,
                        "rss": (rss_ours, rss_ref), "rss_target": 1.5})
    finally:
        os.kill(agent_pid, signal.SIGTERM)

    # 2: aws-credentials with fresh credentials stored (the AWS CLI runs it
    # before every command) against `token`: "as fast as token". moto's
    # identity pool hands out 90-second credentials, so --min-ttl 0 keeps
    # them fresh for the run, which starts right after they are fetched.
    import boto3

    identity = boto3.client("cognito-identity", endpoint_url=EMULATOR, region_name="us-east-1",
                            aws_access_key_id="bench", aws_secret_access_key="bench")
    identity_pool = identity.create_identity_pool(
        IdentityPoolName="bench", AllowUnauthenticatedIdentities=False,
        CognitoIdentityProviders=[{"ProviderName": f"cognito-idp.us-east-1.amazonaws.com/{pool}", "ClientId": client}],
    )["IdentityPoolId"]
    cog("configure", "--identity-pool-id", identity_pool)
    aws_env = {**os.environ, "AWS_ENDPOINT_URL": EMULATOR}
    cog("aws-credentials", env=aws_env)
    ours, ref = alternate([f"{COG} aws-credentials --min-ttl 0", f"{COG} token"], runs(300, 3), runs(30, 1))
    results.append({"name": "`cog-cred aws-credentials` (fresh credentials)", "reference": "`cog-cred token`",
                    "ours": summary(ours), "ref": summary(ref), "target": 1.1})

    # 3: sign-in against the emulator, against the AWS CLI doing the same.
    aws_password = (f"aws cognito-idp initiate-auth --endpoint-url {EMULATOR} --client-id {client} "
                    f"--auth-flow USER_PASSWORD_AUTH --auth-parameters USERNAME=bench,PASSWORD={PASSWORD}")
    (aws,) = hyperfine([aws_password], runs(20, 2), runs(2, 0), shell=True)
    for flow, target in (("password", 1 / 20), ("srp", 1 / 10)):
        (ours,) = hyperfine([f"printf '%s\\n' '{PASSWORD}' | {COG} sign-in --password-stdin --auth-flow {flow}"],
                            runs(60, 3), runs(5, 1), shell=True)
        results.append({"name": f"`cog-cred sign-in` ({flow} flow)", "reference": "`aws cognito-idp initiate-auth` (password)",
                        "ours": summary(ours), "ref": summary(aws), "target": target})

    # 4: a forced refresh.
    refresh_token = subprocess.run(["secret-tool", "lookup", "service", "cog-cred", "profile", "default", "kind", "refresh"],
                                   capture_output=True, text=True, check=True).stdout
    aws_refresh = (f"aws cognito-idp initiate-auth --endpoint-url {EMULATOR} --client-id {client} "
                   f"--auth-flow REFRESH_TOKEN_AUTH --auth-parameters REFRESH_TOKEN={refresh_token}")
    (aws,) = hyperfine([aws_refresh], runs(20, 2), runs(2, 0), shell=True)
    (ours,) = hyperfine([f"{COG} refresh"], runs(60, 3), runs(5, 1))
    results.append({"name": "`cog-cred refresh` (forced)", "reference": "`aws cognito-idp initiate-auth` (REFRESH_TOKEN_AUTH)",
                    "ours": summary(ours), "ref": summary(aws), "target": 1 / 20})

    # 5: 64 callers at once on an expired token, against the project's test
    # double (it issues tokens that are already expired, and counts refreshes).
    from cognito_double import start_double

    server, url = start_double()
    try:
        results.append(burst(url))
        results.append(passkey_sign_in(url))
    finally:
        server.shutdown()
        server.server_close()
    proxy = proxy_section(pool, client)
    slow = slow_link()
    report(results, slow, proxy)
    return max(slow_link_verdict(slow), proxy_verdict(proxy))


def slow_link():
    """7: the commands that talk to Cognito over an 80 ms round trip, each
    beside its floor (bench/slow_link_rows.py: the chain, the floor, the
    checks of every run's requests and connections)."""
    from slow_link_rows import slow_link_rows

    return slow_link_rows(COG, runs(20, 3), PASSWORD)


def slow_link_verdict(rows):
    """After the report: a slow-link row whose runs made other requests or
    opened other connections than its floor counts fails the bench (exit
    status 1), loudly; the report already shows which and how."""
    failed = [r for r in rows if r["problems"]]
    for r in failed:
        print(f"bench: slow link: {r['name']}:", *r["problems"], sep="\n  ", file=sys.stderr)
    return 1 if failed else 0


def proxy_section(pool, client):
    """8: `cog-cred proxy` in front of nginx serving a 1 KiB file, beside nginx
    as a reverse proxy adding a fixed Authorization, and 128 MiB each way
    (bench/proxy_rows.py: the set-up, the checks of every run), with a
    profile of its own signed in to the emulator."""
    from proxy_rows import missing_tools, proxy_rows

    if missing_tools():
        why = f"{' and '.join(missing_tools())} not installed (scripts/install-deps --bench)"
        print(f"bench: the proxy rows are skipped in this smoke run: {why}", file=sys.stderr)
        return {"skipped": why}
    cog("configure", "--profile", "proxy", "--user-pool-id", pool, "--client-id", client, "--endpoint-url", EMULATOR,
        "--username", "bench")
    cog("sign-in", "--profile", "proxy", "--password-stdin", "--auth-flow", "password", input=PASSWORD + "\n")
    return proxy_rows(COG, "proxy", SMOKE)


def proxy_verdict(result):
    """After the report: a proxy row whose runs failed a check (an error, an
    answer not 2xx or 3xx, bytes that differ) fails the bench (exit status 1)."""
    failed = {key: found for key, found in (result.get("problems") or {}).items() if found}
    for key, found in failed.items():
        print(f"bench: proxy: {key}:", *found, sep="\n  ", file=sys.stderr)
    return 1 if failed else 0


def double_admin(url, path, body=None):
    import urllib.request

    data = None if body is None else json.dumps(body).encode()
    with urllib.request.urlopen(urllib.request.Request(url + "_double/" + path, data=data), timeout=10) as r:
        return json.loads(r.read() or b"{}")


def burst(url):
    double_admin(url, "users", {"username": "burst", "password": PASSWORD})
    cog("configure", "--profile", "burst", "--user-pool-id", "us-east-1_double", "--client-id", "doubleclient",
        "--endpoint-url", url, "--username", "burst")
    refreshes = lambda: double_admin(url, "stats")["calls"].get("GetTokensFromRefreshToken", 0)
    singles, bursts = [], []
    for _ in range(runs(15, 2)):
        double_admin(url, "config", {"issued_at_offset": -7200})
        cog("sign-in", "--profile", "burst", "--password-stdin", input=PASSWORD + "\n")
        double_admin(url, "config", {"issued_at_offset": 0})
        started = time.perf_counter()
        cog("refresh", "--profile", "burst")
        singles.append(time.perf_counter() - started)

        double_admin(url, "config", {"issued_at_offset": -7200})
        cog("refresh", "--profile", "burst")  # expired again
        double_admin(url, "config", {"issued_at_offset": 0})
        before = refreshes()
        # bench/fanout.c starts the 64 and times them: from Python, starting
        # them alone took a third of the burst.
        seconds, distinct, failed = subprocess.run([FANOUT, "64", COG, "token", "--profile", "burst"], check=True,
                                                   capture_output=True, text=True).stdout.split()
        bursts.append(float(seconds))
        assert failed == "0", f"{failed} callers failed"
        assert distinct == "1", "callers printed different tokens"
        assert refreshes() == before + 1, f"{refreshes() - before} refreshes for one burst"
    return {"name": "64 concurrent `cog-cred token` (expired token)", "reference": "one `cog-cred refresh`",
            "ours": summary(bursts), "ref": summary(singles), "target": 3.0, "note": "exactly one refresh operation per burst"}


def passkey_sign_in(url):
    """6: a passkey sign-in (USER_AUTH, the WEB_AUTHN challenge, libfido2 and
    the tests' software authenticator on a UNIX socket), against the test
    double (moto has no WebAuthn), beside an SRP sign-in of the same user
    against the same double."""
    from soft_authenticator import SoftAuthenticator

    rp = "auth.bench.test"
    double_admin(url, "config", {"allowed_first_auth_factors": ["PASSWORD", "WEB_AUTHN"], "webauthn_rp_id": rp})
    double_admin(url, "users", {"username": "passkey", "password": PASSWORD})
    cog("configure", "--profile", "passkey", "--user-pool-id", "us-east-1_double", "--client-id", "doubleclient",
        "--endpoint-url", url, "--username", "passkey", "--passkey-rp-id", rp)
    cog("sign-in", "--profile", "passkey", "--password-stdin", input=PASSWORD + "\n")
    with tempfile.TemporaryDirectory() as directory, SoftAuthenticator(directory) as key:
        cog("passkey", "add", "--profile", "passkey", "--authenticator", key.device)
        (ours,) = hyperfine([f"{COG} sign-in --profile passkey --method passkey --authenticator {key.device}"],
                            runs(60, 3), runs(5, 1))
    (srp,) = hyperfine([f"printf '%s\\n' '{PASSWORD}' | {COG} sign-in --profile passkey --password-stdin --auth-flow srp"],
                       runs(60, 3), runs(5, 1), shell=True)
    return {"name": "`cog-cred sign-in --method passkey` (virtual security key, test double)",
            "reference": "`cog-cred sign-in` (srp flow, test double)", "ours": summary(ours), "ref": summary(srp), "target": 1.5}


def machine():
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")), "?")
    memory = next((line.split()[1] for line in open("/proc/meminfo") if line.startswith("MemTotal")), "0")
    swift = subprocess.run(["swift", "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    hyper = subprocess.run(["hyperfine", "--version"], capture_output=True, text=True).stdout.strip()
    return (f"{os.cpu_count()} × {cpu}, {int(memory) // 1024 // 1024} GiB, Linux {platform.release()}, "
            f"{platform.freedesktop_os_release().get('PRETTY_NAME', '')}; {swift}; {hyper}")



def report(results, slow_link_results, proxy_result=None):
    from proxy_rows import report_lines as proxy_lines
    from slow_link_rows import report_lines as slow_link_lines

    now = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    head = [
        "# Performance",
        "",
        f"Measured {now} by `bench/run` on: {machine()}.",
        "",
    ]
    table = [
        "Each row is measured side by side with its reference in the same run; times in ms "
        "(median, and p10–p90 below it). Ratio = cog-cred median / reference median. "
        "hyperfine runs each command many times in a row; for the read rows it does so in 6 blocks of 50 runs "
        "(10 warm-up runs each), cog-cred's block and the reference's taking turns, so that a slow stretch of "
        "this shared host weighs on both sides of the ratio. The `aws-credentials` row, two of cog-cred's own "
        "commands, takes turns run by run (bench/alternate.c).",
        "",
        "| what | cog-cred | reference | ratio | target | |",
        "|---|---|---|---|---|---|",
    ]
    for r in results:
        ratio = r["ours"]["median"] / r["ref"]["median"]
        ok = ratio <= r["target"]
        target = f"≤ {r['target']:g}" if r["target"] >= 1 else f"≤ {r['target']:.2g} (1/{round(1 / r['target'])})"
        table.append(
            f"| {r['name']} | {ms(r['ours']['median'])} ({ms(r['ours']['p10'])}–{ms(r['ours']['p90'])}, n={r['ours']['n']}) "
            f"| {r['reference']}: {ms(r['ref']['median'])} ({ms(r['ref']['p10'])}–{ms(r['ref']['p90'])}, n={r['ref']['n']}) "
            f"| {ratio:.3f} | {target} | {'met' if ok else 'MISSED'} |")
        if "rss" in r:
            ours, ref = r["rss"]
            rss_ok = ours / ref <= r["rss_target"]
            table.append(f"| … peak RSS | {ours / 1024:.1f} MiB | {ref / 1024:.1f} MiB | {ours / ref:.2f} | ≤ {r['rss_target']} "
                         f"| {'met' if rss_ok else 'MISSED'} |")
    if results:  # none with --only slow-link
        table += ["", "![latency distributions](performance.png)", ""]
    else:
        table = []
    slow = slow_link_lines(slow_link_results) + [""] if slow_link_results else []
    proxy = proxy_lines(proxy_result) + [""] if proxy_result else []
    lines = head + table + slow + proxy + (REPO / "bench" / "notes.md").read_text().splitlines()
    (OUT / "performance.md").write_text("\n".join(lines) + "\n")
    for line in head + table[:-3] + [""] + slow + proxy:
        print(line)
    if not (SMOKE or ONLY):
        chart(results)
    else:
        proxy_rows_run = "" if not proxy_result else ", proxy rows skipped" if proxy_result.get("skipped") else ", proxy rows"
        print(f"bench: {'smoke ' if SMOKE else ''}run complete ({len(results)} benchmarks, "
              f"{len(slow_link_results)} slow-link rows{proxy_rows_run}), report in {OUT}", file=sys.stderr)


def chart(results):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    columns = 4
    rows = (len(results) + columns - 1) // columns
    fig, axes = plt.subplots(rows, columns, figsize=(4 * columns, 4 * rows))
    axes = axes.flatten()
    for axis in axes[len(results):]:
        axis.axis("off")
    for axis, r in zip(axes, results):
        axis.boxplot([[t * 1000 for t in r["ours"]["times"]], [t * 1000 for t in r["ref"]["times"]]],
                     tick_labels=["cog-cred", "reference"], showfliers=False)
        axis.set_title(r["name"].replace("`", ""), fontsize=9)
        axis.set_ylabel("ms")
        axis.set_yscale("log")
        axis.tick_params(labelsize=8)
    fig.tight_layout()
    fig.savefig(OUT / "performance.png", dpi=110)


if __name__ == "__main__":
    sys.exit(main())
