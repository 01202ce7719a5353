/**
 * The agent loop, in the manner of mini-swe-agent: check the limits, ask the model, parse its one
 * action, run it in the ACI, record the step; until a `LoopExit` (a submission, a limit, a
 * cancellation) ends it, caught in one place. A failed command is an observation like any other; the
 * trajectory is saved after every step and in a `finally`, so whatever happens the file says what was done.
 */

import type {
  ChatMessage,
  Environment,
  ExitReason,
  FunctionSpec,
  Gate,
  Model,
  ModelResponse,
  SandboxOrigin,
  ToolResult,
  Trajectory,
  TrajectoryInfo,
  TrajectoryStep,
} from "../../src/shared/contracts.js";
import { ModelError } from "../../src/shared/errors.js";
import { isAciToolName } from "../aci/tool-names.js";
import type { AgentConfig } from "../config/agent.js";
import { estimatePromptTokens } from "../model/tokens.js";
import { formatAction } from "./arguments.js";
import {
  functionSpecs,
  openingEntries,
  type PullRequestTemplate,
  responseText,
  turnEntries,
} from "./conversation.js";
import {
  Cancelled,
  exitStatusText,
  LimitReached,
  LoopExit,
  MODEL_CALL_CANCELLED,
  runExit,
  Submitted,
} from "./exit.js";
import { type HistoryEntry, processHistory } from "./history.js";
import { LoopWatcher } from "./loops.js";
import { type ParsedReply, parseReply, validForm } from "./parse.js";
import { renderTemplate } from "./prompts.js";
import { gateHook, SubmitDescription, type SubmitHook, withSubmitBehaviour } from "./submit.js";
import { detectTestCommand, type TestCommandSource } from "./test-command.js";
import { startingInfo, TrajectoryRecorder, type TrajectorySink } from "./trajectory.js";

export interface AgentStepEvent {
  /** 1-based step number (one step = one model call). */
  step: number;
  maxSteps: number;
  entry: TrajectoryStep;
  info: TrajectoryInfo;
}

export interface RunAgentOptions {
  model: Model;
  environment: Environment;
  config: AgentConfig;
  issue: { title: string; body: string };
  repoName: string;
  /** The gate's test command, named in the instance prompt; none: guessed from the repository's files. */
  testCommand?: string | undefined;
  /** The repository's pull request template: the model fills it in as the pull request's description. */
  pullRequestTemplate?: PullRequestTemplate | undefined;
  /** Runs the repository's tests on a submission; a failure goes back to the model (config.gate.maxAttempts). */
  gate?: Gate | undefined;
  signal?: AbortSignal | undefined;
  /** Where the trajectory is saved after every step; none = kept in memory only. */
  trajectoryPath?: string | undefined;
  /** Also given the trajectory after every save: the deployment's store (src/shared/trajectory-store.ts). */
  trajectorySink?: TrajectorySink | undefined;
  /** Called after each step is saved; an error it throws is recorded in info.on_step_error, not raised. */
  onStep?: ((event: AgentStepEvent) => void | Promise<void>) | undefined;
  /** Recorded in info, so a result is attributable to the environment that produced it. */
  sandboxImage?: string | undefined;
  /** Where the sandbox's image came from (Docker): recorded in its place, with the kept environment. */
  sandboxOrigin?: SandboxOrigin | undefined;
  /** Hash of the whole configuration; default: a hash of `config`. */
  configHash?: string | undefined;
  /** Extra facts for info (e.g. the price table's date). */
  info?: Record<string, unknown> | undefined;
}

export async function runAgent(options: RunAgentOptions): Promise<Trajectory> {
  const startedAt = Date.now();
  const tests: TestCommandSource = options.testCommand
    ? { command: options.testCommand, from: "config" }
    : await detectTestCommand(options.environment, options.signal).then((command) =>
        command ? { command, from: "repository" } : null,
      );
  return new AgentLoop(options, tests, startedAt).run();
}

type ParsedAction = Extract<ParsedReply, { ok: true }>;

/** What one step did: its observation, the answer it adds to the history, and the exit it ends on. */
interface Turn {
  observation: string;
  seconds: number;
  /** null: the step is recorded but adds nothing to the history (the run was cancelled under it). */
  answer: "observation" | "format_error" | null;
  exit: LoopExit | null;
}

class AgentLoop {
  private readonly config: AgentConfig;
  private readonly env: Environment;
  private readonly signal: AbortSignal | undefined;
  private readonly specs: FunctionSpec[];
  private readonly entries: HistoryEntry[];
  private readonly trajectory: Trajectory;
  private readonly recorder: TrajectoryRecorder;
  private readonly loops: LoopWatcher;
  private readonly afterSubmit: SubmitHook;
  private readonly description: SubmitDescription;
  private formatErrorsInRow = 0;
  private gatesRecorded = 0;
  private steps = 0;

