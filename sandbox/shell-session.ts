/**
 * A persistent bash session over a pair of streams, shared by both drivers (local: a child process;
 * docker: an exec attached over the Engine API). `cd` and exported variables persist between commands.
 *
 * Protocol: each command is sent as one line
 *   jobs >/dev/null 2>&1; eval $'ESCAPED' </dev/null 2>&1; printf '\n%s%s %d\n' 'P1' 'P2' "$?"
 * with a random marker P1P2 per session, which the shell never stores in a variable (so `set` cannot
 * print it). ANSI-C quoting costs no fork (a fork bomb may have used up the process limit); `eval`
 * turns an unbalanced quote into a syntax error instead of swallowing the marker; stdin is closed
 * (or, with `input`, is the shell's own stdin, carrying exactly that data); stdout and stderr stay in
 * the order written. The newline printed before the marker is stripped.
 */

import { randomBytes } from "node:crypto";
import type { Readable, Writable } from "node:stream";
import { StringDecoder } from "node:string_decoder";
import { setTimeout as sleep } from "node:timers/promises";
import { SandboxError } from "../src/errors.js";
import { OutputBuffer } from "./output-buffer.js";

export interface ShellProcess {
  stdin: Writable;
  /** stdout and stderr of the shell, merged. */
  output: Readable;
  /** Resolves once the shell has ended, with its exit status when known. */
  exited: Promise<number | null>;
  /** Releases the host side (streams, child process). Safe to call more than once. */
  destroy(): void;
}

interface ShellSessionOptions {
  /** For messages: "agent" or "control". */
  name: string;
  spawn: () => Promise<ShellProcess>;
  /** Script run after every (re)start, e.g. function definitions. */
  init?: string;
  /**
   * Kills every process the running command started (the shell's descendants, and what else the driver
   * can attribute to it), leaving the shell alive. Resolves true when none is left.
   */
  killChildren?: (shellPid: number) => Promise<boolean>;
  /** Kills the shell itself (and what it started) when killing its children did not make it return. */
  killShell?: (shellPid: number) => Promise<void>;
  /** How long to wait for the marker after killing, before giving up on the shell. Default 2 s. */
  graceMs?: number;
  startTimeoutMs?: number;
  /** Why a shell could not start, as the driver sees it (the container stopped under it), if it knows. */
  whyNoShell?: () => Promise<string | undefined>;
}

