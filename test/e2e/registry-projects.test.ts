import { execFileSync } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SANDBOX_IMAGE, SANDBOX_RICH_IMAGE } from "../../sandbox/version.js";
import { fixJobId } from "../../src/shared/queue/index.js";
import type { JobResult } from "../../worker/run-end.js";
import { type OpenAIStandIn, startOpenAIStandIn } from "../support/openai-server.js";
import {
  crate,
  goModule,
  mavenProject,
  npmPackage,
  type ProjectFiles,
  pypiSdist,
} from "../support/registry-project.js";
import { turn } from "../support/replay-turns.js";
import { requireRedis, requireSandboxImage } from "../support/services.js";
import { Stack } from "../support/stack.js";
import { type IssueRef, waitFor } from "../support/stack-parts.js";

// Real projects, taken from the registries at test time (nothing of theirs is kept in this repository),
// each seeded into the GitHub stand-in as it was published, with no .github/agent-fix.yml, and labelled:
// the real app and worker, real Redis and Docker. Setup is what detection finds in the project's own
// files, run for real with the network to the registries; the baseline is the project's own test suite
// and must pass for the run to go on; a replayed model adds one line (to the README, or a comment where
// the project's build checks its files' licence headers) and submits, and the same suite is the gate. The pull request's "How this was tested" is the proof that both ran.
// Projects are small, with few dependencies and a test suite of seconds: CI runs every case.
const ready =
  (await requireRedis()) && (await requireSandboxImage()) && (await requireSandboxImage(SANDBOX_RICH_IMAGE));

const ISSUE = {
  title: "Say that agent-fix has looked at this project",
  body: "Add one line saying so.",
};
const NOTE = "This project was set up and tested by agent-fix with no configuration.";

/** The replayed agent: `line` appended to `path`, then submit and confirm. */
function replay(path: string, line: string): string {
  return [
    turn(`The issue asks for one line; ${path} takes it.`, "bash", {
      command: `printf '%s\\n' '${line}' >> ${path}`,
    }),
    turn("Done. Submitting.", "submit"),
    turn(`${path} now says that agent-fix looked at this project.`, "submit"),
  ].join("\n");
}

const SIX_DEVCONTAINER = '{\n  "name": "six",\n  "image": "mcr.microsoft.com/devcontainers/python:3"\n}\n';

interface RegistryCase {
  /** The repository's name in the stand-in. */
  repo: string;
  /** name@version and where it came from, for the test's title. */
  project: string;
  fetch: () => Promise<ProjectFiles>;
  /** The status comment's detection line. */
  detected: string;
  /**
   * The detected test command, which the pull request names for the baseline and the gate (a cache
   * directory's variable before it is detection's to choose).
   */
  test: RegExp;
  image: string;
  /** The file the replay appends a line to, and the line. */
  edit: { path: string; line: string };
}

const CASES: RegistryCase[] = [
  {
    repo: "six",
    project: "six 1.17.0 (PyPI sdist)",
    // With a Codespaces devcontainer naming a public image, which the operator does not allow: the run
    // goes on in the operator's image, saying so (the test after the cases).
    fetch: async () => ({
      ...(await pypiSdist("six", "1.17.0")),
      ".devcontainer/devcontainer.json": SIX_DEVCONTAINER,
    }),
    detected: "- python in `/` (setup.cfg, setup.py, pytest)",
    test: /\.venv\/bin\/python -m pytest/,
    image: SANDBOX_IMAGE,
    edit: { path: "README.rst", line: NOTE },
  },
  {
    repo: "xtend",
    project: "xtend 4.0.2 (npm tarball)",
    fetch: () => npmPackage("xtend", "4.0.2"),
    detected: "- node in `/` (package.json (`test` script), no lockfile)",
    test: /npm test/,
    image: SANDBOX_IMAGE,
    edit: { path: "README.md", line: NOTE },
  },
  {
    repo: "uuid",
    project: "github.com/google/uuid v1.6.0 (Go module proxy)",
    fetch: () => goModule("github.com/google/uuid", "v1.6.0"),
    detected: "- go in `/` (go.mod)",
    test: /[^`]*go test \.\/\.\.\./,
    image: SANDBOX_RICH_IMAGE,
    edit: { path: "README.md", line: NOTE },
  },
  {
    repo: "semver",
    project: "semver 1.0.23 (crates.io)",
    fetch: () => crate("semver", "1.0.23"),
    detected: "- rust in `/` (Cargo.toml)",
    test: /[^`]*cargo test --offline/,
    image: SANDBOX_RICH_IMAGE,
    edit: { path: "README.md", line: NOTE },
  },
  {
    repo: "commons-cli",
    project: "commons-cli 1.11.0 (Maven Central: pom, sources and test sources)",
    fetch: () => mavenProject({ groupId: "commons-cli", artifactId: "commons-cli", version: "1.11.0" }),
    detected: "- java in `/` (pom.xml, no Maven wrapper)",
    test: /[^`]*mvn -B -o[^`]* test/,
    image: SANDBOX_RICH_IMAGE,
    // Apache RAT checks every file's licence header in `mvn test`: a README.md without one fails the
    // gate (as it would upstream), so the line is a comment in a source file.
    edit: { path: "src/main/java/org/apache/commons/cli/package-info.java", line: `// ${NOTE}` },
  },
];

