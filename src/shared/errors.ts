/**
 * Errors that say who is at fault, with a stable code and whether retrying can help.
 * The worker maps `retryable` to BullMQ retries; `hint` is what a person should do about it.
 * Each error class has its own union of codes, so a code is checked where it is written and read.
 */
type Fault =
  | "config"
  | "repository"
  | "model"
  | "github"
  | "sandbox"
  | "infrastructure"
  | "user"
  | "internal";

type ConfigErrorCode =
  | "app_auth_failed"
  | "cli_image_missing"
  | "cli_options_invalid"
  | "config_invalid"
  | "config_unreadable"
  | "env_invalid"
  | "metrics_off_host"
  | "eval_instances_invalid"
  | "eval_instances_unreadable"
  | "eval_model_invalid"
  | "eval_replay_dir_missing"
  | "eval_replays_no_results"
  | "eval_replays_unrecoverable"
  | "eval_results_invalid"
  | "eval_runner_unknown"
  | "eval_variant_invalid"
  | "issue_missing"
  | "mine_options_invalid"
  | "mine_token_missing"
  | "model_api_key_missing"
  | "model_name_invalid"
  | "model_price_unknown"
  | "replay_file_invalid"
  | "replay_file_unreadable"
  | "repo_clone_failed"
  | "repo_config_above_ceiling"
  | "repo_config_invalid"
  | "repo_config_missing"
  | "repo_config_not_a_file"
  | "repo_config_too_large"
  | "repo_missing"
  | "repo_image_not_allowed"
  | "repo_model_not_allowed"
  | "repo_toolchain_unavailable"
  | "trajectory_invalid"
  | "trajectory_store_refused"
  | "trajectory_unreadable"
  | "webhook_secret_missing"
  | "worker_env_invalid";

type SandboxErrorCode =
  | "image_build_failed"
  | "image_unsuitable"
  | "aborted"
  | "aci_tools_missing"
  | "control_timeout"
  | "copy_failed"
  | "docker_unavailable"
  | "export_failed"
  | "file_too_large"
  | "git_failed"
  | "image_missing"
  | "invalid_argument"
  | "io_error"
  | "is_directory"
  | "keep_failed"
  | "network_unavailable"
  | "not_found"
  | "not_regular_file"
  | "path_outside_workspace"
  | "receive_limit"
  | "sandbox_disposed"
  | "sandbox_start_failed"
  | "shell_start_failed"
  | "unsafe_archive"
  | "workspace_full";

type ModelErrorCode =
  | "model_api_auth"
  | "model_api_rejected"
  | "model_api_unavailable"
  | "model_empty_reply"
  | "replay_exhausted";

type GitHubErrorCode =
  | `github_${number}`
  | "github_network"
  | "installation_auth_failed"
  | "installation_not_found"
  | "installation_token_missing"
  | "pull_request_failed";

/** The worker host's own services failed under a run (not the sandbox's rules, not the repository). */
type InfrastructureErrorCode = "docker_engine_lost";

/** Codes of the pipeline's own refusals and failures (plain AgentFixError). */
export type PipelineErrorCode =
  | "branch_moved"
  | "change_does_not_apply"
  | "clone_url_has_credentials"
  | "empty_patch"
  | "eval_base_commit_missing"
  | "forbidden_path"
  | `git_${string}_failed`
  | "host_git_failed"
  | "not_fix_pull_request"
  | "patch_does_not_apply"
  | "published_tree_mismatch"
  | "pull_request_closed"
  | "push_refused_workflows"
  | "push_refused_ruleset"
  | "push_refused_protected_branch"
  | "push_refused_pre_receive"
  | "review_job_invalid"
  | "secret_in_change"
  | "secret_in_environment"
  | "secret_in_workspace"
  | "setup_failed"
  | "setup_tree_untrusted"
  | "tested_base_gone"
  | "token_in_checkout";

type ErrorCode =
  | ConfigErrorCode
  | SandboxErrorCode
  | ModelErrorCode
  | GitHubErrorCode
  | PipelineErrorCode
  | InfrastructureErrorCode
  | "run_cancelled"
  | "webhook_body_in_flight";

