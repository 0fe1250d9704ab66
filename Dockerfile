# brainfs in a container: the mount runs inside it.
#
#   DOCKER_BUILDKIT=1 docker build -t brainfs .
#   docker run --rm --device /dev/fuse --cap-add SYS_ADMIN --security-opt apparmor=unconfined \
#       -e AWS_ACCESS_KEY_ID -e AWS_SECRET_ACCESS_KEY -e AWS_ENDPOINT_URL \
#       brainfs mount s3://BUCKET/PREFIX /memory --foreground
#
# docs/SANDBOX.md explains the flags; tests/test_container.py builds this file and mounts
# with it against a local S3 server. Needs BuildKit (DOCKER_BUILDKIT=1 with Docker ≥ 20.10,
# or buildx): the build uses RUN --mount.
#
# Build arguments:
#   BASE                 a Debian 12 image (default debian:12-slim); every stage starts from
#                        it, so the runtime's python3 is the one the virtualenv was built with.
#   PIP_EXTRA_INDEX_URL  passed to pip. torch (pyproject's "embed" extra pins 2.13.0) is needed
#                        only to export the model to ONNX and is not in the final image, but
#                        PyPI's torch wheel is the CUDA build (several GB to download): point this
#                        at PyTorch's CPU wheel index to fetch the 190 MB CPU build instead.
# Wheels placed in docker/wheels/ are offered to pip first (find-links), e.g. a torch CPU wheel.
# A CA bundle for a TLS-intercepting proxy in front of PyPI can be given, without it entering
# any layer, as `--secret id=ca_bundle,src=/etc/ssl/certs/ca-certificates.crt`.

ARG BASE=debian:12-slim

# --- tools: what building needs, as .ci/setup installs it: FUSE 3, and gcc, the Python and
# libfuse headers and git (git apply) for our patched pyfuse3.
FROM ${BASE} AS tools
ENV DEBIAN_FRONTEND=noninteractive
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 python3-venv python3-dev gcc libc6-dev \
        pkg-config libfuse3-dev fuse3 git ca-certificates \
 && rm -rf /var/lib/apt/lists/*

# --- requirements: what pyproject.toml asks for, with the extras .ci/setup installs (less
# test and bench). Its own stage, so that editing anything else in pyproject.toml leaves the
# list, and so the cached install below, unchanged.
FROM tools AS requirements
COPY pyproject.toml /pyproject.toml
RUN python3 -c 'import tomllib; p = tomllib.load(open("/pyproject.toml", "rb"))["project"]; x = p["optional-dependencies"]; print("\n".join(p["dependencies"] + [r for e in ("embed", "dream", "mcp", "graph") for r in x[e]] + ["setuptools>=68", "wheel"]))' > /requirements.txt

# --- build: the virtualenv /opt/brainfs with every dependency and the ONNX export.
FROM tools AS build
ARG PIP_EXTRA_INDEX_URL=
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_FIND_LINKS=/wheels \
    HF_HUB_OFFLINE=1 \
    TRANSFORMERS_OFFLINE=1
COPY docker/wheels/ /wheels/
COPY .ci/build-pyfuse3 /src/.ci/build-pyfuse3
COPY third_party/pyfuse3/ /src/third_party/pyfuse3/
COPY --from=requirements /requirements.txt /src/requirements.txt
# pip's cache is a build cache mount: a new requirement downloads only what is new.
RUN --mount=type=secret,id=ca_bundle --mount=type=cache,target=/root/.cache/pip \
    if [ -f /run/secrets/ca_bundle ]; then export PIP_CERT=/run/secrets/ca_bundle; fi \
 && python3 -m venv /opt/brainfs \
 && /src/.ci/build-pyfuse3 /opt/brainfs/bin/python \
 && /opt/brainfs/bin/pip install -q -r /src/requirements.txt
# The exporter runs from its own three modules, model, onnx_embedder and onnx_export
# (brainfs.cache is imported as a bare package, not through brainfs/__init__.py and the
# whole API), so editing any other file keeps this layer. Output: /opt/brainfs/share/brainfs/onnx, where the runtime looks (sys.prefix).
# Then what only the export (and the torch backend, never chosen when the export is there)
# needs goes: about 1.1 GB that the runtime image does not carry. The model package stays:
# the runtime reads its tokenizer and checks the export against its weights.
COPY cache/__init__.py /src/cache/
COPY cache/search/__init__.py cache/search/model.py cache/search/onnx_embedder.py cache/search/onnx_export.py /src/cache/search/
RUN /opt/brainfs/bin/python -c 'import sys, types; m = types.ModuleType("brainfs"); m.__path__ = ["/src"]; sys.modules["brainfs"] = m; from brainfs.cache.search.onnx_export import main; sys.exit(main(["--dir", "/opt/brainfs/share/brainfs/onnx"]))' \
 && /opt/brainfs/bin/pip uninstall -q -y torch sympy mpmath onnx sentence-transformers \
        transformers scikit-learn scipy \
# PyPI's (CUDA) torch brings the CUDA libraries and triton as packages of their own.
 && /opt/brainfs/bin/pip list --format=freeze | grep -E '^(nvidia-|cuda-|triton)' \
        | cut -d= -f1 | xargs -r /opt/brainfs/bin/pip uninstall -q -y

# --- the image: the runtime's packages, the virtualenv, then brainfs itself.
FROM ${BASE}
ENV DEBIAN_FRONTEND=noninteractive
# fuse3 gives libfuse3 and fusermount3 (the unmount); ca-certificates for S3 over HTTPS;
# git for dream's wiki history.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 fuse3 ca-certificates git \
 && rm -rf /var/lib/apt/lists/* \
 && mkdir /memory
COPY --from=build /opt/brainfs /opt/brainfs
# The package itself, last and in its own small layer: a change to the source rebuilds
# only this (seconds), and the 1 GB layer above is shared by every version. The source is
# bound in, not copied, so no layer carries it; setuptools is already in the venv, so
# nothing is fetched.
RUN --mount=type=bind,target=/src,rw \
    /opt/brainfs/bin/pip install -q --no-deps --no-build-isolation --no-cache-dir \
        --disable-pip-version-check /src
ENV PATH=/opt/brainfs/bin:$PATH \
    HF_HUB_OFFLINE=1 \
    TRANSFORMERS_OFFLINE=1 \
    BRAINFS_CACHE_DIR=/var/cache/brainfs
ENTRYPOINT ["brainfs"]
CMD ["--help"]
