import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fixJobId } from "../../src/shared/queue/index.js";
import { pullRequestCosts } from "../../src/shared/queue/pull-costs.js";
import { PULL_COST_MARK } from "../../worker/run/open/pull-cost-ceiling.js";
import { recordedReplies, sampleFixReplies, stackWithModelStandIn } from "../support/model-stack.js";
import type { OpenAIStandIn } from "../support/openai-server.js";
import { requireRedis } from "../support/services.js";
import { sampleConfig } from "../support/stack.js";
import { FIXTURES, type IssueRef, waitFor } from "../support/stack-parts.js";
import { pullCommentEvent } from "../support/webhooks.js";

// The real app and worker over real Redis and the GitHub stand-in; the model is the OpenAI-compatible
// stand-in, which bills each call at the operator's prices (replayed turns would cost nothing); the local
// sandbox driver keeps the runs short. The operator's ceiling: $1 for every run on a pull request.
const ready = await requireRedis();
const REVIEW_REPLIES = join(FIXTURES, "replay", "sample-review-comment.jsonl");
const CEILING = "quotas:\n  maxCostUsdPerPullRequest: 1\n";

describe.runIf(ready)("the cost ceiling of a pull request across its rounds", () => {
  let configDir: string;
  let model: OpenAIStandIn;
  let harness: ReturnType<typeof stackWithModelStandIn>;
  let issue: IssueRef;
  const stack = () => harness.stack;
  const costs = () => pullRequestCosts(stack().app!.queue.redis, stack().app!.queue);
  const onPull = (pull: number) => stack().github.state.commentsOn(issue.owner, issue.repo, pull);
  /** `/agent-fix` with a request on the pull request, and the job it queues run to its end. */
  const ask = async (pull: number, request: string) => {
    const queue = stack().app!.queue.queue;
    const before = (await queue.getJob(fixJobId(issue.repoId, issue.number)))?.timestamp ?? 0;
    const comment = pullCommentEvent(
      stack().github,
      { owner: issue.owner, repo: issue.repo, pull },
      `/agent-fix\n${request}`,
      { login: "maintainer" },
    );
    expect(await stack().send(comment.event, comment.payload)).toBeLessThan(300);
    await waitFor(
      "the round's job to end",
      async () => {
        const job = await queue.getJob(fixJobId(issue.repoId, issue.number));
        return job && job.timestamp > before && (await job.getState()) === "completed";
      },
      240_000,
    );
    return stack().finalStatus(issue)!.body;
  };

  beforeAll(async () => {
    configDir = await mkdtemp(join(tmpdir(), "af-pull-cost-"));
    await writeFile(join(configDir, "ceiling.yml"), CEILING);
    harness = stackWithModelStandIn({
      sandbox: "local",
      env: { AGENT_FIX_CONFIG: join(configDir, "ceiling.yml") },
    });
    model = await harness.start();
    issue = stack().addIssue(await stack().addSampleRepo("textstats-costly", sampleConfig(null)));
  });
  afterAll(async () => {
    await harness?.stop();
    await rm(configDir, { recursive: true, force: true });
  });

  it("rounds until every run together reaches the ceiling -> one comment with the figures -> no more runs", async () => {
    model.enqueue(...sampleFixReplies());
    expect(await stack().label(issue)).toBeLessThan(300);
    const opened = await waitFor("the pull request", () => stack().finalStatus(issue), 240_000);
    expect(opened.body).toContain("opened draft pull request #");
    await waitFor(
      "the job to complete",
      async () =>
        (await stack().app!.queue.queue.getJobState(fixJobId(issue.repoId, issue.number))) === "completed",
    );
    const [pr] = stack().pulls(issue);
    const pull = pr!.number;
    // The run that opened it counts: its model calls, billed by the stand-in.
    const first = await costs().total(issue.repoId, pull);
    expect(first).toBeGreaterThan(0);
    // As if earlier rounds had spent all but a millionth of a dollar of the ceiling.
    await costs().add(issue.repoId, pull, 1 - first - 1e-6);

    // Under the ceiling: the round runs, and its calls take the total past it.
    model.enqueue(...recordedReplies(REVIEW_REPLIES));
    const round = await ask(pull, "Say in a comment why the two middle values are averaged.");
    expect(round).toContain(`pushed a commit addressing the review to pull request #${pull}`);
    const total = await costs().total(issue.repoId, pull);
    expect(total).toBeGreaterThanOrEqual(1);

    // At the ceiling: refused before any model call, said once on the pull request with the figures.
    const calls = model.requests.length;
    const refused = await ask(pull, "Also rename `ordered` to `values`.");
    const figures = `Every agent-fix run on pull request #${pull} together has cost $${total.toFixed(2)} in model calls, which reaches the ceiling of $1.00 per pull request (\`quotas.maxCostUsdPerPullRequest\` in the operator's config)`;
    expect(refused).toContain(`${figures}: this review round did not run.`);
    const said = onPull(pull).filter((c) => c.body.startsWith(PULL_COST_MARK));
    expect(said).toHaveLength(1);
    expect(said[0]?.body).toContain(
      `${figures}, so agent-fix starts no more review, CI or rebase rounds here.`,
    );
    expect(said[0]?.body).toContain("raise `quotas.maxCostUsdPerPullRequest`");

    // Once more: no run, no second comment.
    const again = await ask(pull, "And add a docstring.");
    expect(again).toContain("this review round did not run");
    expect(onPull(pull).filter((c) => c.body.startsWith(PULL_COST_MARK))).toHaveLength(1);
    expect(model.requests).toHaveLength(calls);
    expect(await costs().total(issue.repoId, pull)).toBe(total);
  }, 600_000);
});
