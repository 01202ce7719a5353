/**
 * A worker killed mid-run leaves no host checkout behind for ever: every checkout root records the
 * worker that made it, and the reaper removes those whose worker is gone, never a live worker's nor
 * a directory it cannot attribute. Real processes, really killed.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdir, mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { makeCheckoutRoot, reapCheckouts } from "../../../../../worker/run/open/work-dirs.js";

const ROOT = join(import.meta.dirname, "../../../../..");

async function holder(
  workRoot: string,
  children: ChildProcess[],
): Promise<{ child: ChildProcess; dir: string }> {
  const child = spawn(process.execPath, ["--import", "tsx", "test/support/checkout-holder.ts", workRoot], {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "inherit"],
  });
  children.push(child);
  child.stdout?.setEncoding("utf8");
  let out = "";
  const dir = await new Promise<string>((resolve, reject) => {
    child.stdout?.on("data", (chunk: string) => {
      out += chunk;
      if (out.includes("\n")) resolve(out.trim());
    });
    child.on("exit", (code) => reject(new Error(`checkout holder exited ${code}`)));
  });
  return { child, dir };
}

describe("the checkout reaper", () => {
  const children: ChildProcess[] = [];
  let workRoot = "";
  afterAll(async () => {
    for (const child of children) if (child.exitCode === null) child.kill("SIGKILL");
    await rm(workRoot, { recursive: true, force: true });
  });

  it("removes the checkout of a worker killed mid-run, and only that one", async () => {
    workRoot = await mkdtemp(join(tmpdir(), "af-work-root-"));
    const killed = await holder(workRoot, children);
    const living = await holder(workRoot, children);
    const ours = await makeCheckoutRoot(workRoot);
    // Not attributable (being made, or not a run's): left alone.
    await mkdir(join(workRoot, "agent-fix-unmarked"));
    killed.child.kill("SIGKILL");
    await once(killed.child, "exit");

    const logs: string[] = [];
    const removed = await reapCheckouts({ workRoot, log: (message) => logs.push(message) });

    expect(removed).toEqual([killed.dir]);
    expect((await readdir(workRoot)).sort()).toEqual(
      [basename(living.dir), basename(ours), "agent-fix-unmarked"].sort(),
    );
    expect(logs).toEqual([expect.stringMatching(/removed checkout .* \(worker .*:\d+ is gone\)/)]);
    // Nothing more to do the second time.
    expect(await reapCheckouts({ workRoot })).toEqual([]);
  });
});
