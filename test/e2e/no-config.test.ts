import { execFileSync } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type OpenAIStandIn, startOpenAIStandIn } from "../support/openai-server.js";
import { requireRedis, requireSandboxImage } from "../support/services.js";
import { Stack } from "../support/stack.js";
import {
  filesOf,
  type IssueRef,
  SAMPLE_ISSUE,
  SAMPLE_REPLAY,
  SAMPLE_REPO_DIR,
  waitFor,
} from "../support/stack-parts.js";

// Real Redis, real Docker sandboxes, the real app and worker, the GitHub stand-in. No repository has a
// .github/agent-fix.yml: the owner's .github repository names the model (a replay of the sample's
// fix), and the operator's own model is the OpenAI stand-in, which must never be asked.
const ready = (await requireRedis()) && (await requireSandboxImage());
/** The file's runs, all of one installation. */
const RUNS = 4;

// The runs go side by side (each its own repository; the owner's quota and the worker take all four at
// once): most of each is a sandbox's start, which overlap.
describe.runIf(ready).concurrent("a repository without .github/agent-fix.yml", () => {
  let openai: OpenAIStandIn;
  let stack: Stack;
  let configDir: string;

  const addIssue = (repo: { owner: string; name: string; id: number; installationId: number }): IssueRef =>
    stack.addIssue(repo, SAMPLE_ISSUE);
  const addRepo = async (owner: string, name: string, files: Record<string, string>) => {
    const repo = await stack.github.addRepo({ owner, name, files, permissions: { maintainer: "write" } });
    return { owner, name, id: repo.id, installationId: repo.installationId };
  };

  beforeAll(async () => {
    openai = await startOpenAIStandIn();
    configDir = await mkdtemp(join(tmpdir(), "af-no-config-"));
    const operatorConfig = join(configDir, "operator.yml");
    await writeFile(operatorConfig, `quotas:\n  runsAtOnce: ${RUNS}\n`);
    stack = new Stack({
      model: null,
      env: {
        OPENAI_BASE_URL: openai.url,
        OPENAI_API_KEY: "stand-in-key",
        AGENT_FIX_CONFIG: operatorConfig,
        AGENT_FIX_CONCURRENCY: String(RUNS),
      },
    });
    await stack.start();
    await addRepo("octo", ".github", {
      ".github/agent-fix.yml": `model: replay:${SAMPLE_REPLAY}\nlimits:\n  maxSteps: 20\n`,
    });
  });
  afterAll(async () => {
    await stack?.stop();
    await openai?.close();
    if (configDir) await rm(configDir, { recursive: true, force: true });
  });

  it("is set up and tested as detected, under its organisation's defaults, and gets its pull request", async () => {
    const { ".github/agent-fix.yml": _own, ...sample } = await filesOf(SAMPLE_REPO_DIR);
    const issue = addIssue(
      await addRepo("octo", "textstats", { ...sample, "requirements.txt": "# no dependencies\n" }),
    );
    expect(await stack.label(issue)).toBeLessThan(300);
    const status = await waitFor("a final status", () => stack.finalStatus(issue), 420_000);
    expect(status.body).toContain("opened draft pull request #");
    expect(status.body).toContain(
      "Settings: `octo/.github: .github/agent-fix.yml` (the organisation's defaults; this repository has no .github/agent-fix.yml).",
    );
    expect(status.body).toContain("- python in `/` (requirements.txt, unittest)");
    expect(status.body).toContain(
      [
        "```yaml",
        "setup:",
        "  commands:",
        "    - python3 -m venv --system-site-packages --without-pip .venv && (.venv/bin/python -m pip --version || .venv/bin/python -m ensurepip)",
        "    - .venv/bin/python -m pip install -r requirements.txt",
        "test:",
        "  command: .venv/bin/python -m unittest discover -s tests",
        "```",
      ].join("\n"),
    );
    // The detected test command was the gate: the pull request's proof names it, the venv is not in the change.
    const [pr] = stack.pulls(issue);
    expect(pr?.body).toContain(".venv/bin/python -m unittest discover -s tests");
    const bare = stack.github.repoDir(issue.owner, issue.repo);
    const changed = execFileSync(
      "git",
      ["--git-dir", bare, "diff", "--name-only", "main", "agent-fix/issue-1"],
      {
        encoding: "utf8",
      },
    );
    expect(changed.trim().split("\n")).toEqual(["tests/test_stats.py", "textstats/stats.py"]);
    expect(openai.requests).toHaveLength(0);
  }, 480_000);

  it("a Python repository with only tests/test_*.py and no project file is detected (unittest) and gets its pull request", async () => {
    // The sample as many small repositories are: a package and its unittest tests, nothing else.
    const { ".github/agent-fix.yml": _own, ...sample } = await filesOf(SAMPLE_REPO_DIR);
    expect(Object.keys(sample).filter((path) => /requirements|pyproject|setup\.(py|cfg)/.test(path))).toEqual(
      [],
    );
    const issue = addIssue(await addRepo("octo", "bare-textstats", sample));
    expect(await stack.label(issue)).toBeLessThan(300);
    const status = await waitFor("a final status", () => stack.finalStatus(issue), 420_000);
    expect(status.body).toContain("opened draft pull request #");
    expect(status.body).toContain("- python in `/` (tests/test_stats.py, no project file, unittest)");
    expect(status.body).toContain(
      [
        "```yaml",
        "setup:",
        "  commands:",
        "    - python3 -m venv --system-site-packages --without-pip .venv && (.venv/bin/python -m pip --version || .venv/bin/python -m ensurepip)",
        "test:",
        "  command: .venv/bin/python -m unittest discover -s tests",
        "```",
      ].join("\n"),
    );
    const [pr] = stack.pulls(issue);
    expect(pr?.body).toContain(
      "- `.venv/bin/python -m unittest discover -s tests` on the unchanged code (baseline): passed",
    );
    expect(openai.requests).toHaveLength(0);
  }, 480_000);

  it("a devcontainer naming a public image is a hint: the run falls back to detection, says so, and opens its pull request", async () => {
    const { ".github/agent-fix.yml": _own, ...sample } = await filesOf(SAMPLE_REPO_DIR);
    const devcontainer =
      '{\n  // the common Codespaces case\n  "image": "mcr.microsoft.com/devcontainers/python:3",\n}\n';
    const issue = addIssue(
      await addRepo("octo", "devstats", {
        ...sample,
        "requirements.txt": "# no dependencies\n",
        ".devcontainer/devcontainer.json": devcontainer,
      }),
    );
    expect(await stack.label(issue)).toBeLessThan(300);
    const status = await waitFor("a final status", () => stack.finalStatus(issue), 420_000);
    expect(status.body).toContain("opened draft pull request #");
    expect(status.body).toContain(
      "The devcontainer's image mcr.microsoft.com/devcontainers/python:3 (.devcontainer/devcontainer.json) is not one the operator allows; ran in the operator's default image instead (repository.images in the operator config allows more;",
    );
    expect(status.body).toContain("- python in `/` (requirements.txt, unittest)");
    expect(stack.pulls(issue)).toHaveLength(1);
    expect(openai.requests).toHaveLength(0);
  }, 480_000);

  it("with nothing to detect, stops before any model call and shows the file that would make it work", async () => {
    const issue = addIssue(
      await addRepo("lone", "notes", { "README.md": "# Notes\n", "notes/a.txt": "x\n" }),
    );
    expect(await stack.label(issue)).toBeLessThan(300);
    const status = await waitFor("a final status", () => stack.finalStatus(issue), 120_000);
    expect(status.body).toContain("stopped without a pull request");
    expect(status.body).toContain(
      "No test command: .github/agent-fix.yml names none, and the default branch (main) has none of a package.json `test` script",
    );
    expect(status.body).toContain(
      "```yaml\nsetup:\n  commands:\n    - npm ci\ntest:\n  command: npm test\n```",
    );
    expect(stack.pulls(issue)).toEqual([]);
    // The operator's model (the OpenAI stand-in) was never asked.
    expect(openai.requests).toHaveLength(0);
  }, 180_000);
});
