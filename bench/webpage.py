#!/usr/bin/env python3
# The page as a person meets it (docs/benchmarks.md, decision 0220):
# headless Debian chromium, driven through chromedriver's WebDriver API,
# loads pigeon web's page from two servers in turn, RUNS times each,
# alternated (paired: the machine's drift hits both alike), and reads
# the Navigation and Resource Timing of each load: the time from the
# navigation's start until the last of the page's first data requests
# (/api/state, /api/messages, /api/audit) has arrived, and until the
# load event. Prints the medians (ms) and their ratio.
#
#	bench/webpage.py URL_A URL_B [RUNS]
#
# Needs chromium and chromedriver (scripts/deps installs them).
import json, os, shutil, socket, subprocess, sys, tempfile, time, urllib.request

url_a, url_b = sys.argv[1], sys.argv[2]
runs = int(sys.argv[3]) if len(sys.argv) > 3 else 21

s = socket.socket()
s.bind(("127.0.0.1", 0))
port = s.getsockname()[1]
s.close()
prof = tempfile.mkdtemp(prefix="pigeon-bench-page.")
cd = subprocess.Popen(["chromedriver", "--port=%d" % port],
                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def wd(method, path, body=None):
    req = urllib.request.Request("http://127.0.0.1:%d%s" % (port, path),
                                 method=method,
                                 data=json.dumps(body).encode() if body is not None else None,
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=120) as r:
        return json.loads(r.read())["value"]


try:
    for _ in range(600):
        try:
            if wd("GET", "/status")["ready"]:
                break
        except OSError:
            pass
        time.sleep(0.1)
    sid = wd("POST", "/session", {"capabilities": {"alwaysMatch": {"goog:chromeOptions": {
        "binary": shutil.which("chromium"),
        "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--no-first-run", "--user-data-dir=" + prof, "--window-size=1280,1000"]}}}})["sessionId"]
    probe = """
var n = performance.getEntriesByType('navigation')[0];
var api = performance.getEntriesByType('resource').filter(function (r) {
  return /\\/api\\/(state|messages|audit)\\?/.test(r.name); });
if (!n || n.loadEventEnd === 0 || api.length < 3) return null;
return [Math.max.apply(null, api.map(function (r) { return r.responseEnd; })), n.loadEventEnd];
"""
    t = {"a": [], "b": []}
    for i in range(runs + 1):
        for k, u in (("a", url_a), ("b", url_b)):
            wd("POST", "/session/%s/url" % sid, {"url": u})
            v = None
            for _ in range(600):
                v = wd("POST", "/session/%s/execute/sync" % sid, {"script": probe, "args": []})
                if v:
                    break
                time.sleep(0.05)
            if i > 0 and v:  # the first round warms both
                t[k].append(v)
    wd("DELETE", "/session/%s" % sid)

    def med(k, j):
        v = sorted(x[j] for x in t[k])
        return v[len(v) // 2]
    print("| page load (median of %d) | A (ms) | B (ms) | ratio |" % runs)
    print("|---|---:|---:|---:|")
    for j, name in ((0, "navigation start -> the first data arrived"),
                    (1, "navigation start -> load event")):
        a, b = med("a", j), med("b", j)
        print("| %s | %.1f | %.1f | %.2f |" % (name, a, b, b / a))
finally:
    cd.terminate()
    cd.wait()
    shutil.rmtree(prof, ignore_errors=True)
