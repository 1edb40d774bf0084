# The pushdown service: FastAPI on uvicorn, with a Java 17 runtime for the PySpark analyze jobs.
#   docker build -t pushdown .        docker run -p 8000:8000 pushdown
# SPARK_VERSION pins PySpark to the Spark cluster the analyze jobs use (the apache/spark image in
# docker-compose.yml): client and cluster must agree on the version.
FROM python:3.11.14-slim-bookworm

ARG SPARK_VERSION=4.3.0

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

# Java for PySpark's JVM; procps because Spark's launch scripts call ps.
RUN apt-get update \
    && apt-get install -y --no-install-recommends openjdk-17-jre-headless procps \
    && rm -rf /var/lib/apt/lists/*

RUN groupadd --system --gid 10001 pushdown \
    && useradd --system --uid 10001 --gid pushdown --create-home --home-dir /home/pushdown pushdown

# The project from its own files, pure Python (docs/decisions/0005-pure-python-only.md): no compiler needed.
WORKDIR /opt/pushdown
COPY pyproject.toml README.md ./
COPY costmodel ./costmodel
COPY service ./service
COPY api ./api
COPY pushdown_client ./pushdown_client
RUN pip install ".[postgres]" "pyspark==${SPARK_VERSION}" \
    && rm -rf /opt/pushdown/build

# History, statistics and samples (SQLite by default; PUSHDOWN_DATABASE_URL=postgresql://... moves the first two).
RUN mkdir -p /var/lib/pushdown && chown pushdown:pushdown /var/lib/pushdown
ENV PUSHDOWN_HOST=0.0.0.0 \
    PUSHDOWN_PORT=8000 \
    PUSHDOWN_DATA_DIR=/var/lib/pushdown

USER 10001:10001
WORKDIR /home/pushdown
EXPOSE 8000

HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=5 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/healthz' % os.environ.get('PUSHDOWN_PORT', '8000'), timeout=4)"]

CMD ["pushdown", "serve"]
