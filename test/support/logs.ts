/** Loggers for tests of the worker's parts: one that writes nothing, one whose lines a test can read. */
import { type Logger, pino } from "pino";

export function silentLogger(): Logger {
  return pino({ level: "silent" });
}

export interface LogLine {
  level: string;
  msg: string;
  [field: string]: unknown;
}

/** A logger whose lines land, parsed, in `lines`. */
export function capturingLogger(lines: LogLine[]): Logger {
  return pino(
    { level: "debug", formatters: { level: (label) => ({ level: label }) } },
    { write: (line: string) => void lines.push(JSON.parse(line) as LogLine) },
  );
}
