/**
 * A private Docker engine (own-dockerd.ts) holding the sandbox image under its own name, as an operator's
 * sandbox host does: the slim copy (slim-sandbox-image.ts) loaded with `docker save | docker load` and
 * tagged as the sandbox image, so a worker pointed at it runs its default image. Loading is the slow
 * part (seconds per engine): once per test file, and timed for the figures.
 */
import { SANDBOX_IMAGE_NAME, SANDBOX_IMAGE_VERSION } from "../../sandbox/version.js";
import { OwnDockerd, type OwnDockerdOptions } from "./own-dockerd.js";
import { slimSandboxImage } from "./slim-sandbox-image.js";

interface SandboxEngine {
  engine: OwnDockerd;
  /** The slim image's name on the shared engine. */
  slimImage: string;
  /** Milliseconds building the slim image took (0: reused), and loading it into this engine. */
  buildMs: number;
  loadMs: number;
}

/** A private engine started with `options`, the sandbox image in it. */
export async function sandboxEngine(options: OwnDockerdOptions = {}): Promise<SandboxEngine> {
  const [engine, slim] = await Promise.all([OwnDockerd.start(options), slimSandboxImage()]);
  try {
    const loadMs = await engine.loadImage(slim.image);
    await engine.docker.getImage(slim.image).tag({ repo: SANDBOX_IMAGE_NAME, tag: SANDBOX_IMAGE_VERSION });
    return { engine, slimImage: slim.image, buildMs: slim.buildMs, loadMs };
  } catch (error) {
    await engine.remove();
    throw error;
  }
}
