/**
 * The sandbox image without what the fault tests' runs never use (the C toolchain, Node, headers and
 * static libraries, docs, locales, apt's cache), flattened into one layer: about a third of its size,
 * so copying it into a private Docker engine (own-dockerd.ts) takes a third of the time. Built from
 * the sandbox image on the shared engine with no network, once per sandbox version (reused while its
 * tag exists, as sandbox/image/build.sh reuses the sandbox image's). Its shells, git, rg, python3 and
 * iptables are the sandbox image's own.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import Docker from "dockerode";
import { SANDBOX_IMAGE, SANDBOX_IMAGE_VERSION } from "../../sandbox/version.js";

const SLIM_SANDBOX_IMAGE = `agent-fix-faults-slim:${SANDBOX_IMAGE_VERSION}`;

const DROPPED = [
  "/usr/share/nodejs",
  "/usr/lib/node_modules",
  "/usr/lib/gcc",
  "/usr/libexec/gcc",
  "/usr/include",
  "/usr/share/locale",
  "/usr/share/doc",
  "/usr/share/man",
  "/usr/share/info",
  "/var/cache/*",
  "/usr/lib/x86_64-linux-gnu/libnode.so*",
  "/usr/lib/x86_64-linux-gnu/*.a",
  "/usr/lib/x86_64-linux-gnu/lib*san.so*",
  "/usr/bin/x86_64-linux-gnu-lto-dump-*",
];

const DOCKERFILE = `FROM ${SANDBOX_IMAGE} AS full
USER 0:0
RUN rm -rf ${DROPPED.join(" ")}
FROM scratch
COPY --from=full / /
ENV HOME=/home/agent LANG=C.UTF-8 PAGER=cat GIT_PAGER=cat TERM=dumb
USER 1000:1000
WORKDIR /workspace
CMD ["sleep", "infinity"]
`;

/** The slim image's name, built first when missing; the milliseconds the build took (0 when reused). */
export async function slimSandboxImage(docker = new Docker()): Promise<{ image: string; buildMs: number }> {
  const present = await docker
    .getImage(SLIM_SANDBOX_IMAGE)
    .inspect()
    .then(
      () => true,
      () => false,
    );
  if (present) return { image: SLIM_SANDBOX_IMAGE, buildMs: 0 };
  const started = Date.now();
  const build = spawn("docker", ["build", "-q", "--network", "none", "-t", SLIM_SANDBOX_IMAGE, "-"], {
    stdio: ["pipe", "ignore", "inherit"],
  });
  build.stdin.end(DOCKERFILE);
  const [code] = await once(build, "exit");
  if (code !== 0) throw new Error(`building ${SLIM_SANDBOX_IMAGE} failed (${code})`);
  return { image: SLIM_SANDBOX_IMAGE, buildMs: Date.now() - started };
}
