import { defineConfig } from "vitest/config";
import { LongestFirst } from "./test/support/longest-first.js";

/**
 * Files at once: 2 by default, the CI machine's cores (TEST_WORKERS=N for another machine). The three
 * projects share one pool of workers so that they run side by side, longest file first
 * (test/support/longest-first.ts); `--project unit` (or 'integration*', 'e2e*') runs one alone, and
 * `npm run test:changed` what a change touches (scripts/test-changed.ts).
 */
const workers = Number(process.env.TEST_WORKERS ?? 2);
if (!Number.isInteger(workers) || workers < 1)
  throw new Error(
    `TEST_WORKERS=${process.env.TEST_WORKERS} is not a whole number of workers: set e.g. TEST_WORKERS=2`,
  );

/**
 * Files that leave their process holding much more memory than they found it, which every later spawn
 * of that process pays for: Node 20 spawns with fork(), and the kernel copies the page tables of the
 * whole process while the event loop waits. `bounded-receipt` streams archives up to its caps (64-256
 * MiB) through the worker in the test's process: the process went from 240 to 425 MB during it and
 * stayed there, and a spawn there cost 30-50 ms after it against 9-15 ms before (docs/testing.md).
 * `declared-toolchain` moves setup's 330 MB Go cache through it, from 153 to 840-900 MB, its spawns
 * 60-230 ms: as the second longest file it ran first on one of the two workers, which then ran a
 * hundred files at that size. `registry-projects`, the longest, took the other from 154 to 340-377 MB.
 */
const HEAVY = [
  "test/e2e/bounded-receipt.test.ts",
  "test/e2e/declared-toolchain.test.ts",
  "test/e2e/registry-projects.test.ts",
];

/**
 * Files that need a process of their own, as vitest gives every file by default: each depends on what
 * its process did before it. `throttle-redis`: @octokit/plugin-throttling builds its limiters once a
 * process, so an earlier file's app would have built them without Redis. `health`: its workers' stop
 * hung past the hook's 120 s once after other files in its process. `metrics` (its worker in the test's
 * process): the peak resident memory read below the resident memory an earlier scrape read, once,
 * after other files in its process. And HEAVY's, above. Their projects are `integration-own-process` and
 * `e2e-own-process`.
 */
const OWN_PROCESS = [
  "test/integration/src/server/throttle-redis.test.ts",
  "test/integration/worker/health.test.ts",
  "test/e2e/metrics.test.ts",
  ...HEAVY,
];

/** What the two e2e projects share: the whole product against the stand-ins, and faults injected. */
const e2e = {
  // The sources built once for the workers these files spawn (test/support/built-sources.ts).
  globalSetup: ["test/support/global-setup.ts"],
};

export default defineConfig({
  test: {
    // Integration and e2e tests start containers; two cores on CI machines.
    testTimeout: 60_000,
    hookTimeout: 120_000,
    maxWorkers: workers,
    reporters: ["default"],
    sequence: { sequencer: LongestFirst },
    // Modules as vite transformed them, kept between runs (keyed by each file's text and the config, so
    // never stale): a run after the first skips most of the transform and half the import time. In
    // .test-build/ (gitignored), not node_modules/, which worktrees may share.
    experimental: { fsModuleCache: true, fsModuleCachePath: ".test-build/vitest-modules" },
    // One process per worker for all its files (`isolate: false`), not one per file: the product's
    // modules load once a worker, not once a file (the unit project: import 32 s -> 7 s of file time,
    // 65 s -> 20 s; docs/testing.md). OWN_PROCESS's files keep vitest's process a file.
    projects: [
      { extends: true, test: { name: "unit", include: ["test/unit/**/*.test.ts"], isolate: false } },
      {
        extends: true,
        test: {
          name: "integration",
          include: ["test/integration/**/*.test.ts"],
          exclude: OWN_PROCESS,
          isolate: false,
        },
      },
      {
        extends: true,
        test: {
          name: "integration-own-process",
          include: OWN_PROCESS.filter((f) => f.startsWith("test/integration/")),
        },
      },
      {
        extends: true,
        test: {
          name: "e2e",
          include: ["test/e2e/**/*.test.ts", "test/faults/**/*.test.ts"],
          exclude: OWN_PROCESS,
          isolate: false,
          ...e2e,
        },
      },
      {
        extends: true,
        test: {
          name: "e2e-own-process",
          include: OWN_PROCESS.filter((f) => !f.startsWith("test/integration/")),
          ...e2e,
        },
      },
    ],
  },
});
