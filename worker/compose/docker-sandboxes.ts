import { existsSync } from "node:fs";
import { DockerSandboxProvider, defaultWorkerId } from "../../sandbox/docker.js";
import { reapSandboxes, workerAliveOnThisHost } from "../../sandbox/reaper.js";
import { caBundleFile, cidrList } from "../config/worker-env.js";
import type { WorkerTuning } from "../config/worker-tuning.js";
import type { WorkerSettings } from "./built-worker.js";

/**
 * The Docker sandbox provider the settings (where things are) and the operator's tuning (what is kept
 * warm) describe; a tag groups the workers sharing an engine.
 */
export function dockerSandboxes(
  settings: WorkerSettings,
  tuning: Pick<WorkerTuning, "keptEnvironments" | "standby">,
  tag: string | undefined,
): DockerSandboxProvider {
  const keptSize = tuning.keptEnvironments.size;
  const caBundle = caBundleFile(settings.AGENT_FIX_CA_BUNDLE, existsSync);
  return new DockerSandboxProvider({
    ...(caBundle ? { caBundle } : {}),
    ...(settings.AGENT_FIX_SANDBOX_IMAGE ? { image: settings.AGENT_FIX_SANDBOX_IMAGE } : {}),
    ...(tag ? { workerId: `${tag}/${defaultWorkerId()}` } : {}),
    ...(settings.AGENT_FIX_SANDBOX_RUNTIME ? { runtime: settings.AGENT_FIX_SANDBOX_RUNTIME } : {}),
    ...(settings.AGENT_FIX_WORKSPACE_SIZE ? { workspaceSize: settings.AGENT_FIX_WORKSPACE_SIZE } : {}),
    ...(keptSize === 0 || keptSize === "0"
      ? {}
      : { keptEnvironments: { name: settings.AGENT_FIX_KEPT_ENVIRONMENTS_NAME, maxSize: keptSize } }),
    standby: { max: tuning.standby.sandboxes, idleMs: tuning.standby.idleMinutes * 60_000 },
    setupNetwork: {
      name: settings.AGENT_FIX_SETUP_NETWORK,
      allow: cidrList(settings.AGENT_FIX_SETUP_NETWORK_ALLOW),
      deny: cidrList(settings.AGENT_FIX_SETUP_NETWORK_DENY),
    },
  });
}

/** Sandboxes of dead workers; tagged workers touch only their own group's (tests sharing an engine). */
export function reapDockerSandboxes(
  provider: DockerSandboxProvider,
  tag: string | undefined,
  log: (message: string) => void,
) {
  return reapSandboxes({
    docker: provider.docker,
    log,
    ...(tag
      ? {
          maxAgeMs: Number.POSITIVE_INFINITY,
          isWorkerAlive: (id: string) =>
            !id.startsWith(`${tag}/`) || workerAliveOnThisHost(id.slice(tag.length + 1)),
        }
      : {}),
  });
}
