import { execFileSync } from "node:child_process";
import Docker from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KEPT_LABEL } from "../../sandbox/docker/kept-environments.js";
import { requireRedis, requireSandboxImage } from "../support/services.js";
import { type SampleRepo, Stack } from "../support/stack.js";
import { filesOf, type IssueRef, SAMPLE_REPO_DIR, waitFor } from "../support/stack-parts.js";

// Hostile, through the app end to end (real Redis, real Docker, the real app and worker, the GitHub
// stand-in, the sample's replay model). The operator binds NPM_TOKEN to octo/identity; its first run
// keeps its environment and leaves a standby. Then the repository is deleted and another account
// re-creates octo/identity (a new id, in its own installation) with the very same files and config, and
// labels an issue: its run must get no setup secret, not the kept environment (setup runs anew) and not
// the standby of the old repository. Setup writes whether it held the secret outside the workspace
// (/var/tmp), where the kept image holds it, and a stamp the tests compare, so a run on an environment
// other than its own fails its tests.
const ready = (await requireRedis()) && (await requireSandboxImage());
const STORE = `agent-fix-kept-identity-${process.pid}`;
const SECRET = "npm_identity0123456789abcdef";
const docker = new Docker();

const SETUP =
  'mkdir -p deps && if [ -n "$NPM_TOKEN" ]; then echo given; else echo none; fi > /var/tmp/secret-seen' +
  " && date +%s%N > /var/tmp/prepared && cp /var/tmp/prepared deps/stamp";
const FILES = {
  ".github/agent-fix.yml": [
    "setup:",
    "  commands:",
    `    - '${SETUP}'`,
    "test:",
    "  command: cmp /var/tmp/prepared deps/stamp && python3 -m unittest discover -s tests",
    "limits:",
    "  maxSteps: 20",
    "",
  ].join("\n"),
  ".gitignore": "__pycache__/\n*.pyc\ndeps/\n",
  "requirements.txt": "# no dependencies\n",
};

/** This store's kept images, oldest first, with what setup saw of the secret. */
async function keptImages(): Promise<{ id: string; secret: string }[]> {
  const images = await docker.listImages({
    filters: JSON.stringify({ label: [`${KEPT_LABEL.kept}=${STORE}`] }),
  });
  const byAge = images.sort(
    (a, b) => Number(a.Labels?.[KEPT_LABEL.prepared]) - Number(b.Labels?.[KEPT_LABEL.prepared]),
  );
  return byAge.map((image) => ({
    id: image.Id,
    secret: execFileSync(
      "docker",
      ["run", "--rm", "--network", "none", "--entrypoint", "cat", image.Id, "/var/tmp/secret-seen"],
      { encoding: "utf8" },
    ).trim(),
  }));
}

describe.runIf(ready)("identity by id: a repository's name re-created by another account", () => {
  const stack = new Stack({
    setupSecrets: { "octo/identity": { NPM_TOKEN: SECRET } },
    env: { AGENT_FIX_KEPT_ENVIRONMENTS_NAME: STORE },
    workerTuning: { keptEnvironments: { size: "2g" } },
  });

  beforeAll(() => stack.start());
  afterAll(async () => {
    await stack.stop();
    for (const { id } of await keptImages()) await docker.getImage(id).remove({ force: true });
  });

  const runIssue = async (repo: SampleRepo): Promise<{ issue: IssueRef; status: string }> => {
    const issue = stack.addIssue(repo);
    expect(await stack.label(issue)).toBeLessThan(300);
    const status = await waitFor("a final status", () => stack.finalStatus(issue), 420_000);
    expect(status.body).toContain("opened draft pull request #");
    return { issue, status: status.body };
  };

  it("gets no setup secret, kept environment or standby of the repository that held the name", async () => {
    const original = await stack.addSampleRepo("identity", FILES);
    const first = await runIssue(original);
    expect(first.status).not.toContain("reused the environment");
    // The secret is bound to this repository's id and installation: its setup had it.
    expect((await keptImages()).map((image) => image.secret)).toEqual(["given"]);

    await stack.github.deleteRepo("octo", "identity");
    const created = await stack.github.addRepo({
      owner: "octo",
      name: "identity",
      files: { ...(await filesOf(SAMPLE_REPO_DIR)), ...FILES },
      installationId: 2,
      permissions: { maintainer: "write" },
    });
    expect(created.id).not.toBe(original.id);
    const taken: SampleRepo = { owner: "octo", name: "identity", id: created.id, installationId: 2 };
    const second = await runIssue(taken);
    // Setup ran again, without the secret, and kept an environment of its own.
    expect(second.status).not.toContain("reused the environment");
    expect((await keptImages()).map((image) => image.secret)).toEqual(["given", "none"]);
    // The old repository's standby did not serve it either.
    expect(await agentSandboxFromStandby(taken, second.issue)).toBe(false);
  }, 1_200_000);

  /** Whether the run's agent sandbox started as a standby (its start-up phases, in the job's result). */
  async function agentSandboxFromStandby(repo: SampleRepo, issue: IssueRef): Promise<boolean> {
    const job = await waitFor("the job's result", async () => {
      const found = await stack.app!.queue.queue.getJob(`fix-${repo.id}-${issue.number}`);
      return found?.finishedOn ? found : undefined;
    });
    const timings = (job.returnvalue as { timings?: Record<string, number> } | undefined)?.timings;
    expect(timings?.start_agent_sandbox).toBeGreaterThan(0);
    return timings !== undefined && "start_sandbox_standby" in timings;
  }
});
