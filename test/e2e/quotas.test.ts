import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runUsage } from "../../src/shared/queue/usage.js";
import { requireRedis } from "../support/services.js";
import { type SampleRepo, Stack } from "../support/stack.js";
import { waitFor } from "../support/stack-parts.js";

// The real app and worker over real Redis and the GitHub stand-in, with the operator's quotas in an
// AGENT_FIX_CONFIG overlay; the local sandbox driver keeps the full runs short.
const ready = await requireRedis();
const examples = createRequire(import.meta.url)("@octokit/webhooks-examples") as {
  name: string;
  examples: { action?: string; marketplace_purchase: { account: { id: number; login: string } } }[];
}[];

const QUOTAS = `quotas:
  runsAtOnce: 1
  monthlyBudgetUsd: 5
  runsPerDayPerRepository: 3
  plans:
    "Basic Plan": { runsPerDayPerRepository: 0 }
`;

const utcDay = (at: Date) => `${at.toISOString().slice(0, 10)} 00:00 UTC`;

describe.runIf(ready)("quotas through the app, the worker and the GitHub stand-in", () => {
  let stack: Stack;
  let configDir: string;
  const usage = () => runUsage(stack.app!.queue.redis, stack.app!.queue);
  const finalBody = async (issue: ReturnType<Stack["addIssue"]>) =>
    (await waitFor("a final status", () => stack.finalStatus(issue), 300_000)).body;

  beforeAll(async () => {
    configDir = await mkdtemp(join(tmpdir(), "af-quotas-"));
    await writeFile(join(configDir, "quotas.yml"), QUOTAS);
    stack = new Stack({
      sandbox: "local",
      env: { AGENT_FIX_CONFIG: join(configDir, "quotas.yml"), AGENT_FIX_CONCURRENCY: "2" },
    });
    await stack.start();
  });
  afterAll(async () => {
    await stack?.stop();
    await rm(configDir, { recursive: true, force: true });
  });

  it("a second run of the installation waits for the first, saying which limit, then runs", async () => {
    const repo = await stack.addSampleRepo("textstats");
    const [first, second] = [stack.addIssue(repo), stack.addIssue(repo)];
    expect(await stack.label(first)).toBeLessThan(300);
    expect(await stack.label(second)).toBeLessThan(300);
    expect(await finalBody(first)).toContain("opened draft pull request #");
    expect(await finalBody(second)).toContain("opened draft pull request #");
    const history = (issue: typeof first) => stack.statusComment(issue)?.history.join("\n") ?? "";
    const waited = [first, second].filter((issue) =>
      history(issue).includes(
        "Waiting for a free slot: this installation may run 1 run(s) at once under the default plan, and that many are running.",
      ),
    );
    expect(waited).toHaveLength(1);
  }, 600_000);

  it("refuses a repository's run beyond its runs per day, naming the limit and when it resets", async () => {
    const repo: SampleRepo = await stack.addSampleRepo("daily");
    for (const run of ["a", "b", "c"]) await usage().countRun(repo.id, run, null);
    const issue = stack.addIssue(repo);
    await stack.label(issue);
    const body = await finalBody(issue);
    const tomorrow = new Date(Date.now() + 24 * 60 * 60 * 1000);
    expect(body).toContain(
      `Not started: octo/daily has started its 3 run(s) for today under the default plan. The count resets at ${utcDay(tomorrow)}`,
    );
    expect(stack.pulls(issue)).toEqual([]);
  });

  it("refuses runs once the installation's monthly budget is spent, saying when it resets", async () => {
    const repo = await stack.addSampleRepo("budget");
    await usage().addSpend(repo.installationId, 5.25);
    const issue = stack.addIssue(repo);
    await stack.label(issue);
    const now = new Date();
    const firstOfNext = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
    expect(await finalBody(issue)).toContain(
      `Not started: this installation's monthly budget of $5.00 under the default plan is spent ($5.25 this month). It resets on ${utcDay(firstOfNext)}`,
    );
    await stack.app!.queue.redis.del(
      ...(await stack.app!.queue.redis.keys(`${stack.prefix}:*:usage:spend:*`)),
    );
  });

  it("applies the limits of the account's Marketplace plan once it is purchased", async () => {
    const repo = await stack.addSampleRepo("planned");
    const purchased = examples
      .find((e) => e.name === "marketplace_purchase")!
      .examples.find((e) => e.action === "purchased")!;
    // The stand-in's labelled events name the owner "octo" with id 1000 + its length (stack-parts.ts).
    const payload = structuredClone(purchased);
    payload.marketplace_purchase.account = {
      ...payload.marketplace_purchase.account,
      id: 1004,
      login: "octo",
    };
    expect(await stack.send("marketplace_purchase", payload)).toBeLessThan(300);
    const issue = stack.addIssue(repo);
    await stack.label(issue);
    expect(await finalBody(issue)).toContain(
      "Not started: octo/planned has started its 0 run(s) for today under the Basic Plan plan.",
    );
  });
});
