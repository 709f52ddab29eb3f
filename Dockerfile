# The HAT Ops application image: the `hat` CLI, the console, the Prefect worker and the
# MLflow / Prefect servers (same pinned versions as the project). Build: docker compose build.
# GPU hosts: build with --build-arg HAT_EXTRAS=gpu to add vLLM.
FROM python:3.11-slim

ARG HAT_EXTRAS=""
ENV PYTHONDONTWRITEBYTECODE=1 PIP_NO_CACHE_DIR=1 HAT_HOME=/var/lib/hat
WORKDIR /app
RUN apt-get update && apt-get install -y --no-install-recommends git postgresql-client \
    && rm -rf /var/lib/apt/lists/*
COPY pyproject.toml README.md alembic.ini ./
COPY hat_core hat_core
COPY db db
COPY migrations migrations
COPY flows flows
COPY ui ui
COPY hat_cli hat_cli
COPY examples examples
RUN pip install --upgrade pip && \
    if [ -n "$HAT_EXTRAS" ]; then pip install ".[$HAT_EXTRAS]"; else pip install .; fi
RUN useradd --create-home hat && mkdir -p /var/lib/hat && chown hat /var/lib/hat
USER hat
EXPOSE 8501
CMD ["hat", "--help"]
