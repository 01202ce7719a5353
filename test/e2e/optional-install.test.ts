import { execFileSync } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type OpenAIStandIn, startOpenAIStandIn } from "../support/openai-server.js";
import { pypiSdist } from "../support/registry-project.js";
import { turn } from "../support/replay-turns.js";
import { requireRedis, requireSandboxImage } from "../support/services.js";
import { Stack } from "../support/stack.js";
import { filesOf, SAMPLE_ISSUE, SAMPLE_REPO_DIR, waitFor } from "../support/stack-parts.js";

// A real project from PyPI (marshmallow 3.21.3's sdist, which holds its tests), taken at test time and
// seeded into the GitHub stand-in with no .github/agent-fix.yml, its `tests` extra changed in one way:
// it also names flake8==0.0.0, a release that does not exist (PyPI's flake8 starts at 0.1), as a
// linter pinned to a release that cannot be installed. The real app and worker, Redis and Docker; setup
// is the detected one, run for real with the network to PyPI. The extra's install fails, the fallback
// installs the project alone and each of the extra's requirements on its own, the project's own tests
// pass on the unchanged code, and a replayed model's one-line change reaches a pull request. The
// owner's `.github` repository names the replay and time limits for a loaded machine, nothing else.
const ready = (await requireRedis()) && (await requireSandboxImage());

const OWNER = "pyreal";
const PIP = ".venv/bin/python -m pip install";
const NOTE = "This project was set up and tested by agent-fix with no configuration.";
const REPLAY = [
  turn("The issue asks for one line in the README.", "bash", {
    command: `printf '\\n%s\\n' '${NOTE}' >> README.rst`,
  }),
  turn("Done. Submitting.", "submit"),
  turn("The README now says that agent-fix looked at this project.", "submit"),
].join("\n");

