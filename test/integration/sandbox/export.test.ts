import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, readlink, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DockerSandboxProvider } from "../../../sandbox/docker/provider.js";
import { LocalSandboxProvider } from "../../../sandbox/local.js";
import type { Sandbox, SandboxProvider } from "../../../src/shared/contracts.js";
import {
  DEFAULT_INTAKE_LIMITS,
  extractArchive,
  workspaceLimits,
} from "../../../worker/run/prepare/workspace-archive.js";
import { requireSandboxImage } from "../../support/services.js";

// exportWorkspace on both drivers, read back through the pipeline's safe extraction.
const docker = await requireSandboxImage();

const targets: [string, () => SandboxProvider, boolean][] = [
  ["docker", () => new DockerSandboxProvider(), docker],
  ["local", () => new LocalSandboxProvider({ warn: () => {} }), true],
];

describe.each(targets)("%s driver: exportWorkspace", (name, provider, available) => {
  let root: string;
  let sandbox: Sandbox;

  beforeAll(async () => {
    if (!available) return;
    root = await mkdtemp(join(tmpdir(), "af-export-"));
    const source = join(root, "source");
    await mkdir(join(source, ".git"), { recursive: true });
    await writeFile(join(source, ".git/config"), "[core]\n");
    await writeFile(join(source, "a.txt"), "a\n");
    sandbox = await provider().create({ sourceDir: source, jobId: "export-test" });
  });
  afterAll(async () => {
    await sandbox?.dispose();
    if (root) await rm(root, { recursive: true, force: true });
  });

  it.runIf(available)(
    "exports files, symlinks and hard links as files; never .git or an excluded directory",
    async () => {
      const made = await sandbox.exec(
        "mkdir -p sub/node_modules/x deep/.git && echo b > sub/b.txt && ln sub/b.txt hard.txt && ln -s a.txt link " +
          "&& echo x > sub/node_modules/x/i.js && echo y > deep/.git/HEAD",
      );
      expect(made.exitCode).toBe(0);
      const out = join(root, `out-${Math.random().toString(36).slice(2)}`);
      await mkdir(out);
      await extractArchive(
        await sandbox.exportWorkspace({ excludeDirs: ["node_modules"] }),
        out,
        workspaceLimits(DEFAULT_INTAKE_LIMITS),
      );
      expect(await readFile(join(out, "a.txt"), "utf8")).toBe("a\n");
      expect(await readFile(join(out, "sub/b.txt"), "utf8")).toBe("b\n");
      expect(await readFile(join(out, "hard.txt"), "utf8")).toBe("b\n");
      expect(await readlink(join(out, "link"))).toBe("a.txt");
      expect(existsSync(join(out, ".git"))).toBe(false);
      expect(existsSync(join(out, "deep/.git"))).toBe(false);
      expect(existsSync(join(out, "sub/node_modules"))).toBe(false);
    },
  );

  // The local driver runs as this user, who may be root and read anything.
  if (name === "docker")
    it.runIf(available)("fails with export_failed when a file cannot be read", async () => {
      expect((await sandbox.exec("echo s > secret.txt && chmod 000 secret.txt")).exitCode).toBe(0);
      const out = join(root, "unreadable");
      await mkdir(out);
      await expect(
        extractArchive(await sandbox.exportWorkspace(), out, workspaceLimits(DEFAULT_INTAKE_LIMITS)),
      ).rejects.toMatchObject({
        code: "export_failed",
      });
      await sandbox.exec("chmod 644 secret.txt");
    });
});
