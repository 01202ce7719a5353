import { execFileSync } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requireRedis, requireSandboxImage } from "../support/services.js";
import { Stack } from "../support/stack.js";
import { type IssueRef, SAMPLE_REPLAY, waitFor } from "../support/stack-parts.js";

// What the host takes in from a sandbox is bounded as it arrives. Real Redis, real Docker sandboxes, the
// real app and worker, the GitHub stand-in and a replayed hostile model. The worker's AGENT_FIX_WORK_DIR
// is a 256 MiB tmpfs: a host that wrote what the sandbox sent before counting it would fill it (and the
// run would die of it); a bounded one refuses at the first entry past the cap and the agent goes on.
const ready = (await requireRedis()) && (await requireSandboxImage());

function turn(content: string, tool: string, args: Record<string, unknown> = {}): string {
  const id = `call_${randomBytes(4).toString("hex")}`;
  return JSON.stringify({
    role: "assistant",
    content,
    tool_calls: [{ id, type: "function", function: { name: tool, arguments: JSON.stringify(args) } }],
  });
}

/** The sample's recorded fix of median() with `extra` turns after its edits, before its test run. */
async function fixWith(extra: string[]): Promise<string> {
  const lines = (await readFile(SAMPLE_REPLAY, "utf8")).trim().split("\n");
  return [...lines.slice(0, 5), ...extra, ...lines.slice(5)].join("\n");
}

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

  const run = async (name: string, extra: string[]) => {
    await writeFile(replay, await fixWith(extra));
    const issue = stack.addIssue(await stack.addSampleRepo(name));
    expect(await stack.label(issue)).toBeLessThan(300);
    const status = await waitFor("the run to finish", () => stack.finalStatus(issue), 420_000);
    return { issue, status: status.body };
  };

  it("a sparse 1.5 GiB file and a hard link to it in a 64 MiB workspace: refused at submit, the agent told", async () => {
    const { issue, status } = await run("sparse", [
      turn("A placeholder for the cache.", "bash", {
        command:
          "truncate -s 1536M cache.bin && ln cache.bin cache-copy.bin && printf 'cache*.bin\\n' >> .git/info/exclude && ls -ls cache*.bin",
      }),
      turn("Submitting.", "submit"),
      turn("Reviewed; submitting.", "submit"),
      turn("Remove the placeholder.", "bash", { command: "rm cache.bin cache-copy.bin" }),
    ]);
    expect(status).not.toContain("Maximum call stack");
    expect(status).toContain("opened draft pull request #");
    const pull = stack.pulls(issue)[0]!;
    const refusal = (await trajectoryOf(stack, issue, pull.number)).history
      .filter((m) => m.role !== "assistant")
      .map((m) => m.content ?? "")
      .find((text) => /cache(-copy)?\.bin/.test(text) && text.includes("refused"));
    // Told what was refused and why, in the limit's own terms, so the agent can fix it.
    expect(refusal).toMatch(/cache(-copy)?\.bin/);
    expect(refusal).toContain("past 64 MiB (the workspace's size, AGENT_FIX_WORKSPACE_SIZE)");
    // Refused as received: not a test run, so no gate attempt was spent on it.
    expect(refusal).toContain("no attempt was used");
    const files = standInGit(stack, issue, "ls-tree", "-r", "--name-only", pull.head);
    expect(files).not.toContain("cache.bin");
  }, 600_000);

  it("100,000 empty files hidden by the agent's .git/info/exclude: refused, the pull request holds the fix only", async () => {
    const { issue, status } = await run("many-files", [
      turn("Fixtures for each value.", "bash", {
        command:
          "mkdir -p fixtures && (cd fixtures && seq 1 100000 | xargs touch) && echo fixtures/ >> .git/info/exclude && git status --short | wc -l",
      }),
      turn("Submitting.", "submit"),
      turn("Reviewed; submitting.", "submit"),
      turn("Drop the fixtures.", "bash", { command: "rm -rf fixtures" }),
    ]);
    expect(status).not.toContain("Maximum call stack");
    expect(status).toContain("opened draft pull request #");
    const pull = stack.pulls(issue)[0]!;
    const refusal = (await trajectoryOf(stack, issue, pull.number)).history
      .filter((m) => m.role !== "assistant")
      .map((m) => m.content ?? "")
      .find((text) => /fixtures\//.test(text) && /files/.test(text));
    expect(refusal).toContain("most are under fixtures/");
    expect(refusal).toContain(".git/info/exclude hides from git still count");
    const files = standInGit(stack, issue, "ls-tree", "-r", "--name-only", pull.head).split("\n");
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
