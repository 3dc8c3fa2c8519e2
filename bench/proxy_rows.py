"""The proxy rows of bench/bench.py (#64): `cog-cred proxy` in front of nginx,
beside nginx itself as the reverse proxy, measured side by side in one run.

    wrk --> cog-cred proxy (the bench's profile, signed in) --> nginx: the origin
    wrk --> nginx as a reverse proxy adding a fixed Authorization -----^
    wrk --> nginx: the origin, with the token in the request (the baseline)

One nginx serves both the origin and the reference: `worker_processes
auto` (Debian's own nginx.conf), the reference with the setting
docs/proxy.md calls fair: proxy_pass to an `upstream` block with
`keepalive`, `proxy_http_version 1.1`, `proxy_set_header Connection ""` and
`proxy_set_header Authorization "Bearer TOKEN"` (a real access token of the
profile's, read once). Neither side closes a kept connection after a
number of requests (`keepalive_requests`). The origin answers 401 to any
request without a `Bearer eyJ…` Authorization, so a proxy that answered
without its token, or sent none, counts as errors, not as speed.

The rows:
- throughput: wrk with 16 keep-alive connections (2 threads) asking for a
  1 KiB file, cog-cred proxy's rounds and nginx's taking turns (which goes
  first alternates); requests per second, the median of the rounds; ratio =
  cog-cred proxy / nginx, target at least 0.5;
- latency: wrk with one connection, the median of each request's time, the
  origin alone and through each proxy, in turns; what each proxy adds is its
  median less the origin's; target: cog-cred proxy adds at most 1.0 ms;
- 128 MiB down (a file nginx serves) and up (a PUT nginx's DAV module
  writes), with curl and Content-Length, each through the proxy and straight
  to nginx, sha-256 compared at both ends; then the proxy's peak resident
  size (VmHWM, from /proc, after every row above), target under 96 MB.

Every run is checked: wrk's errors (connect, read, write, timeout, and any
status but 2xx or 3xx) must be 0, each transfer's bytes must be the file's.
A row that differs is CHECK FAILED, and bench.py then exits 1 after writing
the report, as for the slow-link rows.
"""
import hashlib
import json
import os
import select
import shutil
import signal
import socket
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

CONNECTIONS = 16
THREADS = 2
SMALL = 1024
BIG = 128 * 1024 * 1024
THROUGHPUT_TARGET = 0.5  # at least this many times nginx's requests per second
ADDED_LATENCY_TARGET = 0.001  # seconds: at most this much over the origin's median
PEAK_RSS_TARGET = 96 * 1000 * 1000  # bytes: under 96 MB (test_proxy.py's PEAK_RSS_LIMIT)

# wrk's report, as one line of JSON after its own text: the counts and the
# latency percentiles in microseconds.
WRK_REPORT = """
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    '{"requests": %d, "duration_us": %d, "bytes": %d, "connect": %d, "read": %d, "write": %d, '
    .. '"status": %d, "timeout": %d, "p50_us": %d, "p90_us": %d, "p99_us": %d}\\n',
    summary.requests, summary.duration, summary.bytes, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99)))
end
"""

NGINX_CONF = """
worker_processes auto;
{user}
pid {dir}/nginx.pid;
daemon off;
events {{ worker_connections 1024; }}
http {{
    access_log off;
    default_type application/octet-stream;
    client_body_temp_path {dir}/client-body;
    proxy_temp_path {dir}/proxy-temp;
    fastcgi_temp_path {dir}/fastcgi-temp;
    uwsgi_temp_path {dir}/uwsgi-temp;
    scgi_temp_path {dir}/scgi-temp;
    keepalive_requests 10000000;
    keepalive_timeout 120s;

    upstream origin {{
        server 127.0.0.1:{origin};
        keepalive 32;
        keepalive_requests 10000000;
    }}

    # The origin: files, and PUTs written to put/; a token or 401.
    server {{
        listen 127.0.0.1:{origin};
        root {dir}/www;
        location / {{
            if ($http_authorization !~ "^Bearer eyJ") {{ return 401; }}
        }}
        location /put/ {{
            if ($http_authorization !~ "^Bearer eyJ") {{ return 401; }}
            dav_methods PUT;
            create_full_put_path on;
            client_max_body_size 0;
        }}
    }}

    # The reference: nginx as the reverse proxy that adds a fixed token.
    server {{
        listen 127.0.0.1:{reference};
        location / {{
            proxy_pass http://origin;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Authorization "Bearer {token}";
        }}
    }}
}}
"""


