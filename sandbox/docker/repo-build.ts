/**
 * A repository's own image (a devcontainer's build.dockerfile), built by the worker executing the
 * Dockerfile itself, never by handing its text to the engine's builder (whose parser and fetches the
 * check could not see): sandbox/docker/dockerfile.ts parses it, the same parser that checked it. Each RUN runs
 * in a container of the image so far, held as a setup sandbox running as root is (no network, every
 * capability dropped but the ones setup-as-root keeps, no-new-privileges, the sandbox's memory, process
 * and CPU limits), killed at the build's timeout, on the run's cancel and at shutdown. COPY and ADD put
 * files of the build context (checked inside the checkout, symlinks not followed out of it) or of an
 * earlier stage of the same build with putArchive; the other instructions set the image's config at the
 * commit. Each step's image is kept under a random tag with the hash of what made it (the repository,
 * the image it started from, the step and the files it copied): an equal step reuses it, so an equal
 * Dockerfile over equal files gives the same image (and so the same kept environment). No tag is
 * derived from the repository's name: nothing a build or a repository can name leads to another's image.
 */
import { createHash, randomBytes } from "node:crypto";
import { lstat, readdir, realpath } from "node:fs/promises";
import path from "node:path";
import { PassThrough, type Readable } from "node:stream";
import type Docker from "dockerode";
import picomatch from "picomatch";
import { pack as packDir } from "tar-fs";
import { extract, pack as packTar } from "tar-stream";
import type { RepoImageBuildSpec, SandboxLimits } from "../../src/shared/contracts.js";
import { CancelledError, SandboxError } from "../../src/shared/errors.js";
import { BUILT_LABEL } from "./build.js";
import { copyPaths, type DockerfileInstruction, pairs, parseDockerfile, words } from "./dockerfile.js";
import { capabilities, imageMissing, isNotFound, runtimeOf } from "./spec.js";

/** The repository of every step image (each under a random tag). */
const BUILD_STEP_IMAGE = "agent-fix-build";
export const BUILD_LABEL = {
  /** The hash of what made the step: the cache's key. */
  step: "agent-fix.build.step",
  /** The repository whose build made it (for the operator). */
  repository: "agent-fix.build.repository",
} as const;
/** A build's default time, all steps together. */
export const DEFAULT_BUILD_TIMEOUT_MS = 15 * 60_000;

export interface RepoBuildSettings {
  limits: SandboxLimits;
  timeoutMs: number;
  /** On every container the build makes (the sandbox's job and worker labels: the reaper finds them). */
  containerLabels: Record<string, string>;
  /** The sandboxes' OCI runtime (docker/spec.ts runtimeOf): a step runs under gVisor as they do. */
  runtime?: string | undefined;
  /** Aborts the build: its container is killed and removed, the images it made removed. */
  signal?: AbortSignal | undefined;
}

interface ImageConfig {
  Env: string[];
  WorkingDir: string;
  User: string;
  Cmd: string[] | null;
  Entrypoint: string[] | null;
  Labels: Record<string, string>;
  Shell: string[] | null;
  ExposedPorts: Record<string, object>;
  Volumes: Record<string, object>;
  StopSignal: string | undefined;
}

function configOf(info: Docker.ImageInspectInfo): ImageConfig {
  const c = (info.Config ?? {}) as Partial<Docker.ImageInspectInfo["Config"]> & {
    Shell?: string[];
    StopSignal?: string;
  };
  return {
    Env: c.Env ?? [],
    WorkingDir: c.WorkingDir ?? "",
    User: c.User ?? "",
    Cmd: c.Cmd ?? null,
    Entrypoint: (c.Entrypoint as string[] | null | undefined) ?? null,
    Labels: { ...(c.Labels ?? {}) },
    Shell: c.Shell ?? null,
    ExposedPorts: { ...(c.ExposedPorts ?? {}) },
    Volumes: { ...(c.Volumes ?? {}) },
    StopSignal: c.StopSignal,
  };
}

function envMap(env: string[]): Record<string, string> {
  return Object.fromEntries(env.map((e) => [e.slice(0, e.indexOf("=")), e.slice(e.indexOf("=") + 1)]));
}

function setEnv(config: ImageConfig, name: string, value: string): void {
  config.Env = [...config.Env.filter((e) => !e.startsWith(`${name}=`)), `${name}=${value}`];
}

const hash = (...parts: unknown[]) => createHash("sha256").update(JSON.stringify(parts)).digest("hex");

function buildFailed(message: string, hint: string): SandboxError {
  return new SandboxError(`cannot build the repository's image (devcontainer build.dockerfile): ${message}`, {
    code: "image_build_failed",
    hint,
  });
}

