/**
 * Cleanup of the images the worker builds (real Docker): a devcontainer image a later build replaced,
 * a derived image whose source is gone and tagged ones beyond the newest kept go; an image without the
 * worker's label, one a container uses and one younger than the minimum age stay; a pass removes at
 * most its bound. The images are built here (labels only, no network) with a label of this run, which
 * the cleanup is also given: other work on the shared engine is never looked at.
 */
import { setTimeout as sleep } from "node:timers/promises";
import Docker from "dockerode";
import { pack } from "tar-stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BUILT_LABEL } from "../../../../sandbox/docker/build.js";
import { DERIVED_FROM_LABEL } from "../../../../sandbox/docker/foreign-image.js";
import { cleanWorkerImages } from "../../../../sandbox/docker/image-cleanup.js";
import { requireSandboxImage } from "../../../support/services.js";

const BASE = "agent-fix-base:bookworm";
const ready = await requireSandboxImage(BASE);
const docker = new Docker();
const run = `${process.pid}-${Date.now()}`;
const RUN_LABEL = `agent-fix.test-run=${run}`;

/** Builds an image FROM the base with these labels (and this run's); returns its id. */
async function build(tag: string, labels: Record<string, string>): Promise<string> {
  // The tag in a label too: two builds of equal labels would be one image (the build cache).
  const all = { ...labels, "agent-fix.test-run": run, "agent-fix.test-tag": tag };
  const context = pack();
  context.entry(
    { name: "Dockerfile" },
    `FROM ${BASE}\n${Object.entries(all)
      .map(([k, v]) => `LABEL ${k}="${v}"`)
      .join("\n")}\n`,
  );
  context.finalize();
  const stream = await docker.buildImage(context as unknown as NodeJS.ReadableStream, {
    t: tag,
    networkmode: "none",
    pull: false,
  });
  await new Promise((resolve, reject) =>
    docker.modem.followProgress(stream, (e, r) => (e ? reject(e) : resolve(r))),
  );
  return (await docker.getImage(tag).inspect()).Id;
}

describe.runIf(ready)("cleanup of the images the worker built", () => {
  const ids: Record<string, string> = {};
  let container: Docker.Container | undefined;

  beforeAll(async () => {
    const base = (await docker.getImage(BASE).inspect()).Id;
    // A repository image rebuilt: the first build is dangling.
    ids.replaced = await build(`agent-fix-repo-test:${run}`, { [BUILT_LABEL]: "repo", v: "1" });
    ids.rebuilt = await build(`agent-fix-repo-test:${run}`, { [BUILT_LABEL]: "repo", v: "2" });
    // The rebuilt one is the oldest tagged image of the worker's (Created has 1 s steps): beyond keep = 3.
    await sleep(1100);
    // The same, but a container still uses the first build.
    ids.inUse = await build(`agent-fix-repo-test:used-${run}`, { [BUILT_LABEL]: "repo", v: "1" });
    container = await docker.createContainer({
      Image: ids.inUse,
      Cmd: ["true"],
      Labels: { "agent-fix.test-run": run },
    });
    await build(`agent-fix-repo-test:used-${run}`, { [BUILT_LABEL]: "repo", v: "2" });
    // Dangling too, but not the worker's (no BUILT_LABEL).
    ids.foreign = await build(`agent-fix-other-test:${run}`, { v: "1" });
    await build(`agent-fix-other-test:${run}`, { v: "2" });
    // A derived image whose source image is gone.
    ids.orphan = await build(`agent-fix-derived-test:orphan-${run}`, {
      [BUILT_LABEL]: "derived",
      [DERIVED_FROM_LABEL]: `sha256:${"0".repeat(64)}`,
    });
    // Two derived images of an image that exists: among the newest three tagged, kept.
    ids.derivedA = await build(`agent-fix-derived-test:a-${run}`, {
      [BUILT_LABEL]: "derived",
      [DERIVED_FROM_LABEL]: base,
      n: "1",
    });
    ids.derivedB = await build(`agent-fix-derived-test:b-${run}`, {
      [BUILT_LABEL]: "derived",
      [DERIVED_FROM_LABEL]: base,
      n: "2",
    });
  }, 300_000);

  afterAll(async () => {
    await container?.remove({ force: true }).catch(() => undefined);
    for (const image of await docker.listImages({ all: true, filters: { label: [RUN_LABEL] } }))
      await docker
        .getImage(image.Id)
        .remove({ force: true })
        .catch(() => undefined);
  }, 120_000);

  it("removes only old, unneeded images of the worker's, at most the bound a pass", async () => {
    // Tagged images of the worker's: the rebuilt repository image, the used one's rebuild, the two derived.
    const options = { labels: [RUN_LABEL], keep: 3 };
    // Every one of them is younger than the default minimum age (an hour).
    expect(await cleanWorkerImages(options)).toEqual([]);

    const aged = { ...options, minAgeMs: 0 };
    const expected = [ids.replaced, ids.orphan, ids.rebuilt].sort();
    const first = await cleanWorkerImages({ ...aged, maxRemovals: 1 });
    expect(first).toHaveLength(1);
    expect(expected).toContain(first[0]);
    const rest = await cleanWorkerImages({ ...aged, maxRemovals: 10 });
    expect([...first, ...rest].sort()).toEqual(expected);

    const left = (await docker.listImages({ all: true, filters: { label: [RUN_LABEL] } })).map((i) => i.Id);
    for (const kept of [ids.inUse, ids.foreign, ids.derivedA, ids.derivedB]) expect(left).toContain(kept);
    for (const gone of expected) expect(left).not.toContain(gone);
    // Nothing more to do.
    expect(await cleanWorkerImages(aged)).toEqual([]);
  }, 120_000);
});
