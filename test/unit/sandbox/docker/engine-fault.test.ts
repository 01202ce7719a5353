import { describe, expect, it } from "vitest";
import { engineFault } from "../../../../sandbox/docker/engine-fault.js";
import { GitHubError, InfrastructureError, SandboxError } from "../../../../src/shared/errors.js";
import { retryNote } from "../../../../worker/run/end/retry-note.js";

/** dockerode's error for an exec on a container the engine stopped when it restarted (docker-modem). */
const notRunning = Object.assign(
  new Error("(HTTP code 409) container stopped/paused - Container 499fa08eff25 is not running"),
  { statusCode: 409, reason: "container stopped/paused" },
);

describe("engineFault", () => {
  it("a sandbox whose container the engine stopped: infrastructure, retryable, naming the engine", () => {
    const error = new SandboxError(`cannot start the agent shell: ${notRunning.message}`, {
      code: "shell_start_failed",
      retryable: true,
      cause: notRunning,
    });
    const fault = engineFault(error);
    expect(fault).toBeInstanceOf(InfrastructureError);
    expect(fault).toMatchObject({ code: "docker_engine_lost", fault: "infrastructure", retryable: true });
    expect((fault as InfrastructureError).describe()).toMatch(
      /^The Docker engine on the worker was unreachable or stopped the run's sandbox during the run \(cannot start the agent shell: .*\) \(docker_engine_lost\)/,
    );
  });

  it("dockerode's reason is enough, whatever the message was worded as", () => {
    const gone = Object.assign(new Error("(HTTP code 404) no such container - gone"), {
      statusCode: 404,
      reason: "no such container",
    });
    const error = new SandboxError("cannot copy the repository in", { code: "copy_failed", cause: gone });
    expect(engineFault(error)).toBeInstanceOf(InfrastructureError);
  });

  it("the shell that did not start, with the engine's word on its container: infrastructure", () => {
    const error = new SandboxError(
      "the agent shell did not start: container 499fa08eff25 is not running: exited (exit 143)",
      { code: "shell_start_failed", retryable: true },
    );
    expect(engineFault(error)).toBeInstanceOf(InfrastructureError);
  });

  it("the engine's socket refusing: infrastructure", () => {
    const refused = Object.assign(new Error("connect ENOENT /run/docker.sock"), {
      code: "ENOENT",
      syscall: "connect",
    });
    const error = new SandboxError("cannot create a sandbox container", {
      code: "docker_unavailable",
      cause: refused,
    });
    expect(engineFault(error)).toBeInstanceOf(InfrastructureError);
  });

  it("a refused connection that is not the sandbox's, a missing file, or a sandbox failure of its own: left as it is", () => {
    const github = new GitHubError("connect ECONNREFUSED 127.0.0.1:443", {
      code: "github_network",
      retryable: true,
    });
    expect(engineFault(github)).toBe(github);
    const full = new SandboxError("no space left in the workspace", { code: "workspace_full" });
    expect(engineFault(full)).toBe(full);
    const missing = Object.assign(new Error("cannot read /tmp/x"), { code: "ENOENT", syscall: "open" });
    const copy = new SandboxError("cannot pack /tmp/x", { code: "copy_failed", cause: missing });
    expect(engineFault(copy)).toBe(copy);
  });
});

describe("retryNote", () => {
  it("the engine's loss: named, with the attempt the retry will be, and no sandbox code", () => {
    const fault = engineFault(
      new SandboxError(`cannot start the agent shell: ${notRunning.message}`, {
        code: "shell_start_failed",
        cause: notRunning,
      }),
    ) as InfrastructureError;
    const note = retryNote(fault, { next: 2, of: 3 });
    expect(note).toMatch(
      /^The Docker engine on the worker was unreachable or stopped the run's sandbox during the run \(.*\); retrying \(attempt 2 of 3\) \(docker_engine_lost\)\. Should this repeat/,
    );
    expect(note).not.toContain("(shell_start_failed)");
  });

  it("any other transient error: said as before", () => {
    const error = new GitHubError("GitHub answered 502", { code: "github_502", retryable: true });
    expect(retryNote(error, { next: 2, of: 3 })).toBe(
      "Retrying after a transient error: GitHub answered 502 (github_502)",
    );
  });
});
