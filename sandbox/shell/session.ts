/**
 * A persistent bash session over a pair of streams, shared by both drivers (local: a child process;
 * docker: an exec attached over the Engine API). `cd` and exported variables persist between commands.
 * The session starts (and restarts) the shell and runs one command at a time; the line each command is
 * sent as is shell/command.ts's, its output is framed by shell/marker-framer.ts, and shell/exchange.ts waits
 * for it (killing what a timed-out command left running).
 */

import { StringDecoder } from "node:string_decoder";
import { ShellMarker, withTimeoutNote } from "./command.js";
import { type ExchangeOptions, type ExchangeResult, exchange } from "./exchange.js";
import { MarkerFramer, type Outcome } from "./marker-framer.js";
import { OutputBuffer } from "./output-buffer.js";
import type {
  ShellProcess,
  ShellRunOptions,
  ShellRunResult,
  ShellSessionOptions,
} from "./session-contract.js";
import { sessionDisposed, shellDidNotStart, shellSetupFailed, spawnShell } from "./start.js";

export { ansiC, assertEnvNames } from "./command.js";
export { KILL_FUNCTION } from "./kill.js";
export type { ShellProcess } from "./session-contract.js";

export class ShellSession {
  private proc: ShellProcess | undefined;
  private shellPid = -1;
  private dead = true;
  private everStarted = false;
  private closed = false;
  private chain: Promise<unknown> = Promise.resolve();
  private readonly marker = new ShellMarker();
  private readonly framer = new MarkerFramer(this.marker.needle);
  private readonly graceMs: number;

  constructor(private readonly options: ShellSessionOptions) {
    this.graceMs = options.graceMs ?? 2000;
  }

  /** For messages: "agent", "control", "file". */
  get name(): string {
    return this.options.name;
  }

  /** The shell's pid as seen inside the sandbox; -1 before the first start. */
  get pid(): number {
    return this.shellPid;
  }

  get alive(): boolean {
    return !this.dead && this.proc !== undefined;
  }

  /** Starts the shell now (otherwise the first command does). */
  start(): Promise<void> {
    return this.serialize(async () => {
      if (!this.alive) await this.restart();
    });
  }

  /** Runs one command; never rejects for a failing, timed-out or killed command. */
  run(command: string, options: ShellRunOptions): Promise<ShellRunResult> {
    return this.serialize(() => this.runNow(command, options));
  }

  async close(): Promise<void> {
    this.closed = true;
    const proc = this.proc;
    this.proc = undefined;
    this.dead = true;
    this.framer.settle({ kind: "exit", code: null });
    if (proc) {
      try {
        proc.stdin.end();
      } catch {
        // already closed
      }
      proc.destroy();
    }
  }

  private serialize<T>(task: () => Promise<T>): Promise<T> {
    const next = this.chain.then(task, task);
    this.chain = next.catch(() => undefined); // the caller gets the error through `next`
    return next;
  }

  private exchange(line: string, options: ExchangeOptions): Promise<ExchangeResult> {
    const { proc, dead, framer, graceMs } = this;
    const shell = { proc, dead, framer, graceMs, killers: this.options, pid: () => this.shellPid };
    return exchange(shell, line, options);
  }

  private async restart(): Promise<void> {
    if (this.closed) throw sessionDisposed();
    await this.dropShell();
    const proc = await spawnShell(this.options);
    if (this.closed) {
      proc.destroy();
      throw sessionDisposed();
    }
    this.attach(proc);
    const startTimeout = this.options.startTimeoutMs ?? 30_000;
    await this.greet(proc, startTimeout);
    if (this.options.init) await this.runInit(this.options.init, startTimeout);
  }

  /** Ends the shell there is (if any) before another starts. */
  private async dropShell(): Promise<void> {
    const old = this.proc;
    if (old) {
      this.proc = undefined;
      if (!this.dead && this.options.killShell)
        await this.options.killShell(this.shellPid).catch(() => undefined); // best effort: destroyed next
      old.destroy();
    }
    this.dead = true;
  }

