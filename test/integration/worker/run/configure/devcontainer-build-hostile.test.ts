/**
 * Hostile devcontainer Dockerfiles (build.dockerfile), for real on Docker: what the check lets through
 * is what the worker executes, nothing is fetched from the host's network (a loopback-only server sees
 * no request), no name a build can write reaches another repository's image, every RUN is held as a
 * root setup sandbox is (no network, setup-as-root's capabilities, no-new-privileges, the memory and
 * process limits), and a cancelled build leaves no container running within seconds.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { extract } from "tar-stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DockerSandboxProvider } from "../../../../../sandbox/docker/provider.js";
import { SANDBOX_IMAGE } from "../../../../../sandbox/version.js";
import type { RepoImageBuildSpec } from "../../../../../src/shared/contracts.js";
import { checkDockerfile } from "../../../../../worker/run/configure/devcontainer-build.js";
import { removeRepoBuilds } from "../../../../support/repo-build.js";
import { requireSandboxImage } from "../../../../support/services.js";

const ready = await requireSandboxImage();
const MEMORY = 256 * 1024 ** 2;
const PIDS = 64;
const provider = new DockerSandboxProvider({ limits: { memoryBytes: MEMORY, pids: PIDS, cpus: 1 } });
const docker = provider.docker;
const repo = (name: string) => `octo/hostile-build-${name}-${process.pid}`;
const allowed = (image: string) => image === SANDBOX_IMAGE;
let checkout = "";
let server: Server;
let port = 0;
const requests: string[] = [];

beforeAll(async () => {
  checkout = await mkdtemp(join(tmpdir(), "af-hostile-build-"));
  await writeFile(join(checkout, "README.md"), "a repository\n");
  // The host's loopback-only service: a build that reached it would read what only the host may.
  server = createServer((req, res) => {
    requests.push(req.url ?? "");
    res.end("loopback secret\n");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
  for (const name of [
    "url",
    "victim",
    "attacker",
    "probe",
    "memory",
    "cancel",
    "shutdown",
    "timeout",
    "legit",
    "link",
  ])
    await removeRepoBuilds(docker, repo(name));
  await provider.close();
  if (checkout) await rm(checkout, { recursive: true, force: true });
}, 120_000);

function spec(name: string, dockerfile: string): RepoImageBuildSpec {
  return { root: checkout, context: ".", dockerfile, bases: [SANDBOX_IMAGE], name: repo(name) };
}

/** The check the pipeline makes, then the build: whichever refuses first. */
async function checkThenBuild(name: string, dockerfile: string, signal?: AbortSignal): Promise<string> {
  checkDockerfile(dockerfile, ".devcontainer/Dockerfile", allowed);
  return provider.repoImage(spec(name, dockerfile), signal);
}

/** A file of an image, read through a container that never starts. */
async function fileOf(image: string, path: string): Promise<string> {
  const container = await docker.createContainer({ Image: image, Entrypoint: ["true"], Cmd: [] });
  try {
    const archive = (await container.getArchive({ path })) as unknown as Readable;
    const chunks: Buffer[] = [];
    const files = extract();
    files.on("entry", (_header, stream, next) => {
      stream.on("data", (c) => {
        chunks.push(c as Buffer);
      });
      stream.on("end", () => next());
    });
    archive.pipe(files);
    await new Promise<void>((resolve, reject) => {
      files.on("finish", () => resolve());
      files.on("error", reject);
    });
    return Buffer.concat(chunks).toString("utf8");
  } finally {
    await container.remove({ force: true });
  }
}

