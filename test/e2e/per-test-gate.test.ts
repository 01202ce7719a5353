/**
 * Real Redis, real Docker sandboxes, the real app and worker, the GitHub stand-in; no repository has a
 * .github/agent-fix.yml. The repository is a real package from the npm registry, xtend 4.0.2 (its tape
 * tests, `npm test` = `node test`), fetched at test time. Its `test` script is extended here by a
 * coverage badge's download, `&& node -e "fetch('https://img.shields.io/…')"`: that step is added by
 * this test, mirroring the TypeScript library of issue 24 whose `npm test` ends with such a download,
 * which fails in the offline sandbox although every test passed. Detection sets it up (`npm install`
 * with setup's network) and runs `npm test`; the tests' TAP output gives each test's result.
 *
 * The baseline is recognised as tests passing (the status says the command failed after them), the
 * agent's change is gated on the tests and gets its pull request; a change that breaks a test that
 * passed before gets none, and the model is told which test.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type OpenAIStandIn, startOpenAIStandIn } from "../support/openai-server.js";
import { npmPackage } from "../support/registry-project.js";
import { turn } from "../support/replay-turns.js";
import { addReplayedProject } from "../support/replayed-project.js";
import { requireRedis, requireSandboxImage } from "../support/services.js";
import { Stack } from "../support/stack.js";
import { type IssueRef, waitFor } from "../support/stack-parts.js";

const ready = (await requireRedis()) && (await requireSandboxImage());

/** The step this test adds after the real tests: a badge's download, which the offline sandbox refuses. */
const BADGE_STEP = `node -e "fetch('https://img.shields.io/badge/coverage-100%25-green').then(r => process.exit(r.ok ? 0 : 1), () => process.exit(1))"`;

const NEW_TEST = `
test("no arguments", function(assert) {
    assert.deepEqual(extend(), {})
    assert.end()
})
`;

/** A bash turn appending `text` to `path` (base64 through the shell: no quoting to get wrong). */
const appendTurn = (content: string, path: string, text: string) =>
  turn(content, "bash", { command: `echo ${Buffer.from(text).toString("base64")} | base64 -d >> ${path}` });

/** A bash turn replacing `from` by `to` in `path` (both plain words). */
const sedTurn = (content: string, path: string, from: string, to: string) =>
  turn(content, "bash", { command: `sed -i 's/${from}/${to}/' ${path}` });

