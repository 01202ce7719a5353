/**
 * Image builds by the worker, always with no network and never pulling: the derived images of
 * docker-image.ts, and a repository's own image (a devcontainer's build.dockerfile, whose text the
 * pipeline checked: worker/pipeline/devcontainer-build.ts) from its checkout.
 */
import { createHash } from "node:crypto";
import { realpath } from "node:fs/promises";
import path from "node:path";
import type Docker from "dockerode";
import { pack } from "tar-fs";
import type { SandboxCreateOptions } from "../src/contracts.js";
import { SandboxError } from "../src/errors.js";
import { imageMissing, isNotFound } from "./docker-spec.js";

type RepoImageBuild = NonNullable<SandboxCreateOptions["imageBuild"]>;

const REPO_IMAGE_NAME = "agent-fix-repo";
/** On every image the worker builds (its value says which kind): image-cleanup.ts removes only these. */
export const BUILT_LABEL = "agent-fix.built";
/** The Dockerfile's name in the context: the checked text, whatever the checkout holds. */
const DOCKERFILE_ENTRY = ".agent-fix-build.Dockerfile";

/** One tag a repository (each build moves it): agent-fix-repo:HASH. */
export function repoImageTag(repository: string): string {
  return `${REPO_IMAGE_NAME}:${createHash("sha256").update(repository).digest("hex").slice(0, 16)}`;
}

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

/** Builds a repository's image from its checkout; returns the image's id (the tag may be rebuilt meanwhile). */
export async function buildRepoImage(docker: Docker, build: RepoImageBuild): Promise<string> {
  const root = await realpath(build.root);
  // A context that is a symlink out of the checkout would pack the host's files into the image.
  const context = await realpath(path.join(root, build.context)).catch(() => null);
  if (context === null || (context !== root && !context.startsWith(`${root}${path.sep}`))) {
    throw new SandboxError(`the build context ${build.context} is not a directory inside the repository`, {
      code: "image_build_failed",
      hint: "Point devcontainer.json's build.context at a directory of the repository.",
    });
  }
  for (const base of build.bases) {
    await docker
      .getImage(base)
      .inspect()
      .catch((error: unknown) => {
        throw isNotFound(error) ? imageMissing(base, error) : error;
      });
  }
  // Symlinks go in as symlinks (tar-fs does not follow them): nothing of the host beyond the context.
  const archive = pack(context, {
    ignore: (name) => path.relative(context, name) === DOCKERFILE_ENTRY,
    finalize: false,
    finish: (p) => {
      p.entry({ name: DOCKERFILE_ENTRY }, build.dockerfile);
      p.finalize();
    },
  });
  return buildImage(docker, archive as unknown as NodeJS.ReadableStream, {
    tag: repoImageTag(build.name),
    dockerfile: DOCKERFILE_ENTRY,
    kind: "repo",
    what: `the repository's image (${build.context}, devcontainer build.dockerfile)`,
    hint: "The worker builds it with no network: a step that downloads (apt-get, curl, pip) fails; start from an allowed image that has what it needs.",
  });
}
