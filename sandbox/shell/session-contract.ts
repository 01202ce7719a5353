/** What a ShellSession (shell/session.ts) is given by its driver, and what its callers give and get. */

import type { Readable, Writable } from "node:stream";

export interface ShellProcess {
  stdin: Writable;
  /** stdout and stderr of the shell, merged. */
  output: Readable;
  /** Resolves once the shell has ended, with its exit status when known. */
  exited: Promise<number | null>;
  /** Releases the host side (streams, child process). Safe to call more than once. */
  destroy(): void;
}

/** How the driver ends what a timed-out or aborted command left running. */
export interface ShellKillers {
  /**
   * Kills every process the running command started (the shell's descendants, and what else the driver
   * can attribute to it), leaving the shell alive. Resolves true when none is left.
   */
  killChildren?: (shellPid: number) => Promise<boolean>;
  /** Kills the shell itself (and what it started) when killing its children did not make it return. */
  killShell?: (shellPid: number) => Promise<void>;
}

export interface ShellSessionOptions extends ShellKillers {
  /** For messages: "agent" or "control". */
  name: string;
  spawn: () => Promise<ShellProcess>;
  /** Script run after every (re)start, e.g. function definitions. */
  init?: string;
  /** How long to wait for the marker after killing, before giving up on the shell. Default 2 s. */
  graceMs?: number;
  startTimeoutMs?: number;
  /** Why a shell could not start, as the driver sees it (the container stopped under it), if it knows. */
  whyNoShell?: () => Promise<string | undefined>;
}

export interface ShellRunOptions {
  timeoutMs: number;
  /** Cap of the captured output (head + tail); unbounded when absent. */
  maxOutputChars?: number;
  /** Run in this directory, in a subshell (the session's directory does not change). */
  cwd?: string;
  /** Extra variables for this command only, in a subshell. */
  env?: Record<string, string>;
  signal?: AbortSignal;
  /**
   * Data written to the shell's own stdin right after the command line, for the command to read (bash
   * reads its input from a pipe one byte at a time, so the data stays in the pipe for the command; far
   * cheaper than in the command line, which bash would parse byte by byte). The command then runs with
   * the shell's stdin instead of /dev/null and MUST read exactly these bytes. Should end with a newline
   * and be safe as a shell line, since bash would run what the command leaves unread.
   */
  input?: string;
}

export interface ShellRunResult {
  exitCode: number;
  output: string;
  truncated: boolean;
  timedOut: boolean;
  aborted: boolean;
  sessionRestarted: boolean;
  durationMs: number;
}
