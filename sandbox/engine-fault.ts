/**
 * Tells a sandbox that failed because the Docker engine went away (stopped, restarted, crashed: its
 * containers stopped with it, its socket refused) from one that failed on its own, so the run says
 * what happened and is retried: the engine's answers name it ("container not running", "No such
 * container" for a container the run still held, a refused or reset connection to its socket).
 */
import { InfrastructureError, SandboxError } from "../src/errors.js";

/** Docker's and Node's words for an engine that is gone or came back without the run's containers. */
const ENGINE_GONE = [
  /container not running/i,
  /is not running/i,
  /no such container/i,
  /is restarting/i,
  /connect (ECONNREFUSED|ENOENT)/,
  /socket hang up/i,
  /ECONNRESET|EPIPE/,
];

/** The messages of `error` and its causes, outermost first. */
function chain(error: unknown): unknown[] {
  const errors: unknown[] = [];
  for (let current = error; current && errors.length < 6; current = (current as { cause?: unknown }).cause)
    errors.push(current);
  return errors;
}

/**
 * An InfrastructureError for a sandbox failure the Docker engine caused, else `error` unchanged. Only
 * sandbox failures are looked at: a refused connection elsewhere (GitHub, the model) is not the engine.
 */
export function engineFault(error: unknown): unknown {
  const errors = chain(error);
  if (!errors.some((e) => e instanceof SandboxError)) return error;
  const said = errors.map((e) => (e instanceof Error ? e.message : String(e))).join(" | ");
  if (!ENGINE_GONE.some((pattern) => pattern.test(said))) return error;
  const first = errors[0] instanceof Error ? errors[0].message : String(errors[0]);
  return new InfrastructureError(
    `The Docker engine on the worker stopped or restarted during the run, and the run's sandboxes with it (${first})`,
    {
      code: "docker_engine_lost",
      hint: "The run is retried; should this repeat, check the worker host's Docker engine (its service status and log).",
      cause: error,
    },
  );
}
