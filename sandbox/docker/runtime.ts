/**
 * The sandboxes' OCI runtime (AGENT_FIX_SANDBOX_RUNTIME, e.g. `runsc` for gVisor) checked against the
 * runtimes the engine has, at the worker's start: a name the engine lacks would fail every run's first
 * container instead, long after the operator has gone.
 */
import type Docker from "dockerode";
import { ConfigError } from "../../src/shared/errors.js";

/** Throws when `runtime` is not one of the engine's runtimes (`docker info`'s Runtimes). */
export async function checkSandboxRuntime(docker: Docker, runtime: string): Promise<void> {
  const info = (await docker.info()) as { Runtimes?: Record<string, unknown> };
  const runtimes = Object.keys(info.Runtimes ?? {}).sort();
  if (runtimes.includes(runtime)) return;
  throw new ConfigError(
    `AGENT_FIX_SANDBOX_RUNTIME=${runtime}, but the Docker engine has no runtime of that name (docker info: ${runtimes.join(", ") || "none listed"})`,
    {
      code: "config_invalid",
      hint:
        runtime === "runsc"
          ? 'Install gVisor (`apt-get install runsc`), add it to /etc/docker/daemon.json as {"runtimes": {"runsc": {"path": "/usr/bin/runsc", "runtimeArgs": ["--platform=ptrace", "--network=none"]}}}, restart the engine, and check `docker info --format "{{json .Runtimes}}"`; or unset AGENT_FIX_SANDBOX_RUNTIME for the default runc.'
          : `Add it under "runtimes" in /etc/docker/daemon.json and restart the engine (docs/operating.md), or unset AGENT_FIX_SANDBOX_RUNTIME for the default runc.`,
    },
  );
}
