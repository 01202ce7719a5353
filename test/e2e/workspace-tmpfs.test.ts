import Docker from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LABEL } from "../../sandbox/docker/provider.js";
import { requireRedis, requireSandboxImage } from "../support/services.js";
import { Stack } from "../support/stack.js";
import { type IssueRef, waitFor } from "../support/stack-parts.js";

// Real Redis, real Docker sandboxes, the real app and worker (from the environment, as an operator
// runs it); GitHub is the stand-in, the model a replay.
const ready = (await requireRedis()) && (await requireSandboxImage());

describe.runIf(ready)("AGENT_FIX_WORKSPACE_SIZE: the sandbox's workspace in memory", () => {
  const stack = new Stack({ env: { AGENT_FIX_WORKSPACE_SIZE: "768m" } });
  const docker = new Docker();
  /** The workspace volume of each sandbox this stack's worker made, as Docker reports it. */
  const volumes: Array<{ name: string; options: Record<string, string> | null }> = [];
  const watching: Promise<void>[] = [];
  let events: NodeJS.ReadableStream | undefined;
  let issue: IssueRef;

  beforeAll(async () => {
    events = (await docker.getEvents({
      filters: { type: ["container"], event: ["create"], label: [LABEL.sandbox] },
    })) as NodeJS.ReadableStream;
    events.on("data", (chunk: Buffer) => {
      for (const line of chunk.toString("utf8").split("\n").filter(Boolean)) {
        const event = JSON.parse(line) as { Actor: { ID: string; Attributes: Record<string, string> } };
        // Other test files share the engine: only this stack's (tagged) worker counts.
        if (!event.Actor.Attributes[LABEL.worker]?.startsWith(`${stack.prefix}/`)) continue;
        watching.push(
          (async () => {
            const container = await docker.getContainer(event.Actor.ID).inspect();
            const mount = container.Mounts.find((m) => m.Destination === "/workspace");
            const volume = await docker.getVolume(mount?.Name ?? "").inspect();
            volumes.push({ name: volume.Name, options: volume.Options ?? null });
          })(),
        );
      }
    });
    await stack.start();
    const repo = await stack.addSampleRepo();
    issue = stack.addIssue(repo);
  });
  afterAll(async () => {
    (events as unknown as { destroy?: () => void } | undefined)?.destroy?.();
    await stack.stop();
  });

  it("runs the job with /workspace on a tmpfs volume of that size, and opens the pull request", async () => {
    expect(await stack.label(issue)).toBeLessThan(300);
    const status = await waitFor(
      "the status comment to reach a final state",
      () => stack.finalStatus(issue),
      240_000,
    );
    expect(status.body).toContain("opened draft pull request #");
    expect(stack.pulls(issue)).toHaveLength(1);

    await Promise.all(watching);
    expect(volumes.length).toBeGreaterThan(0);
    for (const volume of volumes) {
      expect(volume.options).toMatchObject({ type: "tmpfs", device: "tmpfs" });
      expect(volume.options?.o).toMatch(/(^|,)size=768m(,|$)/);
    }
    // The run's sandboxes go once the status says done.
    await waitFor("no sandbox left", async () => (await stack.containers()).length === 0, 60_000);
  });
});