interface ShellRunOptions {
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

interface ShellRunResult {
  exitCode: number;
  output: string;
  truncated: boolean;
  timedOut: boolean;
  aborted: boolean;
  sessionRestarted: boolean;
  durationMs: number;
}

type Outcome = { kind: "marker"; code: number } | { kind: "exit"; code: number | null } | { kind: "stuck" };

interface Waiter {
  pending: string;
  buffer: OutputBuffer;
  settle(outcome: Outcome): void;
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Quotes a string as bash ANSI-C `$'...'` so that every byte survives and no expansion happens. */
export function ansiC(text: string): string {
  if (text.includes("\0")) {
    throw new SandboxError("a command or argument cannot contain a NUL byte", { code: "invalid_argument" });
  }
  const body = text.replace(/[\\'\x01-\x1f\x7f]/g, (ch) => {
    if (ch === "\\") return "\\\\";
    if (ch === "'") return "\\'";
    return `\\x${ch.charCodeAt(0).toString(16).padStart(2, "0")}`;
  });
  return `$'${body}'`;
}

export function assertEnvNames(env: Record<string, string> | undefined): void {
  for (const name of Object.keys(env ?? {})) {
    if (!ENV_NAME.test(name))
      throw new SandboxError(`invalid environment variable name: ${name}`, { code: "invalid_argument" });
  }
}

/**
 * Bash function for the control session, using builtins only (no fork: a fork bomb may have used up
 * the process limit). `__af_kill ROOT SELF ORPHANS SID [PROTECTED...]` kills the descendants of ROOT
 * (and ROOT itself when SELF=1), plus, when ORPHANS=1, every process reparented to pid 1 (in a container
 * all of those were started by the agent), plus, when SID>0, every process of session SID. Each round
 * stops, then kills what it found, until three scans in a row find nothing. Prints `remaining N`.
 * With `__af_freeze=1` (the Docker driver's root control shell, which may signal every process of the
 * container) each round first stops every process but init and itself with one `kill -STOP -1`: a fork
 * bomb then no longer competes for the CPU while it is scanned, and cannot fork while it is killed.
 * Whatever was not killed is continued at the end. Never set it where -1 means more than one sandbox.
 */
export const KILL_FUNCTION = `__af_kill() {
  local root=$1 self=$2 orphans=$3 sid=$4
  shift 4
  local -A keep=([1]=1 [$$]=1)
  local x n f line pid rest round empty=0 zombies=0 rootalive
  for x in "$@"; do keep[$x]=1; done
  local -a st todo found
  local -A kids seen
  for ((round = 0; round < 200; round++)); do
    ((__af_freeze)) && kill -STOP -1 2>/dev/null
    kids=(); seen=(); found=(); todo=("$root"); zombies=0; rootalive=0
    for f in /proc/[0-9]*/stat; do
      { read -r line < "$f"; } 2>/dev/null || continue
      pid=\${line%% *}
      rest=\${line##*) }
      st=($rest)
      case \${st[0]} in
        Z|X|x) ((orphans && st[1] == 1)) && ((zombies++)); continue ;;
      esac
      kids[\${st[1]}]+=" $pid"
      [[ $pid == "$root" ]] && rootalive=1
      if (( (orphans && st[1] == 1) || (sid > 0 && st[3] == sid) )); then todo+=("$pid"); fi
    done
    while ((\${#todo[@]})); do
      x=\${todo[-1]}
      unset 'todo[-1]'
      [[ -n \${seen[$x]} ]] && continue
      seen[$x]=1
      if [[ $x == "$root" ]]; then
        ((self && rootalive)) && found+=("$x")
      elif [[ -n \${keep[$x]} ]]; then
        continue
      else
        found+=("$x")
      fi
      for n in \${kids[$x]}; do todo+=("$n"); done
    done
    if ((\${#found[@]} == 0)); then
      # Done after three empty scans in a row (a process forked while a round ran may show up late)
      # once init has reaped the killed orphans, whose pids count against the limit until then.
      if ((zombies == 0)); then
        ((++empty >= 3)) && { ((__af_freeze)) && kill -CONT -1 2>/dev/null; echo "remaining 0"; return 0; }
      else
        empty=0
      fi
      [[ -n $__af_sleepfd ]] && read -r -t 0.02 -u "$__af_sleepfd" x 2>/dev/null
      continue
    fi
    empty=0
    kill -STOP "\${found[@]}" 2>/dev/null
    kill -KILL "\${found[@]}" 2>/dev/null
  done
  ((__af_freeze)) && kill -CONT -1 2>/dev/null
  echo "remaining \${#found[@]} zombies $zombies"
}
# A descriptor that never has data: \`read -t\` on it sleeps without a fork.
exec {__af_sleepfd}<> <(:)`;

export class ShellSession {
  private proc: ShellProcess | undefined;
  private shellPid = -1;
  private dead = true;
  private everStarted = false;
  private closed = false;
  private waiter: Waiter | undefined;
  private chain: Promise<unknown> = Promise.resolve();
  private readonly markerA = `__AF${randomBytes(6).toString("hex")}`;
  private readonly markerB = `${randomBytes(6).toString("hex")}__`;
  private readonly needle = `\n${this.markerA}${this.markerB} `;
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
    this.waiter?.settle({ kind: "exit", code: null });
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

