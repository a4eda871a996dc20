# The lab as a container: the same `autograd-lab serve` that `make run` starts.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1
WORKDIR /lab

COPY pyproject.toml README.md ./
COPY app ./app
COPY engine ./engine
COPY static ./static
COPY templates ./templates
# Editable: the page reads static/ and templates/ beside app/.
RUN pip install -e . && useradd --create-home lab
USER lab

EXPOSE 8000
HEALTHCHECK CMD python -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/healthz')"
CMD ["autograd-lab", "serve", "--host", "0.0.0.0", "--port", "8000"]
