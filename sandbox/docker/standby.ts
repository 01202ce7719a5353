/**
 * Standby sandboxes (the run's sandboxes, warm start). After a sandbox without network or setup starts,
 * the provider starts one more like it: the same image (by name and id), limits, shell environment and
 * settings, its shells attached (and a kept environment's workspace files already in place), its main
 * process waiting for the repository. The next create() of that exact specification (the baseline's, a
 * gate's or the proof's of the same run, or the agent's of the next run) takes it and sends only the
 * checkout in, so a run's sandboxes rarely wait for a container to start. A standby has run nothing of any
 * repository: it is a fresh sandbox started early, never one a run used (a taken standby is the taker's
 * alone and is removed with it). It holds no credential (no sandbox does). A standby of a shared image
 * (the default, or one the operator allows) holds nothing of any repository; one of a kept environment
 * holds that repository's kept files, and only a sandbox asking for its very image can take it, so it
 * never crosses repositories: kept images are keyed by repository (sandbox/docker/kept-environments.ts).
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
  /**
   * Standbys of shared images too (the default image, one the operator allows), not only of kept
   * environments: every sandbox without network, setup or a repository-built image then leaves one.
   */
  sharedImages?: boolean;
}

/**
 * Standbys kept of one kind at most: after its agent's, a run asks for three of the same kind within
 * moments (the baseline's and the first gate's together, then the proof's beside that gate).
 */
export const STANDBY_PER_KIND = 3;

/** The provider's default: none (the worker asks for them: `worker.standby` of the operator's YAML). */
export const NO_STANDBY: StandbySettings = { max: 0, idleMs: 0 };

/** What a sandbox is made of, besides its name, labels and repository: equal only for equal sandboxes. */
export function standbyFingerprint(spec: {
  image: string;
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
