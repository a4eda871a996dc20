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
RUN AUTOGRAD_LAB_COMPILE=1 pip wheel --no-deps --no-build-isolation --wheel-dir /wheels .

# Runtime: the compiled wheel and its dependencies; no compiler, no mypy.
FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1
COPY --from=builder /wheels /tmp/wheels
RUN pip install /tmp/wheels/*.whl && rm -rf /tmp/wheels && useradd --create-home lab
# app/web/pages.py serves static/ and templates/ from beside the app package.
COPY static /usr/local/lib/python3.11/site-packages/static
COPY templates /usr/local/lib/python3.11/site-packages/templates
COPY lessons /usr/local/lib/python3.11/site-packages/lessons
RUN python -c "import app.web.pages, app.trace.build; \
assert app.trace.build.__file__.endswith('.so'), app.trace.__file__; \
assert (app.web.pages.STATIC / 'js' / 'app.js').is_file(), app.web.pages.STATIC"
USER lab

EXPOSE 8000
HEALTHCHECK CMD python -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/healthz')"
CMD ["autograd-lab", "serve", "--host", "0.0.0.0", "--port", "8000"]
