/**
 * One exchange with a ShellSession's shell: a line written, then the wait for its marker, the shell's
 * end, or the timeout or abort, which kill what the command started (and, failing that, the shell).
 */

import { setTimeout as sleep } from "node:timers/promises";
import type { MarkerFramer, Outcome, Waiter } from "./marker-framer.js";
import type { OutputBuffer } from "./output-buffer.js";
import type { ShellKillers, ShellProcess } from "./session-contract.js";

export interface ExchangeOptions {
  buffer: OutputBuffer;
  timeoutMs: number;
  signal?: AbortSignal | undefined;
}

export interface ExchangeResult {
  outcome: Outcome;
  buffer: OutputBuffer;
  timedOut: boolean;
  aborted: boolean;
}

/** The shell an exchange talks to, as the session holds it when the exchange starts. */
interface ExchangeShell {
  proc: ShellProcess | undefined;
  dead: boolean;
  /** The shell's pid when a kill starts. */
  pid: () => number;
  framer: MarkerFramer;
  killers: ShellKillers;
  /** How long to wait for the marker after each kill. */
  graceMs: number;
}

/** Writes one line and waits for the marker, the shell's end, or the timeout (then kills). */
export function exchange(
  shell: ExchangeShell,
  line: string,
  options: ExchangeOptions,
): Promise<ExchangeResult> {
  const proc = shell.proc;
  if (!proc)
    return Promise.resolve({
      outcome: { kind: "exit", code: null },
      buffer: options.buffer,
      timedOut: false,
      aborted: false,
    });
  return new Promise((resolve) => new PendingExchange(shell, proc, options, resolve).begin(line));
}

class PendingExchange implements Waiter {
  pending = "";
  readonly buffer: OutputBuffer;
  private timedOut = false;
  private aborted = false;
  private settled = false;
  private timer: NodeJS.Timeout | undefined;
  // The kill started by a timeout or an abort. The exchange resolves only once it has ended: the
  // marker often arrives while the killer is still scanning (the command died in its first round, or
  // ended by itself just as the timeout fired), and a kill still running when the next command starts
  // would kill that command instead ("bash: line N: PID Killed ...", status 137).
  private escalation: Promise<void> | undefined;
  private markSettled: () => void = () => undefined;
  private readonly settledPromise = new Promise<void>((resolve) => {
    this.markSettled = resolve;
  });
  private readonly onAbort = () => {
    this.aborted = true;
    this.startEscalation();
  };

  constructor(
    private readonly shell: ExchangeShell,
    private readonly proc: ShellProcess,
    private readonly options: ExchangeOptions,
    private readonly resolve: (result: ExchangeResult) => void,
  ) {
    this.buffer = options.buffer;
  }

  begin(line: string): void {
    this.shell.framer.attach(this);
    const { signal } = this.options;
    if (signal) {
      if (signal.aborted) {
        this.aborted = true;
        this.settle({ kind: "stuck" });
        return;
      }
      signal.addEventListener("abort", this.onAbort, { once: true });
    }
    this.timer = setTimeout(() => {
      this.timedOut = true;
      this.startEscalation();
    }, this.options.timeoutMs);
    if (this.shell.dead) {
      this.settle({ kind: "exit", code: null });
      return;
    }
    try {
      this.proc.stdin.write(line, (error) => {
        if (error) this.settle({ kind: "exit", code: null });
      });
    } catch {
      this.settle({ kind: "exit", code: null });
    }
  }

  settle(outcome: Outcome): void {
    if (this.settled) return;
    this.settled = true;
    if (this.timer) clearTimeout(this.timer);
    this.options.signal?.removeEventListener("abort", this.onAbort);
    if (outcome.kind !== "marker" && this.pending) this.buffer.push(this.pending);
    this.pending = "";
    this.shell.framer.detach(this);
    this.markSettled();
    const result = { outcome, buffer: this.buffer, timedOut: this.timedOut, aborted: this.aborted };
    if (this.escalation) void this.escalation.then(() => this.resolve(result));
    else this.resolve(result);
  }

  private startEscalation(): void {
    this.escalation ??= this.escalate().catch(() => undefined); // its kills catch their own failures
  }

  private async escalate(): Promise<void> {
    if (this.settled) return;
    const pid = this.shell.pid();
    const { killChildren, killShell } = this.shell.killers;
    // Best effort: what survives is escalated below, and the shell is killed after that.
    if (killChildren) await killChildren(pid).catch(() => false);
    await this.settledOrGrace();
    if (this.settled) return;
    // The shell itself is busy (a builtin loop) or stuck: end it; the caller restarts the session.
    if (killShell) await killShell(pid).catch(() => undefined);
    this.proc.destroy();
    await this.settledOrGrace();
    if (!this.settled) this.settle({ kind: "stuck" });
  }

  private settledOrGrace(): Promise<void> {
    return Promise.race([this.settledPromise, sleep(this.shell.graceMs, undefined, { ref: false })]);
  }
}
