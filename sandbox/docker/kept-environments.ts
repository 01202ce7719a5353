/**
 * Kept environments (warm start, the run's prepare step): after setup, its container is
 * committed to a local image `agent-fix-kept:<key>` with the workspace files setup produced under
 * KEPT_WORKSPACE, which a sandbox of that image copies into its workspace itself (sandbox/docker/copy.ts),
 * and the few the host needs (outside the directories the host's tree skips) under KEPT_HOST_FILES too.
 * Later runs of the same key start every sandbox from that image and skip setup. Before
 * anything is kept, what setup changed outside the workspace is searched for the setup secrets. Least
 * recently used images (a hit re-tags its image: Docker's LastTagTime) go above the operator's size.
 * List them with `docker images --filter label=agent-fix.kept`.
 */
import { createHash } from "node:crypto";
import { PassThrough, type Readable } from "node:stream";
import type Docker from "dockerode";
import { pack } from "tar-fs";
import type {
  KeepInput,
  KeepRefusal,
  KeptEnvironment,
  PreparedEnvironments,
  Sandbox,
  SandboxOrigin,
} from "../../src/shared/contracts.js";
import { changedPaths, scanImage } from "./keep-scan.js";
import { isNotFound, parseSize, SANDBOX_UID } from "./spec.js";

export const KEPT_LABEL = {
  /** The store's name (the images' repository), on every kept image. */
  kept: "agent-fix.kept",
  key: "agent-fix.kept.key",
  repository: "agent-fix.kept.repository",
  /** Bytes the environment adds to its base image (the committed layer). */
  bytes: "agent-fix.kept.bytes",
  /** Milliseconds since the epoch. */
  prepared: "agent-fix.kept.prepared",
  /** How many files KEPT_HOST_FILES holds (absent on images kept before it existed). */
  hostFiles: "agent-fix.kept.host-files",
  /** The image setup ran in, as named, and its id: what a trajectory records (absent on older images). */
  base: "agent-fix.kept.base",
  baseId: "agent-fix.kept.base-id",
} as const;

/** Where the kept image holds the workspace files setup produced, and the subset the host needs. */
const KEPT_WORKSPACE_PARENT = "/var/lib";
const KEPT_WORKSPACE_NAME = "agent-fix-workspace";
export const KEPT_WORKSPACE = `${KEPT_WORKSPACE_PARENT}/${KEPT_WORKSPACE_NAME}`;
const KEPT_HOST_FILES_NAME = "agent-fix-host-files";
const KEPT_HOST_FILES = `${KEPT_WORKSPACE_PARENT}/${KEPT_HOST_FILES_NAME}`;

const DEFAULT_KEPT_NAME = "agent-fix-kept";
const DEFAULT_KEPT_MAX_SIZE = "20g";

export interface KeptEnvironmentsOptions {
  /** The images' repository name (default agent-fix-kept); tests use their own. */
  name?: string;
  /** Total size above which the least recently used are removed, e.g. "20g" (default). */
  maxSize?: string;
}

interface KeptImage {
  id: string;
  tags: string[];
  bytes: number;
  usedAt: number;
}

export class DockerPreparedEnvironments implements PreparedEnvironments {
  readonly name: string;
  readonly maxBytes: number;

  constructor(
    private readonly docker: Docker,
    private readonly defaultImage: string,
    options: KeptEnvironmentsOptions = {},
  ) {
    this.name = options.name ?? DEFAULT_KEPT_NAME;
    this.maxBytes = parseSize(options.maxSize ?? DEFAULT_KEPT_MAX_SIZE);
  }

  /** Whether `image` is one of this store's (run as it is: it derives from a runnable image). */
  owns(image: string): boolean {
    return image.startsWith(`${this.name}:`);
  }

  /** An image's id; null when the engine does not have it. */
  private async imageId(image: string): Promise<string | null> {
    try {
      return (await this.docker.getImage(image).inspect()).Id;
    } catch (error) {
      if (isNotFound(error)) return null;
      throw error;
    }
  }

