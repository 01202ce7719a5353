import { describe, expect, it, vi } from "vitest";
import { pushTokenAhead } from "../../../../../worker/run/push/push.js";

/** A run's credentials as pushTokenAhead sees them: each mint a new token, or GitHub's refusal. */
function credentials(answers: (string | Error)[]) {
  const purposes: string[] = [];
  return {
    purposes,
    run: {
      credentials: {
        token: async (purpose: "clone" | "push") => {
          purposes.push(purpose);
          const answer = answers.shift() ?? new Error("no more tokens");
          if (answer instanceof Error) throw answer;
          return answer;
        },
      },
    } as unknown as Parameters<typeof pushTokenAhead>[0],
  };
}

describe("pushTokenAhead", () => {
  it("mints one push token for every gate while it is fresh, and again past its half hour", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    try {
      const { run, purposes } = credentials(["ghs_first", "ghs_second"]);
      const token = pushTokenAhead(run);
      expect(await token()).toBe("ghs_first");
      expect(await token()).toBe("ghs_first");
      vi.setSystemTime(Date.now() + 31 * 60_000);
      expect(await token()).toBe("ghs_second");
      expect(purposes).toEqual(["push", "push"]);
    } finally {
      vi.useRealTimers();
    }
  });

  it("mints again after a mint GitHub refused: the push never reuses a failure from beside a gate", async () => {
    const { run, purposes } = credentials([new Error("HTTP 502"), "ghs_after"]);
    const token = pushTokenAhead(run);
    await expect(token()).rejects.toThrow("HTTP 502");
    expect(await token()).toBe("ghs_after");
    expect(purposes).toEqual(["push", "push"]);
  });
});
