# The cowbird front end: the public API and the browser pages, configured by /config/cowbird.toml.
# Build from the repository root:  docker build -f deploy/docker/frontend.Dockerfile -t cowbird-frontend .
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
RUN python -m venv /opt/cowbird && /opt/cowbird/bin/pip install --no-cache-dir '.[frontend,calf,postgres]'

FROM python:3.11-slim
RUN useradd --system --uid 10001 --home-dir /nonexistent --shell /usr/sbin/nologin cowbird \
 && mkdir -p /state && chown cowbird /state
COPY --from=build /opt/cowbird /opt/cowbird
ENV PATH=/opt/cowbird/bin:$PATH PYTHONUNBUFFERED=1
USER cowbird
EXPOSE 8700
# accounts live in /state (a volume: one container) unless the configuration names a PostgreSQL
# database_url (any number of containers and --workers, sharing it: deploy/compose.yml)
CMD ["cowbird", "serve", "--config", "/config/cowbird.toml", "--host", "0.0.0.0", "--port", "8700", \
     "--log-format", "json"]
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["python", "-c", "import urllib.request,sys; sys.exit(urllib.request.urlopen('http://127.0.0.1:8700/api/v1/corpora', timeout=4).status != 200)"]
