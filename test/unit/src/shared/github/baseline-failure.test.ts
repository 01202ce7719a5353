import { describe, expect, it } from "vitest";
import type { BaselineFailure } from "../../../../../src/shared/github/baseline-failure.js";
import { renderStatus } from "../../../../../src/shared/github/status.js";

const context = { requestedBy: "maintainer" };

function failure(overrides: Partial<BaselineFailure> = {}): BaselineFailure {
  return {
    testCommand: "npm test",
    exitCode: 1,
    durationMs: 2_400,
    timeoutMs: 300_000,
    failure: {
      kind: "environment",
      cause: "toolchain",
      evidence: "SyntaxError: The requested module 'node:util' does not provide an export named 'styleText'",
      subject: "node:util",
    },
    tail: "SyntaxError: The requested module 'node:util' does not provide an export named 'styleText'\n    at ModuleJob._instantiate",
    spent: null,
    ...overrides,
  };
}

const render = (baseline: BaselineFailure) =>
  renderStatus({ kind: "failed", reason: "The tests already fail on main.", baseline }, context);

/** The fenced blocks of `body`: their fence and text. */
function blocks(body: string): { fence: string; text: string }[] {
  const found: { fence: string; text: string }[] = [];
  const open = /^(`{3,})text$/gm;
  for (let match = open.exec(body); match; match = open.exec(body)) {
    const fence = match[1] ?? "";
    const start = match.index + match[0].length + 1;
    const close = new RegExp(`\n${fence}(?:\n|$)`, "g");
    close.lastIndex = start;
    const end = close.exec(body)?.index ?? body.length;
    found.push({ fence, text: body.slice(start, end) });
    open.lastIndex = end + fence.length + 1;
  }
  return found;
}

describe("a failing baseline in the final status", () => {
  it("shows the class, the exit and time, and the output's tail verbatim in a fence", () => {
    const body = render(failure());
    expect(body).toContain("**Why:** The tests already fail on main.");
    expect(body).toContain(
      "**Tests before any change:** ❌ `npm test` exited 1 after 2 s, in a fresh sandbox. It looks like **the environment: the toolchain (a crash at start-up)**.",
    );
    expect(blocks(body).map((block) => block.text)).toEqual([failure().tail]);
  });

  it("output that tries to close the fence, link, mention or inject HTML stays code", () => {
    const tail = "ok\n````\n@maintainer ![x](https://evil.example/a.png) <img src=x>\n```\nend";
    const body = render(failure({ tail, failure: { kind: "tests" } }));
    const [block] = blocks(body);
    expect(block?.fence.length).toBeGreaterThan(4);
    expect(block?.text).toBe(tail);
    expect(body).toContain("It looks like **real failing tests**");
  });

  it("the line the class rests on is shown when the tail does not hold it", () => {
    const body = render(failure({ tail: "    at start (file:///p/cac.js:1:1)\nNode.js v18.20.4" }));
    expect(body).toContain("The line that says so:");
    expect(blocks(body).map((block) => block.text)).toContain(
      "SyntaxError: The requested module 'node:util' does not provide an export named 'styleText'",
    );
  });

  it("a tail holding a setup secret is withheld, and so is the evidence", () => {
    const body = render(failure({ tail: null }));
    expect(body).toContain("The test output is withheld: it holds the value of a setup secret.");
    expect(body).not.toContain("styleText");
  });

  it("a timeout says it timed out and after how long", () => {
    const body = render(failure({ failure: { kind: "timeout" }, exitCode: 137, durationMs: 300_100 }));
    expect(body).toContain(
      "❌ `npm test` timed out after 300 s, in a fresh sandbox. It looks like **a timeout**.",
    );
  });

  it("what the agent had spent is reported, a cancelled call included", () => {
    const spent = { calls: 3, tokensSent: 12_345, tokensReceived: 678, costUsd: 0.0123, cancelledCall: true };
    const body = render(failure({ spent }));
    expect(body).toContain(
      "**Spent before the stop:** the agent had made 3 model calls (12,345 tokens sent, 678 received, $0.0123). One more call was on its way and was cancelled: its tokens are not known.",
    );
    const one = render(failure({ spent: { ...spent, calls: 1, cancelledCall: false } }));
    expect(one).not.toContain("cancelled");
    expect(render(failure({ spent: { ...spent, calls: 0, tokensSent: 0, tokensReceived: 0 } }))).toContain(
      "**Spent before the stop:** no model call had finished; the first was on its way and was cancelled",
    );
    expect(one).toContain("made 1 model call (12,345 tokens sent, 678 received, $0.0123).");
  });
});