  private async restart(): Promise<void> {
    if (this.closed) throw new SandboxError("the sandbox has been disposed", { code: "sandbox_disposed" });
    const old = this.proc;
    if (old) {
      this.proc = undefined;
      if (!this.dead && this.options.killShell)
        await this.options.killShell(this.shellPid).catch(() => undefined); // best effort: destroyed next
      old.destroy();
    }
    this.dead = true;
    let proc: ShellProcess;
    try {
      proc = await this.options.spawn();
    } catch (error) {
      if (error instanceof SandboxError) throw error;
      // The driver's word on why (the container stopped under it) beats a bare API error.
      const why = await this.options.whyNoShell?.().catch(() => undefined);
      const said = [(error as Error).message, why].filter(Boolean).join("; ");
      throw new SandboxError(`cannot start the ${this.options.name} shell: ${said}`, {
        code: "shell_start_failed",
        retryable: true,
        cause: error,
      });
    }
    if (this.closed) {
      proc.destroy();
      throw new SandboxError("the sandbox has been disposed", { code: "sandbox_disposed" });
    }
    this.proc = proc;
    this.dead = false;
    const decoder = new StringDecoder("utf8");
    proc.output.on("data", (chunk: Buffer | string) => {
      if (this.proc !== proc) return;
      this.onText(typeof chunk === "string" ? chunk : decoder.write(chunk));
    });
    proc.output.on("error", () => undefined);
    proc.stdin.on("error", () => undefined);
    void proc.exited.then((code) => {
      if (this.proc !== proc) return;
      this.dead = true;
      this.waiter?.settle({ kind: "exit", code });
    });
    const startTimeout = this.options.startTimeoutMs ?? 30_000;
    const hello = await this.exchange(`printf '\\n%s%s %d\\n' '${this.markerA}' '${this.markerB}' "$$"\n`, {
      buffer: new OutputBuffer(4096),
      timeoutMs: startTimeout,
    });
    if (hello.outcome.kind !== "marker") {
      proc.destroy();
      this.proc = undefined;
      this.dead = true;
      const why = await this.options.whyNoShell?.().catch(() => undefined);
      throw new SandboxError(`the ${this.options.name} shell did not start${why ? `: ${why}` : ""}`, {
        code: "shell_start_failed",
        retryable: true,
      });
    }
    this.shellPid = hello.outcome.code;
    this.everStarted = true;
    if (this.options.init) {
      const init = await this.exchange(this.commandLine(this.options.init, {}), {
        buffer: new OutputBuffer(4096),
        timeoutMs: startTimeout,
      });
      if (init.outcome.kind !== "marker" || init.outcome.code !== 0) {
        throw new SandboxError(
          `the ${this.options.name} shell's setup failed: ${init.buffer.render().text}`,
          {
            code: "shell_start_failed",
          },
        );
      }
    }
  }

  private onText(text: string): void {
    const w = this.waiter;
    if (!w || text.length === 0) return;
    w.pending += text;
    const idx = w.pending.indexOf(this.needle);
    if (idx >= 0) {
      const end = w.pending.indexOf("\n", idx + this.needle.length);
      if (idx > 0) {
        w.buffer.push(w.pending.slice(0, idx));
        w.pending = w.pending.slice(idx);
      }
      if (end >= 0) {
        const code = Number.parseInt(w.pending.slice(this.needle.length, end - idx), 10);
        w.pending = "";
        w.settle({ kind: "marker", code: Number.isFinite(code) ? code : 1 });
      }
      return;
    }
    const keep = this.needle.length;
    if (w.pending.length > keep) {
      w.buffer.push(w.pending.slice(0, w.pending.length - keep));
      w.pending = w.pending.slice(w.pending.length - keep);
    }
  }

  private commandLine(
    command: string,
    options: { cwd?: string; env?: Record<string, string>; input?: string },
  ): string {
    let body = `eval ${ansiC(command)}`;
    const env = options.env && Object.keys(options.env).length > 0 ? options.env : undefined;
    if (options.cwd !== undefined || env) {
      assertEnvNames(env);
      const cd = options.cwd !== undefined ? `cd -- ${ansiC(options.cwd)} || exit 1; ` : "";
      const exports = Object.entries(env ?? {})
        .map(([k, v]) => `export ${k}=${ansiC(v)}; `)
        .join("");
      body = `( ${cd}${exports}${body} )`;
    }
    // No `{ ... }` around the command: after an eval'd unbalanced quote, bash 5.2 fails to parse a next
    // line that starts with `{` (and exits). A redirection on `eval` itself applies to all it runs.
    // `jobs` first swallows bash's late notices about background jobs that ended ("Killed ..."), which
    // would otherwise land in this command's output. Not `:`: the classic fork bomb redefines it.
    const stdin = options.input === undefined ? " </dev/null" : "";
    return `jobs >/dev/null 2>&1; ${body}${stdin} 2>&1; printf '\\n%s%s %d\\n' '${this.markerA}' '${this.markerB}' "$?"\n`;
  }

