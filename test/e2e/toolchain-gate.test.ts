import { execFileSync } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SANDBOX_RICH_IMAGE } from "../../sandbox/version.js";
import { type OpenAIStandIn, startOpenAIStandIn } from "../support/openai-server.js";
import { requireRedis, requireSandboxImage } from "../support/services.js";
import { Stack } from "../support/stack.js";
import { FIXTURES, filesOf, type IssueRef, waitFor } from "../support/stack-parts.js";

// Real Redis, real Docker sandboxes, the real app and worker, the GitHub stand-in. A Go repository with no
// .github/agent-fix.yml: detection finds `go test ./...`, which the default (slim) image cannot run, so
// the run takes the operator's toolchain image (repository.toolchainImage, the rich image by default).
// The repository's own tests are the gate: a replayed fix that makes them pass gets its pull request, a
// replayed wrong fix (its new test fails) gets none. Each owner's .github repository names the replay (and
// setup and test timeouts for a loaded machine: setup compiles into the workspace's build cache, the rest
// reuse it). One gate attempt (the operator's agent.gate.maxAttempts): a wrong fix fails the same way on
// each, so the default three would prove nothing more for two more sandboxes running the tests.
const ready =
  (await requireRedis()) && (await requireSandboxImage()) && (await requireSandboxImage(SANDBOX_RICH_IMAGE));

const GO_REPO = join(FIXTURES, "toolchains", "go-clamp");
const ISSUE = {
  title: "Clamp returns the lower bound for a value above the range",
  body: "`Clamp(15, 0, 10)` returns `0`; it should return `10`.",
};

// The two runs go side by side (each its own owner and installation): most of each is a sandbox's start
// and the module proxy's download, which overlap.
describe
  .runIf(ready)
  .concurrent("a Go repository without .github/agent-fix.yml, its own tests the gate", () => {
    let openai: OpenAIStandIn;
    let stack: Stack;
    let configDir: string;

    // One installation per owner, as on GitHub: the org defaults' token names `.github` within it.
    const goRepo = async (owner: string, installationId: number, replay: string): Promise<IssueRef> => {
      await stack.github.addRepo({
        owner,
        name: ".github",
        files: {
          ".github/agent-fix.yml": `model: replay:${join(FIXTURES, "replay", replay)}\nlimits:\n  maxSteps: 12\nsetup:\n  timeoutSeconds: 1800\ntest:\n  timeoutSeconds: 1200\n`,
        },
        permissions: { maintainer: "write" },
        installationId,
      });
      const repo = await stack.github.addRepo({
        owner,
        name: "clamp",
        files: await filesOf(GO_REPO),
        permissions: { maintainer: "write" },
        installationId,
      });
      return stack.addIssue(
        { owner, name: "clamp", id: repo.id, installationId: repo.installationId },
        ISSUE,
      );
    };

    beforeAll(async () => {
      openai = await startOpenAIStandIn();
      configDir = await mkdtemp(join(tmpdir(), "af-toolchain-gate-"));
      const operatorConfig = join(configDir, "operator.yml");
      await writeFile(operatorConfig, "agent:\n  gate:\n    maxAttempts: 1\n");
      const env = {
        OPENAI_BASE_URL: openai.url,
        OPENAI_API_KEY: "stand-in-key",
        AGENT_FIX_CONFIG: operatorConfig,
        AGENT_FIX_CONCURRENCY: "2",
      };
      stack = new Stack({ model: null, env });
      await stack.start();
    });
    afterAll(async () => {
      await stack?.stop();
      await openai?.close();
      await rm(configDir, { recursive: true, force: true });
    });

    it("a fix that makes `go test ./...` pass gets a draft pull request", async () => {
      const fixed = await goRepo("gophers", 1, "go-clamp-fix.jsonl");
      expect(await stack.label(fixed)).toBeLessThan(300);
      const status = await waitFor("the fix's final status", () => stack.finalStatus(fixed), 1_500_000);
      expect(status.body).toContain("opened draft pull request #");
      expect(status.body).toContain("- go in `/` (go.mod)");
      // The slim image has no Go: the rich image is the first of the operator's that meets go.mod's line.
      expect(status.body).toContain("- go 1.21 (go.mod line 3 (`go`)): `agent-fix-sandbox-rich:");
      expect(status.body).toContain(`Image: \`${SANDBOX_RICH_IMAGE}\`, the first of the operator's images`);
      // The detected command was the gate: the pull request's proof names it.
      const [pr] = stack.pulls(fixed);
      expect(pr?.body).toContain("go test ./...");
      const bare = stack.github.repoDir(fixed.owner, fixed.repo);
      const git = (...args: string[]) =>
        execFileSync("git", ["--git-dir", bare, ...args], { encoding: "utf8" });
      expect(git("diff", "--name-only", "main", "agent-fix/issue-1").trim().split("\n")).toEqual([
        "clamp.go",
        "clamp_test.go",
      ]);
      expect(git("show", "agent-fix/issue-1:clamp.go")).toContain("\tif v > hi {\n\t\treturn hi\n");
    }, 1_600_000);

    it("a wrong fix (its new test fails under `go test ./...`) gets no pull request", async () => {
      const wrong = await goRepo("gopherz", 2, "go-clamp-wrong.jsonl");
      expect(await stack.label(wrong)).toBeLessThan(300);
      const refused = await waitFor(
        "the wrong fix's final status",
        () => stack.finalStatus(wrong),
        1_500_000,
      );
      expect(refused.body).toContain("stopped without a pull request");
      expect(refused.body).toMatch(
        /submitted a change 1 time\(s\) but `[^`]*go test \.\/\.\.\.` still failed on it/,
      );
      expect(stack.pulls(wrong)).toEqual([]);
      expect(Object.keys(await stack.github.branches(wrong.owner, wrong.repo))).toEqual(["main"]);
      expect(openai.requests).toHaveLength(0);
    }, 1_600_000);
  });
