/**
 * A sandbox in an image that is not agent-fix's own (real Docker): a hostile image that asks for root,
 * an entrypoint, a healthcheck and a setuid shell still runs the agent as uid 1000 with no capability,
 * a read-only root and no network; an image that lacks what the worker runs is refused naming it; one
 * with a VOLUME is refused. The images are built here, without network, and removed afterwards.
 */
import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Docker from "dockerode";
import { pack } from "tar-stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DERIVED_FROM_LABEL } from "../../../../sandbox/docker/foreign-image.js";
import { type DockerSandbox, DockerSandboxProvider } from "../../../../sandbox/docker/provider.js";
import { SANDBOX_IMAGE } from "../../../../sandbox/version.js";
import { removeRepoBuilds } from "../../../support/repo-build.js";
import { makeSourceDir } from "../../../support/sandbox-contract.js";
import { requireSandboxImage } from "../../../support/services.js";

const available = (await requireSandboxImage()) && (await requireSandboxImage("agent-fix-base:bookworm"));
const docker = new Docker();
const suffix = `${process.pid}-${Date.now()}`;

/** What a hostile repository's image asks for: root, code before the worker's, a setuid shell. */
const HOSTILE = `FROM ${SANDBOX_IMAGE}
USER 0:0
RUN cp /bin/bash /usr/local/bin/rootbash && chmod 4755 /usr/local/bin/rootbash
ENTRYPOINT ["/bin/sh", "-c", "id -u > /tmp/entrypoint-ran; exec \\"$@\\"", "sh"]
HEALTHCHECK --interval=1s CMD id -u > /tmp/healthcheck-ran
`;
const LACKING = "FROM agent-fix-base:bookworm\n";
const WITH_VOLUME = `FROM ${SANDBOX_IMAGE}\nVOLUME /usr/local\n`;

async function buildImage(tag: string, dockerfile: string): Promise<void> {
  const context = pack();
  context.entry({ name: "Dockerfile" }, dockerfile);
  context.finalize();
  const stream = await docker.buildImage(context as unknown as NodeJS.ReadableStream, {
    t: tag,
    networkmode: "none",
    pull: false,
  });
  const events = (await new Promise((resolve, reject) =>
    docker.modem.followProgress(stream, (error, result) => (error ? reject(error) : resolve(result))),
  )) as { error?: string }[];
  const failed = events.find((e) => e.error);
  if (failed) throw new Error(`cannot build ${tag}: ${failed.error}`);
}