describe.runIf(ready)("hostile devcontainer Dockerfiles", () => {
  it("an exec-form ADD of a loopback URL is refused, and nothing fetches it", async () => {
    const url = `http://127.0.0.1:${port}/exec-form`;
    await expect(checkThenBuild("url", `FROM ${SANDBOX_IMAGE}\nADD ["${url}", "/loot"]\n`)).rejects.toThrow(
      /:2: .*fetched from the network/,
    );
    expect(requests).toEqual([]);
  }, 120_000);

  it("ONBUILD is refused, naming the line", async () => {
    const url = `http://127.0.0.1:${port}/onbuild`;
    await expect(checkThenBuild("url", `FROM ${SANDBOX_IMAGE}\nONBUILD ADD ${url} /loot\n`)).rejects.toThrow(
      /:2: ONBUILD .*not supported/,
    );
    expect(requests).toEqual([]);
  }, 120_000);

  it("an escape directive cannot hide a COPY --from of another repository's image", async () => {
    // The victim's image, with a file only its own runs may read.
    const victim = await checkThenBuild(
      "victim",
      `FROM ${SANDBOX_IMAGE}\nUSER root\nRUN echo victim-secret-${process.pid} > /secret\n`,
    );
    const names = (await docker.getImage(victim).inspect()).RepoTags ?? [];
    // Even knowing the victim's image's own name (no repository can derive it), the attacker cannot use it.
    for (const name of names) {
      const hostile = `# escape=\`\nFROM ${SANDBOX_IMAGE}\nUSER root\nRUN echo hiding \\\nCOPY --from=${name} /secret /loot\n`;
      const attempt = checkThenBuild("attacker", hostile).then(
        (id) => fileOf(id, "/loot"),
        (error: Error) => `refused: ${error.message}`,
      );
      const outcome = await attempt;
      expect(outcome).not.toContain("victim-secret");
      expect(outcome).toMatch(/refused: .*:5: .*--from=.* is not a stage/);
    }
  }, 240_000);

  it("each RUN has no network, setup-as-root's capabilities, no-new-privileges and the sandbox's limits", async () => {
    const probe = [
      "( echo $(ls /sys/class/net)",
      "grep -E '^(CapEff|CapBnd|NoNewPrivs)' /proc/self/status",
      "cat /sys/fs/cgroup/pids/pids.max /sys/fs/cgroup/memory/memory.limit_in_bytes",
      `(python3 -c "import urllib.request as u; u.urlopen('http://127.0.0.1:${port}/run', timeout=3)" 2>&1 | tail -1)`,
      ") > /probe",
    ].join("; ");
    const id = await checkThenBuild("probe", `FROM ${SANDBOX_IMAGE}\nUSER root\nRUN ${probe}\n`);
    const out = await fileOf(id, "/probe");
    expect(out.split("\n")[0]?.trim()).toBe("lo");
    // CHOWN DAC_OVERRIDE FOWNER FSETID KILL SETGID SETUID SETFCAP SYS_NICE: setup as root's set, no NET_RAW, MKNOD, SYS_CHROOT.
    expect(out).toMatch(/CapEff:\s+00000000808000fb/);
    expect(out).toMatch(/CapBnd:\s+00000000808000fb/);
    expect(out).toMatch(/NoNewPrivs:\s+1/);
    expect(out).toContain(`${PIDS}\n${MEMORY}`);
    expect(out).toMatch(/unreachable|refused|Errno|URLError/);
    expect(requests).toEqual([]);
  }, 180_000);

  it("a memory hog is stopped by the limit and the build fails saying so", async () => {
    const hog = `RUN python3 -c "x = bytearray(${2 * MEMORY})"`;
    await expect(checkThenBuild("memory", `FROM ${SANDBOX_IMAGE}\n${hog}\n`)).rejects.toThrow(
      /line 2: RUN exited 137 \(out of memory\)/,
    );
    const left = await docker.listContainers({
      all: true,
      filters: { label: [`agent-fix.job=image-build`] },
    });
    expect(left.filter((c) => c.Labels["agent-fix.worker"] === provider.workerId)).toEqual([]);
  }, 180_000);

  it("a cancelled build leaves no container running within seconds, and no image", async () => {
    const cancel = new AbortController();
    const build = checkThenBuild(
      "cancel",
      `FROM ${SANDBOX_IMAGE}\nRUN sleep 300 && touch /done\n`,
      cancel.signal,
    );
    build.catch(() => {});
    const running = async () =>
      (await docker.listContainers({ filters: { ancestor: [SANDBOX_IMAGE] } })).filter((c) =>
        c.Command.includes("sleep 300"),
      );
    for (let i = 0; i < 100 && (await running()).length === 0; i++)
      await new Promise((r) => setTimeout(r, 200));
    expect((await running()).length).toBe(1);
    const cancelledAt = Date.now();
    cancel.abort();
    await expect(build).rejects.toThrow(/cancelled/);
    expect(await running()).toEqual([]);
    expect(Date.now() - cancelledAt).toBeLessThan(5_000);
    const images = await docker.listImages({
      filters: { label: [`agent-fix.build.repository=${repo("cancel")}`] },
    });
    expect(images).toEqual([]);
  }, 120_000);

  it("a shutdown or the build's timeout stops it the same way", async () => {
    const sleeping = `FROM ${SANDBOX_IMAGE}\nRUN sleep 300 && touch /done\n`;
    const short = new DockerSandboxProvider({ imageBuildTimeoutMs: 3_000 });
    await expect(short.repoImage(spec("timeout", sleeping))).rejects.toThrow(/took longer than 3 s/);
    const closing = new DockerSandboxProvider({});
    const build = closing.repoImage(spec("shutdown", sleeping));
    build.catch(() => {});
    await new Promise((r) => setTimeout(r, 1_500));
    await closing.close();
    await expect(build).rejects.toThrow(/cancelled/);
    const left = await docker.listContainers({
      all: true,
      filters: { label: ["agent-fix.job=image-build"] },
    });
    expect(
      left.filter((c) => [short.workerId, closing.workerId].includes(c.Labels["agent-fix.worker"] ?? "")),
    ).toEqual([]);
  }, 120_000);

  it("a COPY source that leads out of the build context is refused", async () => {
    const { symlink } = await import("node:fs/promises");
    await symlink("/etc", join(checkout, "host-etc")).catch(() => {});
    await expect(
      checkThenBuild("link", `FROM ${SANDBOX_IMAGE}\nCOPY host-etc/hostname /loot\n`),
    ).rejects.toThrow(/line 2: host-etc\/hostname leads outside the build context/);
  }, 60_000);
});

