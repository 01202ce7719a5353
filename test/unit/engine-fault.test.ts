import { describe, expect, it } from "vitest";
import { engineFault } from "../../sandbox/engine-fault.js";
import { GitHubError, InfrastructureError, SandboxError } from "../../src/errors.js";

/** dockerode's error for an exec on a container the engine stopped when it restarted. */
const notRunning = Object.assign(
  new Error("(HTTP code 409) container stopped/paused - Container 499fa08eff25 is not running"),
  { statusCode: 409 },
);

describe("engineFault", () => {
  it("a sandbox whose container the engine stopped: infrastructure, retryable, saying so", () => {
    const error = new SandboxError(`cannot start the agent shell: ${notRunning.message}`, {
      code: "shell_start_failed",
      retryable: true,
      cause: notRunning,
    });
    const fault = engineFault(error);
    expect(fault).toBeInstanceOf(InfrastructureError);
    expect(fault).toMatchObject({ code: "docker_engine_lost", fault: "infrastructure", retryable: true });
    expect((fault as InfrastructureError).describe()).toContain(
      "The Docker engine on the worker stopped or restarted",
    );
  });

  it("the engine's socket refusing: infrastructure", () => {
    const refused = Object.assign(new Error("connect ENOENT /run/docker.sock"), { code: "ENOENT" });
    const error = new SandboxError("cannot create a sandbox container", {
      code: "docker_unavailable",
      cause: refused,
    });
    expect(engineFault(error)).toBeInstanceOf(InfrastructureError);
  });

  it("a refused connection that is not the sandbox's, or a sandbox failure of its own, is left as it is", () => {
    const github = new GitHubError("connect ECONNREFUSED 127.0.0.1:443", {
      code: "github_network",
      retryable: true,
    });
    expect(engineFault(github)).toBe(github);
    const full = new SandboxError("no space left in the workspace", { code: "workspace_full" });
    expect(engineFault(full)).toBe(full);
  });
});