  /** Makes `proc` the session's shell: its output goes to the framer, its end settles the command. */
  private attach(proc: ShellProcess): void {
    this.proc = proc;
    this.dead = false;
    const decoder = new StringDecoder("utf8");
    proc.output.on("data", (chunk: Buffer | string) => {
      if (this.proc !== proc) return;
      this.framer.feed(typeof chunk === "string" ? chunk : decoder.write(chunk));
    });
    proc.output.on("error", () => undefined);
    proc.stdin.on("error", () => undefined);
    void proc.exited.then((code) => {
      if (this.proc !== proc) return;
      this.dead = true;
      this.framer.settle({ kind: "exit", code });
    });
  }

  /** The first exchange: the shell answers with its pid, or it did not start. */
  private async greet(proc: ShellProcess, timeoutMs: number): Promise<void> {
    const hello = await this.exchange(this.marker.helloLine(), { buffer: new OutputBuffer(4096), timeoutMs });
    if (hello.outcome.kind === "marker") {
      this.shellPid = hello.outcome.code;
      this.everStarted = true;
      return;
    }
    proc.destroy();
    this.proc = undefined;
    this.dead = true;
    throw await shellDidNotStart(this.options);
  }

  private async runInit(init: string, timeoutMs: number): Promise<void> {
    const result = await this.exchange(this.marker.commandLine(init, {}), {
      buffer: new OutputBuffer(4096),
      timeoutMs,
    });
    if (result.outcome.kind !== "marker" || result.outcome.code !== 0) {
      throw shellSetupFailed(this.options.name, result.buffer.render().text);
    }
  }

  private async runNow(command: string, options: ShellRunOptions): Promise<ShellRunResult> {
    const started = performance.now();
    let sessionRestarted = false;
    if (!this.alive) {
      sessionRestarted = this.everStarted;
      await this.restart();
    }
    const buffer = new OutputBuffer(options.maxOutputChars ?? Number.POSITIVE_INFINITY);
    const line = this.marker.commandLine(command, options) + (options.input ?? "");
    const { outcome, timedOut, aborted } = await this.exchange(line, {
      buffer,
      timeoutMs: options.timeoutMs,
      signal: options.signal,
    });
    let exitCode: number;
    if (outcome.kind === "marker") exitCode = outcome.code;
    else {
      const lost = await this.afterLostShell(outcome, aborted);
      exitCode = lost.exitCode;
      sessionRestarted ||= lost.restarted;
    }
    if (timedOut || aborted) exitCode = 137;
    if (timedOut && outcome.kind === "marker" && this.alive) await this.reapKilledJobs();
    const rendered = buffer.render();
    return {
      exitCode,
      output: timedOut ? withTimeoutNote(rendered.text, options.timeoutMs, sessionRestarted) : rendered.text,
      truncated: rendered.truncated,
      timedOut,
      aborted,
      sessionRestarted,
      durationMs: performance.now() - started,
    };
  }

  /** The command's shell ended or was given up on: its status, and a new shell unless the caller left. */
  private async afterLostShell(
    outcome: Exclude<Outcome, { kind: "marker" }>,
    aborted: boolean,
  ): Promise<{ exitCode: number; restarted: boolean }> {
    const exitCode = outcome.kind === "exit" && outcome.code !== null ? outcome.code : 137;
    this.dead = true;
    if (this.closed || aborted) return { exitCode, restarted: false };
    await this.restart();
    return { exitCode, restarted: true };
  }

  /** Reaps the killed background jobs now, so that bash's notices about them go nowhere. */
  private async reapKilledJobs(): Promise<void> {
    await this.exchange(this.marker.commandLine("wait; jobs", {}), {
      buffer: new OutputBuffer(1000),
      timeoutMs: 2000,
    });
  }
}
