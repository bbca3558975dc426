# kubesched's container image: `docker build -t kubesched:0.1.0 .` (deploy/30-deployment.yaml runs
# that tag). The package and its runtime dependencies go into a virtualenv in the build stage; the
# final stage copies only that virtualenv and runs it as an unprivileged user.

FROM python:3.11-slim AS build
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
# a C compiler for the protobuf wire (Cython); the final stage needs only the built module
RUN apt-get update && apt-get install -y --no-install-recommends gcc libc6-dev \
 && rm -rf /var/lib/apt/lists/*
RUN python -m venv /opt/kubesched
WORKDIR /src
COPY pyproject.toml setup.py README.md ./
COPY src ./src
RUN /opt/kubesched/bin/pip install .

FROM python:3.11-slim
RUN groupadd --system --gid 65532 kubesched \
 && useradd --system --uid 65532 --gid 65532 --no-create-home --home-dir /nonexistent \
      --shell /usr/sbin/nologin kubesched
COPY --from=build /opt/kubesched /opt/kubesched
ENV PATH=/opt/kubesched/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1
USER 65532:65532
EXPOSE 10259
ENTRYPOINT ["kubesched"]
# in its own network namespace, the container's endpoints listen on all its addresses
CMD ["run", "--config", "/etc/kubesched/config.yaml", "--leader-elect", "--metrics-bind", "0.0.0.0:10259"]
