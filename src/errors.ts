/**
 * Errors that say who is at fault, with a stable code and whether retrying can help.
 * The worker maps `retryable` to BullMQ retries; `hint` is what a person should do about it.
 */
type Fault = "config" | "repository" | "model" | "github" | "sandbox" | "user" | "internal";

interface AgentFixErrorOptions {
  code: string;
  fault: Fault;
  retryable?: boolean;
  hint?: string | undefined;
  cause?: unknown;
}

export class AgentFixError extends Error {
  readonly code: string;
  readonly fault: Fault;
  readonly retryable: boolean;
  readonly hint: string | undefined;

  constructor(message: string, options: AgentFixErrorOptions) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = options.code;
    this.fault = options.fault;
    this.retryable = options.retryable ?? false;
    this.hint = options.hint;
  }

  /** One line for logs and status comments: message, then what to do. */
  describe(): string {
    return this.hint ? `${this.message} (${this.code}). ${this.hint}` : `${this.message} (${this.code})`;
  }
}

/** A configuration file or environment variable is wrong; retrying will not help. */
export class ConfigError extends AgentFixError {
  constructor(
    message: string,
    options: Omit<AgentFixErrorOptions, "fault" | "retryable"> = { code: "config_invalid" },
  ) {
    super(message, { ...options, fault: "config", retryable: false });
  }
}

/** The sandbox could not do what was asked (not: a command failed, which is a result). */
export class SandboxError extends AgentFixError {
  constructor(message: string, options: Omit<AgentFixErrorOptions, "fault">) {
    super(message, { ...options, fault: "sandbox" });
  }
}

/** The model API failed or answered something unusable. */
export class ModelError extends AgentFixError {
  constructor(message: string, options: Omit<AgentFixErrorOptions, "fault">) {
    super(message, { ...options, fault: "model" });
  }
}

/** GitHub answered an error; 5xx and rate limits are retryable. */
export class GitHubError extends AgentFixError {
  constructor(message: string, options: Omit<AgentFixErrorOptions, "fault">) {
    super(message, { ...options, fault: "github" });
  }
}

export function isRetryable(error: unknown): boolean {
  return error instanceof AgentFixError && error.retryable;
}
