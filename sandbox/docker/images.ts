/**
 * The images sandboxes run (sandbox/docker/provider.ts): agent-fix's own as they are; any other image the
 * operator allowed probed once by id and run as its prepared derivative (sandbox/docker/foreign-image.ts); a
 * repository's devcontainer Dockerfile built once for equal inputs (sandbox/docker/repo-build.ts).
 */
import type Docker from "dockerode";
import type { SandboxCreateOptions } from "../../src/shared/contracts.js";
import { SANDBOX_IMAGE_NAME, SANDBOX_RICH_IMAGE_NAME } from "../version.js";
import {
  derivedImage,
  type ImageFitness,
  inspectForeignImage,
  probeImage,
  unsuitableImage,
} from "./foreign-image.js";
import type { DockerPreparedEnvironments } from "./kept-environments.js";
import { buildRepoImage, type RepoBuildSettings } from "./repo-build.js";

export class SandboxImages {
  /** Foreign images made fit for the sandbox, by image id: the image to run and what it lacks. */
  private readonly prepared = new Map<string, Promise<{ run: string; fitness: ImageFitness }>>();
  /** Repository images built, by what built them: the image's id. */
  private readonly built = new Map<string, Promise<string>>();

  /** Aborted at shutdown: every build in progress stops. */
  private readonly closing = new AbortController();

  constructor(
    private readonly docker: Docker,
    private readonly defaultImage: string,
    private readonly environments: DockerPreparedEnvironments | undefined,
    private readonly buildSettings: Omit<RepoBuildSettings, "signal">,
  ) {}

  /** Stops the builds in progress (their containers killed and removed). */
  close(): void {
    this.closing.abort();
  }

  /** agent-fix's own images (the provider's default, the slim, the rich and the kept ones) run as they are. */
  isOwn(image: string): boolean {
    const name = image.replace(/:[^/:]*$/, "");
    if (this.environments?.owns(image)) return true;
    return image === this.defaultImage || name === SANDBOX_IMAGE_NAME || name === SANDBOX_RICH_IMAGE_NAME;
  }

  /** The image a sandbox of `image` runs: itself when agent-fix's own, else its prepared derivative. */
  async runnable(image: string, network: boolean): Promise<string> {
    if (this.isOwn(image)) return image;
    // Inspected each time and kept by id: an image pulled or built again under the same name is new.
    const info = await inspectForeignImage(this.docker, image);
    let prepared = this.prepared.get(info.Id);
    if (!prepared) {
      prepared = (async () => {
        const fitness = await probeImage(this.docker, image, info.Id);
        if (fitness.missing.length > 0) throw unsuitableImage(image, fitness.missing, false);
        return { run: await derivedImage(this.docker, image, info.Id), fitness };
      })();
      // A failure is not kept: the operator may fix the image meanwhile.
      prepared.catch(() => this.prepared.delete(info.Id));
      this.prepared.set(info.Id, prepared);
    }
    const { run, fitness } = await prepared;
    if (network && fitness.missingForNetwork.length > 0)
      throw unsuitableImage(image, fitness.missingForNetwork, true);
    return run;
  }

  /**
   * The id of the repository's image, built on first use (and again after a failure); `signal` (the
   * run's cancel) stops the build. One run's checkout is its own: no other run shares the build.
   */
  build(build: NonNullable<SandboxCreateOptions["imageBuild"]>, signal?: AbortSignal): Promise<string> {
    const key = JSON.stringify(build);
    let id = this.built.get(key);
    if (!id) {
      const stop = signal ? AbortSignal.any([signal, this.closing.signal]) : this.closing.signal;
      id = buildRepoImage(this.docker, build, { ...this.buildSettings, signal: stop });
      id.catch(() => this.built.delete(key));
      this.built.set(key, id);
    }
    return id;
  }
}
