/**
 * The containers the engine creates while a test file runs, from its live event stream. A `since`
 * query at the end would miss some: the engine keeps only its last 256 events for it, and on a busy
 * machine (parallel test files, the ACI's execs) a run's creates are pushed out of them, so a count
 * comes out low, or a "none were created" passes whatever happened.
 */
import type { Readable } from "node:stream";
import Docker from "dockerode";

interface CreateEvent {
  Actor: { ID: string; Attributes: Record<string, string> };
}

export interface ContainerCreates {
  /** Names of containers the stack of `prefix` created since the watch began; of `job` only, if given. */
  createdBy(prefix: string, job?: string): string[];
  stop(): void;
}

/** Watches `docker`'s engine: this host's by default, or a test's private one. */
export async function watchContainerCreates(docker = new Docker()): Promise<ContainerCreates> {
  const stream = (await docker.getEvents({
    filters: JSON.stringify({ type: ["container"], event: ["create"] }),
  })) as Readable;
  const created: CreateEvent[] = [];
  let pending = "";
  stream.on("data", (chunk: Buffer) => {
    const lines = (pending + chunk.toString("utf8")).split("\n");
    pending = lines.pop() ?? "";
    for (const line of lines) if (line.trim()) created.push(JSON.parse(line) as CreateEvent);
  });
  return {
    createdBy: (prefix, job) =>
      created
        .filter((e) => e.Actor.Attributes["agent-fix.worker"]?.startsWith(`${prefix}/`))
        .filter((e) => job === undefined || e.Actor.Attributes["agent-fix.job"] === job)
        .map((e) => e.Actor.Attributes.name ?? ""),
    stop: () => stream.destroy(),
  };
}
