/**
 * Removes the images the worker built and no longer needs: a repository's devcontainer image that a
 * later build replaced (dangling), a derived image whose source image is gone, and tagged ones beyond
 * the newest `keep`. Only images carrying the worker's BUILT_LABEL (or the derived images' label of
 * docker/foreign-image.ts) are looked at, never one younger than `minAgeMs` (a build a run is about to use),
 * at most `maxRemovals` a pass, and never forced: an image a container still uses stays.
 */
import Docker from "dockerode";
import { BUILT_LABEL } from "./build.js";
import { DERIVED_FROM_LABEL } from "./foreign-image.js";
import { isNotFound } from "./spec.js";

interface ImageCleanupOptions {
  docker?: Docker;
  now?: number;
  /** Images younger than this are left alone. Default 1 hour. */
  minAgeMs?: number;
  /** Tagged images the worker built kept, the newest first. Default 20. */
  keep?: number;
  /** At most this many removals a pass. Default 50. */
  maxRemovals?: number;
  /** Extra labels (`name=value`) an image must carry too: tests sharing an engine clean only their own. */
  labels?: string[];
  log?: (message: string) => void;
}

type Why = "dangling" | "source gone" | "beyond the newest kept";

const isDangling = (image: Docker.ImageInfo) =>
  (image.RepoTags ?? []).filter((tag) => tag !== "<none>:<none>").length === 0;

async function exists(docker: Docker, id: string): Promise<boolean> {
  try {
    await docker.getImage(id).inspect();
    return true;
  } catch (error) {
    if (isNotFound(error)) return false;
    throw error;
  }
}

/** The worker's images, oldest last, each once (a derived image carries both labels). */
async function workerImages(docker: Docker, extra: string[]): Promise<Docker.ImageInfo[]> {
  const lists = await Promise.all(
    [BUILT_LABEL, DERIVED_FROM_LABEL].map((label) =>
      docker.listImages({ filters: { label: [label, ...extra] } }),
    ),
  );
  const byId = new Map(lists.flat().map((image) => [image.Id, image]));
  return [...byId.values()].sort((a, b) => b.Created - a.Created);
}

/** What to remove and why, bounded. */
async function candidates(docker: Docker, options: ImageCleanupOptions): Promise<[Docker.ImageInfo, Why][]> {
  const now = options.now ?? Date.now();
  const old = (await workerImages(docker, options.labels ?? [])).filter(
    (image) => now - image.Created * 1000 >= (options.minAgeMs ?? 60 * 60 * 1000),
  );
  const chosen: [Docker.ImageInfo, Why][] = [];
  const tagged: Docker.ImageInfo[] = [];
  for (const image of old) {
    const source = image.Labels?.[DERIVED_FROM_LABEL];
    if (isDangling(image)) chosen.push([image, "dangling"]);
    else if (source && !(await exists(docker, source))) chosen.push([image, "source gone"]);
    else tagged.push(image);
  }
  for (const image of tagged.slice(options.keep ?? 20)) chosen.push([image, "beyond the newest kept"]);
  return chosen.slice(0, options.maxRemovals ?? 50);
}

/** Removes what `candidates` chose; returns the ids removed. An image in use (409) or gone (404) is skipped. */
export async function cleanWorkerImages(options: ImageCleanupOptions = {}): Promise<string[]> {
  const docker = options.docker ?? new Docker();
  const removed: string[] = [];
  for (const [image, why] of await candidates(docker, options)) {
    // By tag when tagged: removing an id with several tags needs force, which could pull one from under a run.
    const name = isDangling(image) ? image.Id : (image.RepoTags?.[0] ?? image.Id);
    try {
      await docker.getImage(name).remove();
      removed.push(image.Id);
      options.log?.(`removed image ${name} (${why})`);
    } catch (error) {
      const status = (error as { statusCode?: number }).statusCode;
      if (status !== 409 && status !== 404) throw error;
    }
  }
  return removed;
}