/** A file or directory of the context to copy: its real path, checked inside the context. */
interface ContextSource {
  real: string;
  name: string;
  directory: boolean;
}

/** The context's paths a COPY source names (a `*`, `?` or `[` in its last part matches a directory's entries). */
async function contextSources(context: string, source: string, line: number): Promise<ContextSource[]> {
  const joined = path.join(context, source);
  const rel = path.relative(context, joined);
  if (rel === ".." || rel.startsWith(`..${path.sep}`))
    throw buildFailed(
      `line ${line}: ${source} is outside the build context`,
      "COPY files of the build context.",
    );
  const base = path.basename(joined);
  const candidates = /[*?[]/.test(base)
    ? (await readdir(path.dirname(joined)).catch(() => []))
        .filter((name) => picomatch.isMatch(name, base, { dot: true }))
        .map((name) => path.join(path.dirname(joined), name))
    : [joined];
  const found: ContextSource[] = [];
  for (const candidate of candidates) {
    // A symlink that leads out of the context would copy the host's files into the image.
    const real = await realpath(candidate).catch(() => null);
    if (real === null) continue;
    if (real !== context && !real.startsWith(`${context}${path.sep}`))
      throw buildFailed(
        `line ${line}: ${source} leads outside the build context`,
        "COPY files of the build context, not links out of it.",
      );
    found.push({ real, name: path.basename(candidate), directory: (await lstat(real)).isDirectory() });
  }
  if (found.length === 0)
    throw buildFailed(
      `line ${line}: ${source} is not in the build context`,
      "Commit the file, or fix the path (relative to build.context).",
    );
  return found;
}

/** `inner` under `target` as a tar entry's name (relative to /; "." for / itself). */
const under = (target: string, inner: string) => [target, inner].filter(Boolean).join("/") || ".";

/** A tar of one context source under `target` (relative to /), with the ids given; `stable` zeroes times (the digest's). */
function contextTar(
  source: ContextSource,
  target: string,
  owner: [number, number],
  stable: boolean,
): Readable {
  const map = (header: {
    name: string;
    uid?: number;
    gid?: number;
    uname?: string;
    gname?: string;
    mtime?: Date;
  }) => {
    const inner = header.name.replace(/^\.\/?/, "").replace(/\/$/, "");
    header.name = source.directory ? under(target, inner) : target;
    header.uid = owner[0];
    header.gid = owner[1];
    header.uname = "";
    header.gname = "";
    if (stable) header.mtime = new Date(0);
    return header;
  };
  return (source.directory
    ? packDir(source.real, { map, sort: true } as never)
    : packDir(path.dirname(source.real), {
        entries: [path.basename(source.real)],
        map,
      } as never)) as unknown as Readable;
}

async function digestOf(stream: Readable): Promise<string> {
  const sha = createHash("sha256");
  for await (const chunk of stream) sha.update(chunk as Buffer);
  return sha.digest("hex");
}

/** Rewrites getArchive's tar of `source` (top entry its basename) to `target`. */
function retarget(
  archive: Readable,
  target: string,
  directory: (top: string) => boolean,
  owner: [number, number] | null,
): Readable {
  const out = packTar();
  const input = extract();
  input.on("entry", (header, stream, next) => {
    const [top = "", ...rest] = header.name.replace(/\/$/, "").split("/");
    const inner = rest.join("/");
    header.name = directory(top) ? under(target, inner) : target;
    if (owner) [header.uid, header.gid] = owner;
    stream.pipe(out.entry(header, next));
  });
  input.on("finish", () => out.finalize());
  input.on("error", (error) => out.destroy(error));
  archive.pipe(input);
  return out as unknown as Readable;
}

/** Whether `target` is a directory in the container's filesystem (false when absent). */
async function isDirectoryIn(container: Docker.Container, target: string): Promise<boolean> {
  const response = (await container.infoArchive({ path: target }).catch(() => null)) as {
    headers?: Record<string, string>;
    resume?: () => void;
  } | null;
  response?.resume?.();
  const stat = response?.headers?.["x-docker-container-path-stat"];
  if (!stat) return false;
  const { mode } = JSON.parse(Buffer.from(stat, "base64").toString("utf8")) as { mode: number };
  // Go's os.ModeDir, the top bit of the 32-bit mode.
  return Math.floor(mode / 2 ** 31) % 2 === 1;
}

class RepoBuild {
  /** Images this build committed (removed when it fails). */
  private readonly made: string[] = [];
  private readonly containers = new Set<Docker.Container>();
  private readonly abort = new AbortController();
  private log = "";

  constructor(
    private readonly docker: Docker,
    private readonly spec: RepoImageBuildSpec,
    private readonly settings: RepoBuildSettings,
  ) {
    const timer = setTimeout(() => this.abort.abort("timeout"), settings.timeoutMs);
    timer.unref();
    this.abort.signal.addEventListener("abort", () => clearTimeout(timer), { once: true });
    const outer = settings.signal;
    if (outer?.aborted) this.abort.abort("cancel");
    outer?.addEventListener("abort", () => this.abort.abort("cancel"), { once: true });
  }

  private checkAborted(): void {
    const reason = this.abort.signal.reason as string | undefined;
    if (!this.abort.signal.aborted) return;
    if (reason === "timeout")
      throw buildFailed(
        `it took longer than ${Math.round(this.settings.timeoutMs / 1000)} s`,
        "Make the Dockerfile's steps quicker (start from an image that has what it needs), or ask the operator for a longer build time.",
      );
    throw new CancelledError("the run was cancelled while the repository's image was built");
  }

  async run(): Promise<string> {
    try {
      return await this.stages();
    } catch (error) {
      await this.cleanup(true);
      if (this.abort.signal.aborted) this.checkAborted();
      throw error;
    } finally {
      await this.cleanup(false);
      this.abort.abort("done");
    }
  }

  /** Removes the containers left; after a failure, the images this build made too. */
  private async cleanup(failed: boolean): Promise<void> {
    await Promise.all([...this.containers].map((c) => c.remove({ force: true }).catch(() => undefined)));
    this.containers.clear();
    if (!failed) return;
    for (const id of this.made.reverse())
      await this.docker
        .getImage(id)
        .remove({ force: true })
        .catch(() => undefined);
    this.made.length = 0;
  }

  private async stages(): Promise<string> {
    const root = await realpath(this.spec.root);
    // A context that is a symlink out of the checkout would copy the host's files into the image.
    const context = await realpath(path.join(root, this.spec.context)).catch(() => null);
    if (context === null || (context !== root && !context.startsWith(`${root}${path.sep}`))) {
      throw new SandboxError(
        `the build context ${this.spec.context} is not a directory inside the repository`,
        {
          code: "image_build_failed",
          hint: "Point devcontainer.json's build.context at a directory of the repository.",
        },
      );
    }
    // The checked Dockerfile, parsed again by the same parser; only the bases the check allowed.
    const parsed = parseDockerfile(this.spec.dockerfile, "build.dockerfile", (image) =>
      this.spec.bases.includes(image),
    );
    const done: string[] = [];
    for (const stage of parsed.stages) {
      let id: string;
      if ("image" in stage.from) {
        const image = stage.from.image;
        id = (
          await this.docker
            .getImage(image)
            .inspect()
            .catch((error: unknown) => {
              throw isNotFound(error) ? imageMissing(image, error) : error;
            })
        ).Id;
      } else id = done[stage.from.stage]!;
      const config = configOf(await this.docker.getImage(id).inspect());
      const args: Record<string, string> = {};
      let dirty = false;
      for (const step of stage.steps) {
        this.checkAborted();
        const vars = () => ({ ...args, ...envMap(config.Env) });
        const w = () => words(step.args, parsed.escapeChar, vars());
        switch (step.keyword) {
          case "ARG":
            for (const word of w()) {
              const at = word.indexOf("=");
              if (at === -1) args[word] ??= "";
              else args[word.slice(0, at)] = word.slice(at + 1);
            }
            break;
          case "ENV":
            for (const [name, value] of pairs(step, parsed.escapeChar, vars())) setEnv(config, name, value);
            dirty = true;
            break;
          case "LABEL":
            for (const [name, value] of pairs(step, parsed.escapeChar, vars())) config.Labels[name] = value;
            dirty = true;
            break;
          case "WORKDIR":
            config.WorkingDir = path.posix.resolve(config.WorkingDir || "/", w().join(" "));
            dirty = true;
            break;
          case "USER":
            config.User = w()[0] ?? "";
            dirty = true;
            break;
          case "CMD":
          case "ENTRYPOINT": {
            const argv = step.json ?? [...(config.Shell ?? ["/bin/sh", "-c"]), step.args];
            if (step.keyword === "CMD") config.Cmd = argv;
            else config.Entrypoint = argv;
            dirty = true;
            break;
          }
          case "SHELL":
            if (!step.json || step.json.length === 0)
              throw buildFailed(
                `line ${step.line}: SHELL takes the JSON form`,
                'Write SHELL ["/bin/bash", "-c"].',
              );
            config.Shell = step.json;
            dirty = true;
            break;
          case "EXPOSE":
            for (const port of w()) config.ExposedPorts[port.includes("/") ? port : `${port}/tcp`] = {};
            dirty = true;
            break;
          case "VOLUME":
            for (const volume of step.json ?? w()) config.Volumes[volume] = {};
            dirty = true;
            break;
          case "STOPSIGNAL":
            config.StopSignal = w()[0];
            dirty = true;
            break;
          case "RUN":
            id = await this.step(id, config, ["run", step.json ?? step.args, args], () =>
              this.runStep(id, config, step, args),
            );
            dirty = false;
            break;
          case "COPY":
          case "ADD":
            id = await this.copyStep(id, config, step, parsed.escapeChar, vars(), context, done);
            dirty = false;
            break;
          // HEALTHCHECK, MAINTAINER: nothing a sandbox uses (it runs no health check).
        }
      }
      if (dirty)
        id = await this.step(id, config, ["config"], async () => this.container(id, ["true"], config, {}));
      done.push(id);
    }
    return done[done.length - 1]!;
  }

  /** The image of one step: the one an equal step made before, else `make`'s container committed. */
  private async step(
    parent: string,
    config: ImageConfig,
    what: unknown[],
    make: () => Promise<Docker.Container>,
  ): Promise<string> {
    const key = hash(this.spec.name, parent, config, what);
    const images = await this.docker.listImages({
      filters: JSON.stringify({ label: [`${BUILD_LABEL.step}=${key}`] }),
    });
    // Only an image under the worker's own step tag: a label alone could come with any image.
    const hit = images.find((i) => (i.RepoTags ?? []).some((t) => t.startsWith(`${BUILD_STEP_IMAGE}:`)));
    if (hit) return hit.Id;
    const container = await make();
    this.checkAborted();
    const labels = {
      ...config.Labels,
      [BUILT_LABEL]: "repo",
      [BUILD_LABEL.step]: key,
      [BUILD_LABEL.repository]: this.spec.name,
    };
    // The config is given whole: unset fields would be the step container's own (its command, its labels).
    const committed = (await (container.commit as (opts: unknown) => Promise<unknown>).call(container, {
      _query: { container: container.id, repo: BUILD_STEP_IMAGE, tag: randomBytes(16).toString("hex") },
      _body: { ...config, Cmd: config.Cmd ?? [], Entrypoint: config.Entrypoint ?? [], Labels: labels },
    })) as { Id: string };
    this.made.push(committed.Id);
    await container.remove({ force: true }).catch(() => undefined);
    this.containers.delete(container);
    return committed.Id;
  }

  /** A container of `image` held as a root setup sandbox is, not started. */
  private async container(image: string, argv: string[], config: ImageConfig, env: Record<string, string>) {
    const { limits } = this.settings;
    const container = await this.docker.createContainer({
      Image: image,
      Entrypoint: argv,
      Cmd: [],
      Env: [...config.Env, ...Object.entries(env).map(([k, v]) => `${k}=${v}`)],
      WorkingDir: config.WorkingDir || "/",
      User: config.User || "0:0",
      AttachStdout: true,
      AttachStderr: true,
      Tty: false,
      NetworkDisabled: true,
      Labels: this.settings.containerLabels,
      Healthcheck: { Test: ["NONE"] },
      HostConfig: {
        ...runtimeOf(this.settings.runtime),
        NetworkMode: "none",
        CapDrop: ["ALL"],
        CapAdd: capabilities(false, "root"),
        SecurityOpt: ["no-new-privileges"],
        Init: true,
        Memory: limits.memoryBytes,
        MemorySwap: limits.memoryBytes,
        NanoCpus: Math.round(limits.cpus * 1e9),
        PidsLimit: limits.pids,
        LogConfig: { Type: "none", Config: {} },
      },
    });
    this.containers.add(container);
    return container;
  }

  private async runStep(
    image: string,
    config: ImageConfig,
    step: DockerfileInstruction,
    args: Record<string, string>,
  ) {
    const argv = step.json ?? [...(config.Shell ?? ["/bin/sh", "-c"]), step.args];
    if (argv.length === 0 || step.args.trim() === "")
      throw buildFailed(`line ${step.line}: RUN has no command`, "Give RUN a command.");
    // ARGs are in RUN's environment, not the image's (as the engine's builder does).
    const env = Object.fromEntries(Object.entries(args).filter(([k]) => !envMap(config.Env)[k]));
    const container = await this.container(image, argv, config, env);
    const output = new PassThrough();
    output.on("data", (chunk: Buffer) => {
      this.log = (this.log + chunk.toString("utf8")).slice(-1500);
    });
    const attached = await container.attach({ stream: true, stdout: true, stderr: true });
    this.docker.modem.demuxStream(attached, output, output);
    const kill = () => void container.kill().catch(() => undefined);
    this.abort.signal.addEventListener("abort", kill, { once: true });
    try {
      await container.start();
      // A cancel that came while it started: the listener above was too late for it.
      if (this.abort.signal.aborted) kill();
      const waited = (await container.wait()) as { StatusCode: number };
      this.checkAborted();
      if (waited.StatusCode !== 0) {
        const oom = (await container.inspect().catch(() => null))?.State?.OOMKilled;
        throw buildFailed(
          `line ${step.line}: RUN exited ${waited.StatusCode}${oom ? " (out of memory)" : ""}`,
          `The worker runs each step with no network and the sandbox's limits (${Math.round(this.settings.limits.memoryBytes / 1024 ** 2)} MB, ${this.settings.limits.pids} processes): a step that downloads (apt-get, curl, pip) fails; start from an allowed image that has what it needs.\nThe end of the step's output:\n${this.log}`,
        );
      }
    } finally {
      this.abort.signal.removeEventListener("abort", kill);
    }
    return container;
  }

  private async copyStep(
    parent: string,
    config: ImageConfig,
    step: DockerfileInstruction,
    escapeChar: string,
    vars: Record<string, string>,
    context: string,
    done: string[],
  ): Promise<string> {
    const { sources, dest } = copyPaths(step, escapeChar, vars);
    const absolute = path.posix.resolve(config.WorkingDir || "/", dest);
    const target = absolute.replace(/^\/+/, "");
    const intoDirectory = /(^|\/)\.?$/.test(dest) || sources.length > 1;
    const chown = step.flags.chown?.split(":").map(Number);
    const owner: [number, number] = chown ? [chown[0]!, chown[1] ?? chown[0]!] : [0, 0];
    const from = step.flags.from;
    if (from !== undefined) {
      const index = /^\d+$/.test(from) ? Number(from) : undefined;
      const stageId = index !== undefined ? done[index] : undefined;
      const named = stageId ?? this.stageByName(from, done);
      return this.step(parent, config, ["copy-from", named, sources, dest, owner], async () => {
        const source = await this.container(named, ["true"], config, {});
        const into = await this.container(parent, ["true"], config, {});
        for (const src of sources) {
          const srcPath = path.posix.resolve("/", src);
          const isDir = await isDirectoryIn(source, srcPath);
          const toDirectory = intoDirectory || (await isDirectoryIn(into, absolute));
          const to = isDir || !toDirectory ? target : `${target}/${path.posix.basename(srcPath)}`;
          const archive = (await source.getArchive({ path: srcPath })) as unknown as Readable;
          await into.putArchive(
            retarget(archive, to, () => isDir, chown ? owner : null),
            { path: "/" },
          );
        }
        return into;
      });
    }
    const found = (await Promise.all(sources.map((s) => contextSources(context, s, step.line)))).flat();
    // The digest is of the files alone (their names under the source, modes, contents; no times):
    // the key adds the destination and the image it goes into.
    const digests = await Promise.all(found.map((s) => digestOf(contextTar(s, "x", owner, true))));
    return this.step(parent, config, ["copy", found.map((s) => s.name), digests, dest, owner], async () => {
      const into = await this.container(parent, ["true"], config, {});
      const toDirectory = intoDirectory || found.length > 1 || (await isDirectoryIn(into, absolute));
      for (const source of found) {
        const to = source.directory || !toDirectory ? target : `${target}/${source.name}`;
        await into.putArchive(contextTar(source, to, owner, false), { path: "/" });
      }
      return into;
    });
  }

  private stageByName(name: string, done: string[]): string {
    const parsed = parseDockerfile(this.spec.dockerfile, "build.dockerfile", (image) =>
      this.spec.bases.includes(image),
    );
    const index = parsed.stages.findIndex((s) => s.name === name.toLowerCase());
    const id = done[index];
    if (id === undefined)
      throw buildFailed(`--from=${name} is not a stage built before`, "Name a stage defined above.");
    return id;
  }
}

/** Builds a repository's image from its checkout (see the top of this file); returns the image's id. */
export function buildRepoImage(
  docker: Docker,
  spec: RepoImageBuildSpec,
  settings: RepoBuildSettings,
): Promise<string> {
  return new RepoBuild(docker, spec, settings).run();
}
