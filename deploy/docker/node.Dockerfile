# A cowbird node: serves the CWB partitions mounted at /data (registry at /data/registry).
# Build from the repository root:  docker build -f deploy/docker/node.Dockerfile -t cowbird-node .
FROM python:3.11-slim AS build
WORKDIR /src
COPY pyproject.toml README.md ./
# the one distribution's source roots (docs/architecture.md: the design card's folders)
COPY query_lang query_lang
COPY frontend_api frontend_api
COPY backend_node backend_node
COPY web web
COPY tools/calf tools/calf
COPY tools/build tools/build
COPY tools/crawl tools/crawl
RUN python -m venv /opt/cowbird && /opt/cowbird/bin/pip install --no-cache-dir '.[node]'

FROM python:3.11-slim
RUN useradd --system --uid 10001 --home-dir /nonexistent --shell /usr/sbin/nologin cowbird
COPY --from=build /opt/cowbird /opt/cowbird
# NUMBA_CACHE_DIR: the compiled decoders of compressed corpora are cached there (the install is read-only)
ENV PATH=/opt/cowbird/bin:$PATH PYTHONUNBUFFERED=1 NUMBA_CACHE_DIR=/tmp/numba-cache
USER cowbird
EXPOSE 8701
# the node token comes from a secret file; TLS certificate and key likewise (optional)
CMD ["cowbird", "node", "serve", "--registry", "/data/registry", "--host", "0.0.0.0", "--port", "8701", \
     "--token-file", "/run/secrets/node_token", "--log-format", "json"]
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
  CMD ["python", "-c", "import urllib.request,sys; sys.exit(urllib.request.urlopen('http://127.0.0.1:8701/health', timeout=4).status != 200)"]
