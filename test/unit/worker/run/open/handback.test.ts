import { describe, expect, it } from "vitest";
import type { StatusReporter } from "../../../../../worker/run/open/status-comment.js";
import {
  finishingStatus,
  handedBackNote,
  resumedStatus,
} from "../../../../../worker/run/open/status-notes.js";

/** A status comment that records its updates in order. */
function recordingStatus(updates: string[]): StatusReporter {
  const record = async (update: string) => {
    updates.push(update);
  };
  return {
    progress: (phase, info) => record(`progress ${phase}${info?.note ? `: ${info.note}` : ""}`),
    succeeded: (pr) => record(`succeeded #${pr.number}`),
    failed: (reason) => record(`failed: ${reason}`),
    cancelled: (by) => record(`cancelled by ${by}`),
    configured: () => {},
    startsFrom: () => {},
  };
}

describe("a run's status around a hand-back", () => {
  it("marks the run finishing as its final update begins, never on progress", async () => {
    for (const final of [
      (s: StatusReporter) => s.succeeded({ number: 2, url: "u" }),
      (s: StatusReporter) => s.failed("the tests fail"),
      (s: StatusReporter) => s.cancelled("alice"),
    ]) {
      const updates: string[] = [];
      const status = finishingStatus(recordingStatus(updates), () => updates.push("finishing"));
      await status.progress("publishing");
      expect(updates).toEqual(["progress publishing"]);
      await final(status);
      expect(updates).toHaveLength(3);
      expect(updates[1]).toBe("finishing");
    }
  });

  it("says what the next worker does: start again, or only push and publish the tested change", async () => {
    expect(handedBackNote(false)).toContain("starts it again from the beginning");
    expect(handedBackNote(true)).toContain("pushes and publishes the change the tests passed on");
    const updates: string[] = [];
    await resumedStatus(recordingStatus(updates), 1).progress("publishing");
    expect(updates).toEqual([
      "progress publishing: Resumed on another worker: the one running this before was shut down (a deploy or restart).",
    ]);
  });
});
