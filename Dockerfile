# tachyon in a container: a static (musl) binary on an empty image, run as
# nobody. Build: `docker build -t tachyon .`; run with a site mounted:
#   docker run -p 8080:8080 -v "$PWD/site:/srv/www:ro" tachyon
# The site can also be baked in: `FROM tachyon` then `COPY site/ /srv/www/`.

FROM rust:1-bookworm AS build
RUN apt-get update && apt-get install -y --no-install-recommends musl-tools \
    && rm -rf /var/lib/apt/lists/* \
    && rustup target add x86_64-unknown-linux-musl
WORKDIR /src
COPY . .
# ring compiles a little C: musl-gcc builds it against musl.
ENV CC_x86_64_unknown_linux_musl=musl-gcc
RUN cargo build --release --locked -p tachyon --target x86_64-unknown-linux-musl \
    && mkdir -p /out/srv/www /out/tmp \
    && cp target/x86_64-unknown-linux-musl/release/tachyon /out/tachyon \
    && cp packaging/docker/index.html /out/srv/www/index.html \
    && chmod 1777 /out/tmp

FROM scratch
COPY --from=build /out/ /
USER 65534:65534
EXPOSE 8080 9180
# /readyz on the admin listener, asked by tachyon itself (no shell, no curl).
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s \
    CMD ["/tachyon", "--healthcheck", "127.0.0.1:9180"]
# SIGTERM drains (finishes responses in flight); SIGHUP reloads the site.
STOPSIGNAL SIGTERM
ENTRYPOINT ["/tachyon"]
CMD ["/srv/www", "--listen", "0.0.0.0:8080", "--admin", "0.0.0.0:9180"]
