/**
 * A hostile setup hides a setup secret behind symlinks, replayed for real on Docker (a store of this
 * test's own): in a link's target text outside the workspace, in a file outside the kept paths linked
 * into the workspace, and in files written outside the workspace through a workspace link. Either the
 * run stops with nothing kept, or no byte of the secret is in what is kept (searched as root over the
 * whole kept image, which holds the workspace files a later run gets too).
 */
import { execFileSync } from "node:child_process";
import { mkdtemp, readlink, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { KEPT_LABEL } from "../../../../sandbox/docker/kept-environments.js";
import { DockerSandboxProvider } from "../../../../sandbox/docker/provider.js";
import { AgentFixError } from "../../../../src/shared/errors.js";
import { operatorTree } from "../../../../worker/run/checkout/trusted-tree.js";
import { prepareTree } from "../../../../worker/run/prepare/prepare-tree.js";
import { RunSandboxes } from "../../../../worker/run/prepare/run-sandboxes.js";
import { committedRepository } from "../../../support/committed-repo.js";
import { repositoryNamed } from "../../../support/repository-identity.js";
import { requireSandboxImage } from "../../../support/services.js";

const ready = await requireSandboxImage();
const STORE = `agent-fix-kept-symlinks-${process.pid}`;
const provider = new DockerSandboxProvider({ keptEnvironments: { name: STORE, maxSize: "20g" } });
const TOKEN = "npm_l1nk3d-s3cr3t-value-77";
const MARKER = "kept-marker-8c1f0e";
const roots: string[] = [];

/** A committed repository (deps/ ignored) and setup's run over it as `user`, with NPM_TOKEN set. */
async function prepare(commands: string[], repository: string) {
  const root = await mkdtemp(join(tmpdir(), "af-keep-links-"));
  roots.push(root);
  const { dir, head } = await committedRepository(root, {
    ".gitignore": "deps/\n",
    "requirements.txt": "left-pad==1\n",
  });
  const sandboxes = new RunSandboxes(provider, { jobId: "keep-links" });
  try {
    return await prepareTree({
      sandboxes,
      trusted: operatorTree(dir, head),
      root: await mkdtemp(join(root, "run-")),
      setup: { commands, network: false, timeoutMs: 120_000, user: "root" },
      secrets: { NPM_TOKEN: TOKEN },
      repository: repositoryNamed(repository),
    });
  } finally {
    await sandboxes.disposeAll();
  }
}

async function keptImages(): Promise<string[]> {
  const images = await provider.docker.listImages({
    filters: JSON.stringify({ label: [`${KEPT_LABEL.kept}=${STORE}`] }),
  });
  return images.map((image) => image.Id);
}

/**
 * All of `image` as root in one pass: "path:needle" for each file holding TOKEN or MARKER, and
 * "path -> target" for every symlink.
 */
function keptText(image: string): string {
  const script =
    'grep -rsoF -D skip --exclude-dir=proc --exclude-dir=sys --exclude-dir=dev -e "$T" -e "$M" / ;' +
    ' find / -xdev -type l -printf "%p -> %l\\n"';
  const env = ["-e", `T=${TOKEN}`, "-e", `M=${MARKER}`];
  const args = [
    "run",
    "--rm",
    "--network",
    "none",
    "-u",
    "0",
    ...env,
    "--entrypoint",
    "sh",
    image,
    "-c",
    script,
  ];
  return execFileSync("docker", args, { encoding: "utf8", maxBuffer: 64 << 20 });
}

afterAll(async () => {
  for (const id of await keptImages()) await provider.docker.getImage(id).remove({ force: true });
  for (const root of roots) await rm(root, { recursive: true, force: true });
});

describe.runIf(ready)("the keep scan and symlinks: what a hostile setup links in or out", () => {
  it("stops the run when a link outside the workspace carries the secret in its target, or setup wrote it through a workspace link", async () => {
    const before = (await keptImages()).length;
    const error = await prepare(
      [
        'ln -s "//registry.example/:_authToken=$NPM_TOKEN" /etc/npm-auth',
        'mkdir -p /opt/store && ln -s /opt/store deps && printf "%s" "$NPM_TOKEN" > deps/token',
      ],
      "octo/link-out",
    ).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(AgentFixError);
    expect(error).toMatchObject({ code: "secret_in_environment", fault: "repository" });
    expect((error as Error).message).toContain("/etc/npm-auth (NPM_TOKEN)");
    expect((error as Error).message).toContain("/opt/store/token (NPM_TOKEN)");
    expect((error as Error).message).not.toContain(TOKEN);
    expect((await keptImages()).length).toBe(before);
  }, 300_000);

  it("keeps no byte of a secret written to $HOME, /tmp or .git and linked into and out of the workspace", async () => {
    const commands = [
      'printf "%s" "$NPM_TOKEN" > /tmp/token && printf "%s" "$NPM_TOKEN" > "$HOME/.token"',
      'printf "%s" "$NPM_TOKEN" > .git/token && ln -s /workspace/.git/token /etc/npm-token',
      'mkdir -p deps && ln -s /tmp/token deps/tmp-token && ln -s "$HOME/.token" deps/home-token',
      `echo ${MARKER} > /etc/agent-fix-marker`,
    ];
    const first = await prepare(commands, "octo/link-in");
    expect(await readlink(join(first.dir, "deps/tmp-token"))).toBe("/tmp/token");
    const [image] = await keptImages();
    expect(image).toBeDefined();
    // Setup's /tmp and $HOME were tmpfs mounts and /workspace a volume: none of them is committed. The
    // image holds the kept workspace too (the links, which a later run's sandbox gets dangling).
    const kept = keptText(image ?? "");
    expect(kept).not.toContain(TOKEN);
    // The same search finds what setup did keep: a file outside the workspace, a link of the workspace.
    expect(kept).toContain(`/etc/agent-fix-marker:${MARKER}`);
    expect(kept).toContain("/var/lib/agent-fix-workspace/deps/tmp-token -> /tmp/token\n");
  }, 300_000);
});