def ms3(seconds):
    """Milliseconds to the microsecond: a loopback request is a fraction of one."""
    return f"{seconds * 1000:.3f}"


def missing_tools():
    """The programs the rows need that are not installed (scripts/install-deps --bench installs them)."""
    return [tool for tool in ("wrk", "nginx", "curl") if shutil.which(tool) is None]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port, seconds=10):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listens on 127.0.0.1:{port} after {seconds} s")


class Nginx:
    """The origin and the reference in one nginx, in a directory of its own."""

    def __init__(self, directory, token):
        self.dir = directory
        self.origin, self.reference = free_port(), free_port()
        www = directory / "www"
        (www / "put").mkdir(parents=True)
        (www / "1k").write_bytes(os.urandom(SMALL))
        with open(www / "big", "wb") as big:
            block = os.urandom(1024 * 1024)
            for _ in range(BIG // len(block)):
                big.write(block)
        # As root, nginx's workers would be nobody, who cannot enter this
        # directory: they run as root then. Otherwise the directive is ignored
        # (with a warning), so it is left out.
        user = "user root root;" if os.getuid() == 0 else ""
        conf = directory / "nginx.conf"
        conf.write_text(NGINX_CONF.format(user=user, dir=directory, origin=self.origin, reference=self.reference,
                                          token=token))
        self.process = subprocess.Popen(["nginx", "-p", str(directory), "-c", str(conf), "-e", str(directory / "error.log")],
                                        stdout=subprocess.DEVNULL, stderr=open(directory / "nginx.stderr", "wb"))
        try:
            for port in (self.origin, self.reference):
                wait_for_port(port)
        except RuntimeError:
            self.stop()
            log = directory / "error.log"
            raise RuntimeError("nginx did not start: " + (directory / "nginx.stderr").read_text()
                               + (log.read_text() if log.exists() else ""))

    def url(self, port):
        return f"http://127.0.0.1:{port}"

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGQUIT)  # finish, then exit
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


class Proxy:
    """`cog-cred proxy` in front of the origin, started as a user would: its
    first line on stdout is its address."""

    def __init__(self, cog_cred, profile, upstream, directory):
        self.stderr = directory / "proxy.stderr"
        self.process = subprocess.Popen([cog_cred, "proxy", "--profile", profile, "--upstream", upstream],
                                        stdout=subprocess.PIPE, stderr=open(self.stderr, "wb"))
        line = b""
        deadline = time.monotonic() + 30
        while not line.endswith(b"\n") and time.monotonic() < deadline:
            if not select.select([self.process.stdout], [], [], 0.5)[0]:
                if self.process.poll() is not None:
                    break
                continue
            chunk = os.read(self.process.stdout.fileno(), 1)
            if not chunk:
                break
            line += chunk
        if not line.startswith(b"http://127.0.0.1:"):
            self.stop()
            raise RuntimeError(f"cog-cred proxy did not start: {line!r} {self.stderr.read_text()}")
        self.url = line.decode().strip().rstrip("/")

    def peak_rss(self):
        """VmHWM in bytes (the front execs cog-cred-cli: one process, one pid)."""
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
        raise RuntimeError("no VmHWM")

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return self.process.returncode


def wrk(url, connections, threads, seconds, script, headers=()):
    """One wrk run: its JSON report (bench's WRK_REPORT)."""
    args = ["wrk", "-c", str(connections), "-t", str(threads), "-d", f"{seconds}s", "--timeout", "10s", "-s", str(script)]
    for header in headers:
        args += ["-H", header]
    out = subprocess.run(args + [url], capture_output=True, text=True, check=True).stdout
    return json.loads([line for line in out.splitlines() if line.startswith("{")][-1])


def wrk_problems(report):
    """What went wrong in a wrk run, as words (none: [])."""
    names = {"connect": "connect errors", "read": "read errors", "write": "write errors", "timeout": "timeouts",
             "status": "answers not 2xx or 3xx"}
    return [f"{report[key]} {words}" for key, words in names.items() if report[key]]


