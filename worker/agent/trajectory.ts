/**
 * The trajectory file: rewritten whole after every step (write to a temp file, then rename), so a crash
 * leaves a readable file with everything up to the crash. Field names follow SWE-agent's `.traj`.
 */
import { mkdir, rename, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import type { Trajectory } from "../../src/contracts.js";

export class TrajectoryRecorder {
  private pending: Promise<void> = Promise.resolve();

  constructor(
    readonly trajectory: Trajectory,
    readonly path: string | undefined,
  ) {}

  /** Saves the current state; saves are serialised so an older one never lands after a newer one. */
  save(): Promise<void> {
    const path = this.path;
    if (!path) return Promise.resolve();
    const text = `${JSON.stringify(this.trajectory, null, 2)}\n`;
    this.pending = this.pending.then(async () => {
      await mkdir(dirname(path), { recursive: true });
      const temp = `${path}.${process.pid}.tmp`;
      await writeFile(temp, text, "utf8");
      await rename(temp, path);
    });
    return this.pending;
  }
}
