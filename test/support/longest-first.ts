/**
 * The suite's order (vitest.config.ts `sequence.sequencer`): the longest files first, whatever their
 * project, so that the last file to start is a short one and no worker idles while one long file ends
 * the run (vitest's own order puts the projects one after the other, and on a fresh checkout, with no
 * cache of earlier runs, larger files first: the 200 s e2e files would start last). A file's length is
 * its duration in this machine's last run (vitest's cache, node_modules/.vite/vitest) when there was
 * one, else the one in test/durations.json (a CI run's, refreshed by `npm run test:durations`), else 0:
 * a new file starts after every known one.
 */
import { readFileSync } from "node:fs";
import { relative } from "node:path";
import { BaseSequencer, type TestSpecification, type Vitest } from "vitest/node";

const RECORDED: Record<string, number> = JSON.parse(
  readFileSync(new URL("../durations.json", import.meta.url), "utf8"),
);

/** What a test file took last time, in ms: on this machine, else in the recorded CI run, else 0. */
export function fileDuration(vitest: Vitest, spec: TestSpecification): number {
  const path = relative(vitest.config.root, spec.moduleId);
  return vitest.cache.getFileTestResults(`${spec.project.name}:${path}`)?.duration ?? RECORDED[path] ?? 0;
}

export class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const lengths = new Map(files.map((spec) => [spec, fileDuration(this.ctx, spec)]));
    return [...files].sort((a, b) => (lengths.get(b) ?? 0) - (lengths.get(a) ?? 0));
  }
}
