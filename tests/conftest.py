"""Fixtures shared by the test modules."""

from __future__ import annotations

import os
from typing import Any

import pytest


@pytest.fixture(scope="session")
def torch() -> Any:
    """Live PyTorch, for the tests that compare with it; they skip, saying why, without it."""
    return pytest.importorskip("torch", reason="torch is not installed: these tests compare "
                               "with live PyTorch 2.13 (pip install torch==2.13.0)")


@pytest.fixture(scope="session")
def torch_avx2(torch: Any) -> Any:
    """Live PyTorch running the x86-64 AVX2/AVX512 kernels that engine/random.py reproduces
    (its Note [CPU capability]); elsewhere float draws may round differently, so the tests skip."""
    capability = torch.backends.cpu.get_cpu_capability()
    if capability not in ("AVX2", "AVX512"):
        pytest.skip(f"PyTorch runs its {capability} CPU kernels here; engine/random.py "
                    "reproduces the AVX2 and AVX512 ones")
    return torch


@pytest.fixture(scope="session")
def torch_avx512(torch: Any) -> Any:
    """Live PyTorch running its AVX512 kernels, whose 16-lane sums and SLEEF functions
    engine/functions/softmax_kernel.py reproduces (Note [Vectorized softmax])."""
    capability = torch.backends.cpu.get_cpu_capability()
    if capability != "AVX512":
        pytest.skip(f"PyTorch runs its {capability} CPU kernels here; softmax_kernel.py "
                    "reproduces the AVX512 ones")
    return torch


def cpu_vendor() -> str:
    """The CPU's vendor as Linux names it (GenuineIntel, AuthenticAMD), or "unknown"."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("vendor_id"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown"


@pytest.fixture(scope="session")
def torch_mkl(torch_avx512: Any) -> Any:
    """Live PyTorch multiplying through MKL's AVX512 kernels as MKL runs them on Intel CPUs:
    the summation orders engine/functions/blas.py reproduces, and the vector library that
    PyTorch's float32 exp goes through. On other CPUs MKL takes other kernels (an AMD EPYC
    with AVX512 gave other last bits for 11 of blas.py's shape families), so the tests
    that hold the lab to those bits skip there."""
    if "mkl" not in torch_avx512.__config__.show().lower():
        pytest.skip("this PyTorch is not built with MKL, whose order blas.py reproduces")
    vendor = cpu_vendor()
    if vendor != "GenuineIntel":
        pytest.skip(f"MKL runs its Intel kernels on Intel CPUs only (this one is {vendor}); "
                    "blas.py reproduces those")
    return torch_avx512


# -- servers: a real redis-server, app processes (uvicorn), app clients ------------------------

REDIS_SERVER = "/usr/bin/redis-server"


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _wait_until(ready: Any, process: Any, what: str, timeout: float = 30.0) -> None:
    import time

    deadline = time.monotonic() + timeout
    while not ready():
        if process.poll() is not None:
            raise RuntimeError(f"{what} exited with {process.returncode}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what} did not start within {timeout:.0f} s")
        time.sleep(0.05)


@pytest.fixture(scope="session")
def redis_url() -> Any:
    """A real redis-server on a free loopback port, nothing saved to disk; skipped, saying
    why, where Debian's redis-server is not installed."""
    import shutil
    import socket
    import subprocess

    binary = shutil.which("redis-server") or (
        REDIS_SERVER if os.path.exists(REDIS_SERVER) else None)
    if binary is None:
        pytest.skip("redis-server is missing: the Redis tests run a real one "
                    "(apt-get install redis-server; .ci/run installs it)")
    port = free_port()
    process = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1",
                                "--save", "", "--appendonly", "no"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def answers() -> bool:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5) as s:
                s.sendall(b"PING\r\n")
                return s.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    try:
        _wait_until(answers, process, "redis-server")
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.fixture
def app_server() -> Any:
    """A factory of app processes: `app_server(LAB_REDIS_URL=..., ...)` starts uvicorn on a
    free loopback port with those settings and returns its base URL; all stop at the end."""
    import subprocess
    import sys
    import urllib.request

    processes: list[subprocess.Popen[bytes]] = []

    def start(**settings: str) -> str:
        port = free_port()
        env = {**os.environ, **{k if k.startswith("LAB_") else f"LAB_{k.upper()}": v
                                for k, v in settings.items()}}
        process = subprocess.Popen(
            [sys.executable, "-m", "uvicorn", "app.web.app:create_app", "--factory",
             "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        processes.append(process)
        url = f"http://127.0.0.1:{port}"

        def healthy() -> bool:
            try:
                with urllib.request.urlopen(url + "/healthz", timeout=1) as r:
                    return bool(r.status == 200)
            except OSError:
                return False

        _wait_until(healthy, process, f"the app on port {port}")
        return url

    yield start
    for process in processes:
        process.terminate()
    for process in processes:
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()


@pytest.fixture
def app_client() -> Any:
    """create_app() behind Starlette's TestClient, its lifespan run; settings as keywords:
    `app_client(room_idle_expiry_s=5)`."""
    from fastapi.testclient import TestClient

    from app.web.app import create_app
    from app.web.settings import Settings

    clients: list[Any] = []

    def make(**settings: Any) -> Any:
        client = TestClient(create_app(Settings(**settings)))
        client.__enter__()
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.__exit__(None, None, None)


# -- hypothesis profiles -------------------------------------------------------------------

def _hypothesis_profiles() -> None:
    """`HYPOTHESIS_PROFILE=ci` (or CI=1): the same examples on every run, no database."""
    from hypothesis import settings

    settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
    if os.environ.get("HYPOTHESIS_PROFILE") == "ci" or os.environ.get("CI"):
        settings.load_profile("ci")


_hypothesis_profiles()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The browser tests last: Playwright's sync API keeps an event loop running on the main
    thread while its session lasts, and `asyncio.run` (tests/test_rooms_load.py, the bench
    smoke tests) refuses to start inside one. Otherwise in collection order."""
    items.sort(key=lambda item: item.get_closest_marker("browser") is not None)
