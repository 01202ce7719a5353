/**
 * The one place processes handle SIGTERM and SIGINT. Long-running entries (src/server/app-server.ts,
 * worker/main.ts, src/main.ts) use exitOnSignals: the first signal runs the shutdown once, then the process exits 0 (1 when the shutdown
 * failed). The handlers stay installed for the whole shutdown, so a second signal is ignored rather
 * than killing the process half way: `tsx` (npm start) relays the signal to its child again when
 * the child has not acknowledged it within 30 ms, which on a busy machine turned about half of all
 * clean stops into an exit by signal (143) once a `process.once` handler had been used up.
 */

type ShutdownSignal = "SIGTERM" | "SIGINT";

const SIGNALS: readonly ShutdownSignal[] = ["SIGTERM", "SIGINT"];

interface ExitOnSignalsOptions {
  log?: (message: string) => void;
  /** Replaced in tests of the handler itself; the process exit by default. */
  exit?: (code: number) => void;
}

/**
 * Installs the handlers; `shutdown` runs at the first signal. Returns a function that removes them
 * (tests; a process that installs them keeps them until it exits).
 */
export function exitOnSignals(
  shutdown: (signal: ShutdownSignal) => Promise<void>,
  options: ExitOnSignalsOptions = {},
): () => void {
  const log = options.log ?? ((message: string) => console.log(message));
  const exit = options.exit ?? ((code: number) => process.exit(code));
  let stopping = false;
  const handler = (signal: ShutdownSignal) => {
    if (stopping) {
      log(`${signal} received again: already shutting down`);
      return;
    }
    stopping = true;
    log(`${signal} received: shutting down`);
    shutdown(signal).then(
      () => exit(0),
      (error: unknown) => {
        log(`shutdown failed: ${error instanceof Error ? error.message : String(error)}`);
        exit(1);
      },
    );
  };
  for (const signal of SIGNALS) process.on(signal, handler);
  return () => {
    for (const signal of SIGNALS) process.off(signal, handler);
  };
}

/**
 * The CLI's Ctrl-C (worker/cli.ts): the first SIGINT aborts `controller` so the run stops cleanly
 * and still writes its trajectory; a second one exits at once with 130 (128 + SIGINT). Returns a
 * function that removes the handler once the run is over.
 */
export function abortOnInterrupt(controller: AbortController, log: (message: string) => void): () => void {
  const handler = () => {
    log("interrupted: stopping the agent (press Ctrl-C again to force)");
    controller.abort(new Error("interrupted by the user"));
    process.once("SIGINT", () => process.exit(130));
  };
  process.once("SIGINT", handler);
  return () => process.off("SIGINT", handler);
}