def sha256_file(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def curl_transfer(args, output="/dev/null"):
    """A curl run: (seconds, status) as curl measured them."""
    out = subprocess.run(["curl", "-sS", "-o", output, "-w", "%{http_code} %{time_total}", *args],
                         capture_output=True, text=True, check=True).stdout.split()
    return float(out[1]), int(out[0])


def proxy_rows(cog_cred, profile, smoke):
    """The rows' figures and problems (the report is report_lines')."""
    rounds = 1 if smoke else 6
    seconds = 2 if smoke else 10
    latency_rounds = 1 if smoke else 5
    latency_seconds = 2 if smoke else 5
    transfers = 1 if smoke else 3
    token = subprocess.run([cog_cred, "token", "--profile", profile], capture_output=True, text=True,
                           check=True).stdout.strip()
    bearer = f"Authorization: Bearer {token}"
    directory = Path(tempfile.mkdtemp(prefix="cog-cred-bench-proxy-"))
    script = directory / "report.lua"
    script.write_text(WRK_REPORT)
    problems = {"throughput": [], "latency": [], "transfers": []}
    nginx = Nginx(directory, token)
    proxy = None
    try:
        proxy = Proxy(cog_cred, profile, nginx.url(nginx.origin), directory)
        ours_url = proxy.url + "/1k"
        reference_url, origin_url = nginx.url(nginx.reference) + "/1k", nginx.url(nginx.origin) + "/1k"

        # Warm-up: connections made, the proxy's token read, nginx's workers awake.
        for url, headers in ((ours_url, ()), (reference_url, ()), (origin_url, (bearer,))):
            problems["throughput"] += [f"warm-up of {url}: {p}" for p in
                                       wrk_problems(wrk(url, CONNECTIONS, THREADS, 1, script, headers))]

        # Throughput: 16 keep-alive connections, the two proxies taking turns.
        ours, reference = [], []
        for i in range(rounds):
            order = [(ours_url, ours, "cog-cred proxy"), (reference_url, reference, "nginx")]
            for url, rates, name in (order if i % 2 == 0 else order[::-1]):
                report = wrk(url, CONNECTIONS, THREADS, seconds, script)
                problems["throughput"] += [f"{name}: {p}" for p in wrk_problems(report)]
                rates.append(report["requests"] / (report["duration_us"] / 1e6))

        # Latency: one connection, the origin alone and through each proxy, in turns.
        latency = {"origin": [], "ours": [], "reference": []}
        targets = [("origin", origin_url, (bearer,)), ("ours", ours_url, ()), ("reference", reference_url, ())]
        for i in range(latency_rounds):
            for name, url, headers in (targets if i % 2 == 0 else targets[::-1]):
                report = wrk(url, 1, 1, latency_seconds, script, headers)
                problems["latency"] += [f"{name}: {p}" for p in wrk_problems(report)]
                latency[name].append(report["p50_us"] / 1e6)

        # 128 MiB down and up, through the proxy and straight to nginx, each checked.
        big, expected = directory / "www" / "big", sha256_file(directory / "www" / "big")
        received = directory / "received"
        moved = {"down": [], "up": [], "down_direct": [], "up_direct": []}
        for i in range(transfers):
            for suffix, base, headers in (("", proxy.url, []), ("_direct", nginx.url(nginx.origin), ["-H", bearer])):
                who = "through the proxy" if not suffix else "straight to nginx"
                received.unlink(missing_ok=True)
                took, status = curl_transfer([*headers, f"{base}/big"], output=str(received))
                if status != 200 or not received.exists() or sha256_file(received) != expected:
                    problems["transfers"].append(f"download {who}: status {status}, not the file's bytes")
                moved["down" + suffix].append(took)
                target = directory / "www" / "put" / f"up{suffix}-{i}"
                took, status = curl_transfer([*headers, "-T", str(big), f"{base}/put/{target.name}"])
                if status not in (201, 204) or not target.exists() or sha256_file(target) != expected:
                    problems["transfers"].append(f"upload {who}: status {status}, not the file's bytes")
                target.unlink(missing_ok=True)
                moved["up" + suffix].append(took)
        received.unlink(missing_ok=True)
        peak = proxy.peak_rss()
        leaked = token in proxy.stderr.read_text()
        if leaked:
            problems["transfers"].append("the token is in the proxy's stderr")
    finally:
        status = proxy.stop() if proxy else None
        nginx.stop()
        shutil.rmtree(directory, ignore_errors=True)
    if status != 0:
        problems["transfers"].append(f"the proxy exited {status} after SIGTERM, not 0")
    return {"ours": ours, "reference": reference, "rounds": rounds, "seconds": seconds,
            "latency": latency, "latency_rounds": latency_rounds, "latency_seconds": latency_seconds,
            "moved": moved, "peak_rss": peak, "problems": problems}


def report_lines(r):
    """The section of docs/performance.md."""
    if r is None:
        return []
    if r.get("skipped"):
        return ["## cog-cred proxy", "", f"Not measured in this run: {r['skipped']}."]
    checked = lambda key, verdict: "CHECK FAILED" if r["problems"][key] else verdict
    median = statistics.median
    ours, reference = median(r["ours"]), median(r["reference"])
    ratio = ours / reference
    rates = lambda rs: f"{median(rs):,.0f} req/s ({min(rs):,.0f}–{max(rs):,.0f}, n={len(rs)})"
    lat = r["latency"]
    origin, through, by_nginx = median(lat["origin"]), median(lat["ours"]), median(lat["reference"])
    added, added_nginx = through - origin, by_nginx - origin
    moved = r["moved"]
    seconds = lambda ts: f"{median(ts):.2f} s ({BIG / median(ts) / 2**20:,.0f} MiB/s, n={len(ts)})"
    rounds = lambda n, s: f"{n} round{'s' if n > 1 else ''} of {s} s"
    lines = [
        "## cog-cred proxy",
        "",
        "`cog-cred proxy` (bench/proxy_rows.py) in front of nginx, beside nginx itself as a reverse proxy that adds a "
        "fixed `Authorization` (proxy_pass to an `upstream` block with `keepalive`, `proxy_http_version 1.1`, "
        "`proxy_set_header Connection \"\"`, `worker_processes auto`), in the same run, their rounds taking turns. "
        "The origin is the same nginx, answering 401 to a request without a bearer token; every wrk error and every "
        "answer that is not 2xx or 3xx counts (else CHECK FAILED, and the bench fails). Throughput: wrk, "
        f"{CONNECTIONS} keep-alive connections, {THREADS} threads, a 1 KiB file, {rounds(r['rounds'], r['seconds'])} "
        f"each. Latency: wrk, one connection, the median request (the median of {rounds(r['latency_rounds'], r['latency_seconds'])}); "
        "added = through the proxy less the origin alone. Transfers: curl, "
        "Content-Length, sha-256 compared; the peak resident size is the proxy's VmHWM after all of these.",
        "",
        "| what | cog-cred proxy | reference | ratio | target | |",
        "|---|---|---|---|---|---|",
        f"| throughput, {CONNECTIONS} keep-alive connections, 1 KiB | {rates(r['ours'])} "
        f"| nginx as the reverse proxy: {rates(r['reference'])} | {ratio:.3f} | ≥ {THROUGHPUT_TARGET:g} "
        f"| {checked('throughput', 'met' if ratio >= THROUGHPUT_TARGET else 'MISSED')} |",
        f"| median latency added over the origin's, one connection | {ms3(added)} ms "
        f"({ms3(through)} against the origin's {ms3(origin)}, n={len(lat['ours'])}) "
        f"| nginx as the reverse proxy: {ms3(added_nginx)} ms ({ms3(by_nginx)}) | — | ≤ {ADDED_LATENCY_TARGET * 1000:g} ms "
        f"| {checked('latency', 'met' if added <= ADDED_LATENCY_TARGET else 'MISSED')} |",
        f"| 128 MiB down (GET) | {seconds(moved['down'])} | nginx alone: {seconds(moved['down_direct'])} "
        f"| {median(moved['down']) / median(moved['down_direct']):.2f} | — | {checked('transfers', 'checked')} |",
        f"| 128 MiB up (PUT) | {seconds(moved['up'])} | nginx alone: {seconds(moved['up_direct'])} "
        f"| {median(moved['up']) / median(moved['up_direct']):.2f} | — | {checked('transfers', 'checked')} |",
        f"| … the proxy's peak resident size (VmHWM) | {r['peak_rss'] / 1e6:.1f} MB | | | < {PEAK_RSS_TARGET / 1e6:g} MB "
        f"| {checked('transfers', 'met' if r['peak_rss'] < PEAK_RSS_TARGET else 'MISSED')} |",
    ]
    failed = [f"- {key}: {'; '.join(found)}" for key, found in r["problems"].items() if found]
    if failed:
        lines += ["", "CHECK FAILED: these runs did not answer as they must, so their figures do not count:"] + failed
    return lines
