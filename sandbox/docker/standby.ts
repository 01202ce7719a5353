/**
 * Standby sandboxes of kept environments (warm start, the run's prepare step). After a sandbox of a
 * kept environment's image starts, the provider starts one more like it: the same image (by id), limits,
 * shell environment and settings, its shells attached and the kept workspace files already in place, its
 * main process waiting for the repository. The next create() of that exact specification (the baseline's
 * or a gate's of the same run, or the agent's of the repository's next run) takes it and sends only the
 * checkout in. A standby has run nothing of any repository: it is a fresh sandbox started early. It holds
 * no credential (no sandbox does), and only a sandbox asking for its very image can take it, so it never
 * crosses repositories: kept images are keyed by repository (sandbox/docker/kept-environments.ts).
 */
import { createHash } from "node:crypto";
import type { SandboxLimits } from "../../src/shared/contracts.js";
import type { SessionSandboxSettings } from "../session-sandbox.js";
import type { DockerSandbox } from "./sandbox.js";
import type { StartedSandbox } from "./start.js";

/** The `agent-fix.job` label of a standby: it belongs to no job until one takes it. */
export const STANDBY_JOB = "standby";

export interface StandbySettings {
  /** How many standbys a worker keeps at most (0: none). */
  max: number;
  /** A standby not taken in this time is removed. */
  idleMs: number;
}

/** The provider's default: none (the worker asks for them: `worker.standby` of the operator's YAML). */
export const NO_STANDBY: StandbySettings = { max: 0, idleMs: 0 };

/** What a sandbox is made of, besides its name, labels and repository: equal only for equal sandboxes. */
export function standbyFingerprint(spec: {
  imageId: string;
  limits: SandboxLimits;
  env: string[];
  settings: SessionSandboxSettings;
}): string {
  return createHash("sha256").update(JSON.stringify(spec)).digest("hex");
}

/**
 * The standby's sandbox with `sourceDir` copied in, or null when it cannot take it (its container ended
 * while it waited: the engine restarted, say), in which case it is removed and the caller starts afresh.
 */
export async function fillStandby(standby: StartedSandbox, sourceDir: string): Promise<DockerSandbox | null> {
  const began = performance.now();
  try {
    await standby.channel.send(sourceDir);
  } catch {
    await standby.dispose().catch(() => undefined);
    return null;
  }
  const copied = Math.round((performance.now() - began) * 10) / 10;
  standby.sandbox.startupPhases = { standby: 0, copied, ready: copied };
  return standby.sandbox;
}
