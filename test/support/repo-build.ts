/**
 * Removes what a test's repository image builds left on the engine: every step image built for
 * `repository` (sandbox/docker/repo-build.ts labels each) and the images the worker derived from them.
 */
import type Docker from "dockerode";
import { DERIVED_FROM_LABEL } from "../../sandbox/docker/foreign-image.js";
import { BUILD_LABEL } from "../../sandbox/docker/repo-build.js";

export async function removeRepoBuilds(docker: Docker, repository: string): Promise<void> {
  // A step's image is the parent of the next, which must go first: passes until nothing more goes
  // (creation times are in seconds, too coarse to order them).
  for (let pass = 0; pass < 20; pass++) {
    const built = await docker.listImages({
      filters: { label: [`${BUILD_LABEL.repository}=${repository}`] },
    });
    if (built.length === 0) return;
    for (const image of built) {
      for (const derived of await docker.listImages({
        filters: { label: [`${DERIVED_FROM_LABEL}=${image.Id}`] },
      }))
        await docker
          .getImage(derived.Id)
          .remove({ force: true })
          .catch(() => {});
      await docker
        .getImage(image.Id)
        .remove({ force: true })
        .catch(() => {});
    }
  }
}