  /** The key with the base image's id: an image built again under the same name prepares anew. */
  private async fullKey(key: string, image: string): Promise<string | null> {
    const id = await this.imageId(image);
    return id === null ? null : keyWithImage(key, id);
  }

  /**
   * Where a sandbox of the kept image `image` came from: the image setup ran in (its labels; an image kept
   * before they existed gives its parent's id), and the environment itself.
   */
  async origin(image: string): Promise<SandboxOrigin> {
    const info = await this.docker.getImage(image).inspect();
    const labels = info.Config?.Labels ?? {};
    const parent = info.Parent || null;
    return {
      image: labels[KEPT_LABEL.base] ?? parent ?? "unknown",
      imageId: labels[KEPT_LABEL.baseId] || parent,
      kept: {
        image,
        key: labels[KEPT_LABEL.key] ?? "unknown",
        preparedAt: new Date(Number(labels[KEPT_LABEL.prepared] ?? 0)).toISOString(),
      },
    };
  }

  async find(key: string, image: string | undefined): Promise<KeptEnvironment | null> {
    const full = await this.fullKey(key, image ?? this.defaultImage);
    if (!full) return null;
    const tag = full.slice(0, 32);
    const images = await this.docker.listImages({
      filters: JSON.stringify({ label: [`${KEPT_LABEL.kept}=${this.name}`, `${KEPT_LABEL.key}=${full}`] }),
    });
    // One kept again under the same tag leaves the former untagged: not that one.
    const found = images.find((image) => image.RepoTags?.includes(`${this.name}:${tag}`));
    if (!found) return null;
    // Tagging again sets LastTagTime: the eviction's "last used".
    await this.docker.getImage(found.Id).tag({ repo: this.name, tag });
    return {
      image: `${this.name}:${tag}`,
      preparedAt: new Date(Number(found.Labels?.[KEPT_LABEL.prepared] ?? 0)),
    };
  }

  /**
   * The kept files the host needs, as a tar stream of one top directory; null when there are none (no
   * container is made: the warm start's usual case). An image kept before KEPT_HOST_FILES gives them all.
   */
  async workspace(environment: KeptEnvironment): Promise<Readable | null> {
    const info = await this.docker.getImage(environment.image).inspect();
    const count = info.Config?.Labels?.[KEPT_LABEL.hostFiles];
    if (count === "0") return null;
    return this.archiveOf(environment.image, count === undefined ? KEPT_WORKSPACE : KEPT_HOST_FILES);
  }

  private async archiveOf(image: string, path: string): Promise<Readable> {
    const container = await this.docker.createContainer({
      Image: image,
      Entrypoint: ["true"],
      Cmd: [],
      NetworkDisabled: true,
      HostConfig: { NetworkMode: "none" },
    });
    const remove = () => container.remove({ force: true }).catch(() => undefined);
    try {
      const archive = (await container.getArchive({ path })) as Readable;
      const out = new PassThrough();
      archive.on("error", (error) => out.destroy(error));
      archive.pipe(out);
      out.on("close", () => void remove());
      return out;
    } catch (error) {
      await remove();
      throw error;
    }
  }

