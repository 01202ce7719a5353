/**
 * The command protocol of a ShellSession (shell/session.ts). Each command is sent as one line
 *   jobs >/dev/null 2>&1; eval $'ESCAPED' </dev/null 2>&1; printf '\n%s%s %d\n' 'P1' 'P2' "$?"
 * with a random marker P1P2 per session, which the shell never stores in a variable (so `set` cannot
 * print it). ANSI-C quoting costs no fork (a fork bomb may have used up the process limit); `eval`
 * turns an unbalanced quote into a syntax error instead of swallowing the marker; stdin is closed
 * (or, with `input`, is the shell's own stdin, carrying exactly that data); stdout and stderr stay in
 * the order written. The newline printed before the marker is stripped (shell/marker-framer.ts).
 */

import { randomBytes } from "node:crypto";
import { SandboxError } from "../../src/shared/errors.js";

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

/** Where and how one command runs: in `cwd`, with `env`, reading `input` from the shell's stdin. */
interface CommandPlace {
  cwd?: string;
  env?: Record<string, string>;
  input?: string;
}

/** One session's marker and the lines that print it. */
export class ShellMarker {
  // Two halves, so that the marker never appears whole in the line the shell is sent.
  private readonly head = `__AF${randomBytes(6).toString("hex")}`;
  private readonly tail = `${randomBytes(6).toString("hex")}__`;
  /** What the output holds where the marker ends a command, followed by its status and a newline. */
  readonly needle = `\n${this.head}${this.tail} `;

  /** The line that prints the marker and the shell's pid: the first exchange with a new shell. */
  helloLine(): string {
    return `${this.print('"$$"')}\n`;
  }

  /** The line that runs `command` and prints the marker and its status. */
  commandLine(command: string, place: CommandPlace): string {
    let body = `eval ${ansiC(command)}`;
    const env = place.env && Object.keys(place.env).length > 0 ? place.env : undefined;
    if (place.cwd !== undefined || env) {
      assertEnvNames(env);
      const cd = place.cwd !== undefined ? `cd -- ${ansiC(place.cwd)} || exit 1; ` : "";
      const exports = Object.entries(env ?? {})
        .map(([k, v]) => `export ${k}=${ansiC(v)}; `)
        .join("");
      body = `( ${cd}${exports}${body} )`;
    }
    // No `{ ... }` around the command: after an eval'd unbalanced quote, bash 5.2 fails to parse a next
    // line that starts with `{` (and exits). A redirection on `eval` itself applies to all it runs.
    // `jobs` first swallows bash's late notices about background jobs that ended ("Killed ..."), which
    // would otherwise land in this command's output. Not `:`: the classic fork bomb redefines it.
    const stdin = place.input === undefined ? " </dev/null" : "";
    return `jobs >/dev/null 2>&1; ${body}${stdin} 2>&1; ${this.print('"$?"')}\n`;
  }

  private print(status: string): string {
    return `printf '\\n%s%s %d\\n' '${this.head}' '${this.tail}' ${status}`;
  }
}

/** The output of a timed-out command, with the note saying what became of it and of the shell. */
export function withTimeoutNote(output: string, timeoutMs: number, sessionRestarted: boolean): string {
  const seconds = Math.round(timeoutMs / 100) / 10;
  const note = `[command timed out after ${seconds} s; it and every process it started were killed${
    sessionRestarted ? "; the shell was restarted: cwd and variables are reset" : ""
  }]`;
  return output.length === 0 || output.endsWith("\n") ? `${output}${note}` : `${output}\n${note}`;
}
