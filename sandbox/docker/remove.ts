/** Removal of a sandbox's container and volume, by the sandbox itself and by the reaper. */
import { setTimeout as sleep } from "node:timers/promises";
import type Docker from "dockerode";
import { isNotFound } from "./spec.js";

/** Removes a sandbox's container (forced) and volume; missing ones are fine. */
export async function removeSandboxResources(
  docker: Docker,
  containerId: string | null,
  volumeName: string | null,
): Promise<void> {
  if (containerId) {
    try {
      await docker.getContainer(containerId).remove({ force: true, v: true });
    } catch (error) {
      if (!isNotFound(error) && !/already in progress/.test((error as Error).message)) throw error;
    }
  }
  if (volumeName) {
    for (let attempt = 0; ; attempt++) {
      try {
        await docker.getVolume(volumeName).remove();
        return;
      } catch (error) {
        if (isNotFound(error)) return;
        // The container's removal may still hold it for a moment.
        if (attempt >= 20) throw error;
        await sleep(100);
      }
    }
  }
}