describe.runIf(ready)("a real npm package whose `npm test` ends with an offline-failing step", () => {
  let openai: OpenAIStandIn;
  let stack: Stack;
  let dir: string;
  let files: Record<string, string | Buffer>;

  /** xtend under `owner`, its owner's .github naming the replay of `turns`. */
  const xtendRepo = (
    owner: string,
    installationId: number,
    turns: string[],
    maxSteps = 10,
  ): Promise<IssueRef> =>
    addReplayedProject(stack, dir, {
      owner,
      name: "xtend",
      installationId,
      files,
      turns,
      maxSteps,
      issue: {
        title: "No test covers extend() with no arguments",
        body: "`extend()` with no arguments should return an empty object; add a test for it.",
      },
    });

  /** The run's trajectory, as the app serves it from the link on the pull request or the status. */
  async function gateOutputs(body: string): Promise<string[]> {
    const link = /\[Full trajectory\]\((\S+?)\)/.exec(body)?.[1];
    expect(link, body).toBeDefined();
    const served = await fetch(`${link!}&format=json`);
    const trajectory = (await served.json()) as { info: { gate: { output: string }[] } };
    return trajectory.info.gate.map((attempt) => attempt.output);
  }

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "af-per-test-gate-"));
    const xtend = await npmPackage("xtend", "4.0.2");
    const manifest = JSON.parse(String(xtend["package.json"])) as { scripts: { test: string } };
    expect(manifest.scripts.test).toBe("node test");
    manifest.scripts.test = `node test && ${BADGE_STEP}`;
    files = { ...xtend, "package.json": `${JSON.stringify(manifest, null, 2)}\n` };
    openai = await startOpenAIStandIn();
    stack = new Stack({ model: null, env: { OPENAI_BASE_URL: openai.url, OPENAI_API_KEY: "stand-in-key" } });
    await stack.start();
  }, 120_000);
  afterAll(async () => {
    await stack?.stop();
    await openai?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("the baseline counts as passing tests, and a change is gated on them to a pull request", async () => {
    const issue = await xtendRepo("badges", 1, [
      appendTurn("A test of extend() with no arguments.", "test.js", NEW_TEST),
      turn("Submitting.", "submit"),
      turn("Added a test: extend() with no arguments returns an empty object.", "submit"),
    ]);
    expect(await stack.label(issue)).toBeLessThan(300);
    const status = await waitFor("the final status", () => stack.finalStatus(issue), 900_000);
    expect(status.body).toContain("opened draft pull request #");
    expect(status.body).toContain("npm install");
    // The baseline: every test passed, the command failed after them, and the run went on.
    expect(status.body).toMatch(
      /The tests on main before any change: `npm test` exited 1, with \d+ tests passing \(test by test, from TAP output\)\. Every test passed: the command failed after them/,
    );
    const [pr] = stack.pulls(issue);
    expect(pr?.body).toContain("on the unchanged code (baseline): passed");
    const outputs = await gateOutputs(status.body);
    expect(outputs).toHaveLength(1);
    expect(outputs[0]).toMatch(
      /^The tests pass: \d+ of \d+ tests pass, every test that passed before your change among them \(test by test, from TAP output\)\./,
    );
    expect(outputs[0]).toContain("Note: `npm test` exited 1");
    expect(outputs[0]).toContain(
      "exited 1 though no test fails that passed before, as it failed on the unchanged code too",
    );
    expect(openai.requests).toHaveLength(0);
  }, 1_000_000);

  it("a change that breaks a test that passed before gets no pull request, and the model is told which", async () => {
    const issue = await xtendRepo("breakers", 2, [
      sedTurn(
        "Skip undefined values.",
        "immutable.js",
        "target\\[key\\] = source\\[key\\]",
        "if (source[key] !== undefined) target[key] = source[key]",
      ),
      turn("Submitting.", "submit"),
      turn("extend() skips undefined values.", "submit"),
    ]);
    expect(await stack.label(issue)).toBeLessThan(300);
    const status = await waitFor("the final status", () => stack.finalStatus(issue), 900_000);
    expect(status.body).toContain("stopped without a pull request");
    expect(stack.pulls(issue)).toEqual([]);
    const outputs = await gateOutputs(status.body);
    expect(outputs[0]).toContain(
      "The tests fail with your change: `npm test` exited 1 (test by test, from TAP output).",
    );
    expect(outputs[0]).toMatch(
      /2 tests that passed before your change fail now:\n {2}- undefined > should be equivalent\n {2}- undefined > should be equivalent \(2\)/,
    );
  }, 1_000_000);

  it("work left unsubmitted at the step limit is judged test by test in the status", async () => {
    const issue = await xtendRepo(
      "limits",
      3,
      [
        appendTurn("A test of extend() with no arguments.", "test.js", NEW_TEST),
        turn("Looking around.", "bash", { command: "ls" }),
        turn("Submitting.", "submit"),
      ],
      2,
    );
    expect(await stack.label(issue)).toBeLessThan(300);
    const status = await waitFor("the final status", () => stack.finalStatus(issue), 900_000);
    expect(status.body).toContain("The agent reached its step limit (2 steps)");
    expect(status.body).toContain(
      "**Tests on this change:** ✅ `npm test`: the tests passed (the command exited 1 after them, as on the unchanged code), in a fresh sandbox.",
    );
    expect(stack.pulls(issue)).toEqual([]);
  }, 1_000_000);
});
