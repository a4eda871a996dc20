# The lab as a container: the same `autograd-lab serve` that `make run` starts, running
# the compiled build (the hot modules compiled with mypyc; see setup.py).

# Builder: mypyc type-checks the sources as `make typecheck` does (numpy's and pydantic's
# types, pydantic's mypy plugin), so it gets the lab's dependencies besides mypy and gcc.
FROM python:3.11-slim AS builder
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
RUN apt-get update \
 && apt-get install -y --no-install-recommends gcc libc6-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY pyproject.toml setup.py README.md ./
RUN python -c "import tomllib; print(*tomllib.load(open('pyproject.toml', 'rb'))['project']['dependencies'], sep='\n')" \
        > /tmp/requirements.txt \
 && pip install "mypy==2.4.1" "setuptools>=77" -r /tmp/requirements.txt
COPY app ./app
COPY engine ./engine
# The page's files and the lessons go into the wheel as package data of the app.
COPY static ./static
COPY templates ./templates
COPY lessons ./lessons
RUN AUTOGRAD_LAB_COMPILE=1 pip wheel --no-deps --no-build-isolation --wheel-dir /wheels .

# Runtime: the compiled wheel and its dependencies; no compiler, no mypy.
FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1
COPY --from=builder /wheels /tmp/wheels
RUN pip install /tmp/wheels/*.whl && rm -rf /tmp/wheels \
 && useradd --create-home --uid 10001 --user-group lab
# static/, templates/ and the lessons are the app package's own data (app/static, ...).
RUN python -c "import app.web.pages, app.lessons, app.trace.build; \
import engine.functions.sleef_kernels, engine.optim_kernels; \
assert app.trace.build.__file__.endswith('.so'), app.trace.__file__; \
assert (app.web.pages.STATIC / 'js' / 'app.js').is_file(), app.web.pages.STATIC; \
assert app.web.pages.STATIC.parent.name == 'app', app.web.pages.STATIC; \
assert any(app.lessons.shipped_dir().glob('*.toml')), app.lessons.shipped_dir()"
# Not root: the server needs to write nothing (rooms live in memory or in Redis).
USER lab:lab
WORKDIR /home/lab

EXPOSE 8000
HEALTHCHECK --interval=15s --timeout=3s --start-period=10s --retries=3 \
  CMD python -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=2)"
CMD ["autograd-lab", "serve", "--host", "0.0.0.0", "--port", "8000"]
