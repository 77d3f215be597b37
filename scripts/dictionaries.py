#!/usr/bin/env python3
"""Bytes on the wire for a library update, with and without compression
dictionaries (RFC 9842), on real releases from the npm registry.

For each bundle: tachyon serves release A under a fingerprinted name from a
page; a visit loads it; the deploy replaces it with release B (a new name,
the page updated); the next visit fetches B. Measured three ways:
  - curl: B's body as tachyon sends it in br, zstd, dcb and dcz (the last
    two against A), header bytes apart; dcz is decoded with the zstd program
    and checked against B;
  - Chromium: one profile across both visits; B's transferSize from the
    page's own resource timing, and the coding from tachyon's access log.

    python3 scripts/dictionaries.py [OUT]

Needs a release build (cargo build --release -p tachyon), curl, zstd,
chromium-headless-shell and the npm registry (tarballs are cached in
~/.cache/tachyon-bench/npm). Port 18460.
"""

import base64
import hashlib
import io
import json
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.request

ROOT = pathlib.Path(__file__).resolve().parent.parent
BIN = ROOT / "target/release/tachyon"
CACHE = pathlib.Path.home() / ".cache/tachyon-bench/npm"
PORT = 18460
# (package, release A, release B, file in the package): consecutive releases
# of widely used browser bundles.
BUNDLES = [
    ("react-dom", "18.2.0", "18.3.0", "umd/react-dom.production.min.js"),
    ("vue", "3.5.12", "3.5.13", "dist/vue.global.prod.js"),
    ("lodash", "4.17.20", "4.17.21", "lodash.min.js"),
    ("jquery", "3.7.0", "3.7.1", "dist/jquery.min.js"),
    ("three", "0.169.0", "0.170.0", "build/three.module.min.js"),
]


def npm_file(package, version, path):
    """One file of a published package, from the registry's tarball."""
    CACHE.mkdir(parents=True, exist_ok=True)
    tarball = CACHE / f"{package}-{version}.tgz"
    if not tarball.exists():
        url = f"https://registry.npmjs.org/{package}/-/{package}-{version}.tgz"
        with urllib.request.urlopen(url, timeout=60) as r:
            tarball.write_bytes(r.read())
    with tarfile.open(tarball) as t:
        return t.extractfile(f"package/{path}").read()


def fingerprinted(path, body):
    """`three.module.min.js` with A's hash: `three.module.3f9a1c2b.min.js`."""
    name = pathlib.PurePosixPath(path).name
    stem, ext = name.split(".", 1)
    return f"{stem}.{hashlib.sha256(body).hexdigest()[:8]}.{ext}"


def page(asset):
    """A page that loads the bundle (as a module when it is one) and shows
    the bundle's resource timing."""
    kind = ' type="module"' if "module" in asset else ""
    return (
        f'<!doctype html><title>t</title><script{kind} src="/assets/{asset}"></script>'
        "<body><script>addEventListener('load', () => {"
        f"const e = performance.getEntriesByName(location.origin + '/assets/{asset}')[0];"
        "document.body.textContent = 'transfer=' + e.transferSize + ' encoded=' + "
        "e.encodedBodySize + ' decoded=' + e.decodedBodySize;});</script>"
    )


def write(path, data):
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(path.name + ".new")
    temp.write_bytes(data if isinstance(data, bytes) else data.encode())
    os.rename(temp, path)


def curl(url, headers):
    """(status, header bytes, body) of one GET."""
    args = ["curl", "-s", "-D", "-", "-o", "/dev/stdout", "--raw"]
    for h in headers:
        args += ["-H", h]
    out = subprocess.run(args + [url], capture_output=True, check=True).stdout
    head, _, body = out.partition(b"\r\n\r\n")
    fields = {}
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.decode().partition(":")
        fields[name.strip().lower()] = value.strip()
    return fields, len(head) + 4, body


def chromium(profile, url):
    binary = shutil.which("chromium-headless-shell") or shutil.which("chromium")
    out = subprocess.run(
        [binary, "--headless", "--no-sandbox", "--disable-gpu", f"--user-data-dir={profile}",
         "--virtual-time-budget=5000", "--dump-dom", url],
        capture_output=True, timeout=60,
    ).stdout.decode()
    at = out.find("transfer=")
    if at < 0:
        return None
    return dict(kv.split("=") for kv in out[at:].split("<")[0].split())


def wait_for(url):
    for _ in range(200):
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                if r.status == 200:
                    return
        except Exception:
            pass
        time.sleep(0.05)
    raise SystemExit(f"{url} never answered")


