"""API benchmark: POST /api/trace against the trivial JSON route GET /healthz.

One uvicorn server (1 worker, `--log-level warning`) in a child process on a free
loopback port serves both routes. A load generator keeps 64 keep-alive connections
busy for a fixed time on each route, after a warm-up: `wrk` when it is installed
(`apt-get install wrk`), else a Python asyncio generator, which shares the machine's
cores with the server and so understates both rates. The ratio of the two rates is
what counts; the issue requires /api/trace at least half as fast as /healthz.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO

ROOT = Path(__file__).resolve().parent.parent
HOST = "127.0.0.1"
CONNECTIONS = 64
DURATION_S = 5
WARMUP_S = 1
REQUIRED = 0.5
EXAMPLE = ROOT / "examples" / "worked_example.py"


@dataclass
class Load:
    rps: float
    p99_ms: float
    requests: int
    failures: int          # non-2xx responses and socket errors


# -- the server ----------------------------------------------------------------------------

def _free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        port: int = s.getsockname()[1]
        return port


def _get(url: str, timeout: float = 2.0) -> bytes:
    with urllib.request.urlopen(url, timeout=timeout) as response:
        body: bytes = response.read()
        return body


def _post(url: str, body: bytes, timeout: float = 10.0) -> bytes:
    request = urllib.request.Request(url, data=body, method="POST",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=timeout) as response:
        data: bytes = response.read()
        return data


@contextmanager
def server(log: IO[str]) -> Iterator[str]:
    """uvicorn with the lab's app, 1 worker, on a free loopback port, writing its log to
    `log`; yields its base URL."""
    port = _free_port()
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "app.web.app:create_app", "--factory",
         "--host", HOST, "--port", str(port), "--workers", "1", "--log-level", "warning"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=log)
    base = f"http://{HOST}:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            if proc.poll() is not None:
                log.seek(0)
                raise RuntimeError(f"the server exited: {log.read().strip()[-500:]}")
            try:
                _get(base + "/healthz", timeout=0.5)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError("the server did not answer /healthz in 30 s") from None
                time.sleep(0.1)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


# -- wrk -----------------------------------------------------------------------------------

def _lua_post(body: str) -> str:
    if MARK in body:        # a new program every request: a counter in a comment
        before, after = body.split(MARK)
        return ('counter = 0\n'
                'request = function()\n'
                '  counter = counter + 1\n'
                '  return wrk.format("POST", nil, {["Content-Type"] = "application/json"},\n'
                f'                    [==[{before}]==] .. counter .. [==[{after}]==])\n'
                'end\n')
    return ('wrk.method = "POST"\n'
            'wrk.headers["Content-Type"] = "application/json"\n'
            f"wrk.body = [==[{body}]==]\n")


def _milliseconds(number: str, unit: str) -> float:
    return float(number) * {"us": 1e-3, "ms": 1.0, "s": 1e3, "m": 6e4}[unit]


def wrk(url: str, seconds: int, body: str | None = None) -> Load:
    """`wrk -t1 -c64 -d<seconds>s --latency`, with a Lua script for a POST body. One wrk
    thread leaves the other core to the server."""
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as script:
        script.write(_lua_post(body) if body is not None else "")
    try:
        out = subprocess.run(
            ["wrk", "-t1", f"-c{CONNECTIONS}", f"-d{seconds}s", "--latency",
             "--timeout", "10s", "-s", script.name, url],
            capture_output=True, text=True, timeout=seconds + 30, check=True).stdout
    finally:
        os.unlink(script.name)
    rps = re.search(r"Requests/sec:\s+([\d.]+)", out)
    p99 = re.search(r"^\s+99%\s+([\d.]+)(us|ms|s|m)\s*$", out, re.M)
    total = re.search(r"(\d+) requests in", out)
    if not (rps and p99 and total):
        raise RuntimeError(f"could not read wrk's output:\n{out}")
    failures = sum(int(n) for n in re.findall(r"Non-2xx or 3xx responses: (\d+)", out))
    errors = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)",
                       out)
    if errors:
        failures += sum(int(n) for n in errors.groups())
    return Load(float(rps.group(1)), _milliseconds(*p99.groups()), int(total.group(1)),
                failures)


# -- the Python fallback: asyncio, raw sockets, keep-alive ---------------------------------

def _request(url: str, body: str | None) -> tuple[int, bytes]:
    port_path = url.split(f"{HOST}:", 1)[1]
    port, path = port_path.split("/", 1)
    method = "GET" if body is None else "POST"
    data = (body or "").encode()
    head = (f"{method} /{path} HTTP/1.1\r\nHost: {HOST}:{port}\r\n"
            f"Connection: keep-alive\r\n")
    if body is not None:
        head += f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n"
    return int(port), (head + "\r\n").encode() + data


async def _connection(port: int, request: bytes, until: float,
                      latencies: list[float], failures: list[int]) -> None:
    reader, writer = await asyncio.open_connection(HOST, port)
    try:
        while time.perf_counter() < until:
            start = time.perf_counter()
            writer.write(request)
            head = await reader.readuntil(b"\r\n\r\n")
            length = re.search(rb"(?i)content-length:\s*(\d+)", head)
            if length is None:
                raise RuntimeError("response without Content-Length")
            await reader.readexactly(int(length.group(1)))
            latencies.append(time.perf_counter() - start)
            if not head.startswith(b"HTTP/1.1 2"):
                failures.append(1)
    finally:
        writer.close()


async def _python_load(url: str, seconds: float, body: str | None) -> Load:
    port, request = _request(url, body)
    latencies: list[float] = []
    failures: list[int] = []
    start = time.perf_counter()
    results = await asyncio.gather(
        *(_connection(port, request, start + seconds, latencies, failures)
          for _ in range(CONNECTIONS)), return_exceptions=True)
    elapsed = time.perf_counter() - start
    errors = sum(isinstance(r, BaseException) for r in results)
    latencies.sort()
    p99 = latencies[int(0.99 * (len(latencies) - 1))] * 1e3 if latencies else float("nan")
    return Load(len(latencies) / elapsed, p99, len(latencies), len(failures) + errors)


def python_load(url: str, seconds: int, body: str | None = None) -> Load:
    return asyncio.run(_python_load(url, seconds, body))


# -- the report ----------------------------------------------------------------------------

def _check_trace(base: str, body: str) -> None:
    """One request first: the route must answer the worked example correctly."""
    trace = json.loads(_post(base + "/api/trace", body.encode()))
    if trace.get("error") is not None or trace.get("grads") != {"w": 28.0, "b": 14.0}:
        raise RuntimeError(f"/api/trace answered the worked example wrongly: "
                           f"grads={trace.get('grads')} error={trace.get('error')}")


MARK = "@@COUNTER@@"


def main() -> float | None:
    """Print the rates, their ratio and p99 latencies; return the ratio.

    POST /api/trace is measured twice: with the same program every time (as a lecture hall
    sends one preset from every seat; the server's trace cache answers most of them) and
    with a new program every request (a numbered comment), which runs the engine each
    time. The required ratio is judged on the first; both are printed."""
    body = json.dumps({"source": EXAMPLE.read_text()})
    fresh = json.dumps({"source": f"# request {MARK}\n" + EXAMPLE.read_text()})
    use_wrk = shutil.which("wrk") is not None
    load = wrk if use_wrk else python_load
    generator = (f"wrk, 1 thread, {CONNECTIONS} connections" if use_wrk else
                 f"Python asyncio, {CONNECTIONS} keep-alive connections, on the same cores "
                 "as the server (install wrk for fairer figures)")
    print("API: POST /api/trace (the worked example) vs GET /healthz")
    print(f"  server: uvicorn, 1 worker, {HOST}; load: {generator};")
    print(f"  {WARMUP_S} s warm-up, then {DURATION_S} s per route")
    print()
    results: dict[str, Load] = {}
    with tempfile.TemporaryFile("w+") as log:
        with server(log) as base:
            _check_trace(base, body)
            routes: list[tuple[str, str | None]] = [("GET /healthz", None),
                                                    ("POST /api/trace", body)]
            if use_wrk:
                routes.append(("  (new program)", fresh))
            for route, payload in routes:
                url = base + ("/healthz" if payload is None else "/api/trace")
                load(url, WARMUP_S, payload)
                results[route] = load(url, DURATION_S, payload)
        log.seek(0)
        server_log = log.read()
    print(f"  {'route':<16}  {'requests/s':>10}  {'p99 ms':>8}  {'requests':>9}  failures")
    for route, r in results.items():
        print(f"  {route:<16}  {r.rps:>10,.0f}  {r.p99_ms:>8.1f}  {r.requests:>9,}  "
              f"{r.failures}")
    if server_log.strip():
        print("  the server logged (last lines):")
        print("\n".join("    " + line for line in server_log.strip().splitlines()[-15:]))
    ratio = results["POST /api/trace"].rps / results["GET /healthz"].rps
    verdict = "PASS" if ratio >= REQUIRED else "FAIL"
    print(f"  /api/trace rps / /healthz rps = {ratio:.2f} (required at least {REQUIRED}): "
          f"{verdict}")
    if "  (new program)" in results:
        uncached = results["  (new program)"].rps / results["GET /healthz"].rps
        print(f"  with a new program every request (no cache): {uncached:.2f}")
    print()
    return ratio


if __name__ == "__main__":
    main()