// The two runs go side by side (each its own repository, two at once being the owner's default quota):
// most of each is PyPI's downloads and a sandbox's start, which overlap.
describe.runIf(ready).concurrent("a real project whose optional test extra cannot be installed", () => {
  let openai: OpenAIStandIn;
  let stack: Stack;
  let dir: string;

  beforeAll(async () => {
    openai = await startOpenAIStandIn();
    dir = await mkdtemp(join(tmpdir(), "af-optional-install-"));
    const replay = join(dir, "readme-line.jsonl");
    await writeFile(replay, `${REPLAY}\n`);
    const operatorConfig = join(dir, "operator.yml");
    await writeFile(operatorConfig, "agent:\n  gate:\n    maxAttempts: 1\n");
    stack = new Stack({
      model: null,
      env: {
        OPENAI_BASE_URL: openai.url,
        OPENAI_API_KEY: "stand-in-key",
        AGENT_FIX_CONFIG: operatorConfig,
        AGENT_FIX_CONCURRENCY: "2",
      },
    });
    await stack.start();
    await stack.github.addRepo({
      owner: OWNER,
      name: ".github",
      files: {
        ".github/agent-fix.yml": `model: replay:${replay}\nlimits:\n  maxSteps: 10\nsetup:\n  timeoutSeconds: 1800\ntest:\n  timeoutSeconds: 900\n`,
      },
      permissions: { maintainer: "write" },
    });
  });
  afterAll(async () => {
    await stack?.stop();
    await openai?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("marshmallow 3.21.3: the `tests` extra fails, the project and its test requirements install, the run opens its pull request", async () => {
    const files = await pypiSdist("marshmallow", "3.21.3");
    const pyproject = files["pyproject.toml"];
    const extra = 'tests = ["pytest", "pytz", "simplejson"]';
    expect(typeof pyproject === "string" && pyproject.includes(extra)).toBe(true);
    files["pyproject.toml"] = (pyproject as string).replace(
      extra,
      'tests = ["pytest", "pytz", "simplejson", "flake8==0.0.0"]',
    );
    expect(Object.keys(files)).not.toContain(".github/agent-fix.yml");
    const repo = await stack.github.addRepo({
      owner: OWNER,
      name: "marshmallow",
      files,
      permissions: { maintainer: "write" },
    });
    const issue = stack.addIssue(
      { owner: OWNER, name: "marshmallow", id: repo.id, installationId: repo.installationId },
      { title: "Say in the README that agent-fix has looked at this project", body: "Add one line." },
    );
    expect(await stack.label(issue)).toBeLessThan(300);
    const status = await waitFor("the final status", () => stack.finalStatus(issue), 1_700_000);
    expect(status.body).toContain("opened draft pull request #");
    expect(status.body).toContain("- python in `/` (pyproject.toml, tox.ini, extra [tests], pytest)");
    // The status names the optional step that failed, what stood in for it, and its last lines.
    expect(status.body).toContain(
      `⚠️ Setup step 2 of 3, the optional install of the \`tests\` extra (\`${PIP} -e ".[tests]"\`), exited 1; the run went on with what the tests need instead:\n- \`${PIP} -e .\`\n- then the requirements of the \`tests\` extra, one at a time: installed \`pytest\`, \`pytz\`, \`simplejson\`; not installed \`flake8==0.0.0\``,
    );
    expect(status.body).toMatch(/The optional install's last lines:\n```\n[^`]*flake8==0\.0\.0[^`]*\n```/);
    // The snippet to commit does the same in the shell.
    expect(status.body).toContain(
      `    - ${PIP} -e ".[tests]" || (${PIP} -e . && { ${PIP} pytest; ${PIP} pytz; ${PIP} simplejson; ${PIP} flake8==0.0.0; true; })`,
    );
    // The project's own suite passed on the unchanged code and on the change.
    const [pr] = stack.pulls(issue);
    expect(pr?.body).toContain("- `.venv/bin/python -m pytest` on the unchanged code (baseline): passed");
    expect(pr?.body).toContain("- `.venv/bin/python -m pytest` with this change: passed");
    const bare = stack.github.repoDir(issue.owner, issue.repo);
    const changed = execFileSync(
      "git",
      ["--git-dir", bare, "diff", "--name-only", "main", "agent-fix/issue-1"],
      {
        encoding: "utf8",
      },
    );
    expect(changed.trim().split("\n")).toEqual(["README.rst"]);
    expect(openai.requests).toHaveLength(0);
  }, 1_800_000);

  it("a detected step that must succeed and fails: the status says setup was detected and shows what to commit", async () => {
    // The sample package with a requirements.txt naming the release that does not exist: a required step.
    const { ".github/agent-fix.yml": _own, ...sample } = await filesOf(SAMPLE_REPO_DIR);
    const repo = await stack.github.addRepo({
      owner: OWNER,
      name: "pinned",
      files: { ...sample, "requirements.txt": "flake8==0.0.0\n" },
      permissions: { maintainer: "write" },
    });
    const issue = stack.addIssue(
      { owner: OWNER, name: "pinned", id: repo.id, installationId: repo.installationId },
      SAMPLE_ISSUE,
    );
    expect(await stack.label(issue)).toBeLessThan(300);
    const status = await waitFor("the final status", () => stack.finalStatus(issue), 600_000);
    expect(status.body).toContain("stopped without a pull request");
    expect(status.body).toContain(
      `**Why:** The setup agent-fix detected failed at step 2 of 2: \`${PIP} -r requirements.txt\` exited 1. Its last lines:`,
    );
    expect(status.body).toMatch(
      /ERROR: No matching distribution found for flake8==0\.0\.0\n```\n \(setup_failed\)\. No \.github\/agent-fix\.yml names setup commands, so agent-fix detected them/,
    );
    expect(status.body).toContain(
      "Commit .github/agent-fix.yml with setup commands that work, for example the detected ones, edited:",
    );
    const snippet = [
      "```yaml",
      "setup:",
      "  commands:",
      "    - python3 -m venv --system-site-packages --without-pip .venv && (.venv/bin/python -m pip --version || .venv/bin/python -m ensurepip)",
      `    - ${PIP} -r requirements.txt`,
      "test:",
      "  command: .venv/bin/python -m unittest discover -s tests",
      "```",
    ].join("\n");
    // In the hint, and in the detection's note as on every detected run.
    expect(status.body.split(snippet)).toHaveLength(3);
    expect(status.body).not.toContain("Fix the `setup` commands in .github/agent-fix.yml");
    expect(stack.pulls(issue)).toEqual([]);
  }, 900_000);
});
