import { describe, expect, it } from "vitest";
import { requireRedis } from "../support/services.js";
import { runLoad } from "./load-scenario.js";

// Issue 15's load fault, scaled for CI (the full 50 issues over 5 installations: `npm run bench:load`):
// two worker processes of concurrency 2 on one Redis, four busy installations and a small one
// labelled last. Every run completes once, no installation runs more than its limit at once, and the
// small installation's run starts before the others' backlog has drained.
const ready = await requireRedis();

describe.runIf(ready)("many issues labelled at once across installations", () => {
  it("all complete once, within each installation's runs at once, and the small one is not starved", async () => {
    const plan = { issues: [4, 2, 1, 1, 1], workers: 2, concurrency: 2, runsAtOnce: 2 };
    const figures = await runLoad(plan);
    console.log(`load (CI): ${JSON.stringify(figures)}`);
    const issues = plan.issues.reduce((a, b) => a + b, 0);
    expect(figures.notDone).toBe(0);
    expect(figures.runs).toBe(issues);
    expect(figures.admissions).toBe(issues);
    expect(figures.pullRequests).toBe(issues);
    for (const most of Object.values(figures.maxAtOnce)) expect(most).toBeLessThanOrEqual(plan.runsAtOnce);
    // Labelled last: in arrival order it would start last. An installation's first two runs keep
    // arrival order (src/shared/queue/fair-order.ts); the busiest one's later runs all start after it.
    expect(figures.smallStartIndex).toBeLessThan(issues - (plan.issues[0]! - 2));
  }, 900_000);
});
