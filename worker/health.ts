/**
 * The worker's /healthz checks: what a run needs before it can start. The Docker engine answers, the
 * default sandbox image is on it (on each engine, when there are several), Redis answers. Each check is bounded in time so a hung dependency
 * reads as down rather than hanging the probe.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type Docker from "dockerode";

/** `down`: refused, failed or no answer within 5 s (a hung engine or Redis is as good as down). */
export type CheckState = "ok" | "down" | "missing" | "not_used";

export interface HealthReport {
  status: "ok" | "degraded";
  docker: CheckState;
  /** The default sandbox image (AGENT_FIX_SANDBOX_IMAGE or the slim image). */
  sandboxImage: CheckState;
  image: string | null;
  redis: CheckState;
  /** Each engine's checks, when there are several (AGENT_FIX_DOCKER_HOSTS). */
  engines?: { name: string; docker: CheckState; sandboxImage: CheckState }[];
}

interface HealthDeps {
  /** The engines the sandboxes run on (AGENT_FIX_DOCKER_HOSTS, else this host's); absent with the local driver. */
  docker?: { engines: readonly { name: string; engine: Docker }[]; image: string } | undefined;
  /** The worker's Redis client: not `ready` (reconnecting) reads as down at once, without a ping that would wait. */
  redis: { status?: string; ping(): Promise<unknown> };
}

// Long enough for an engine or a Redis busy with a host full of sandboxes, short of the HEALTHCHECK's 30 s.
const CHECK_TIMEOUT_MS = 5_000;

async function bounded(check: () => Promise<CheckState>): Promise<CheckState> {
  return Promise.race([check(), sleep(CHECK_TIMEOUT_MS, "down" as const, { ref: false })]);
}

/** One engine's checks: it answers, the default sandbox image is on it. */
async function engineHealth(
  engine: Docker,
  image: string,
): Promise<{ docker: CheckState; sandboxImage: CheckState }> {
  const docker = await bounded(() =>
    engine.ping().then(
      () => "ok" as const,
      () => "down" as const,
    ),
  );
  const sandboxImage: CheckState =
    docker !== "ok"
      ? "down"
      : await bounded(() =>
          engine
            .getImage(image)
            .inspect()
            .then(
              () => "ok" as const,
              (err: { statusCode?: number }) => (err.statusCode === 404 ? "missing" : "down"),
            ),
        );
  return { docker, sandboxImage };
}

/** The first state that is not ok, so one engine down or without the image reads as degraded. */
const worst = (states: CheckState[]): CheckState => states.find((state) => state !== "ok") ?? "ok";

/** The checks of a worker built from `deps`; call it per probe. */
export function workerHealth(deps: HealthDeps): () => Promise<HealthReport> {
  return async () => {
    const image = deps.docker?.image;
    const [engines, redis] = await Promise.all([
      Promise.all(
        (deps.docker?.engines ?? []).map(async ({ name, engine }) => ({
          name,
          ...(await engineHealth(engine, image as string)),
        })),
      ),
      bounded(() =>
        deps.redis.ping().then(
          () => "ok" as const,
          () => "down" as const,
        ),
      ),
    ] as const);
    const docker = deps.docker ? worst(engines.map((e) => e.docker)) : "not_used";
    const sandboxImage = deps.docker ? worst(engines.map((e) => e.sandboxImage)) : "not_used";
    const healthy = [docker, sandboxImage, redis].every((state) => state === "ok" || state === "not_used");
    return {
      status: healthy ? "ok" : "degraded",
      docker,
      sandboxImage,
      image: image ?? null,
      redis,
      ...(engines.length > 1 ? { engines } : {}),
    };
  };
}
