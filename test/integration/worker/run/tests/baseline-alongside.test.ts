/**
 * The baseline's sandbox and the first gate's (and its proof's) start together, once the agent's is up:
 * with a quick agent (a replay, a one-line fix) the gate no longer waits for two starts in series.
 */
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { LocalSandboxProvider } from "../../../../../sandbox/local.js";
import type { Sandbox, SandboxCreateOptions } from "../../../../../src/shared/contracts.js";
import { RunSandboxes } from "../../../../../worker/run/prepare/run-sandboxes.js";
import { startBaselineAlongside } from "../../../../../worker/run/tests/baseline-alongside.js";
import { preparedSample } from "../../../../support/prepared-sample.js";

const SAMPLE = join(import.meta.dirname, "../../../../fixtures/sample-repo");
const TEST = { command: "python3 -m unittest discover -s tests", timeoutMs: 60_000 };

/** The local driver, its starts held until released: which ones were asked for, and when. */
class HeldStarts extends LocalSandboxProvider {
  readonly asked: string[] = [];
  private open: Promise<void> = Promise.resolve();
  private release: () => void = () => {};
  hold(): void {
    this.open = new Promise((resolve) => {
      this.release = resolve;
    });
  }
  letGo(): void {
    this.release();
  }
  override async create(options: SandboxCreateOptions): Promise<Sandbox> {
    this.asked.push(options.sourceDir);
    await this.open;
    return super.create(options);
  }
}

describe("the baseline alongside the agent", () => {
  const provider = new HeldStarts({ warn: () => {} });
  const sandboxes = new RunSandboxes(provider, { jobId: "baseline-alongside" });
  let root = "";
  afterAll(async () => {
    provider.letGo(); // a failed expectation left starts held
    await sandboxes.disposeAll();
    if (root) await rm(root, { recursive: true, force: true });
  });

  /** The baseline started on the sample with `spares`, its starts held: what it asked for at once. */
  async function started(spares?: number) {
    const sample = await preparedSample(sandboxes, { source: SAMPLE, test: TEST, prefix: "af-alongside-" });
    root = sample.root;
    const dir = sample.gateSetup.prepared.dir;
    const before = provider.asked.length;
    provider.hold();
    const baseline = startBaselineAlongside({
      sandboxes,
      dir,
      test: TEST,
      signal: new AbortController().signal,
      stopsRun: () => null,
      ...(spares ? { spares } : {}),
    });
    const askedAtOnce = provider.asked.slice(before);
    provider.letGo();
    return { dir, baseline, askedAtOnce, askedSince: () => provider.asked.slice(before) };
  }

  it("asks for the first gate's sandbox with the baseline's, and the gate takes it", async () => {
    const { dir, baseline, askedAtOnce, askedSince } = await started();
    // Both asked for before either has started.
    expect(askedAtOnce).toEqual([dir, dir]);
    expect((await baseline.settled).passed).toBe(true);
    // The gate's sandbox is that spare: no third start.
    const ran = await sandboxes.using(dir, (sandbox) => sandbox.exec("echo gate"));
    expect(ran.output.trim()).toBe("gate");
    expect(askedSince()).toHaveLength(2);
  });

  it("with two spares, the first gate's and its proof's sandboxes both start with the baseline's", async () => {
    const { dir, baseline, askedAtOnce, askedSince } = await started(2);
    expect(askedAtOnce).toEqual([dir, dir, dir]);
    expect((await baseline.settled).passed).toBe(true);
    // The gate and the proof beside it take the two: nothing more starts.
    const [gate, proof] = await Promise.all([
      sandboxes.using(dir, (sandbox) => sandbox.exec("echo gate")),
      sandboxes.using(dir, (sandbox) => sandbox.exec("echo proof")),
    ]);
    expect([gate.output.trim(), proof.output.trim()]).toEqual(["gate", "proof"]);
    expect(askedSince()).toHaveLength(3);
    // Asked for two again: two start; asked once more, none (two wait already).
    sandboxes.prewarm(dir, 2);
    sandboxes.prewarm(dir, 2);
    expect(askedSince()).toHaveLength(5);
  });
});
