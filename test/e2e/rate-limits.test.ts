/**
 * GitHub's secondary rate limits across the whole product: a label whose first status comment is
 * refused for longer than a delivery can wait still queues its run, and the worker posts the comment
 * when the run starts; a limit the worker hits while opening the pull request is waited out (its
 * retry-after) and the pull request opened. Real server and worker, the GitHub stand-in answering
 * as GitHub documents.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requireRedis, requireSandboxImage } from "../support/services.js";
import { Stack } from "../support/stack.js";
import { waitFor } from "../support/stack-parts.js";

const ready = (await requireRedis()) && (await requireSandboxImage());

describe.runIf(ready)("secondary rate limits", () => {
  const stack = new Stack();
  beforeAll(() => stack.start());
  afterAll(() => stack.stop());

  it("the run is queued although its status comment was limited; the worker posts it and waits out a limit on the pull request", async () => {
    const repo = await stack.addSampleRepo("limited");
    const issue = stack.addIssue(repo);
    const comments = new RegExp(`/repos/octo/limited/issues/${issue.number}/comments$`);
    const pulls = /\/repos\/octo\/limited\/pulls$/;
    stack.github.rateLimitNext("POST", comments, { status: 403, retryAfterSeconds: 120 });
    stack.github.rateLimitNext("POST", pulls, { status: 429, retryAfterSeconds: 1 });
    expect(await stack.label(issue)).toBe(200);

    const status = await waitFor("the run to finish", () => stack.finalStatus(issue), 180_000);
    expect(status.body).toContain("opened draft pull request");
    expect(stack.pulls(issue)).toHaveLength(1);
    const answers = (method: string, path: RegExp) =>
      stack.github.state.requests
        .filter((r) => r.method === method && path.test(r.path))
        .map((r) => r.status);
    // Refused once in the webhook (not waited for: 120 s), then posted by the worker.
    expect(answers("POST", comments).slice(0, 2)).toEqual([403, 201]);
    expect(answers("POST", pulls)).toEqual([429, 201]);
  }, 240_000);
});
