/**
 * The trajectory file: rewritten whole after every step (write to a temp file, then rename), so a crash
 * leaves a readable file with everything up to the crash. Field names follow SWE-agent's `.traj`.
 */
import { createHash } from "node:crypto";
import { mkdir, rename, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import type {
  Environment,
  Model,
  SandboxOrigin,
  Trajectory,
  TrajectoryInfo,
} from "../../src/shared/contracts.js";
import type { AgentConfig } from "../config/agent.js";

/** Where else a trajectory goes after each save (the deployment's store); it handles its own errors. */
export type TrajectorySink = (snapshot: Trajectory) => Promise<void>;

export class TrajectoryRecorder {
  private pending: Promise<void> = Promise.resolve();

  constructor(
    readonly trajectory: Trajectory,
    readonly path: string | undefined,
    readonly sink?: TrajectorySink,
  ) {}

  /** Saves the current state; saves are serialised so an older one never lands after a newer one. */
  save(): Promise<void> {
    const { path, sink } = this;
    if (!path && !sink) return Promise.resolve();
    const text = `${JSON.stringify(this.trajectory, null, 2)}\n`;
    this.pending = this.pending.then(async () => {
      if (path) {
        await mkdir(dirname(path), { recursive: true });
        const temp = `${path}.${process.pid}.tmp`;
        await writeFile(temp, text, "utf8");
        await rename(temp, path);
      }
      await sink?.(JSON.parse(text) as Trajectory);
    });
    return this.pending;
  }
}

/** The info of a run that is starting: what produced it, and no outcome yet. */
export function startingInfo(options: {
  model: Model;
  env: Environment;
  config: AgentConfig;
  startedAt: number;
  sandboxImage?: string | undefined;
  sandboxOrigin?: SandboxOrigin | undefined;
  configHash?: string | undefined;
  info?: Record<string, unknown> | undefined;
}): TrajectoryInfo {
  const { model, env, config } = options;
  const origin = options.sandboxOrigin;
  return {
    exit_status: null,
    submission: null,
    model_stats: { tokens_sent: 0, tokens_received: 0, api_calls: 0, instance_cost: 0 },
    gate: [],
    model: model.name,
    config_hash: options.configHash ?? hashOf(config),
    tool_bundle: env.bundle,
    aci_version: env.version,
    // The image as named, not a kept environment's tag: that one is deleted when the environment is evicted.
    sandbox_image: origin?.image ?? options.sandboxImage ?? "unknown",
    ...(origin ? { sandbox_image_id: origin.imageId, kept_environment: keptEnvironment(origin) } : {}),
    started_at: new Date(options.startedAt).toISOString(),
    finished_at: null,
    action_format: config.actionFormat,
    history_processor: config.history.processor,
    ...(model.costNote ? { cost_note: model.costNote } : {}),
    ...options.info,
  };
}

function keptEnvironment({ kept }: SandboxOrigin): NonNullable<TrajectoryInfo["kept_environment"]> | null {
  return kept && { image: kept.image, key: kept.key, prepared_at: kept.preparedAt };
}

function hashOf(value: unknown): string {
  return createHash("sha256").update(JSON.stringify(value)).digest("hex").slice(0, 16);
}
