/**
 * The toolchain a repository declares is the one it gets, end to end through the app with no
 * .github/agent-fix.yml: real Redis, real Docker sandboxes, the real app and worker, the GitHub
 * stand-in, the operator's default images (the slim one the default, the rich one its toolchain image).
 *
 * A real package from the npm registry (xtend 4.0.2, its tarball holding its tape tests) with an added
 * `.nvmrc` of `22`, said plainly: xtend's own tests run on any Node, and the test adds the declaration a
 * repository keeps for its version manager. Neither image has Node 22 (slim 18, rich 20), so setup installs
 * it from the npm registry's `node` package into the workspace's cache, and every sandbox of the run has it
 * on PATH: the replayed agent's `node --version` says v22, the baseline passes and the pull request opens.
 *
 * A project testing with vitest 4, whose engines say Node >= 20.19, runs in the rich image (Node 20.19):
 * the slim image's Node 18 would crash vitest at start-up.
 *
 * A Go module whose go line is newer than the rich image's Go gets that Go from the module proxy in setup.
 *
 * A Python project whose requires-python no image meets is refused before any sandbox starts and any
 * model is asked, naming the file and line, what the images have and how to provide it.
 */

import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SANDBOX_RICH_IMAGE } from "../../sandbox/version.js";
import { fixJobId } from "../../src/shared/queue/index.js";
import { type ContainerCreates, watchContainerCreates } from "../support/container-events.js";
import { type OpenAIStandIn, startOpenAIStandIn } from "../support/openai-server.js";
import { npmPackage } from "../support/registry-project.js";
import { turn } from "../support/replay-turns.js";
import { addReplayedProject } from "../support/replayed-project.js";
import { requireRedis, requireSandboxImage } from "../support/services.js";
import { Stack } from "../support/stack.js";
import { FIXTURES, filesOf, type IssueRef, waitFor } from "../support/stack-parts.js";

const ready =
  (await requireRedis()) && (await requireSandboxImage()) && (await requireSandboxImage(SANDBOX_RICH_IMAGE));

interface Trajectory {
  trajectory: { action: string; observation: string }[];
  info: { sandbox_image: string };
}

