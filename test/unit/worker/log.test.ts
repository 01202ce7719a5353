import { describe, expect, it } from "vitest";
import { jobLogger } from "../../../worker/log.js";
import { capturingLogger, type LogLine } from "../../support/logs.js";

const job = { installationId: 42, owner: "octo", repo: "calc", repoId: 7, issueNumber: 3 };

describe("the worker's job logger", () => {
  it("puts the job id, installation and repository on every line, errors included", () => {
    const lines: LogLine[] = [];
    const log = jobLogger(capturingLogger(lines), job, "review-7-3");
    log.info("cloning");
    log.child({ component: "gate" }).warn("retrying");
    log.error({ err: new Error("boom") }, "status comment update failed");
    expect(lines).toHaveLength(3);
    for (const line of lines)
      expect(line).toMatchObject({ jobId: "review-7-3", installation: 42, repository: "octo/calc" });
    expect(lines[2]).toMatchObject({ level: "error", err: { message: "boom" } });
  });

  it("names the job by its queue id when BullMQ's is not given", () => {
    const lines: LogLine[] = [];
    jobLogger(capturingLogger(lines), job).info("hello");
    expect(lines[0]?.jobId).toBe("fix-7-3");
  });
});