  /**
   * Stops the setup container (nothing setup started runs on), adds the workspace files, commits it
   * untagged, scans what it changed outside the workspace, then tags it, or removes it on a hit.
   */
  async keep(sandbox: Sandbox, input: KeepInput): Promise<KeptEnvironment | KeepRefusal> {
    const container = this.docker.getContainer(sandbox.id);
    await container.kill().catch(() => undefined); // stopped already
    await container.wait();
    const changed = await changedPaths(container);
    const { dir, files, hostFiles } = input.workspace;
    await container.putArchive(packFiles(dir, files, KEPT_WORKSPACE_NAME), { path: KEPT_WORKSPACE_PARENT });
    if (hostFiles.length > 0) {
      await container.putArchive(packFiles(dir, hostFiles, KEPT_HOST_FILES_NAME), {
        path: KEPT_WORKSPACE_PARENT,
      });
    }
    // With its size: the committed layer's, which the eviction counts (dockerode's types lack the option).
    const inspect = container.inspect.bind(container) as (options: {
      size: boolean;
    }) => Promise<{ SizeRw?: number }>;
    const size = await inspect({ size: true });
    const baseId = await this.imageId(sandbox.image);
    const full = baseId === null ? input.key : keyWithImage(input.key, baseId);
    const preparedAt = new Date();
    const labels = {
      [KEPT_LABEL.kept]: this.name,
      [KEPT_LABEL.key]: input.reusable ? full : "none",
      [KEPT_LABEL.repository]: input.repository,
      [KEPT_LABEL.bytes]: String(size.SizeRw ?? 0),
      [KEPT_LABEL.prepared]: String(preparedAt.getTime()),
      [KEPT_LABEL.hostFiles]: String(hostFiles.length),
      [KEPT_LABEL.base]: sandbox.image,
      [KEPT_LABEL.baseId]: baseId ?? "",
    };
    const changes = Object.entries(labels)
      .map(([name, value]) => `LABEL ${JSON.stringify(name)}=${JSON.stringify(value)}`)
      .join("\n");
    const { Id: id } = (await container.commit({ changes })) as { Id: string };
    const hits = await scanImage(this.docker, id, changed, input.secrets).catch(async (error) => {
      await this.docker
        .getImage(id)
        .remove()
        .catch(() => undefined);
      throw error;
    });
    if (hits.length > 0) {
      await this.docker.getImage(id).remove({ force: true });
      return { kind: "secret", hits };
    }
    const tag = full.slice(0, 32);
    await this.docker.getImage(id).tag({ repo: this.name, tag });
    await this.evict().catch(() => undefined); // a failed eviction waits for the next keep
    return { image: `${this.name}:${tag}`, preparedAt };
  }

  /** This store's images, the most recently used first. */
  async list(): Promise<KeptImage[]> {
    const images = await this.docker.listImages({
      filters: JSON.stringify({ label: [`${KEPT_LABEL.kept}=${this.name}`] }),
    });
    const kept = await Promise.all(
      images.map(async (image): Promise<KeptImage | null> => {
        const info = await this.docker
          .getImage(image.Id)
          .inspect()
          .catch(() => null); // removed meanwhile
        if (!info) return null;
        const tagged = Date.parse(
          (info as { Metadata?: { LastTagTime?: string } }).Metadata?.LastTagTime ?? "",
        );
        return {
          id: image.Id,
          tags: image.RepoTags ?? [],
          bytes: Number(image.Labels?.[KEPT_LABEL.bytes] ?? 0),
          usedAt: Number.isFinite(tagged) ? tagged : 0,
        };
      }),
    );
    return kept.filter((image) => image !== null).sort((a, b) => b.usedAt - a.usedAt);
  }

  /** Removes the least recently used images beyond the size; returns their tags. */
  async evict(): Promise<string[]> {
    let total = 0;
    const removed: string[] = [];
    for (const image of await this.list()) {
      total += image.bytes;
      if (total <= this.maxBytes) continue;
      try {
        await this.docker.getImage(image.id).remove({ force: false });
        removed.push(...image.tags);
        total -= image.bytes;
      } catch {
        // In use by a running sandbox: it stays (and counts) until a later eviction.
      }
    }
    return removed;
  }
}

function keyWithImage(key: string, imageId: string): string {
  return createHash("sha256").update(`${key}\0${imageId}`).digest("hex");
}

/** Workspace files as a tar under `top`/, owned by the sandbox's user. */
function packFiles(dir: string, files: string[], top: string): Readable {
  return pack(dir, {
    entries: files,
    map: (header) => ({
      ...header,
      name: `${top}/${header.name}`,
      uid: SANDBOX_UID,
      gid: SANDBOX_UID,
    }),
  }) as unknown as Readable;
}
