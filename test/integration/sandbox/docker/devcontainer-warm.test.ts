/**
 * Warm start of a repository whose devcontainer builds its image (`build.dockerfile`), for real on
 * Docker: the worker builds the image from each run's checkout, and a second run of the same repository
 * with the same Dockerfile finds the environment the first one kept (the kept step images give the
 * same image); another Dockerfile prepares anew.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { KEPT_LABEL } from "../../../../sandbox/docker/kept-environments.js";
import { DockerSandboxProvider } from "../../../../sandbox/docker/provider.js";
import { SANDBOX_IMAGE } from "../../../../sandbox/version.js";
import { operatorTree } from "../../../../worker/run/checkout/trusted-tree.js";
import { prepareTree } from "../../../../worker/run/prepare/prepare-tree.js";
import { RunSandboxes } from "../../../../worker/run/prepare/run-sandboxes.js";
import { committedRepository } from "../../../support/committed-repo.js";
import { repositoryNamed } from "../../../support/repository-identity.js";
import { requireSandboxImage } from "../../../support/services.js";

const ready = await requireSandboxImage();
const STORE = `agent-fix-kept-devcontainer-${process.pid}`;
const REPOSITORY = `octo/devcontainer-warm-${process.pid}`;
const provider = new DockerSandboxProvider({ keptEnvironments: { name: STORE, maxSize: "20g" } });
const roots: string[] = [];

/** The Dockerfile's text: a label of this test's own, so that no other build shares its image. */
const dockerfile = (tool: string) =>
  `FROM ${SANDBOX_IMAGE}\nLABEL agent-fix.test.devcontainer="${process.pid}" devtool="${tool}"\n`;

/** One run: a commit of the repository with `app`, its image built from `tool`'s Dockerfile, then setup. */
async function run(app: string, tool: string) {
  const root = await mkdtemp(join(tmpdir(), "af-devcontainer-warm-"));
  roots.push(root);
  const text = dockerfile(tool);
  const files = { ".gitignore": "deps/\n", "app.txt": app, ".devcontainer/Dockerfile": text };
  const { dir, head } = await committedRepository(root, files);
  const sandboxes = new RunSandboxes(provider, {
    jobId: "devcontainer-warm",
    imageBuild: {
      root: dir,
      context: ".devcontainer",
      dockerfile: text,
      bases: [SANDBOX_IMAGE],
      name: REPOSITORY,
    },
  });
  try {
    return await prepareTree({
      sandboxes,
      trusted: operatorTree(dir, head),
      root: await mkdtemp(join(root, "run-")),
      setup: {
        commands: ["mkdir -p deps && date +%s%N > deps/stamp"],
        network: false,
        timeoutMs: 120_000,
        user: "agent",
      },
      secrets: {},
      repository: repositoryNamed(REPOSITORY),
    });
  } finally {
    await sandboxes.disposeAll();
  }
}

afterAll(async () => {
  const kept = await provider.docker.listImages({
    filters: JSON.stringify({ label: [`${KEPT_LABEL.kept}=${STORE}`] }),
  });
  for (const image of kept) await provider.docker.getImage(image.Id).remove({ force: true });
  const built = await provider.docker.listImages({
    filters: JSON.stringify({ label: [`agent-fix.test.devcontainer=${process.pid}`] }),
  });
  for (const image of built)
    await provider.docker
      .getImage(image.Id)
      .remove({ force: true })
      .catch(() => {});
  for (const root of roots) await rm(root, { recursive: true, force: true });
});

describe.runIf(ready)("warm start of a devcontainer's build.dockerfile", () => {
  it("a second run with the same Dockerfile reuses the kept environment; another Dockerfile prepares anew", async () => {
    // The other Dockerfile's run shares no image and no key with the first two: it runs beside them.
    const [stamp, changed] = await Promise.all([
      (async () => {
        const first = await run("v1\n", "one");
        expect(first.reused).toBeUndefined();
        const stamp = await readFile(join(first.dir, "deps/stamp"), "utf8");

        const second = await run("v2\n", "one");
        expect(second.reused?.preparedAt).toBeInstanceOf(Date);
        expect(await readFile(join(second.dir, "deps/stamp"), "utf8")).toBe(stamp);
        expect(await readFile(join(second.dir, "app.txt"), "utf8")).toBe("v2\n");
        return stamp;
      })(),
      run("v2\n", "two"),
    ]);
    expect(changed.reused).toBeUndefined();
    expect(await readFile(join(changed.dir, "deps/stamp"), "utf8")).not.toBe(stamp);
    // Each Dockerfile's image is one, labelled with the repository that built it.
    const built = await provider.docker.listImages({
      filters: JSON.stringify({ label: [`agent-fix.build.repository=${REPOSITORY}`] }),
    });
    const steps = built.filter((i) => i.RepoTags?.some((t) => t.startsWith("agent-fix-build:")));
    expect(steps.map((i) => i.Labels?.devtool).sort()).toEqual(["one", "two"]);
  }, 300_000);
});
