import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SANDBOX_IMAGE } from "../../sandbox/version.js";
import { requireRedis, requireSandboxImage } from "../support/services.js";
import { Stack } from "../support/stack.js";
import { waitFor } from "../support/stack-parts.js";

// Real Redis, real Docker, the real app and worker, the GitHub stand-in: a repository whose
// devcontainer's Dockerfile fetches a URL of the host's loopback in the exec form (which the engine's
// builder fetched from the host's network namespace). The run stops on the check, naming the line,
// and the loopback-only service sees no request.
const ready = (await requireRedis()) && (await requireSandboxImage());

describe.runIf(ready)("a hostile devcontainer Dockerfile through the app", () => {
  const stack = new Stack({});
  let server: Server;
  let port = 0;
  const requests: string[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      requests.push(req.url ?? "");
      res.end("loopback secret\n");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    port = (server.address() as AddressInfo).port;
    await stack.start();
  });
  afterAll(async () => {
    await stack.stop();
    await new Promise((resolve) => server?.close(resolve));
  });

  it("an exec-form ADD of the host's loopback is refused before any build, nothing fetched", async () => {
    const repo = await stack.addSampleRepo("devcontainer-url", {
      ".devcontainer/devcontainer.json": '{ "build": { "dockerfile": "Dockerfile", "context": ".." } }',
      ".devcontainer/Dockerfile": `FROM ${SANDBOX_IMAGE}\nADD ["http://127.0.0.1:${port}/metrics", "/loot"]\n`,
    });
    const issue = stack.addIssue(repo);
    expect(await stack.label(issue)).toBeLessThan(300);
    const status = await waitFor("a final status", () => stack.finalStatus(issue), 240_000);
    expect(status.body).toContain(".devcontainer/Dockerfile:2:");
    expect(status.body).toContain("is fetched from the network");
    expect(stack.pulls(issue)).toEqual([]);
    expect(requests).toEqual([]);
  }, 300_000);
});
