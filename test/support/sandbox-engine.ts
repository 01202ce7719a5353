/**
 * A private Docker engine (own-dockerd.ts) holding the sandbox image under its own name, as an operator's
 * sandbox host does: the slim copy (slim-sandbox-image.ts), tagged as the sandbox image, so a worker
 * pointed at it runs its default image.
 *
 * Copying an image into an engine (`docker save | docker load`) takes 10-16 s on this machine, and five
 * files start such an engine. It is done once per slim image (by its id): into a template engine whose
 * image store (image/ and overlay2/, nothing else: its network and containerd databases are written in
 * place, so each engine makes its own) is kept in the temp dir; each engine then starts on a hard-linked
 * copy of it (own-dockerd.ts `imagesFrom`), about a second.
 */
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { readdir, rename, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Docker from "dockerode";
import { SANDBOX_IMAGE_NAME, SANDBOX_IMAGE_VERSION } from "../../sandbox/version.js";
import { OwnDockerd, type OwnDockerdOptions } from "./own-dockerd.js";
import { slimSandboxImage } from "./slim-sandbox-image.js";

interface SandboxEngine {
  engine: OwnDockerd;
  /** The slim image's name on the shared engine. */
  slimImage: string;
  /** Milliseconds building the slim image took (0: reused). */
  buildMs: number;
  /** Milliseconds loading it into the template engine took (0: the template was there). */
  loadMs: number;
  /** Milliseconds starting this engine on a copy of the template took. */
  startMs: number;
}

/** What of a data root is the image store: the rest is each engine's own. */
const IMAGE_STORE = new Set(["image", "overlay2"]);

/**
 * The data root of an engine holding `image` tagged as the sandbox image, made once per image id;
 * the milliseconds loading it took (0 when it was there). Made aside and renamed into place, so files
 * running at once never see half of one (the one renamed second drops its own).
 */
async function engineTemplate(image: string): Promise<{ dir: string; loadMs: number }> {
  const id = (await new Docker().getImage(image).inspect()).Id.replace(/^sha256:/, "").slice(0, 16);
  const dir = join(tmpdir(), `af-dkd-template-${id}`);
  if (existsSync(dir)) return { dir, loadMs: 0 };
  const maker = await OwnDockerd.start();
  try {
    const loadMs = await maker.loadImage(image);
    await maker.docker.getImage(image).tag({ repo: SANDBOX_IMAGE_NAME, tag: SANDBOX_IMAGE_VERSION });
    await maker.stop();
    const data = join(maker.dir, "data");
    for (const entry of await readdir(data))
      if (!IMAGE_STORE.has(entry)) await rm(join(data, entry), { recursive: true, force: true });
    const made = `${dir}.${randomBytes(4).toString("hex")}`;
    await rename(data, made);
    await rename(made, dir).catch(async (error: NodeJS.ErrnoException) => {
      await rm(made, { recursive: true, force: true });
      // Another file's, renamed first: the same image, as good as ours.
      if (error.code !== "ENOTEMPTY" && error.code !== "EEXIST") throw error;
    });
    return { dir, loadMs };
  } finally {
    await maker.remove();
  }
}

/** A private engine started with `options`, the sandbox image in it. */
export async function sandboxEngine(options: OwnDockerdOptions = {}): Promise<SandboxEngine> {
  const slim = await slimSandboxImage();
  const template = await engineTemplate(slim.image);
  const started = Date.now();
  const engine = await OwnDockerd.start({ ...options, imagesFrom: template.dir });
  return {
    engine,
    slimImage: slim.image,
    buildMs: slim.buildMs,
    loadMs: template.loadMs,
    startMs: Date.now() - started,
  };
}