describe.runIf(available)("a sandbox in an image the repository named", () => {
  const images = {
    hostile: `agent-fix-test-hostile:${suffix}`,
    lacking: `agent-fix-test-lacking:${suffix}`,
    volume: `agent-fix-test-volume:${suffix}`,
  };
  let source: string;
  let checkout: string;
  const repoName = `octo/built-${suffix}`;
  beforeAll(async () => {
    source = await makeSourceDir();
    // A checkout whose devcontainer builds: its own Dockerfile (unchecked, never used), a file the checked
    // one copies, and a directory that is a symlink to the host's /etc.
    checkout = await mkdtemp(join(tmpdir(), "af-built-"));
    await mkdir(join(checkout, ".devcontainer"));
    await writeFile(join(checkout, ".devcontainer", "tool.sh"), "#!/bin/sh\necho tool from the repository\n");
    await writeFile(join(checkout, ".devcontainer", "Dockerfile"), "FROM ghcr.io/attacker/root:1\n");
    await symlink("/etc", join(checkout, "host-etc"));
    await buildImage(images.hostile, HOSTILE);
    await buildImage(images.lacking, LACKING);
    await buildImage(images.volume, WITH_VOLUME);
  }, 300_000);
  afterAll(async () => {
    if (source) await rm(source, { recursive: true, force: true });
    if (checkout) await rm(checkout, { recursive: true, force: true });
    // Only what this file made: its images and the images the worker derived from them.
    await removeRepoBuilds(docker, repoName);
    for (const tag of Object.values(images)) {
      const id = await docker
        .getImage(tag)
        .inspect()
        .then((i) => i.Id)
        .catch(() => null);
      if (!id) continue;
      const derived = await docker.listImages({ filters: { label: [`${DERIVED_FROM_LABEL}=${id}`] } });
      for (const image of derived)
        await docker
          .getImage(image.Id)
          .remove({ force: true })
          .catch(() => {});
      await docker
        .getImage(tag)
        .remove({ force: true })
        .catch(() => {});
    }
  }, 120_000);

  it("a hostile image cannot lift the hardening: uid 1000, no capability, read-only root, no network, none of its entrypoint or healthcheck", async () => {
    const sandbox = (await new DockerSandboxProvider().create({
      sourceDir: source,
      jobId: "foreign-hostile",
      image: images.hostile,
    })) as DockerSandbox;
    try {
      expect(sandbox.image).toBe(images.hostile);
      const run = async (command: string) => (await sandbox.exec(command)).output.trim();
      expect(await run("id -u; id -g")).toBe("1000\n1000");
      expect(await run("grep -E '^Cap(Prm|Eff|Amb)' /proc/self/status | awk '{print $2}' | sort -u")).toBe(
        "0000000000000000",
      );
      // no-new-privileges: the setuid bit of the image's shell gives nothing.
      expect(await run("/usr/local/bin/rootbash -p -c 'id -u'")).toBe("1000");
      expect((await sandbox.exec("touch /usr/local/bin/planted")).exitCode).not.toBe(0);
      expect(await run("ls /sys/class/net")).toBe("lo");
      expect(await run("ls /tmp/entrypoint-ran /tmp/healthcheck-ran 2>&1 | wc -l; ls /tmp")).toBe("2");
      const info = await docker.getContainer(sandbox.containerName).inspect();
      expect(info.Config.Healthcheck?.Test).toEqual(["NONE"]);
      expect(info.Config.Entrypoint?.[0]).toBe("setpriv");
      expect(info.HostConfig).toMatchObject({ ReadonlyRootfs: true, CapDrop: ["ALL"], NetworkMode: "none" });
      // The worker's own tools work in it: the file shell's reads and writes, the ACI's git and rg.
      await sandbox.writeFile("written.txt", "by the worker\n");
      expect((await sandbox.readFile("written.txt")).toString()).toBe("by the worker\n");
      expect(await run("rg -c worker written.txt && git config user.name")).toBe("1\nagent-fix");
    } finally {
      await sandbox.dispose();
    }
  }, 300_000);

  it("a devcontainer's build runs the checked Dockerfile from the checkout with no network; a context out of the checkout is refused", async () => {
    const dockerfile = `FROM ${SANDBOX_IMAGE}
USER 0:0
COPY tool.sh /usr/local/bin/tool
RUN chmod 0755 /usr/local/bin/tool && (cat /sys/class/net/*/address; ls /sys/class/net) > /usr/local/share/build-net
`;
    const build = {
      root: checkout,
      context: ".devcontainer",
      dockerfile,
      bases: [SANDBOX_IMAGE],
      name: repoName,
    };
    const sandbox = await new DockerSandboxProvider().create({
      sourceDir: source,
      jobId: "foreign-built",
      imageBuild: build,
    });
    try {
      expect((await sandbox.exec("tool; id -u")).output.trim()).toBe("tool from the repository\n1000");
      // The build's RUN saw only a loopback interface.
      expect((await sandbox.exec("tail -1 /usr/local/share/build-net")).output.trim()).toBe("lo");
    } finally {
      await sandbox.dispose();
    }
    await expect(
      new DockerSandboxProvider().create({
        sourceDir: source,
        jobId: "foreign-built-escape",
        imageBuild: { ...build, context: "host-etc" },
      }),
    ).rejects.toThrow("the build context host-etc is not a directory inside the repository");
  }, 600_000);

  it("an image without the tools the worker runs is refused, naming each one missing", async () => {
    const error = await new DockerSandboxProvider()
      .create({ sourceDir: source, jobId: "foreign-lacking", image: images.lacking })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "image_unsuitable", fault: "sandbox" });
    expect((error as Error).message).toBe(
      `the sandbox image ${images.lacking} lacks git, rg, which the sandbox needs`,
    );
  }, 120_000);

  it("an image with a VOLUME (writable beside the read-only root) is refused; a missing one names the worker host", async () => {
    await expect(
      new DockerSandboxProvider().create({
        sourceDir: source,
        jobId: "foreign-volume",
        image: images.volume,
      }),
    ).rejects.toThrow(`the sandbox image ${images.volume} declares VOLUME /usr/local`);
    await expect(
      new DockerSandboxProvider().create({
        sourceDir: source,
        jobId: "foreign-missing",
        image: `agent-fix-test-absent:${suffix}`,
      }),
    ).rejects.toMatchObject({ code: "image_missing" });
  }, 120_000);
});
