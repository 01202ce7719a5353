import { execFileSync } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Docker from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KEPT_LABEL } from "../../sandbox/docker/kept-environments.js";
import { SANDBOX_IMAGE } from "../../sandbox/version.js";
import type { Trajectory } from "../../src/shared/contracts.js";
import { requireRedis, requireSandboxImage } from "../support/services.js";
import { type SampleRepo, Stack } from "../support/stack.js";
import { type IssueRef, waitFor } from "../support/stack-parts.js";

// Real Redis, real Docker, the real app and worker, the GitHub stand-in, the sample's replay model.
// Every setup that runs keeps an image (one kept again under its tag leaves the former one, labelled,
// untagged): the number of this store's images counts setup runs. Setup writes outside the workspace
// (/var/tmp) and into an ignored directory; the tests need both, so the baseline and the gate fail
// on a warm run whose sandboxes lack what setup prepared.
const ready = (await requireRedis()) && (await requireSandboxImage());
const STORE = `agent-fix-kept-e2e-${process.pid}`;
const docker = new Docker();

const CONFIG = [
  "setup:",
  "  commands:",
  "    - date +%s%N > /var/tmp/prepared && mkdir -p deps && cp /var/tmp/prepared deps/stamp",
  "test:",
  "  command: cmp /var/tmp/prepared deps/stamp && python3 -m unittest discover -s tests",
  "limits:",
  "  maxSteps: 20",
].join("\n");

async function keptImages(): Promise<{ id: string; prepared: number }[]> {
  const images = await docker.listImages({
    filters: JSON.stringify({ label: [`${KEPT_LABEL.kept}=${STORE}`] }),
  });
  return images.map((image) => ({ id: image.Id, prepared: Number(image.Labels?.[KEPT_LABEL.prepared]) }));
}

describe.runIf(ready)("warm start: a second run of a repository skips setup", () => {
  const stack = new Stack({
    env: { AGENT_FIX_KEPT_ENVIRONMENTS_NAME: STORE },
    workerTuning: { keptEnvironments: { size: "2g" } },
  });
  let repo: SampleRepo;

  beforeAll(async () => {
    await stack.start();
    repo = await stack.addSampleRepo("warm", {
      ".github/agent-fix.yml": `${CONFIG}\n`,
      ".gitignore": "__pycache__/\n*.pyc\ndeps/\n",
      "requirements.txt": "# no dependencies\n",
    });
  });
  afterAll(async () => {
    await stack.stop();
    for (const { id } of await keptImages()) await docker.getImage(id).remove({ force: true });
  });

  const runIssue = async (): Promise<{ issue: IssueRef; status: string }> => {
    const issue = stack.addIssue(repo);
    expect(await stack.label(issue)).toBeLessThan(300);
    const status = await waitFor("a final status", () => stack.finalStatus(issue), 420_000);
    expect(status.body).toContain("opened draft pull request #");
    return { issue, status: status.body };
  };

  it("prepares once, reuses it with the status saying so, and prepares anew when a lockfile changes", async () => {
    const first = await runIssue();
    expect(first.status).not.toContain("reused the environment");
    const [kept, ...more] = await keptImages();
    expect(more).toEqual([]);

    const second = await runIssue();
    const preparedAt = new Date(kept!.prepared).toISOString();
    expect(second.status).toContain(`Setup skipped: reused the environment prepared at ${preparedAt}`);
    // Setup did not run again: it would have kept another image.
    expect(await keptImages()).toHaveLength(1);
    // The agent's sandbox was the standby the first run left (sandbox/docker/standby.ts), and the tests
    // the gate ran in it passed: it held what setup prepared.
    expect(await agentSandboxFromStandby(second.issue)).toBe(true);
    // The trajectory, as the app serves it from the store: the image setup ran in, not the kept tag
    // (deleted when the environment is evicted), and the environment the run started from.
    const { page, trajectory } = await servedTrajectory(second.issue);
    const { info } = trajectory;
    expect(page).toContain(`<code>${SANDBOX_IMAGE}</code> (kept environment prepared at ${preparedAt})`);
    expect(info.sandbox_image).toBe(SANDBOX_IMAGE);
    expect(info.sandbox_image_id).toBe((await docker.getImage(SANDBOX_IMAGE).inspect()).Id);
    expect(info.kept_environment).toMatchObject({
      image: expect.stringMatching(`^${STORE}:`),
      prepared_at: preparedAt,
    });

    await commitToMain(stack, repo, { "requirements.txt": "# one line changed\n" });
    const third = await runIssue();
    expect(third.status).not.toContain("reused the environment");
    expect(await keptImages()).toHaveLength(2);
    // A new environment: no standby of it existed, and the old one's never serves it.
    expect(await agentSandboxFromStandby(third.issue)).toBe(false);
  }, 1_200_000);

  /** The run's trajectory through the signed link its pull request's summary gives. */
  async function servedTrajectory(issue: IssueRef): Promise<{ page: string; trajectory: Trajectory }> {
    const [pr] = stack.pulls(issue);
    const [summary] = stack.github.state.commentsOn(issue.owner, issue.repo, pr!.number);
    const link = /\[Full trajectory\]\((\S+)\)/.exec(summary!.body)?.[1];
    const page = await (await fetch(link!)).text();
    const trajectory = (await (await fetch(`${link!}&format=json`)).json()) as Trajectory;
    return { page, trajectory };
  }

  /** Whether the run's agent sandbox started as a standby (its start-up phases, in the job's result). */
  async function agentSandboxFromStandby(issue: IssueRef): Promise<boolean> {
    // The status is final a moment before the job's result is stored.
    const job = await waitFor("the job's result", async () => {
      const found = await stack.app!.queue.queue.getJob(`fix-${repo.id}-${issue.number}`);
      return found?.finishedOn ? found : undefined;
    });
    const timings = (job.returnvalue as { timings?: Record<string, number> } | undefined)?.timings;
    expect(timings?.start_agent_sandbox).toBeGreaterThan(0);
    return timings !== undefined && "start_sandbox_standby" in timings;
  }
});

/** A commit on the stand-in's main, as a maintainer's merge would make it. */
async function commitToMain(stack: Stack, repo: SampleRepo, files: Record<string, string>): Promise<void> {
  const work = await mkdtemp(join(tmpdir(), "af-warm-e2e-"));
  const env = {
    ...process.env,
    GIT_AUTHOR_NAME: "m",
    GIT_AUTHOR_EMAIL: "m@x",
    GIT_COMMITTER_NAME: "m",
    GIT_COMMITTER_EMAIL: "m@x",
  };
  const git = (...args: string[]) => execFileSync("git", args, { cwd: work, env });
  try {
    git("clone", "-q", stack.github.repoDir(repo.owner, repo.name), ".");
    for (const [path, text] of Object.entries(files)) await writeFile(join(work, path), text);
    git("commit", "-qam", "bump the lockfile");
    // Into the bare repository directly: the stand-in's hook refuses pushes to its protected main.
    execFileSync("git", [
      "--git-dir",
      stack.github.repoDir(repo.owner, repo.name),
      "fetch",
      "-q",
      work,
      "HEAD:main",
    ]);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
