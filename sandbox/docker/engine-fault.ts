/**
 * Tells a sandbox that failed because the Docker engine went away (stopped, restarted, crashed: its
 * containers stopped with it, its socket refused) from one that failed on its own, so the run says
 * what happened and is retried. What the engine's loss looks like through dockerode (docker-modem
 * sets `statusCode` and `reason` from the call's own table, lib/container.js and lib/exec.js):
 * - the socket gone or refusing while the engine is down: Node's `connect ENOENT|ECONNREFUSED`, or a
 *   connection cut mid-call (ECONNRESET, EPIPE, "socket hang up");
 * - the engine back without the run's container running: an exec on it answers 409 "container
 *   stopped/paused" (`Container X is not running`), an exec start 500 "container not running", a
 *   call on a container removed with it 404 "no such container";
 * - a shell or copy stream that ended because its container stopped, which the sandbox words as
 *   "not running" after asking the engine (docker/provider.ts, containerDown).
 */
import { setTimeout as sleep } from "node:timers/promises";
import type Docker from "dockerode";
import { InfrastructureError, SandboxError } from "../../src/shared/errors.js";

/** dockerode's reasons (its status tables) for a container that is gone or stopped. */
const CONTAINER_GONE_REASONS = new Set([
  "no such container",
  "container stopped/paused",
  "container not running",
  "no such exec",
]);
/** Node's codes for a connection to the engine's socket that was cut. */
const SOCKET_CUT_CODES = new Set(["ECONNRESET", "EPIPE"]);
/** The same, as the messages say them (a cause can be lost where an error was worded again). */
const ENGINE_GONE = [
  /container not running/i,
  /is not running/i,
  /no such container/i,
  /container stopped\/paused/i,
  /is restarting/i,
  /connect (ECONNREFUSED|ENOENT)/,
  /socket hang up/i,
  /ECONNRESET|EPIPE/,
  /the Docker engine did not show container/,
];

/** `error` and its causes, outermost first. */
function chain(error: unknown): unknown[] {
  const errors: unknown[] = [];
  for (let current = error; current && errors.length < 6; current = (current as { cause?: unknown }).cause)
    errors.push(current);
  return errors;
}

/** Whether one error of the chain is dockerode's or Node's word for the engine going away. */
function saysEngineGone(error: unknown): boolean {
  const e = error as { reason?: unknown; code?: unknown; syscall?: unknown; message?: unknown };
  if (typeof e?.reason === "string" && CONTAINER_GONE_REASONS.has(e.reason)) return true;
  // A socket that is not there or refuses: only when connecting (ENOENT is also a missing file).
  if ((e?.code === "ENOENT" || e?.code === "ECONNREFUSED") && e.syscall === "connect") return true;
  if (typeof e?.code === "string" && SOCKET_CUT_CODES.has(e.code)) return true;
  const said = error instanceof Error ? error.message : String(error);
  return ENGINE_GONE.some((pattern) => pattern.test(said));
}

/**
 * An InfrastructureError for a sandbox failure the Docker engine caused, else `error` unchanged. Only
 * sandbox failures are looked at: a refused connection elsewhere (GitHub, the model) is not the engine.
 */
export function engineFault(error: unknown): unknown {
  if (error instanceof InfrastructureError) return error;
  const errors = chain(error);
  if (!errors.some((e) => e instanceof SandboxError)) return error;
  if (!errors.some(saysEngineGone)) return error;
  const first = errors[0] instanceof Error ? errors[0].message : String(errors[0]);
  return new InfrastructureError(
    `The Docker engine on the worker was unreachable or stopped the run's sandbox during the run (${first})`,
    {
      code: "docker_engine_lost",
      hint: "Should this repeat, check the worker host's Docker engine (its service status and log).",
      cause: error,
    },
  );
}

/**
 * Why a container the sandbox holds cannot be used, as the engine tells it: not running (the engine
 * stopped it), or not shown (its socket refuses, or it is gone); undefined while it runs. Asked again
 * for a few seconds while it still shows as running: an engine that is shutting down still answers
 * for a moment with its containers running, while it is already ending their execs (seen when the
 * engine restarted under a run: the shell "did not start", the container still "running").
 */
export async function containerDown(
  container: Docker.Container,
  { tries = 10, everyMs = 500 } = {},
): Promise<string | undefined> {
  for (let attempt = 1; ; attempt++) {
    try {
      const { State } = await container.inspect();
      if (!State.Running)
        return `container ${container.id} is not running: ${State.Status} (exit ${State.ExitCode})`;
    } catch (error) {
      return `the Docker engine did not show container ${container.id}: ${(error as Error).message}`;
    }
    if (attempt >= tries) return undefined;
    await sleep(everyMs);
  }
}
