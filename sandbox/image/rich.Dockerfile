# The rich sandbox image, agent-fix-sandbox-rich:VERSION: the slim image's tools on trixie plus the
# toolchains of the common ecosystems (Python 3, Node 20, Go, Rust, a JDK with Maven and Gradle, Ruby),
# all from Debian's packages. Built by `sandbox/image/build.sh --rich` on a base made without a registry
# (bootstrap-base.sh). Bump SANDBOX_RICH_IMAGE_VERSION in sandbox/version.ts when this file changes.
ARG BASE=agent-fix-base:trixie
FROM ${BASE}
# First, so that this file's layer chain is its own: the app's and Redis's images start on the same base
# with the same ENV line, and the legacy builder, finding several cached children, may follow theirs and
# then rebuild everything after it.
LABEL agent-fix.image=sandbox-rich
ENV DEBIAN_FRONTEND=noninteractive
# dpkg's fsync after every file is most of a cold build (unpacking ~2 GB); a half-built image is thrown
# away anyway, so it buys nothing here.
RUN echo force-unsafe-io > /etc/dpkg/dpkg.cfg.d/agent-fix-unsafe-io
# The same sandbox tools as the slim Dockerfile (which says why iptables and /usr/lib/agent-fix/bin),
# then one layer per toolchain group so that a change to one rebuilds little.
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      ca-certificates coreutils procps git ripgrep patch util-linux tar iptables \
      curl unzip xz-utils zip make build-essential pkg-config libssl-dev \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      python3 python3-dev python3-pip python3-venv \
      nodejs npm \
      ruby ruby-dev bundler rake \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb
RUN apt-get update \
 && apt-get install -y --no-install-recommends golang-go rustc cargo \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb
# Java: the JDK's man pages directory must exist for its postinst on a minbase system.
RUN mkdir -p /usr/share/man/man1 \
 && apt-get update \
 && apt-get install -y --no-install-recommends openjdk-21-jdk-headless maven gradle \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb
# pytest from Debian's packages: a project whose only test dependency is pytest runs its tests without
# PyPI (detection's virtual environment sees the system's packages: worker/config/detect/python.ts).
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3-pytest \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb /var/cache/apt/*.bin
RUN git config --system user.name "agent-fix" \
 && git config --system user.email "agent-fix@localhost" \
 && git config --system core.pager cat \
 && git config --system init.defaultBranch main \
 && git config --system --add safe.directory /workspace \
 && groupadd -g 1000 agent \
 && useradd -m -u 1000 -g 1000 -s /bin/bash agent \
 && mkdir -p /workspace \
 && chown 1000:1000 /workspace \
 && mkdir -p /usr/lib/agent-fix/bin \
 && for b in bash head base64 mkdir realpath stat cat; do cp "$(command -v "$b")" /usr/lib/agent-fix/bin/; done \
 && chmod 0111 /usr/lib/agent-fix/bin/* \
 && chmod 0755 /usr/lib/agent-fix/bin

# Go's standard library compiled once, into GOROOT/pkg, and the go command told to link against it
# (installgoroot=all): since Go 1.20 it otherwise compiles std into every new build cache, and a
# repository's setup starts with an empty one in its workspace. A first `go test` then takes about 15 s
# instead of 2.5 min on a loaded 2-core machine, and leaves a 3 MB cache instead of 57 MB to copy into
# every later sandbox of the run. Other build flags (-race, CGO_ENABLED=0) still compile into the cache.
ENV GODEBUG=installgoroot=all
RUN GOCACHE=/tmp/go-std-cache go install std && rm -rf /tmp/go-std-cache
# Go, Cargo, Maven and Gradle keep their caches under $HOME (a tmpfs in the sandbox).
ENV HOME=/home/agent LANG=C.UTF-8 PAGER=cat GIT_PAGER=cat TERM=dumb
USER 1000:1000
WORKDIR /workspace
CMD ["sleep", "infinity"]
ARG VERSION=dev
LABEL org.opencontainers.image.title="agent-fix-sandbox-rich" \
      org.opencontainers.image.version="${VERSION}" \
      agent-fix.sandbox-version="${VERSION}"