  constructor(
    private readonly options: RunAgentOptions,
    private readonly tests: TestCommandSource,
    private readonly startedAt: number,
  ) {
    const { config } = options;
    this.config = config;
    const template = options.pullRequestTemplate;
    this.description = new SubmitDescription(config.actionFormat, config.reviewOnSubmit);
    this.env = withSubmitBehaviour(options.environment, config, { description: this.description, template });
    this.signal = options.signal;
    this.specs = config.actionFormat === "function_calling" ? functionSpecs(this.env, config) : [];
    this.entries = openingEntries(config, this.env, options.issue, options.repoName, tests, template);
    const info = startingInfo({ ...options, env: this.env, startedAt });
    if (template) info.pull_request_template = template.path;
    this.trajectory = { trajectory: [], history: [], info };
    this.recorder = new TrajectoryRecorder(this.trajectory, options.trajectoryPath, options.trajectorySink);
    this.loops = new LoopWatcher(config.loopWarnings);
    this.afterSubmit = gateHook(options.gate, config, info.gate);
  }

  async run(): Promise<Trajectory> {
    try {
      for (;;) await this.step();
    } catch (error) {
      await this.end(error);
    } finally {
      this.trajectory.info.finished_at = new Date().toISOString();
      await this.save();
    }
    return this.trajectory;
  }

  private async step(): Promise<void> {
    const response = await this.query();
    const parsed = parseReply(response.message, this.env.tools, this.config.actionFormat);
    const turn = parsed.ok ? await this.act(parsed) : this.formatError(parsed.tool, parsed.error, 0);
    await this.record(response, parsed, turn);
    if (turn.exit) throw turn.exit;
  }

  /** The limits, checked before each model call, then the call. */
  private async query(): Promise<ModelResponse> {
    if (this.signal?.aborted) throw new Cancelled();
    const messages = processHistory(this.entries, {
      ...this.config.history,
      testCommand: this.tests?.command,
    });
    const limit = this.limitReached(messages);
    if (limit) throw new LimitReached(limit);
    let response: ModelResponse;
    try {
      response = await this.options.model.query(messages, this.specs, this.signal);
    } catch (error) {
      if (this.signal?.aborted) {
        this.trajectory.info[MODEL_CALL_CANCELLED] = true;
        throw new Cancelled();
      }
      if (!(error instanceof ModelError)) throw error;
      throw new LimitReached(
        error.code === "replay_exhausted" ? "exit_replay_exhausted" : "exit_api",
        error.message,
      );
    }
    this.steps++;
    const stats = this.trajectory.info.model_stats;
    stats.api_calls++;
    stats.tokens_sent += response.usage.promptTokens;
    stats.tokens_received += response.usage.completionTokens;
    stats.instance_cost += response.costUsd;
    return response;
  }

  private limitReached(messages: ChatMessage[]): LimitReached["reason"] | null {
    const { limits } = this.config;
    if (this.steps >= limits.maxSteps) return "exit_step_limit";
    if (this.trajectory.info.model_stats.instance_cost >= limits.maxCostUsd) return "exit_cost";
    if (Date.now() - this.startedAt >= limits.maxWallTimeSeconds * 1000) return "exit_time";
    if (estimatePromptTokens(messages, this.specs) > limits.maxContextTokens) return "exit_context";
    return null;
  }

  /** Runs the action; a submission goes to the hook after submit, anything else past the loop watcher. */
  private async act(parsed: ParsedAction): Promise<Turn> {
    const began = Date.now();
    const result = await this.env
      .execute(parsed.tool, parsed.args, this.signal)
      .catch((error: unknown): ToolResult => {
        if (this.signal?.aborted) return { observation: "The command was cancelled." };
        throw error;
      });
    const seconds = (Date.now() - began) / 1000;
    if (this.signal?.aborted)
      return { observation: result.observation, seconds, answer: null, exit: new Cancelled() };
    if (result.formatError) return this.formatError(parsed.tool, result.observation, seconds);
    this.dropFormatErrors();
    if (parsed.tool === "submit") {
      const description = this.description.observe(
        parsed.args,
        parsed.thought,
        result.submission !== undefined,
      );
      if (description !== null) this.trajectory.info.description = description;
    }
    let observation = result.observation;
    if (parsed.ignoredCalls > 0) {
      observation += `\nNote: your reply had ${parsed.ignoredCalls} more function call(s); only the first was run. Call one function per reply.`;
    }
    if (result.submission !== undefined) return this.submitted(result.submission, observation, seconds);
    // The environment ran the tool, so its name is the ACI's (an unknown name is a format error above).
    const warning = isAciToolName(parsed.tool)
      ? this.loops.observe(parsed.tool, parsed.args, { ...result, observation })
      : null;
    if (warning) observation += `\n${warning}`;
    return { observation, seconds, answer: "observation", exit: null };
  }