  /** Writes one line and waits for the marker, the shell's end, or the timeout (then kills). */
  private exchange(
    line: string,
    options: { buffer: OutputBuffer; timeoutMs: number; signal?: AbortSignal },
  ): Promise<{ outcome: Outcome; buffer: OutputBuffer; timedOut: boolean; aborted: boolean }> {
    const proc = this.proc;
    if (!proc)
      return Promise.resolve({
        outcome: { kind: "exit", code: null },
        buffer: options.buffer,
        timedOut: false,
        aborted: false,
      });
    return new Promise((resolve) => {
      let settled = false;
      let timedOut = false;
      let aborted = false;
      let timer: NodeJS.Timeout | undefined;
      // The kill started by a timeout or an abort. The exchange resolves only once it has ended: the
      // marker often arrives while the killer is still scanning (the command died in its first round, or
      // ended by itself just as the timeout fired), and a kill still running when the next command starts
      // would kill that command instead ("bash: line N: PID Killed ...", status 137).
      let escalation: Promise<void> | undefined;
      let settledSignal: () => void = () => undefined;
      const settledPromise = new Promise<void>((r) => {
        settledSignal = r;
      });
      const waiter: Waiter = {
        pending: "",
        buffer: options.buffer,
        settle: (outcome) => {
          if (settled) return;
          settled = true;
          if (timer) clearTimeout(timer);
          options.signal?.removeEventListener("abort", onAbort);
          if (outcome.kind !== "marker" && waiter.pending) waiter.buffer.push(waiter.pending);
          waiter.pending = "";
          if (this.waiter === waiter) this.waiter = undefined;
          settledSignal();
          const result = { outcome, buffer: waiter.buffer, timedOut, aborted };
          if (escalation) void escalation.then(() => resolve(result));
          else resolve(result);
        },
      };
      const escalate = async () => {
        if (settled) return;
        const pid = this.shellPid;
        // Best effort: what survives is escalated below, and the shell is killed after that.
        if (this.options.killChildren) await this.options.killChildren(pid).catch(() => false);
        await Promise.race([settledPromise, sleep(this.graceMs, undefined, { ref: false })]);
        if (settled) return;
        // The shell itself is busy (a builtin loop) or stuck: end it; the caller restarts the session.
        if (this.options.killShell) await this.options.killShell(pid).catch(() => undefined);
        proc.destroy();
        await Promise.race([settledPromise, sleep(this.graceMs, undefined, { ref: false })]);
        if (!settled) waiter.settle({ kind: "stuck" });
      };
      const startEscalation = () => {
        escalation ??= escalate().catch(() => undefined); // its kills catch their own failures
      };
      const onAbort = () => {
        aborted = true;
        startEscalation();
      };
      this.waiter = waiter;
      if (options.signal) {
        if (options.signal.aborted) {
          aborted = true;
          waiter.settle({ kind: "stuck" });
          return;
        }
        options.signal.addEventListener("abort", onAbort, { once: true });
      }
      timer = setTimeout(() => {
        timedOut = true;
        startEscalation();
      }, options.timeoutMs);
      if (this.dead) {
        waiter.settle({ kind: "exit", code: null });
        return;
      }
      try {
        proc.stdin.write(line, (error) => {
          if (error) waiter.settle({ kind: "exit", code: null });
        });
      } catch {
        waiter.settle({ kind: "exit", code: null });
      }
    });
  }

  private async runNow(command: string, options: ShellRunOptions): Promise<ShellRunResult> {
    const started = performance.now();
    let sessionRestarted = false;
    if (!this.alive) {
      sessionRestarted = this.everStarted;
      await this.restart();
    }
    const buffer = new OutputBuffer(options.maxOutputChars ?? Number.POSITIVE_INFINITY);
    const line = this.commandLine(command, options) + (options.input ?? "");
    const { outcome, timedOut, aborted } = await this.exchange(line, {
      buffer,
      timeoutMs: options.timeoutMs,
      ...(options.signal ? { signal: options.signal } : {}),
    });
    let exitCode: number;
    if (outcome.kind === "marker") {
      exitCode = outcome.code;
    } else {
      exitCode = outcome.kind === "exit" && outcome.code !== null ? outcome.code : 137;
      this.dead = true;
      if (!this.closed && !aborted) {
        await this.restart();
        sessionRestarted = true;
      }
    }
    if (timedOut || aborted) exitCode = 137;
    if (timedOut && outcome.kind === "marker" && this.alive) {
      // Reap the killed background jobs now, so that bash's notices about them go nowhere.
      await this.exchange(this.commandLine("wait; jobs", {}), {
        buffer: new OutputBuffer(1000),
        timeoutMs: 2000,
      });
    }
    const rendered = buffer.render();
    let output = rendered.text;
    if (timedOut) {
      const seconds = Math.round(options.timeoutMs / 100) / 10;
      const note = `[command timed out after ${seconds} s; it and every process it started were killed${
        sessionRestarted ? "; the shell was restarted: cwd and variables are reset" : ""
      }]`;
      output = output.length === 0 || output.endsWith("\n") ? `${output}${note}` : `${output}\n${note}`;
    }
    return {
      exitCode,
      output,
      truncated: rendered.truncated,
      timedOut,
      aborted,
      sessionRestarted,
      durationMs: performance.now() - started,
    };
  }
}