// The runs go side by side (each its own installation and repository): most of each is a registry's
// download or a sandbox's start, which overlap.
describe.runIf(ready).concurrent("a repository's declared toolchain, with no .github/agent-fix.yml", () => {
  let openai: OpenAIStandIn;
  let stack: Stack;
  let dir: string;
  let creates: ContainerCreates;
  /** Containers this stack's workers created for `issue`'s job, removed ones too. */
  const containersCreated = (issue: IssueRef) =>
    creates.createdBy(stack.prefix, fixJobId(issue.repoId, issue.number));

  /** A repository of `files` under an owner whose .github repository names the replayed model. */
  const repoWith = (
    owner: string,
    installationId: number,
    files: Record<string, string | Buffer>,
    turns: string[],
    issue: { title: string; body: string },
  ): Promise<IssueRef> =>
    addReplayedProject(stack, dir, { owner, name: "project", installationId, files, turns, issue });

  beforeAll(async () => {
    creates = await watchContainerCreates();
    dir = await mkdtemp(join(tmpdir(), "af-declared-toolchain-"));
    openai = await startOpenAIStandIn();
    const env = { OPENAI_BASE_URL: openai.url, OPENAI_API_KEY: "stand-in-key", AGENT_FIX_CONCURRENCY: "4" };
    stack = new Stack({ model: null, env });
    await stack.start();
  }, 120_000);
  afterAll(async () => {
    creates?.stop();
    await stack?.stop();
    await openai?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("a package declaring Node 22, which no image has, gets it from the npm registry in every sandbox", async () => {
    const xtend = await npmPackage("xtend", "4.0.2");
    expect(JSON.parse(String(xtend["package.json"])).scripts.test).toBe("node test");
    const issue = await repoWith(
      "nodes",
      1,
      { ...xtend, ".nvmrc": "22\n" },
      [
        turn("Which Node runs here?", "bash", { command: "node --version" }),
        turn("The README gets the empty case.", "bash", {
          command: "printf '\\nCalled with no arguments, `extend()` returns `{}`.\\n' >> README.md",
        }),
        turn("Submitting.", "submit"),
        turn("README: extend() with no arguments returns an empty object.", "submit"),
      ],
      {
        title: "README: say what extend() returns with no arguments",
        body: "`extend()` with no arguments returns `{}`; the README should say so.",
      },
    );
    expect(await stack.label(issue)).toBeLessThan(300);
    const status = await waitFor("the final status", () => stack.finalStatus(issue), 1_200_000);
    expect(status.body).toContain("opened draft pull request #");
    expect(status.body).toContain("- node in `/` (package.json (`test` script), no lockfile)");
    // xtend's own engines (>=0.4) the default image meets; the added .nvmrc no image does.
    expect(status.body).toMatch(
      /- node >=0\.4 \(package\.json line \d+ \(`engines\.node`\)\): `agent-fix-sandbox:[\d.]+` has 18\.\d+\.\d+/,
    );
    expect(status.body).toMatch(
      /- node 22 \(\.nvmrc line 1\): `agent-fix-sandbox:[\d.]+` has 18\.\d+\.\d+; setup installs Node >=22\.0\.0 <23\.0\.0-0 [^`\n]*from the npm registry's `node` package \(on PATH in every sandbox of the run\)/,
    );
    // The snippet to commit installs the same Node first and puts it on PATH in each command.
    expect(status.body).toContain(
      '- PATH="$PWD/.agent-fix-cache/node/node_modules/.bin:$PATH" npm install --prefix .agent-fix-cache/node',
    );
    // The agent's shell ran the provided Node, offline: its trajectory, as the app serves it.
    const link = /\[Full trajectory\]\((\S+?)\)/.exec(status.body)?.[1];
    expect(link, status.body).toBeDefined();
    const trajectory = (await (await fetch(`${link!}&format=json`)).json()) as Trajectory;
    const step = trajectory.trajectory.find((s) => s.action.includes("node --version"));
    expect(step?.observation).toMatch(/^v22\.\d+\.\d+/);
    const [pr] = stack.pulls(issue);
    expect(pr?.body).toContain("npm test");
    // Its sandboxes are counted as the refusal below counts them (setup, agent, baseline, gate).
    expect(containersCreated(issue).length).toBeGreaterThanOrEqual(4);
    expect(openai.requests).toHaveLength(0);
  }, 1_300_000);

  it("a project whose vitest 4 needs Node >= 20.19 runs in the rich image, which has it, not the slim one's 18", async () => {
    // Hand-made, with the real vitest 4 from the npm registry (installed by setup) and vitest's own
    // engines range: on the slim image's Node 18, vitest 4 crashes at start-up (`node:util` has no
    // `styleText`), the failure this choice is for.
    const engines = "^20.19.0 || >=22.12.0";
    const pkg = {
      name: "adder",
      type: "module",
      scripts: { test: "vitest run" },
      engines: { node: engines },
      devDependencies: { vitest: "4.1.12" },
    };
    const issue = await repoWith(
      "vites",
      3,
      {
        "package.json": `${JSON.stringify(pkg, null, 2)}\n`,
        "add.js": "export const add = (a, b) => a + b;\n",
        "add.test.js":
          'import { expect, test } from "vitest";\nimport { add } from "./add.js";\n\ntest("adds", () => {\n  expect(add(1, 2)).toBe(3);\n});\n',
        "README.md": "# adder\n",
      },
      [
        turn("Which Node runs here?", "bash", { command: "node --version" }),
        turn("The README gets an example.", "bash", {
          command: "printf '\\n`add(1, 2)` is `3`.\\n' >> README.md",
        }),
        turn("Submitting.", "submit"),
        turn("README: an example of add().", "submit"),
      ],
      { title: "README: an example", body: "Show `add(1, 2)` in the README." },
    );
    expect(await stack.label(issue)).toBeLessThan(300);
    const status = await waitFor("the final status", () => stack.finalStatus(issue), 1_200_000);
    expect(status.body).toContain("opened draft pull request #");
    expect(status.body).toContain(
      `- node ${engines} (package.json line 8 (\`engines.node\`)): \`${SANDBOX_RICH_IMAGE}\` has 20.19.`,
    );
    expect(status.body).toContain(`Image: \`${SANDBOX_RICH_IMAGE}\`, the first of the operator's images`);
    const link = /\[Full trajectory\]\((\S+?)\)/.exec(status.body)?.[1];
    const trajectory = (await (await fetch(`${link!}&format=json`)).json()) as Trajectory;
    expect(trajectory.trajectory.find((s) => s.action.includes("node --version"))?.observation).toMatch(
      /^v20\.19\.\d+/,
    );
    // The baseline ran vitest 4 and passed: the pull request says so.
    const [pr] = stack.pulls(issue);
    expect(pr?.body).toContain("`npm test` on the unchanged code (baseline): passed");
    expect(openai.requests).toHaveLength(0);
  }, 1_300_000);

  it("a go.mod asking for a newer Go than the image's gets it from the module proxy in setup, then offline", async () => {
    // The go-clamp fixture with its go line raised to 1.25.0, above the rich image's 1.24: Go 1.21 and
    // later download the toolchain go.mod names (GOTOOLCHAIN) into GOMODCACHE, the workspace's cache.
    const { "go.mod": mod, ...clamp } = await filesOf(join(FIXTURES, "toolchains", "go-clamp"));
    const issue = await repoWith(
      "gophers",
      4,
      { ...clamp, "go.mod": (mod ?? "").replace(/^go .*$/m, "go 1.25.0") },
      [
        turn("Which Go runs here?", "bash", { command: "go version" }),
        turn("The README gets an example.", "bash", {
          command: "printf '\\n`Clamp(15, 0, 10)` should be `10`.\\n' >> README.md",
        }),
        turn("Submitting.", "submit"),
        turn("README: an example of Clamp.", "submit"),
      ],
      { title: "README: an example", body: "Show `Clamp` in the README." },
    );
    expect(await stack.label(issue)).toBeLessThan(300);
    const status = await waitFor("the final status", () => stack.finalStatus(issue), 1_200_000);
    expect(status.body).toContain("opened draft pull request #");
    expect(status.body).toMatch(
      /- go 1\.25\.0 \(go\.mod line 3 \(`go`\)\): `agent-fix-sandbox-rich:[\d.]+` has 1\.24\.\d+; Go downloads the toolchain go\.mod names during setup/,
    );
    const link = /\[Full trajectory\]\((\S+?)\)/.exec(status.body)?.[1];
    const trajectory = (await (await fetch(`${link!}&format=json`)).json()) as Trajectory;
    expect(trajectory.trajectory.find((s) => s.action.includes("go version"))?.observation).toMatch(
      /^go version go1\.25\.0 /,
    );
    const [pr] = stack.pulls(issue);
    expect(pr?.body).toContain("`go test ./...` on the unchanged code (baseline): passed");
    expect(openai.requests).toHaveLength(0);
  }, 1_300_000);

  it("requires-python that no image has is refused before any sandbox or model call, saying how to provide it", async () => {
    const issue = await repoWith(
      "snakes",
      2,
      {
        "pyproject.toml": '[project]\nname = "future"\nversion = "0.1.0"\nrequires-python = ">=3.14"\n',
        "future.py": "def answer():\n    return 42\n",
        "tests/test_future.py":
          "from future import answer\n\n\ndef test_answer():\n    assert answer() == 42\n",
      },
      [turn("Submitting.", "submit")],
      { title: "Anything", body: "Anything." },
    );
    expect(await stack.label(issue)).toBeLessThan(300);
    const status = await waitFor("the final status", () => stack.finalStatus(issue), 300_000);
    expect(status.body).toContain("stopped without a pull request");
    expect(status.body).toMatch(
      /The repository needs python >=3\.14 \(pyproject\.toml line 4 \(`requires-python`\)\), which none of the operator's images provides together: `agent-fix-sandbox:[\d.]+` \(python 3\.11\.\d+\); `agent-fix-sandbox-rich:[\d.]+` \(python 3\.13\.\d+\)/,
    );
    expect(status.body).toContain("repository.images");
    // No sandbox started for this run (the images' probes, once per image for the worker's life, are
    // no sandbox and carry no job), and no model was asked.
    expect(containersCreated(issue)).toEqual([]);
    expect(openai.requests).toHaveLength(0);
    expect(stack.pulls(issue)).toEqual([]);
  }, 400_000);
});
