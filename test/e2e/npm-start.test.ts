import { spawn } from "node:child_process";
import { once } from "node:events";
import { createServer } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requireRedis, requireSandboxImage } from "../support/services.js";
import { Stack } from "../support/stack.js";
import { labelPayload, waitFor } from "../support/stack-parts.js";

// `npm start` itself (src/main.ts): webhook server and worker in one process, configured by the environment.
const ready = (await requireRedis()) && (await requireSandboxImage());

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

describe.runIf(ready)("npm start", () => {
  const stack = new Stack({ worker: false });
  beforeAll(() => stack.start());
  afterAll(() => stack.stop());

  it("serves webhooks and runs the job in the same process, then stops cleanly on SIGTERM", async () => {
    const port = await freePort();
    const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
      cwd: join(import.meta.dirname, "..", ".."),
      env: { ...stack.env, PORT: String(port), PUBLIC_URL: `http://127.0.0.1:${port}` },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
    try {
      const base = `http://127.0.0.1:${port}`;
      await waitFor("the server to answer /healthz", () =>
        fetch(`${base}/healthz`).then(
          (r) => r.ok,
          () => false,
        ),
      );
      const repo = await stack.addSampleRepo();
      const issue = stack.addIssue(repo);
      // The label is on the issue on GitHub, as the event says: the worker checks it before the run.
      stack.github.state.issue(issue.owner, issue.repo, issue.number)?.labels.push("agent-fix");
      const status = await stack.send(
        "issues",
        labelPayload(issue, "labeled", "maintainer"),
        undefined,
        `${base}/api/github/webhooks`,
      );
      expect(status).toBeLessThan(300);
      const final = await waitFor("the run to finish", () => stack.finalStatus(issue), 120_000);
      expect(final.body).toContain("opened draft pull request");
      expect(stack.pulls(issue)).toHaveLength(1);
      child.kill("SIGTERM");
      const [code] = await once(child, "exit");
      expect(code).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL");
      if (process.env.DEBUG_E2E) console.log(output);
    }
  }, 180_000);
});
