#!/usr/bin/env python3
"""The live metrics endpoint against the real thing (issue 18, part 1).

Starts Debian's `prometheus` on loopback with a 1-second scrape of a running `attnbench run
--metrics-port`, queries Prometheus' HTTP API for the series attnbench exports and checks their
values are plausible; `promtool check metrics` must pass on a scrape taken during the run and on
the metrics.prom written at its end. Skips (exit 77, with the reason) only when prometheus or
promtool is not installed (scripts/setup.sh installs both).

    test_prometheus_scrape.py ATTNBENCH CONFIG
"""
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

SKIP = 77
DEADLINE_S = 50  # the whole test; CTest's TIMEOUT is a little longer


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url, timeout=2):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.read().decode()


def wait_for(what, fn, until):
    last = None
    while time.monotonic() < until:
        try:
            value = fn()
            if value:
                return value
        except OSError as e:  # not listening yet
            last = e
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what} (last error: {last})")


def query(prom, expr):
    url = f"http://127.0.0.1:{prom}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
    doc = json.loads(get(url))
    assert doc["status"] == "success", doc
    return doc["data"]["result"]


def promtool_check(promtool, text, what):
    r = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True, text=True)
    # promtool exits 1 on lint problems too: every finding is a failure here.
    assert r.returncode == 0 and not r.stdout.strip() and not r.stderr.strip(), (
        f"promtool check metrics failed on {what}:\n{r.stdout}{r.stderr}")


def main():
    attnbench, config = sys.argv[1], sys.argv[2]
    prometheus, promtool = shutil.which("prometheus"), shutil.which("promtool")
    if not prometheus or not promtool:
        print("SKIPPED: prometheus/promtool not installed (Debian package prometheus; scripts/setup.sh installs it)")
        return SKIP
    until = time.monotonic() + DEADLINE_S
    tmp = tempfile.mkdtemp(prefix="attnbench-prom-")
    procs = []
    try:
        port, prom = free_port(), free_port()
        with open(os.path.join(tmp, "prometheus.yml"), "w") as f:
            f.write("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
                    "scrape_configs:\n  - job_name: attnbench\n"
                    f"    static_configs:\n      - targets: ['127.0.0.1:{port}']\n")
        procs.append(subprocess.Popen(
            [prometheus, f"--config.file={tmp}/prometheus.yml", f"--storage.tsdb.path={tmp}/data",
             f"--web.listen-address=127.0.0.1:{prom}", "--log.level=warn"],
            stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, "prometheus.log"), "w")))
        wait_for("prometheus to be ready", lambda: "Ready" in get(f"http://127.0.0.1:{prom}/-/ready"), until)

        out = os.path.join(tmp, "out")
        run = subprocess.Popen([attnbench, "run", config, "--out", out, "--quiet", "--metrics-port", str(port),
                                "--metrics-hold-s", "3"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               text=True)
        procs.append(run)
        # A scrape during the run, once a timed pass has counted its batches (warm-up passes count
        # samples before that).
        scrape = wait_for("a scrape with batch latencies",
                          lambda: (lambda t: t if "attnbench_batch_latency_seconds_bucket{" in t else None)(
                              get(f"http://127.0.0.1:{port}/metrics")), until)
        promtool_check(promtool, scrape, "a live scrape")
        assert "# TYPE attnbench_batch_latency_seconds histogram" in scrape, scrape

        # Prometheus has scraped it: the series are there with plausible values.
        def values(expr):
            return {json.dumps(r["metric"], sort_keys=True): float(r["value"][1]) for r in query(prom, expr)}

        samples = wait_for("attnbench_samples_total in Prometheus",
                           lambda: values('attnbench_samples_total{job="attnbench",run="monitor-test"}'), until)
        assert all(v > 0 for v in samples.values()), samples
        assert values('up{job="attnbench"}') and all(v == 1 for v in values('up{job="attnbench"}').values())
        rss = wait_for("process_resident_memory_bytes", lambda: values("process_resident_memory_bytes"), until)
        assert all(1e6 < v < 1e12 for v in rss.values()), rss
        # The server scenario's series, once a rate has been served.
        served = wait_for("attnbench_server_requests_total",
                          lambda: values("attnbench_server_requests_total > 0"), until)
        variants = {json.loads(k)["variant"] for k in served}
        assert variants <= {"static-bs8", "dynamic-cache"}, variants
        lat = wait_for("request latency", lambda: values("attnbench_request_latency_seconds_count > 0"), until)
        assert lat, lat
        p99 = values("histogram_quantile(0.99, attnbench_request_latency_seconds_bucket)")
        assert all(0 < v < 60 for v in p99.values()), p99
        assert values("attnbench_server_mean_batch_size >= 1"), "no mean batch size of at least 1"
        assert values("attnbench_cache_hit_ratio > 0"), "the caching variant has no cache hits"
        assert values("attnbench_batch_latency_seconds_count > 0"), "no batch latency observed"
        assert values("attnbench_phase == 1"), "no current phase"

        rc = run.wait(timeout=max(1, until - time.monotonic()))
        err = run.stderr.read()
        assert rc == 0, f"attnbench exited {rc}: {err}"
        final = open(os.path.join(out, "metrics.prom")).read()
        promtool_check(promtool, final, "metrics.prom")
        assert 'attnbench_phase{run="monitor-test",variant="",phase="done"} 1' in final, final
        print(f"prometheus scrape test: {len(samples)} samples series, p99 {sorted(p99.values())}")
        return 0
    finally:
        for p in procs:
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