  private async submitted(submission: string, observation: string, seconds: number): Promise<Turn> {
    const verdict = await this.afterSubmit(submission, this.signal);
    if (verdict.kind === "not_accepted") {
      return { observation: verdict.feedback, seconds, answer: "observation", exit: null };
    }
    this.trajectory.info.submission = verdict.submission;
    const exit = new Submitted(verdict.kind === "accepted" ? "submitted" : "exit_gate");
    return { observation, seconds, answer: "observation", exit };
  }

  private formatError(tool: string | undefined, error: string, seconds: number): Turn {
    this.formatErrorsInRow++;
    const observation = renderTemplate(this.config.prompts.formatError, {
      error,
      valid_form: validForm(this.config.actionFormat, this.env.tools, tool || undefined),
    });
    const exit =
      this.formatErrorsInRow >= this.config.maxFormatErrors ? new LimitReached("exit_format") : null;
    return { observation, seconds, answer: "format_error", exit };
  }

  /** The model recovered: its malformed turns and our error messages leave the history. */
  private dropFormatErrors(): void {
    if (this.formatErrorsInRow === 0) return;
    this.formatErrorsInRow = 0;
    for (let i = this.entries.length - 1; i >= 0; i--) {
      if (this.entries[i]!.kind === "format_error") this.entries.splice(i, 1);
    }
  }

  /** Adds the turn to the history and its step to the trajectory, saves, and tells the caller. */
  private async record(response: ModelResponse, parsed: ParsedReply, turn: Turn): Promise<void> {
    if (turn.answer) {
      const text = turn.answer === "observation" ? this.nextStepText(turn.observation) : turn.observation;
      this.entries.push(...turnEntries(turn.answer, response.message, text));
    }
    const { info } = this.trajectory;
    // A gate run during this step belongs to it: the viewer shows its output at this step.
    const gateRan = info.gate.length > this.gatesRecorded;
    this.gatesRecorded = info.gate.length;
    const entry = {
      ...this.stepEntry(response, parsed, turn),
      ...(gateRan ? { gate_attempt: info.gate.length } : {}),
    };
    this.trajectory.trajectory.push(entry);
    await this.save();
    try {
      await this.options.onStep?.({ step: this.steps, maxSteps: this.config.limits.maxSteps, entry, info });
    } catch (error) {
      // Progress reporting (a status comment, say) must not end a run that is going well.
      info.on_step_error = error instanceof Error ? error.message : String(error);
    }
  }

  private nextStepText(observation: string): string {
    const state = this.env.state();
    return renderTemplate(this.config.prompts.nextStep, {
      observation,
      open_file: state.openFile ?? "n/a",
      working_dir: state.workingDir,
    });
  }

  private stepEntry(response: ModelResponse, parsed: ParsedReply, turn: Turn): TrajectoryStep {
    const state = this.env.state();
    const tool = parsed.tool ?? "";
    const args: unknown = parsed.ok ? parsed.args : null;
    const toolDef = this.env.tools.find((candidate) => candidate.name === tool);
    return {
      thought: parsed.thought,
      action: tool ? formatAction(toolDef, tool, args) : "",
      observation: turn.observation,
      response: responseText(response.message),
      execution_time: turn.seconds,
      state: { open_file: state.openFile, working_dir: state.workingDir },
      tool,
      args,
      tokens: { sent: response.usage.promptTokens, received: response.usage.completionTokens },
      message: response.message,
    };
  }

  /** Records how the loop ended; an error that is not a LoopExit is recorded and raised again. */
  private async end(error: unknown): Promise<void> {
    const { info } = this.trajectory;
    if (!(error instanceof LoopExit)) {
      if (this.signal?.aborted) return this.exitWith("exit_cancelled");
      info.error = error instanceof Error ? error.message : String(error);
      this.exitWith("exit_error");
      throw error;
    }
    if (error instanceof LimitReached && error.detail !== undefined) info.error = error.detail;
    if (error.keepsWork && info.submission === null) {
      // No paid-for work is lost: a run ended by a limit still records its diff.
      // An unreadable diff records none; the error that ended the run is what is reported.
      const diff = await this.env.diff().catch(() => "");
      if (diff.trim() !== "") info.submission = diff;
    }
    this.exitWith(error.reason);
  }

  private exitWith(reason: ExitReason): void {
    const { info } = this.trajectory;
    info.exit_status = exitStatusText(runExit(reason, info.submission));
  }

  private save(): Promise<void> {
    this.trajectory.history = this.entries.map((entry) => entry.message);
    return this.recorder.save();
  }
}
