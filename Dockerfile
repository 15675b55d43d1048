# syntax=docker/dockerfile:1
# The image the exported CI jobs and Argo tasks run in (`runner export gitlab-ci --image IMAGE`,
# `runner export argo-workflows --image IMAGE`): `runner`, the pinned `pulumi` with its YAML
# language host, git and kubectl. Build it at the repository's root and push it where the jobs
# pull from:
#
#   docker build --build-arg PULUMI_VERSION=3.274.1 -t registry.example/platform/runner:1 .
#
# `pulumi` is the version scripts/real-pulumi/versions pins, built from Go modules the way
# scripts/install-pulumi builds it for the tests (which run every example on it); the build
# stops when PULUMI_VERSION names another (move the pin there to change it). The exports'
# default `--pulumi-version` is the same version.
#
# The provider's own tools go in with EXTRA_PACKAGES (Debian packages): `-p aws` needs the AWS
# CLI (awscli); the image build of kic-image-build (aws, do, linode) needs the Docker CLI with
# its buildx plugin and a Docker daemon the job reaches (DOCKER_HOST, e.g. a docker:dind
# service): --build-arg EXTRA_PACKAGES="awscli docker.io", plus buildx from Docker's packages.
#
# No test builds this image (they run where there is no Docker engine); hadolint checks it.

ARG PULUMI_VERSION=3.274.1

# ---- the runner
FROM rust:1.95-bookworm AS runner
WORKDIR /src
COPY . .
RUN cargo build --release --locked --bin runner

# ---- the pinned pulumi and its YAML language host, from Go modules
FROM golang:1.26.8-bookworm AS pulumi
ARG PULUMI_VERSION
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
WORKDIR /src
COPY scripts/install-pulumi scripts/install-pulumi
COPY scripts/real-pulumi scripts/real-pulumi
RUN pinned="$(sed -e 's/#.*//' scripts/real-pulumi/versions | awk '$1 == "pulumi" { print $2 }')" \
 && if [ "v${PULUMI_VERSION}" != "${pinned}" ]; then \
      echo "PULUMI_VERSION=${PULUMI_VERSION}, but scripts/real-pulumi/versions pins pulumi ${pinned}: pass --build-arg PULUMI_VERSION=${pinned#v}, or move the pin" >&2; \
      exit 1; \
    fi \
 && RUNNER_REAL_PULUMI=/opt/real-pulumi scripts/install-pulumi > /tmp/pulumi-dir \
 && mkdir -p /opt/pulumi \
 && cp "$(cat /tmp/pulumi-dir)/pulumi" "$(cat /tmp/pulumi-dir)/pulumi-language-yaml" /opt/pulumi/

# ---- the image
FROM debian:bookworm-slim
ARG EXTRA_PACKAGES=""
# Debian's stable packages: the point releases bring fixes only, so no version is pinned;
# EXTRA_PACKAGES is a list of words on purpose.
# hadolint ignore=DL3008,SC2086
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates git kubernetes-client ${EXTRA_PACKAGES} \
 && rm -rf /var/lib/apt/lists/*
COPY --from=pulumi /opt/pulumi/ /usr/local/bin/
COPY --from=runner /src/target/release/runner /usr/local/bin/runner
ENV PULUMI_SKIP_UPDATE_CHECK=true
RUN runner --version && pulumi version
