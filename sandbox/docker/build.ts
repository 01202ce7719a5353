/**
 * Image builds of the worker's own Dockerfiles (the derived images of docker/foreign-image.ts), always with no
 * network and never pulling. A repository's Dockerfile is never handed to the engine: the worker
 * executes it itself (docker/repo-build.ts).
 */
import type Docker from "dockerode";
import { SandboxError } from "../../src/shared/errors.js";

/** On every image the worker builds (its value says which kind): image-cleanup.ts removes only these. */
export const BUILT_LABEL = "agent-fix.built";

/** Runs a build of a tar context; returns the image's id, or throws with the end of its log. */
export async function buildImage(
  docker: Docker,
  context: NodeJS.ReadableStream,
  options: { tag: string; dockerfile?: string; what: string; hint: string; kind: "repo" | "derived" },
): Promise<string> {
  const stream = await docker.buildImage(context, {
    t: options.tag,
    ...(options.dockerfile ? { dockerfile: options.dockerfile } : {}),
    networkmode: "none",
    pull: false,
    labels: { [BUILT_LABEL]: options.kind },
    rm: true,
    forcerm: true,
  });
  const events = (await new Promise((resolve, reject) =>
    docker.modem.followProgress(stream, (error, result) => (error ? reject(error) : resolve(result))),
  )) as { error?: string; stream?: string; aux?: { ID?: string } }[];
  const log = events
    .map((e) => e.stream ?? "")
    .join("")
    .slice(-1500);
  const failed = events.find((e) => e.error);
  const id = events.find((e) => e.aux?.ID)?.aux?.ID ?? /Successfully built ([0-9a-f]+)/.exec(log)?.[1];
  if (failed || !id) {
    throw new SandboxError(`cannot build ${options.what}: ${failed?.error ?? "the build gave no image"}`, {
      code: "image_build_failed",
      hint: `${options.hint}\nThe end of the build's log:\n${log}`,
    });
  }
  return id;
}
