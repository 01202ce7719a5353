/**
 * A hostile setup hides a setup secret behind symlinks, replayed for real on Docker (a store of this
 * test's own): in a link's target text outside the workspace, in a file outside the kept paths linked
 * into the workspace, and in files written outside the workspace through a workspace link. Either the
 * run stops with nothing kept, or no byte of the secret is in what is kept (searched over the whole kept
 * image as root, and in the workspace a later run gets).
 */
import { execFileSync } from "node:child_process";
import { mkdtemp, readlink, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { DockerSandboxProvider } from "../../sandbox/docker.js";
import { KEPT_LABEL } from "../../sandbox/docker-environments.js";
import { AgentFixError } from "../../src/errors.js";
import { prepareTree } from "../../worker/pipeline/prepare.js";
import { RunSandboxes } from "../../worker/pipeline/sandbox.js";
import { requireSandboxImage } from "../support/services.js";

const ready = await requireSandboxImage();
const STORE = `agent-fix-kept-symlinks-${process.pid}`;
const provider = new DockerSandboxProvider({ keptEnvironments: { name: STORE, maxSize: "20g" } });
const TOKEN = "npm_l1nk3d-s3cr3t-value-77";
const roots: string[] = [];

/** A committed repository (deps/ ignored) and setup's run over it as `user`, with NPM_TOKEN set. */
async function prepare(commands: string[], repository: string) {
  const root = await mkdtemp(join(tmpdir(), "af-keep-links-"));
  roots.push(root);
  const dir = join(root, "repo");
  execFileSync("mkdir", ["-p", dir]);
  await writeFile(join(dir, ".gitignore"), "deps/\n");
  await writeFile(join(dir, "requirements.txt"), "left-pad==1\n");
  const git = (...args: string[]) =>
    execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@x", ...args], { cwd: dir });
  git("init", "-q", "-b", "main");
  git("add", ".");
  git("commit", "-qm", "c");
  const sandboxes = new RunSandboxes(provider, { jobId: "keep-links" });
  try {
    return await prepareTree({
      sandboxes,
      checkoutDir: dir,
      headSha: git("rev-parse", "HEAD").toString().trim(),
      root: await mkdtemp(join(root, "run-")),
      setup: { commands, network: false, timeoutMs: 120_000, user: "root" },
      secrets: { NPM_TOKEN: TOKEN },
      repository,
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

/** The files of `image` (as root, every file system of the image) holding TOKEN, and links naming it. */
function tokenIn(image: string): string {
  const search =
    `grep -rlsF -D skip --exclude-dir=proc --exclude-dir=sys --exclude-dir=dev -e "$T" / ;` +
    ` find / -xdev -type l -lname "*$T*" -print`;
  return execFileSync(
    "docker",
    [
      "run",
      "--rm",
      "--network",
      "none",
      "-u",
      "0",
      "-e",
      `T=${TOKEN}`,
      "--entrypoint",
      "sh",
      image,
      "-c",
      search,
    ],
    { encoding: "utf8" },
  ).trim();
}

afterAll(async () => {
  for (const id of await keptImages()) await provider.docker.getImage(id).remove({ force: true });
  for (const root of roots) await rm(root, { recursive: true, force: true });
});

describe.runIf(ready)("the keep scan and symlinks: what a hostile setup links in or out", () => {
  it("stops the run when a link outside the workspace carries the secret in its target", async () => {
    const before = (await keptImages()).length;
    const error = await prepare(
      ['ln -s "//registry.example/:_authToken=$NPM_TOKEN" /etc/npm-auth', "mkdir -p deps && echo x > deps/x"],
      "octo/link-target",
    ).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(AgentFixError);
    expect(error).toMatchObject({ code: "secret_in_environment", fault: "repository" });
    expect((error as Error).message).toContain("/etc/npm-auth (NPM_TOKEN)");
    expect((error as Error).message).not.toContain(TOKEN);
    expect((await keptImages()).length).toBe(before);
  }, 300_000);

  it("stops the run when setup writes through a workspace link to a directory outside it", async () => {
    const error = await prepare(
      ["mkdir -p /opt/store && ln -s /opt/store deps", 'printf "%s" "$NPM_TOKEN" > deps/token'],
      "octo/link-out",
    ).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: "secret_in_environment", fault: "repository" });
    expect((error as Error).message).toContain("/opt/store/token (NPM_TOKEN)");
  }, 300_000);

  it("keeps no byte of a secret written to $HOME, /tmp or .git and linked into and out of the workspace", async () => {
    const commands = [
      'printf "%s" "$NPM_TOKEN" > /tmp/token && printf "%s" "$NPM_TOKEN" > "$HOME/.token"',
      'printf "%s" "$NPM_TOKEN" > .git/token && ln -s /workspace/.git/token /etc/npm-token',
      'mkdir -p deps && ln -s /tmp/token deps/tmp-token && ln -s "$HOME/.token" deps/home-token',
    ];
    const first = await prepare(commands, "octo/link-in");
    expect(await readlink(join(first.dir, "deps/tmp-token"))).toBe("/tmp/token");
    const [image] = await keptImages();
    expect(image).toBeDefined();
    // Setup's /tmp and $HOME were tmpfs mounts and /workspace a volume: none of them is committed.
    expect(tokenIn(image ?? "")).toBe("");

    // A later run: the links come back with the workspace, dangling in its sandbox.
    const second = await prepare(commands, "octo/link-in");
    expect(second.reused).toBeDefined();
    const sandboxes = new RunSandboxes(provider, { jobId: "keep-links", image: second.reused?.image ?? "" });
    try {
      const agent = await sandboxes.start(second.dir);
      const read = await agent.exec("cat deps/tmp-token deps/home-token /etc/npm-token 2>&1; echo end", {
        timeoutMs: 30_000,
      });
      expect(read.output).not.toContain(TOKEN);
      expect(read.output).toContain("No such file or directory");
    } finally {
      await sandboxes.disposeAll();
    }
  }, 300_000);
});