interface AgentFixErrorOptions<Code extends ErrorCode = ErrorCode> {
  code: Code;
  fault: Fault;
  retryable?: boolean;
  hint?: string | undefined;
  cause?: unknown;
}

export class AgentFixError<Code extends ErrorCode = ErrorCode> extends Error {
  readonly code: Code;
  readonly fault: Fault;
  readonly retryable: boolean;
  readonly hint: string | undefined;

  constructor(message: string, options: AgentFixErrorOptions<Code>) {
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
export class ConfigError extends AgentFixError<ConfigErrorCode> {
  constructor(
    message: string,
    options: Omit<AgentFixErrorOptions<ConfigErrorCode>, "fault" | "retryable"> = { code: "config_invalid" },
  ) {
    super(message, { ...options, fault: "config", retryable: false });
  }
}

/** The sandbox could not do what was asked (not: a command failed, which is a result). */
export class SandboxError extends AgentFixError<SandboxErrorCode> {
  constructor(message: string, options: Omit<AgentFixErrorOptions<SandboxErrorCode>, "fault">) {
    super(message, { ...options, fault: "sandbox" });
  }
}

/** The model API failed or answered something unusable. */
export class ModelError extends AgentFixError<ModelErrorCode> {
  constructor(message: string, options: Omit<AgentFixErrorOptions<ModelErrorCode>, "fault">) {
    super(message, { ...options, fault: "model" });
  }
}

/** A service of the worker host (the Docker engine) went away during a run; always worth a retry. */
export class InfrastructureError extends AgentFixError<InfrastructureErrorCode> {
  constructor(
    message: string,
    options: Omit<AgentFixErrorOptions<InfrastructureErrorCode>, "fault" | "retryable">,
  ) {
    super(message, { ...options, fault: "infrastructure", retryable: true });
  }
}

/** GitHub answered an error; 5xx and rate limits are retryable. */
export class GitHubError extends AgentFixError<GitHubErrorCode> {
  constructor(message: string, options: Omit<AgentFixErrorOptions<GitHubErrorCode>, "fault">) {
    super(message, { ...options, fault: "github" });
  }
}

/**
 * Why a run stopped from outside: a person (or the issue closing) cancelled it, the worker is stopping,
 * or the worker lost its lock on the job (Redis was away longer than the lock lives): the job is no
 * longer this run's to finish, the queue gives it to a worker again.
 */
export interface CancelReason {
  kind: "cancelled" | "shutdown" | "lock_lost";
  by: string;
  reason: string;
}

/** The run was stopped from outside; never retried. `abort` says why, when it is known. */
export class CancelledError extends AgentFixError<"run_cancelled"> {
  constructor(
    message: string,
    readonly abort: CancelReason | null = null,
  ) {
    super(message, { code: "run_cancelled", fault: "user", retryable: false });
  }
}

/**
 * The baseline ended the run: the repository's tests fail before any change (and it does not allow a run
 * then). `reason` is the status the maintainer reads, `run` the tests' run it rests on. It aborts the
 * agent's signal, so the agent stops where it is.
 */
export class BaselineStop<Run = unknown> extends Error {
  constructor(
    readonly reason: string,
    readonly run: Run,
  ) {
    super(reason);
    this.name = "BaselineStop";
  }
}

/**
 * A signed webhook body that is being handled right now, by this or another server (or was, by one
 * that died before finishing): answered 409, not 2xx, so a sender who meant it (GitHub's redelivery
 * after a crash) sees it was not taken and can send it again once the claim lapses.
 */
export class WebhookBodyInFlightError extends AgentFixError<"webhook_body_in_flight"> {
  /** The HTTP status Probot's middleware answers with. */
  readonly status = 409;
  constructor(lapseSeconds: number) {
    super("This signed webhook body is being handled by another request", {
      code: "webhook_body_in_flight",
      fault: "user",
      retryable: true,
      hint: `If that one does not finish, redeliver it after ${lapseSeconds} seconds.`,
    });
  }
}

export function isRetryable(error: unknown): boolean {
  return error instanceof AgentFixError && error.retryable;
}
