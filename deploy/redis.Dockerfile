# Redis for docker-compose.yml without an image registry: Debian's redis-server on the base image
# sandbox/image/bootstrap-base.sh makes (deploy/build-image.sh makes it when absent). The settings come
# from deploy/redis.conf, mounted by docker-compose.yml.
ARG BASE=agent-fix-base:trixie
FROM ${BASE}
RUN apt-get update \
  && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends redis-server redis-tools \
  && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb \
  && mkdir -p /data && chown redis:redis /data
USER redis
EXPOSE 6379
CMD ["redis-server", "--dir", "/data"]