describe.runIf(ready)("a devcontainer Dockerfile the worker executes", () => {
  it("builds stages, COPY, ENV, WORKDIR and USER as the engine would, and reuses every step", async () => {
    await writeFile(join(checkout, "tool.sh"), "#!/bin/sh\necho tool\n");
    const dockerfile = [
      `FROM ${SANDBOX_IMAGE} AS tools`,
      "USER root",
      "RUN mkdir -p /opt/tools && echo built > /opt/tools/made.txt",
      `FROM ${SANDBOX_IMAGE}`,
      "USER root",
      "ARG GREETING=hello",
      "ENV PATH=/opt/bin:$PATH APP_HOME=/app",
      "WORKDIR $APP_HOME",
      "COPY tool.sh README.md ./",
      "COPY --from=tools /opt/tools /opt/from-tools",
      'RUN echo "$GREETING $(pwd) $PATH" > /app/run.txt && chown 1000:1000 /app/run.txt',
      "USER 1000:1000",
      'CMD ["sleep", "infinity"]',
      "",
    ].join("\n");
    const first = await checkThenBuild("legit", dockerfile);
    expect(await fileOf(first, "/app/tool.sh")).toContain("echo tool");
    expect(await fileOf(first, "/app/README.md")).toBe("a repository\n");
    expect(await fileOf(first, "/opt/from-tools/made.txt")).toBe("built\n");
    expect(await fileOf(first, "/app/run.txt")).toMatch(/^hello \/app \/opt\/bin:\/usr\/local\/sbin:/);
    const info = await docker.getImage(first).inspect();
    expect(info.Config.User).toBe("1000:1000");
    expect(info.Config.WorkingDir).toBe("/app");
    expect(info.Config.Cmd).toEqual(["sleep", "infinity"]);
    // Another checkout of the same files (another run): the same image.
    const again = await mkdtemp(join(tmpdir(), "af-hostile-build-again-"));
    try {
      await writeFile(join(again, "README.md"), "a repository\n");
      await writeFile(join(again, "tool.sh"), "#!/bin/sh\necho tool\n");
      const second = await provider.repoImage({ ...spec("legit", dockerfile), root: again });
      expect(second).toBe(first);
    } finally {
      await rm(again, { recursive: true, force: true });
    }
  }, 240_000);
});
