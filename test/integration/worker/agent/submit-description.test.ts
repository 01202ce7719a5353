/**
 * The pull request's description (issue 24: the confirming submit's thought was published though nothing
 * the model saw said so, and it was its reply to the checklist): the model is asked for it in so many
 * words, and only what it gave as the description is taken. With function calls, submit's `description`
 * argument, in every tool bundle; in text mode, the reply's text before the submit that answers the
 * request. Real ACI over a local sandbox, replayed models.
 */
import { afterAll, describe, expect, it } from "vitest";
import type { FunctionSpec, Model, Sandbox } from "../../../../src/shared/contracts.js";
import { ReplayModel } from "../../../../worker/model/replay.js";
import { replay, runEpisode } from "./harness.js";

const sandboxes: Sandbox[] = [];
afterAll(async () => {
  await Promise.all(sandboxes.splice(0).map((sandbox) => sandbox.dispose()));
});

const DESCRIPTION =
  "## What was wrong\n`mean([])` divided by zero: `len(values)` is 0 for an empty list.\n## What changed\n`mean()` returns 0 for an empty list, as the issue asks.\n## How it was checked\n`python3 -m unittest` passes.";

/** The replayed model, with the function definitions each request carried. */
async function recordingModel(file: string): Promise<{ model: Model; specs: FunctionSpec[][] }> {
  const replayed = await ReplayModel.fromFile(replay(file));
  const specs: FunctionSpec[][] = [];
  const model: Model = {
    name: replayed.name,
    query: (messages, tools, signal) => {
      specs.push(tools);
      return replayed.query(messages, tools, signal);
    },
  };
  return { model, specs };
}

describe("the pull request's description", () => {
  it("with function calls: submit's description argument, asked for in the review; the thought is not it", async () => {
    const { model, specs } = await recordingModel("description.jsonl");
    const { trajectory } = await runEpisode({ model, cleanup: sandboxes });
    expect(trajectory.info.exit_status).toBe("submitted");
    expect(trajectory.info.description).toBe(DESCRIPTION);
    // The review that asked for it, and the argument the model was offered on every request.
    const review = trajectory.trajectory[2]!.observation;
    expect(review).toContain("It is published as you write it");
    expect(review).toContain("Give it in submit's `description` argument.");
    const submit = specs[0]!.find((spec) => spec.name === "submit")!;
    expect(submit.parameters).toMatchObject({
      properties: { description: { type: "string", description: expect.stringContaining("published") } },
    });
  });

  it("with the review off, a submit that gave no description gives none: its thought is never published", async () => {
    const { trajectory } = await runEpisode({
      model: "description.jsonl",
      agent: { reviewOnSubmit: false },
      cleanup: sandboxes,
    });
    expect(trajectory.info.exit_status).toBe("submitted");
    expect(trajectory.trajectory.at(-1)!.thought).toBe("Submitting.");
    expect(trajectory.info.description).toBeUndefined();
    // The instance prompt asked for it, as the review would have, after the note on the tests.
    const instance = trajectory.history[1]!.content ?? "";
    expect(instance).toContain(
      "Run the relevant tests before you submit.\n\nWhen you submit, give the pull request's description with it. It is published as you write it,",
    );
    expect(instance).toContain("Give it in submit's `description` argument.\n\nWrite it in three parts");
    expect(instance.endsWith("the test results are added for you: leave them out.")).toBe(true);
  });

  it("in text mode: the text of the reply that confirms, fenced code and all, without the DISCUSSION line", async () => {
    const { trajectory } = await runEpisode({
      model: "description-text.jsonl",
      agent: { actionFormat: "thought_action" },
      cleanup: sandboxes,
    });
    expect(trajectory.info.exit_status).toBe("submitted");
    // The first submit's thought ("Submit it.") came before the request: not the description.
    expect(trajectory.info.description).toBe(
      "## What was wrong\n`mean([])` divided by zero:\n\n```python\n>>> mean([])\nZeroDivisionError: division by zero\n```\n\n## What changed\n`mean()` returns 0 for an empty list.\n## How it was checked\n`python3 -m unittest` passes.",
    );
    expect(trajectory.trajectory[2]!.observation).toContain(
      "Write it as the text of your reply before the submit command",
    );
  });

  it("shows the repository's template to fill in, and records which it was", async () => {
    const template = { path: ".github/pull_request_template.md", text: "## Why\n\n- [ ] Tests added\n" };
    const { trajectory } = await runEpisode({
      model: "description.jsonl",
      pullRequestTemplate: template,
      cleanup: sandboxes,
    });
    const review = trajectory.trajectory[2]!.observation;
    expect(review).toContain("in the form of its template, .github/pull_request_template.md: fill it in.");
    expect(review).toContain(
      "<pull_request_template>\n## Why\n\n- [ ] Tests added\n</pull_request_template>",
    );
    expect(review).not.toContain("Write it in three parts");
    expect(trajectory.info.pull_request_template).toBe(".github/pull_request_template.md");
  });

  it.each(["editor", "shell"])("is the same submit argument in the %s bundle", async (bundle) => {
    const { model, specs } = await recordingModel("description-bash.jsonl");
    const { trajectory } = await runEpisode({ model, aci: { bundle }, cleanup: sandboxes });
    expect(trajectory.info.tool_bundle).toBe(bundle);
    expect(trajectory.info.submission).toContain("if values else 0");
    expect(trajectory.info.description).toMatch(/^## What was wrong\n`mean\(\[\]\)` divided by zero\./);
    expect(specs[0]!.find((spec) => spec.name === "submit")!.parameters).toMatchObject({
      properties: { description: { type: "string" } },
    });
  });
});
