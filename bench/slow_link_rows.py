"""The slow-link rows of bench/bench.py (#42): cog-cred's commands on a link
with a real round trip, each beside its floor.

The chain, per host cog-cred talks to:

    cog-cred --> SlowLink (bench/slow_link.py, DELAY each way)
             --> fault_server with TLS (Tests/EndToEnd/fault_server.py, forwards unchanged)
             --> the Cognito double (Tests/EndToEnd/cognito_double/, its own instance)

The fault server terminates TLS, so each new connection pays TLS 1.3's
handshake round trip as on the real Cognito; the link adds the TCP
handshake's. The user pool (cognito-idp), the identity pool
(cognito-identity) and STS each get a link of their own: three ports, which
libcurl counts as three hosts, as it would count three AWS endpoints.

A row's floor is what no client can beat on this chain:
    requests × RTT + hosts × (TCP 1 RTT + TLS 1.3 1 RTT) + local,
where local is the same command's median on the same chain with the links'
delay at 0, measured in the same run, runs taking turns with the slow ones:
process start, SRP arithmetic, the keyring, the double's own Python work,
none of which is the network's. Every run is checked: the double's stats
give the requests it made, the links the connections it opened. A row whose
runs differ from its expectation is reported as CHECK FAILED, and bench.py
then exits 1: a regression to a connection per request must fail loudly,
not just score worse.
"""
import json
import os
import statistics
import subprocess
import threading
import time
import urllib.request
from collections import Counter

import pyotp

from cognito_double import start_double
from fault_server import FaultServer
from figures import ms, summary
from slow_link import SlowLink

RTT = 0.080
DELAY = RTT / 2
TARGET = 1.2
HANDSHAKE_RTTS = 2  # TCP's SYN / SYN-ACK, then TLS 1.3's one round trip
POOL_ID, CLIENT_ID = "us-east-1_double", "doubleclient"
CUSTOM_ROLE = "arn:aws:iam::123456789012:role/Cognito_Admin"  # the double's second role: CustomRoleArn / RoleArn
# The double's request records name the service; the user pool's carry none.
HOSTS = ("cognito-idp", "cognito-identity", "sts")


class Chain:
    """A double of its own (the rows change its config: device tracking),
    the TLS fault server in front of it, and one SlowLink per host."""

    def __init__(self):
        self.double, self.double_url = start_double()
        self.fault = FaultServer(self.double_url, tls=True)
        threading.Thread(target=self.fault.serve_forever, kwargs={"poll_interval": 0.05}, name="slow-link-fault-server",
                         daemon=True).start()
        self.ca, port = self.fault.ca_path, self.fault.server_address[1]
        self.links = {host: SlowLink("127.0.0.1", port, DELAY).start() for host in HOSTS}
        # AWS_CA_BUNDLE: the fault server's throw-away CA for every endpoint;
        # the identity pool and STS by the AWS SDKs' own variables.
        self.env = {**os.environ, "AWS_CA_BUNDLE": self.ca,
                    "AWS_ENDPOINT_URL_COGNITO_IDENTITY": self.links["cognito-identity"].url(),
                    "AWS_ENDPOINT_URL_STS": self.links["sts"].url()}

    def set_delay(self, delay):
        for link in self.links.values():
            link.delay = delay  # read by each link when it accepts a connection

    def admin(self, path, body=None):
        """The double's admin API, straight to it (not through a link)."""
        data = None if body is None else json.dumps(body).encode()
        with urllib.request.urlopen(urllib.request.Request(self.double_url + "_double/" + path, data=data),
                                    timeout=10) as answer:
            return json.loads(answer.read() or b"{}")

    def requests(self):
        return self.admin("stats")["requests"]

    def connections(self):
        return {host: link.connections for host, link in self.links.items()}

    def cog(self, cog_cred, *args, input=None):
        done = subprocess.run([cog_cred, *args], input=input, capture_output=True, text=True, env=self.env)
        assert done.returncode == 0, f"cog-cred {' '.join(args)}: exit {done.returncode}: {done.stderr}"
        return done

    def close(self):
        for link in self.links.values():
            link.stop()
        for server in (self.fault, self.double):
            server.shutdown()
            server.server_close()


def step(record):
    """A request record as a short name: InitiateAuth, PASSWORD_VERIFIER, sts:AssumeRoleWithWebIdentity."""
    return record.get("challenge") or record["action"]