def measure(work, package, a_version, b_version, path):
    a = npm_file(package, a_version, path)
    b = npm_file(package, b_version, path)
    site = work / package / "www"
    name_a, name_b = fingerprinted(path, a), fingerprinted(path, b)
    write(site / "assets" / name_a, a)
    write(site / "index.html", page(name_a))
    log = work / package / "access.log"
    server = subprocess.Popen(
        [BIN, site, "--listen", f"127.0.0.1:{PORT}", "--cache-dir", work / package / "cache",
         "--access-log", log, "--log-format", "json", "--quiet"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        base = f"http://localhost:{PORT}"
        wait_for(f"{base}/assets/{name_a}")
        profile = work / package / "profile"
        first = chromium(profile, base + "/")
        # The deploy: B under its name, the page pointing at it, A gone.
        started = time.monotonic()
        write(site / "assets" / name_b, b)
        write(site / "index.html", page(name_b))
        os.remove(site / "assets" / name_a)
        wait_for(f"{base}/assets/{name_b}")
        # Deltas are built by the reload that serves B (the old generation
        # serves meanwhile): wait until one is on offer.
        dictionary = "available-dictionary: :" + base64.b64encode(hashlib.sha256(a).digest()).decode() + ":"
        while curl(f"{base}/assets/{name_b}", ["accept-encoding: dcz", dictionary])[0].get("content-encoding") != "dcz":
            time.sleep(0.05)
        ready = time.monotonic() - started
        sizes = {}
        browser = "gzip, deflate, br, zstd"
        for label, headers in [
            ("identity", []),
            ("gzip", ["accept-encoding: gzip"]),
            ("br", [f"accept-encoding: {browser}"]),
            ("zstd", ["accept-encoding: gzip, zstd"]),
            ("dcb", [f"accept-encoding: {browser}, dcb, dcz", dictionary]),
            ("dcz", [f"accept-encoding: {browser}, dcz", dictionary]),
        ]:
            fields, head_len, body = curl(f"{base}/assets/{name_b}", headers)
            assert fields.get("content-encoding", "identity") == label, (label, fields)
            sizes[label] = {"body": len(body), "head": head_len}
            if label == "dcz":
                (work / "dict").write_bytes(a)
                (work / "frame").write_bytes(body[40:])
                decoded = subprocess.run(["zstd", "-d", "-q", "-c", "--long=27", "-D", work / "dict", work / "frame"],
                                         capture_output=True, check=True).stdout
                assert decoded == b, f"{package}: dcz does not decode to release B"
        second = chromium(profile, base + "/")
        time.sleep(1.2)  # the access log is written in batches
        coding = None
        for line in log.read_text().splitlines():
            entry = json.loads(line)
            if entry["request"]["uri"] == f"/assets/{name_b}" and "Chrome" in json.dumps(entry["request"]["headers"]):
                coding = entry.get("resp_headers", {}).get("Content-Encoding", ["identity"])[0]
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)
    return {
        "package": package,
        "file": path,
        "release_a": a_version,
        "release_b": b_version,
        "bytes_a": len(a),
        "bytes_b": len(b),
        "sha256_a": hashlib.sha256(a).hexdigest(),
        "sha256_b": hashlib.sha256(b).hexdigest(),
        "curl": sizes,
        "delta_ready_after_deploy_s": round(ready, 2),
        "chromium": {"first_visit": first, "update": second, "update_coding": coding},
    }


def main():
    out = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "target/dictionaries")
    if not BIN.exists():
        raise SystemExit("build first: cargo build --release -p tachyon")
    out.mkdir(parents=True, exist_ok=True)
    work = pathlib.Path(tempfile.mkdtemp(prefix="tachyon-dict-"))
    results = []
    try:
        for bundle in BUNDLES:
            r = measure(work, *bundle)
            results.append(r)
            c = r["curl"]
            print(f"{r['package']} {r['release_a']} -> {r['release_b']}: br {c['br']['body']} B, "
                  f"dcb {c['dcb']['body']} B ({c['dcb']['body'] / c['br']['body']:.3f}x), "
                  f"dcz {c['dcz']['body']} B ({c['dcz']['body'] / c['br']['body']:.3f}x); "
                  f"Chromium {r['chromium']['first_visit']} then {r['chromium']['update']} "
                  f"({r['chromium']['update_coding']})", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    version = subprocess.run([BIN, "--version"], capture_output=True, text=True).stdout.strip()
    (out / "results.json").write_text(json.dumps({"tachyon": version, "bundles": results}, indent=2) + "\n")
    print(f"wrote {out / 'results.json'}")


if __name__ == "__main__":
    main()