// The projects run side by side, each under an owner and installation of its own: most of a run is a
// registry's download or a sandbox's start, which overlap.
describe.runIf(ready).concurrent("real projects from the registries, with no .github/agent-fix.yml", () => {
  let openai: OpenAIStandIn;
  let stack: Stack;
  let dir: string;
  const durations: string[] = [];

  beforeAll(async () => {
    openai = await startOpenAIStandIn();
    dir = await mkdtemp(join(tmpdir(), "af-registry-projects-"));
    // The operator's one gate attempt: the replay submits once.
    const operatorConfig = join(dir, "operator.yml");
    await writeFile(operatorConfig, "agent:\n  gate:\n    maxAttempts: 1\n");
    stack = new Stack({
      model: null,
      env: {
        OPENAI_BASE_URL: openai.url,
        OPENAI_API_KEY: "stand-in-key",
        AGENT_FIX_CONFIG: operatorConfig,
        AGENT_FIX_CONCURRENCY: String(CASES.length),
      },
    });
    await stack.start();
  });
  afterAll(async () => {
    console.log(`registry projects, label to final status:\n${durations.join("\n")}`);
    await stack?.stop();
    await openai?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  let installations = 0;
  /**
   * The project as the repository `name` of an owner of its own (one installation per owner, as on
   * GitHub), whose defaults name the replay, with time limits for a loaded 2-core machine: the project
   * has no config of its own.
   */
  const seed = async (name: string, files: ProjectFiles, edit: RegistryCase["edit"]): Promise<IssueRef> => {
    expect(Object.keys(files)).not.toContain(".github/agent-fix.yml");
    expect(Object.keys(files)).toContain(edit.path);
    const owner = `upstream-${name}`;
    const installationId = ++installations;
    const model = join(dir, `${name}.jsonl`);
    await writeFile(model, `${replay(edit.path, edit.line)}\n`);
    const defaults = `model: replay:${model}\nlimits:\n  maxSteps: 10\nsetup:\n  timeoutSeconds: 1800\ntest:\n  timeoutSeconds: 900\n`;
    const permissions = { maintainer: "write" };
    await stack.github.addRepo({
      owner,
      name: ".github",
      files: { ".github/agent-fix.yml": defaults },
      permissions,
      installationId,
    });
    const repo = await stack.github.addRepo({ owner, name, files, permissions, installationId });
    return stack.addIssue({ owner, name, id: repo.id, installationId }, ISSUE);
  };

  /**
   * Labels the issue and waits for its final status; the time it took, and its steps' (the job's
   * result, stored a moment after the status), go to the report.
   */
  const runToEnd = async (label: string, issue: IssueRef) => {
    const started = Date.now();
    expect(await stack.label(issue)).toBeLessThan(300);
    const status = await waitFor(`${label}'s final status`, () => stack.finalStatus(issue), 1_700_000);
    const took = Math.round((Date.now() - started) / 1000);
    const job = await waitFor(`${label}'s job result`, async () => {
      const found = await stack.app!.queue.queue.getJob(fixJobId(issue.repoId, issue.number));
      return found?.finishedOn ? found : undefined;
    });
    const timings = Object.entries((job.returnvalue as JobResult).timings ?? {})
      .filter(([step]) => !step.startsWith("start_"))
      .map(([step, ms]) => `${step} ${Math.round((ms ?? 0) / 1000)} s`);
    durations.push(`  ${label}: ${took} s (${timings.join(", ")})`);
    return status;
  };

  const changedFiles = (issue: IssueRef): string[] => {
    const bare = stack.github.repoDir(issue.owner, issue.repo);
    const diff = execFileSync(
      "git",
      ["--git-dir", bare, "diff", "--name-only", "main", "agent-fix/issue-1"],
      {
        encoding: "utf8",
      },
    );
    return diff.trim().split("\n");
  };

  /**
   * Each case's run, started by the first test that asks for it: the devcontainer's test reads six's
   * run rather than setting up six again.
   */
  const runs = new Map<RegistryCase, Promise<{ issue: IssueRef; status: { body: string } }>>();
  const runOf = (c: RegistryCase) => {
    let run = runs.get(c);
    if (!run) {
      run = (async () => {
        const issue = await seed(c.repo, await c.fetch(), c.edit);
        return { issue, status: await runToEnd(c.project, issue) };
      })();
      runs.set(c, run);
    }
    return run;
  };

  it.each(CASES)(
    "$project: the detected setup and its own tests run for real, and the run opens its pull request",
    async (c) => {
      const { issue, status } = await runOf(c);
      expect(status.body).toContain("opened draft pull request #");
      expect(status.body).toContain("this repository has no .github/agent-fix.yml");
      expect(status.body).toContain(c.detected);
      if (c.image === SANDBOX_RICH_IMAGE) expect(status.body).toContain(`Image: \`${SANDBOX_RICH_IMAGE}\``);
      // The project's own suite ran on the unchanged code and on the change, and passed both times.
      const body = stack.pulls(issue)[0]?.body;
      expect(body).toMatch(new RegExp(`- \`${c.test.source}\` on the unchanged code \\(baseline\\): passed`));
      expect(body).toMatch(new RegExp(`- \`${c.test.source}\` with this change: passed`));
      expect(changedFiles(issue)).toEqual([c.edit.path]);
      expect(openai.requests).toHaveLength(0);
    },
    1_800_000,
  );

  it("six 1.17.0 with a Codespaces devcontainer naming a public image runs in the operator's image, saying so", async () => {
    const six = CASES.find((c) => c.repo === "six")!;
    const { issue, status } = await runOf(six);
    expect(status.body).toContain("opened draft pull request #");
    expect(status.body).toContain(
      "The devcontainer's image mcr.microsoft.com/devcontainers/python:3 (.devcontainer/devcontainer.json) is not one the operator allows; ran in the operator's default image instead",
    );
    expect(status.body).toContain("- python in `/` (setup.cfg, setup.py, pytest)");
    const [pr] = stack.pulls(issue);
    expect(pr?.body).toContain("- `.venv/bin/python -m pytest` on the unchanged code (baseline): passed");
    expect(changedFiles(issue)).toEqual(["README.rst"]);
  }, 1_800_000);
});