def measure(chain, cog_cred, row, count):
    """Times `count` runs over the slow link and `count` with the links at
    delay 0, taking turns (which goes first alternates), each after the
    row's `prepare` (untimed). Every run's requests and connections are
    checked; what differs from the row's expectation is counted in
    `problems` (the bench reports it, then fails: see slow_link_rows)."""
    slow, local, connections, problems = [], [], [], Counter()
    for i in range(count):
        for delay in ((DELAY, 0.0) if i % 2 == 0 else (0.0, DELAY)):
            chain.set_delay(delay)
            stdin = row["prepare"]() if row.get("prepare") else row.get("input")
            before_requests, before_connections = len(chain.requests()), chain.connections()
            started = time.perf_counter()
            done = subprocess.run([cog_cred, *row["args"]], input=stdin, capture_output=True, text=True,
                                  env=chain.env)
            elapsed = time.perf_counter() - started
            # A failed command measured nothing: stop here.
            assert done.returncode == 0, f"{row['name']}: exit {done.returncode}: {done.stderr}"
            made = [step(r) for r in chain.requests()[before_requests:]]
            after = chain.connections()
            opened = {host: after[host] - before_connections[host] for host in HOSTS}
            expected = {host: (1 if host in row["hosts"] else 0) for host in HOSTS}
            if made != row["requests"]:
                problems[f"requests {made}, expected {row['requests']}"] += 1
            if opened != expected:
                problems[f"connections {opened}, expected one per host {expected}"] += 1
            connections.append(opened)
            (slow if delay else local).append(elapsed)
    return slow, local, connections, problems


def totp_sign_in(chain, cog_cred, password):
    """An SRP sign-in answered with an authenticator code. A TOTP code is
    meant to be used once; the double does not check that (a code is good for
    its 30 s step and one either side), but a bench that re-used codes
    would be leaning on that gap. So every run gets a user with a new
    authenticator secret (the admin API replaces the user, untimed), and
    its code has never been used."""
    user = "slow-totp"
    chain.cog(cog_cred, "configure", "--profile", "slow-totp", "--user-pool-id", POOL_ID, "--client-id", CLIENT_ID,
              "--endpoint-url", chain.links["cognito-idp"].url(), "--username", user)

    def prepare():
        totp = pyotp.TOTP(pyotp.random_base32())
        chain.admin("users", {"username": user, "password": password, "mfa": "totp", "totp_secret": totp.secret})
        return f"{password}\n{totp.now()}\n"  # --mfa-code - reads the code from the next line

    return {"name": "`cog-cred sign-in` (srp flow, authenticator code)", "prepare": prepare,
            "args": ["sign-in", "--profile", "slow-totp", "--password-stdin", "--mfa-code", "-"],
            "requests": ["InitiateAuth", "PASSWORD_VERIFIER", "SOFTWARE_TOKEN_MFA"], "hosts": ["cognito-idp"]}


def forced_refresh(chain, cog_cred, password):
    """`cog-cred refresh` of the profile the sign-in row left signed in."""
    return {"name": "`cog-cred refresh` (forced)", "args": ["refresh", "--profile", "slow-totp"],
            "requests": ["GetTokensFromRefreshToken"], "hosts": ["cognito-idp"]}


def aws_credentials(chain, cog_cred, password):
    """The first `aws-credentials` after a sign-in, in the identity pool's
    basic flow with a custom role: GetId and GetOpenIdToken on
    cognito-identity, AssumeRoleWithWebIdentity on STS, three requests on
    two hosts. A sign-in deletes the stored identity id and credentials (it
    may be another user's, `aws-credentials --help`); before each run the
    two items are deleted the same way (secret-tool, untimed), so each run
    fetches all three."""
    user = "slow-aws"
    chain.admin("users", {"username": user, "password": password})
    pool = chain.admin("config")["identity_pool_id"]
    chain.cog(cog_cred, "configure", "--profile", "slow-aws", "--user-pool-id", POOL_ID, "--client-id", CLIENT_ID,
              "--endpoint-url", chain.links["cognito-idp"].url(), "--username", user,
              "--identity-pool-id", pool, "--basic-flow", "--role-arn", CUSTOM_ROLE)
    chain.cog(cog_cred, "sign-in", "--profile", "slow-aws", "--password-stdin", input=password + "\n")

    def prepare():
        for kind in ("identity-id", "aws-credentials"):
            item = ["service", "cog-cred", "profile", "slow-aws", "kind", kind]
            subprocess.run(["secret-tool", "clear", *item])  # exit 1 when there was none (after the sign-in)
            assert subprocess.run(["secret-tool", "lookup", *item], capture_output=True).returncode != 0, kind
        return None

    return {"name": "`cog-cred aws-credentials` (first after sign-in: basic flow, custom role)", "prepare": prepare,
            "args": ["aws-credentials", "--profile", "slow-aws"],
            "requests": ["GetId", "GetOpenIdToken", "sts:AssumeRoleWithWebIdentity"],
            "hosts": ["cognito-identity", "sts"]}


