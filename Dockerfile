# The ewall API for docker-compose. PostgreSQL (with pgvector) runs in its own container.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 \
    HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false \
    PIP_NO_CACHE_DIR=1

WORKDIR /srv/ewall
# CPU build of torch first; a bare `torch` requirement would pull a multi-GB CUDA build.
RUN pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu
COPY pyproject.toml README.md alembic.ini ./
COPY app ./app
COPY connectors ./connectors
COPY migrations ./migrations
COPY sql ./sql
RUN pip install -e . && useradd --system --uid 10001 ewall
USER ewall
EXPOSE 8000
HEALTHCHECK --interval=10s --timeout=3s --start-period=60s --retries=5 \
  CMD python -c "import urllib.request,sys; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:8000/readyz').status == 200 else 1)"
CMD ["ewall", "serve", "--host", "0.0.0.0", "--port", "8000"]
