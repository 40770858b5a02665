# semgraph worker and web server image (one image, two commands):
#   docker build -t semgraph .
#   docker run semgraph worker            # the sequential job worker
#   docker run -p 8080:8080 semgraph serve --host 0.0.0.0 --port 8080
# Dependencies come from constraints.txt (the same pins CI uses). torch is installed first
# from the CPU wheel index (TORCH_INDEX_URL) so the image does not carry CUDA libraries;
# point it at a CUDA index to build a GPU image.
FROM python:3.11-slim-bookworm AS build

ARG TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1
RUN python -m venv /opt/semgraph
ENV PATH=/opt/semgraph/bin:$PATH
WORKDIR /src
COPY constraints.txt pyproject.toml README.md ./
RUN pip install --index-url "$TORCH_INDEX_URL" "$(grep -E '^torch==' constraints.txt)"
COPY src ./src
RUN pip install -c constraints.txt .

FROM python:3.11-slim-bookworm

# git: checkouts; tini: PID 1 that forwards SIGTERM so the worker stops at a checkpoint
RUN apt-get update \
    && apt-get install -y --no-install-recommends git tini ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --create-home --home-dir /home/semgraph --uid 10001 semgraph \
    && mkdir -p /var/lib/semgraph && chown semgraph:semgraph /var/lib/semgraph
COPY --from=build /opt/semgraph /opt/semgraph
ENV PATH=/opt/semgraph/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    HF_HUB_OFFLINE=1 \
    TRANSFORMERS_OFFLINE=1 \
    SEMGRAPH_STATE_DIR=/var/lib/semgraph \
    SEMGRAPH_LOG_JSON=true \
    SEMGRAPH_WEB_HOST=0.0.0.0 \
    SEMGRAPH_WEB_PORT=8080
USER semgraph
WORKDIR /home/semgraph
VOLUME ["/var/lib/semgraph"]
EXPOSE 8080 9108
ENTRYPOINT ["/usr/bin/tini", "--", "semgraph"]
CMD ["serve"]
