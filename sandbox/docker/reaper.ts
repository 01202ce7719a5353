/**
 * Removes sandboxes (containers and volumes labelled by the docker driver) left behind by a worker that
 * died, or older than a maximum age. worker/main.ts has worker/jobs/start.ts run it at start and on a timer.
 */
import os from "node:os";
import Docker from "dockerode";
import { LABEL } from "./provider.js";
import { removeSandboxResources } from "./remove.js";

interface ReapOptions {
  docker?: Docker;
  /** Sandboxes older than this are removed whoever owns them. Default 6 hours. */
  maxAgeMs?: number;
  /** Whether the worker named by a sandbox's label still runs. Default: same host and its pid is alive. */
  isWorkerAlive?: (workerId: string) => boolean;
  now?: number;
  log?: (message: string) => void;
}

interface ReapResult {
  containers: string[];
  volumes: string[];
}

export const DEFAULT_REAP_MAX_AGE_MS = 6 * 60 * 60 * 1000;

/** `host:pid` of a worker on this host is alive while that pid runs; other hosts are judged by age only. */
export function workerAliveOnThisHost(workerId: string): boolean {
  const match = /^(.*):(\d+)$/.exec(workerId);
  if (!match || match[1] !== os.hostname()) return true;
  try {
    process.kill(Number(match[2]), 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

export async function reapSandboxes(options: ReapOptions = {}): Promise<ReapResult> {
  const docker = options.docker ?? new Docker();
  const maxAge = options.maxAgeMs ?? DEFAULT_REAP_MAX_AGE_MS;
  const alive = options.isWorkerAlive ?? workerAliveOnThisHost;
  const now = options.now ?? Date.now();
  const log = options.log ?? (() => undefined);
  const removed: ReapResult = { containers: [], volumes: [] };

  const orphaned = (labels: Record<string, string> | undefined, createdMs: number): string | null => {
    const worker = labels?.[LABEL.worker] ?? "";
    const created = Number(labels?.[LABEL.created] ?? createdMs);
    if (Number.isFinite(created) && now - created > maxAge)
      return `older than ${Math.round(maxAge / 60000)} min`;
    if (worker && !alive(worker)) return `worker ${worker} is gone`;
    return null;
  };

  const containers = await docker.listContainers({ all: true, filters: { label: [LABEL.sandbox] } });
  for (const info of containers) {
    const reason = orphaned(info.Labels, info.Created * 1000);
    if (!reason) continue;
    const name = info.Names[0]?.replace(/^\//, "") ?? info.Id;
    try {
      await removeSandboxResources(docker, info.Id, null);
      removed.containers.push(name);
      log(`reaper: removed sandbox container ${name} (${reason})`);
    } catch (error) {
      log(`reaper: cannot remove container ${name}: ${(error as Error).message}`);
    }
  }

  const { Volumes } = await docker.listVolumes({ filters: { label: [LABEL.sandbox] } });
  for (const volume of Volumes ?? []) {
    const createdAt = (volume as { CreatedAt?: string }).CreatedAt;
    const reason = orphaned(volume.Labels, createdAt ? Date.parse(createdAt) : now);
    if (!reason) continue;
    try {
      await docker.getVolume(volume.Name).remove();
      removed.volumes.push(volume.Name);
      log(`reaper: removed sandbox volume ${volume.Name} (${reason})`);
    } catch (error) {
      // In use by a container that is not ours to judge, or gone meanwhile.
      log(`reaper: cannot remove volume ${volume.Name}: ${(error as Error).message}`);
    }
  }
  return removed;
}