def remembered_device(chain, cog_cred, password):
    """A sign-in from a remembered device: the pool remembers every device
    (device_tracking "always"); a first sign-in, with the authenticator code,
    makes this machine a device and confirms it (untimed); each timed one
    then proves the device by SRP in place of MFA."""
    user = "slow-device"
    chain.admin("config", {"device_tracking": "always"})
    totp = pyotp.TOTP(pyotp.random_base32())
    chain.admin("users", {"username": user, "password": password, "mfa": "totp", "totp_secret": totp.secret})
    chain.cog(cog_cred, "configure", "--profile", "slow-device", "--user-pool-id", POOL_ID, "--client-id", CLIENT_ID,
              "--endpoint-url", chain.links["cognito-idp"].url(), "--username", user)
    chain.cog(cog_cred, "sign-in", "--profile", "slow-device", "--password-stdin", "--mfa-code", "-",
              input=f"{password}\n{totp.now()}\n")
    [device] = chain.admin(f"devices?username={user}")["devices"]
    assert device["confirmed"] and device["remembered"], device
    return {"name": "`cog-cred sign-in` (srp flow, remembered device)", "input": password + "\n",
            "args": ["sign-in", "--profile", "slow-device", "--password-stdin"],
            "requests": ["InitiateAuth", "PASSWORD_VERIFIER", "DEVICE_SRP_AUTH", "DEVICE_PASSWORD_VERIFIER"],
            "hosts": ["cognito-idp"]}



def slow_link_rows(cog_cred, count, password):
    """The rows, in the order measured (device tracking last: it would make
    every other sign-in a new device). A row whose runs made other requests
    or opened other connections than expected has "problems": the report
    shows them and bench.py then fails (a connection per request must not
    pass as a slower row)."""
    chain = Chain()
    results = []
    try:
        for make in (totp_sign_in, forced_refresh, aws_credentials, remembered_device):
            row = make(chain, cog_cred, password)
            slow, local, connections, problems = measure(chain, cog_cred, row, count)
            requests, hosts = len(row["requests"]), len(row["hosts"])
            local_median = statistics.median(local)
            floor = requests * RTT + hosts * HANDSHAKE_RTTS * RTT + local_median
            results.append({"name": row["name"], "requests": row["requests"], "hosts": row["hosts"],
                            "connections": connections,
                            "problems": [f"{what}, in {runs} of {len(connections)} runs" for what, runs in problems.items()],
                            "slow": summary(slow), "local": summary(local), "floor": floor, "target": TARGET})
    finally:
        chain.close()
    return results


def connections_seen(r):
    """What the links counted, per host, over all the row's runs (slow and
    local): "cognito-idp 1" when every run opened one."""
    parts = []
    for host in HOSTS:
        counts = sorted({c[host] for c in r["connections"]})
        if host in r["hosts"] or counts != [0]:
            parts.append(f"{host} {counts[0]}" if len(counts) == 1 else f"{host} {counts[0]}–{counts[-1]}")
    return ", ".join(parts) + f" in each of {len(r['connections'])} runs (slow and local)"



def report_lines(results):
    """The section of docs/performance.md."""
    rtt = round(RTT * 1000)
    lines = [
        "## Slow link",
        "",
        f"The same commands over a link with {rtt // 2} ms each way ({rtt} ms round trip; bench/slow_link.py, "
        "a loopback proxy that also makes each new connection pay the TCP handshake's round trip) in front of "
        "HTTPS (TLS 1.3, the fault server) in front of the project's Cognito double. Floor = requests × round "
        "trip + one connection set-up per host (TCP 1 + TLS 1.3 1 = 2 round trips) + local, the same command's "
        "median on the same chain with no delay, measured in turns with the slow runs. Requests and connections "
        "are counted on every run (the double's stats, the links' accepts) and must be exactly these "
        "(else CHECK FAILED, and the bench fails). "
        "Ratio = slow-link median / floor; times in ms.",
        "",
        "| what | requests and hosts | connections seen | slow link | floor | ratio | target | |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        s, n = r["slow"], len(r["requests"])
        hosts = len(r["hosts"])
        ratio = s["median"] / r["floor"]
        verdict = "CHECK FAILED" if r["problems"] else "met" if ratio <= r["target"] else "MISSED"
        lines.append(
            f"| {r['name']} | {n}: {', '.join(r['requests'])}; {hosts} host{'s' if hosts > 1 else ''} "
            f"({', '.join(r['hosts'])}) "
            f"| {connections_seen(r)} "
            f"| {ms(s['median'])} ({ms(s['p10'])}–{ms(s['p90'])}, n={s['n']}) "
            f"| {ms(r['floor'])} = {n} × {rtt} + {hosts} × {HANDSHAKE_RTTS} × {rtt} + {ms(r['local']['median'])} local "
            f"({ms(r['local']['p10'])}–{ms(r['local']['p90'])}, n={r['local']['n']}) "
            f"| {ratio:.3f} | ≤ {r['target']:g} | {verdict} |")
    failed = [r for r in results if r["problems"]]
    if failed:
        lines += ["", "CHECK FAILED: these rows' runs did not make the requests or open the connections expected, "
                  "so their floors do not hold and the bench fails:"]
        lines += [f"- {r['name']}: {'; '.join(r['problems'])}" for r in failed]
    return lines
