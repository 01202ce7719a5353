import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sampleFixWith, turn } from "../support/replay-turns.js";
import { requireRedis, requireSandboxImage } from "../support/services.js";
import { Stack } from "../support/stack.js";
import { type IssueRef, SAMPLE_REPLAY, waitFor } from "../support/stack-parts.js";

// What the host takes in from a sandbox is bounded as it arrives. Real Redis, real Docker sandboxes, the
// real app and worker, the GitHub stand-in and a replayed hostile model. The worker's AGENT_FIX_WORK_DIR
// is a 256 MiB tmpfs: a host that wrote what the sandbox sent before counting it would fill it (and the
// run would die of it); a bounded one refuses at the first entry past the cap and the agent goes on.
const ready = (await requireRedis()) && (await requireSandboxImage());

interface Trajectory {
  info: { exit_status: string };
  history: { role: string; content: string | null }[];
}

/** The run's trajectory as the app serves it, through the link in the pull request's summary. */
async function trajectoryOf(stack: Stack, issue: IssueRef, pull: number): Promise<Trajectory> {
  const summary = stack.github.state.commentsOn(issue.owner, issue.repo, pull).map((c) => c.body);
  const link = summary.map((body) => /\[Full trajectory\]\((\S+)\)/.exec(body)?.[1]).find(Boolean);
  expect(link).toBeDefined();
  return (await (await fetch(`${link!}&format=json`)).json()) as Trajectory;
}

function standInGit(stack: Stack, issue: IssueRef, ...args: string[]): string {
  return execFileSync("git", ["--git-dir", stack.github.repoDir(issue.owner, issue.repo), ...args], {
    encoding: "utf8",
  }).trim();
}

describe.runIf(ready)("the host takes in at most what the operator's limits allow", () => {
  const replay = join(tmpdir(), `af-bounded-replay-${randomUUID()}.jsonl`);
  let workDir = "";
  let stack: Stack;

  beforeAll(async () => {
    workDir = await mkdtemp(join(tmpdir(), "af-bounded-work-"));
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=256m", "tmpfs", workDir]);
    stack = new Stack({
      model: `replay:${replay}`,
      env: {
        AGENT_FIX_WORK_DIR: workDir,
        AGENT_FIX_WORKSPACE_SIZE: "64m",
        AGENT_FIX_CHANGE_MAX_FILES: "200",
      },
    });
    await stack.start();
  });
  afterAll(async () => {
    await stack?.stop();
    execFileSync("umount", ["-l", workDir]);
    await rm(workDir, { recursive: true, force: true });
    await rm(replay, { force: true });
  });

  /**
   * A run whose agent makes `hostile` files, submits twice (the review prompt, then the gate), then
   * removes them with `cleanup` and goes on with the fix: the run must publish, and the agent must
   * have been told, in the refusal that names `named`, why its first submit was not taken in.
   */
  const refusedThenFixed = async (name: string, hostile: string, cleanup: string, named: RegExp) => {
    await writeFile(
      replay,
      await sampleFixWith([
        turn("Files the change needs.", "bash", { command: hostile }),
        turn("Submitting.", "submit"),
        turn("Reviewed; submitting.", "submit"),
        turn("Remove them.", "bash", { command: cleanup }),
      ]),
    );
    const issue = stack.addIssue(await stack.addSampleRepo(name));
    expect(await stack.label(issue)).toBeLessThan(300);
    const status = (await waitFor("the run to finish", () => stack.finalStatus(issue), 420_000)).body;
    expect(status).not.toContain("Maximum call stack");
    expect(status).toContain("opened draft pull request #");
    const pull = stack.pulls(issue)[0]!;
    const refusal = (await trajectoryOf(stack, issue, pull.number)).history
      .filter((m) => m.role !== "assistant")
      .map((m) => m.content ?? "")
      .find((text) => named.test(text) && text.includes("refused"));
    // Refused as received: not a test run, so no gate attempt was spent on it.
    expect(refusal).toContain("no attempt was used");
    const files = standInGit(stack, issue, "ls-tree", "-r", "--name-only", pull.head).split("\n");
    return { refusal: refusal!, files };
  };

  it("a sparse 1.5 GiB file and a hard link to it in a 64 MiB workspace: refused at submit, the agent told", async () => {
    const { refusal, files } = await refusedThenFixed(
      "sparse",
      "truncate -s 1536M cache.bin && ln cache.bin cache-copy.bin && printf 'cache*.bin\\n' >> .git/info/exclude",
      "rm cache.bin cache-copy.bin",
      /cache(-copy)?\.bin/,
    );
    // Told what was refused and why, in the limit's own terms, so the agent can fix it.
    expect(refusal).toContain("past 64 MiB (the workspace's size, AGENT_FIX_WORKSPACE_SIZE)");
    expect(files.filter((path) => path.startsWith("cache"))).toEqual([]);
  }, 600_000);

  it("100,000 empty files hidden by the agent's .git/info/exclude: refused, the pull request holds the fix only", async () => {
    const { refusal, files } = await refusedThenFixed(
      "many-files",
      "mkdir -p fixtures && (cd fixtures && seq 1 100000 | xargs touch) && echo fixtures/ >> .git/info/exclude",
      "rm -rf fixtures",
      /fixtures\//,
    );
    expect(refusal).toContain("most are under fixtures/");
    expect(refusal).toContain(".git/info/exclude hides from git still count");
    expect(files.filter((path) => path.startsWith("fixtures/"))).toEqual([]);
    expect(files.length).toBeLessThan(20);
  }, 600_000);

  it("setup that leaves a sparse 1.5 GiB file: the run stops, saying which file and which limit", async () => {
    await writeFile(replay, await readFile(SAMPLE_REPLAY, "utf8"));
    const repo = await stack.addSampleRepo("sparse-setup", {
      ".github/agent-fix.yml": [
        "setup:",
        '  commands: ["truncate -s 1536M build-cache.bin"]',
        "  network: false",
        "test:",
        "  command: python3 -m unittest discover -s tests",
        "",
      ].join("\n"),
    });
    const issue = stack.addIssue(repo);
    expect(await stack.label(issue)).toBeLessThan(300);
    const status = (await waitFor("the run to finish", () => stack.finalStatus(issue), 420_000)).body;
    expect(status).toContain("stopped without a pull request");
    expect(status).toContain('"build-cache.bin" (1.5 GiB) brings it past 64 MiB');
    expect(stack.pulls(issue)).toEqual([]);
  }, 600_000);
});
