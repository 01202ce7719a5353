/**
 * The agent loop, in the manner of mini-swe-agent: ask the model, run its one action in the ACI, show the
 * observation, until it submits or a limit ends the run. Limits are checked before each model call; a
 * failed command is an observation like any other; the trajectory is saved after every step and in a
 * `finally`, so whatever happens the file says what was done.
 */
import { createHash } from "node:crypto";
import type {
  AssistantMessage,
  ChatMessage,
  Environment,
  ExitStatus,
  Gate,
  Model,
  ModelResponse,
  ToolResult,
  Trajectory,
  TrajectoryInfo,
  TrajectoryStep,
} from "../../src/contracts.js";
import { ModelError } from "../../src/errors.js";
import type { AgentConfig } from "../config/agent.js";
import { estimatePromptTokens } from "../model/tokens.js";
import { formatAction } from "./arguments.js";
import { functionSpecs, openingEntries, responseText, reviewText, turnEntries } from "./conversation.js";
import { processHistory } from "./history.js";
import { LoopWatcher } from "./loops.js";
import { parseReply, validForm } from "./parse.js";
import { cutMiddle, renderTemplate } from "./prompts.js";
import { detectTestCommand } from "./test-command.js";
import { TrajectoryRecorder } from "./trajectory.js";

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
  testCommand?: string;
  /** Runs the repository's tests on a submission; a failure goes back to the model (config.gate.maxAttempts). */
  gate?: Gate;
  signal?: AbortSignal;
  /** Where the trajectory is saved after every step; none = kept in memory only. */
  trajectoryPath?: string;
  /** Called after each step is saved; an error it throws is recorded in info.on_step_error, not raised. */
  onStep?: (event: AgentStepEvent) => void | Promise<void>;
  /** Recorded in info, so a result is attributable to the environment that produced it. */
  sandboxImage?: string;
  /** Hash of the whole configuration; default: a hash of `config`. */
  configHash?: string;
  /** Extra facts for info (e.g. the price table's date). */
  info?: Record<string, unknown>;
}

type Outcome = { status: ExitStatus; keepDiff: boolean; error?: string };

export async function runAgent(options: RunAgentOptions): Promise<Trajectory> {
  const { model, environment: env, config, signal } = options;
  const format = config.actionFormat;
  const tools = env.tools;
  const specs = format === "function_calling" ? functionSpecs(env, config) : [];
  const startedAt = Date.now();
  const info: TrajectoryInfo = {
    exit_status: null,
    submission: null,
    model_stats: { tokens_sent: 0, tokens_received: 0, api_calls: 0, instance_cost: 0 },
    gate: [],
    model: model.name,
    config_hash: options.configHash ?? hashOf(config),
    tool_bundle: env.bundle,
    aci_version: env.version,
    sandbox_image: options.sandboxImage ?? "unknown",
    started_at: new Date(startedAt).toISOString(),
    finished_at: null,
    action_format: format,
    history_processor: config.history.processor,
    ...(model.costNote ? { cost_note: model.costNote } : {}),
    ...options.info,
  };
  const trajectory: Trajectory = { trajectory: [], history: [], info };
  const recorder = new TrajectoryRecorder(trajectory, options.trajectoryPath);
  const loops = new LoopWatcher(config.loopWarnings);

  const tests = options.testCommand
    ? ({ command: options.testCommand, from: "config" } as const)
    : await detectTestCommand(env, signal).then((command) =>
        command ? ({ command, from: "repository" } as const) : null,
      );
  const entries = openingEntries(config, env, options.issue, options.repoName, tests);
  const syncHistory = () => {
    trajectory.history = entries.map((entry) => entry.message);
  };

  let formatErrorsInRow = 0;
  let reviewed = !config.reviewOnSubmit;
  let step = 0;

  /** Records one model call's step, saves, and tells the caller. */
  const record = async (entry: TrajectoryStep) => {
    trajectory.trajectory.push(entry);
    syncHistory();
    await recorder.save();
    try {
      await options.onStep?.({ step, maxSteps: config.limits.maxSteps, entry, info });
    } catch (error) {
      // Progress reporting (a status comment, say) must not end a run that is going well.
      info.on_step_error = error instanceof Error ? error.message : String(error);
    }
  };

  const pushTurn = (kind: "observation" | "format_error", reply: AssistantMessage, text: string) => {
    entries.push(...turnEntries(kind, reply, text));
  };

  const observationText = (observation: string) => {
    const state = env.state();
    return renderTemplate(config.prompts.nextStep, {
      observation,
      open_file: state.openFile ?? "n/a",
      working_dir: state.workingDir,
    });
  };

  const stepRecord = (
    response: ModelResponse,
    fields: { thought: string; tool: string; args: unknown; observation: string; seconds: number },
  ): TrajectoryStep => {
    const state = env.state();
    const toolDef = tools.find((tool) => tool.name === fields.tool);
    return {
      thought: fields.thought,
      action: fields.tool ? formatAction(toolDef, fields.tool, fields.args) : "",
      observation: fields.observation,
      response: responseText(response.message),
      execution_time: fields.seconds,
      state: { open_file: state.openFile, working_dir: state.workingDir },
      tool: fields.tool,
      args: fields.args,
      tokens: { sent: response.usage.promptTokens, received: response.usage.completionTokens },
    };
  };

  const finish = async (outcome: Outcome) => {
    info.exit_status = outcome.status;
    if (outcome.error) info.error = outcome.error;
    if (outcome.keepDiff && info.submission === null) {
      // No paid-for work is lost: a run ended by a limit still records its diff.
      const diff = await env.diff().catch(() => "");
      if (diff.trim() !== "") {
        info.submission = diff;
        info.exit_status = `submitted (${outcome.status})`;
      }
    }
  };

  const checkLimits = (messages: ChatMessage[]): ExitStatus | null => {
    const { limits } = config;
    if (step >= limits.maxSteps) return "exit_step_limit";
    if (info.model_stats.instance_cost >= limits.maxCostUsd) return "exit_cost";
    if (Date.now() - startedAt >= limits.maxWallTimeSeconds * 1000) return "exit_time";
    if (estimatePromptTokens(messages, specs) > limits.maxContextTokens) return "exit_context";
    return null;
  };

  try {
    for (;;) {
      if (signal?.aborted) return await done({ status: "exit_cancelled", keepDiff: false });
      const messages = processHistory(entries, { ...config.history, testCommand: tests?.command });
      const limit = checkLimits(messages);
      if (limit) return await done({ status: limit, keepDiff: true });

      let response: ModelResponse;
      try {
        response = await model.query(messages, specs, signal);
      } catch (error) {
        if (signal?.aborted) return await done({ status: "exit_cancelled", keepDiff: false });
        if (error instanceof ModelError) {
          const status = error.code === "replay_exhausted" ? "exit_replay_exhausted" : "exit_api";
          return await done({ status, keepDiff: true, error: error.message });
        }
        throw error;
      }
      step++;
      const stats = info.model_stats;
      stats.api_calls++;
      stats.tokens_sent += response.usage.promptTokens;
      stats.tokens_received += response.usage.completionTokens;
      stats.instance_cost += response.costUsd;

      const parsed = parseReply(response.message, tools, format);
      const tool = parsed.tool ?? "";
      const args: unknown = parsed.ok ? parsed.args : null;
      let observation: string;
      let formatError: string | null = parsed.ok ? null : parsed.error;
      let seconds = 0;
      let submission: string | undefined;

      if (parsed.ok && tool === "submit" && !reviewed) {
        reviewed = true;
        const diff = await env.diff();
        observation = reviewText(config, diff);
      } else if (parsed.ok) {
        const began = Date.now();
        const result = await env.execute(tool, parsed.args, signal).catch((error: unknown): ToolResult => {
          if (signal?.aborted) return { observation: "The command was cancelled.", formatError: false };
          throw error;
        });
        seconds = (Date.now() - began) / 1000;
        if (signal?.aborted) {
          await record(
            stepRecord(response, {
              thought: parsed.thought,
              tool,
              args,
              observation: result.observation,
              seconds,
            }),
          );
          return await done({ status: "exit_cancelled", keepDiff: false });
        }
        observation = result.observation;
        if (result.formatError) formatError = result.observation;
        submission = result.submission;
        if (parsed.ignoredCalls > 0 && !result.formatError) {
          observation += `\nNote: your reply had ${parsed.ignoredCalls} more function call(s); only the first was run. Call one function per reply.`;
        }
      } else {
        observation = "";
      }

      if (formatError !== null) {
        formatErrorsInRow++;
        const message = renderTemplate(config.prompts.formatError, {
          error: formatError,
          valid_form: validForm(format, tools, tool || undefined),
        });
        pushTurn("format_error", response.message, message);
        await record(
          stepRecord(response, { thought: parsed.thought, tool, args, observation: message, seconds }),
        );
        if (formatErrorsInRow >= config.maxFormatErrors)
          return await done({ status: "exit_format", keepDiff: true });
        continue;
      }
      if (formatErrorsInRow > 0) {
        // The model recovered: its malformed turns and our error messages leave the history.
        formatErrorsInRow = 0;
        for (let i = entries.length - 1; i >= 0; i--)
          if (entries[i]!.kind === "format_error") entries.splice(i, 1);
      }

      if (submission !== undefined) {
        info.submission = submission;
        const gateResult = options.gate && submission.trim() !== "" ? await runGate(submission) : null;
        // The gate's own account of the change (computed outside the agent's reach) is the one recorded.
        if (gateResult?.submission !== undefined) info.submission = gateResult.submission;
        if (!gateResult || gateResult.passed) {
          pushTurn("observation", response.message, observationText(observation));
          await record(stepRecord(response, { thought: parsed.thought, tool, args, observation, seconds }));
          return await done({ status: "submitted", keepDiff: false });
        }
        const attempt = info.gate.length;
        if (attempt >= config.gate.maxAttempts) {
          pushTurn("observation", response.message, observationText(observation));
          await record(stepRecord(response, { thought: parsed.thought, tool, args, observation, seconds }));
          return await done({ status: "submitted (exit_gate)", keepDiff: false });
        }
        info.submission = null;
        observation = renderTemplate(config.prompts.gateFailed, {
          output: cutMiddle(gateResult.output, config.gate.outputMaxChars),
          attempt,
          max_attempts: config.gate.maxAttempts,
        });
      } else {
        const warning = loops.observe(tool, args, observation);
        if (warning) observation += `\n${warning}`;
      }
      pushTurn("observation", response.message, observationText(observation));
      await record(stepRecord(response, { thought: parsed.thought, tool, args, observation, seconds }));
    }
  } catch (error) {
    if (signal?.aborted) {
      info.exit_status = "exit_cancelled";
    } else {
      info.exit_status = "exit_error";
      info.error = error instanceof Error ? error.message : String(error);
      throw error;
    }
    return trajectory;
  } finally {
    info.finished_at ??= new Date().toISOString();
    syncHistory();
    await recorder.save();
  }

  async function runGate(patch: string) {
    const began = Date.now();
    const result = await options.gate!(patch, signal);
    info.gate.push({
      attempt: info.gate.length + 1,
      passed: result.passed,
      output: cutMiddle(result.output, 20_000),
      durationMs: Date.now() - began,
    });
    return result;
  }

  async function done(outcome: Outcome): Promise<Trajectory> {
    await finish(outcome);
    info.finished_at = new Date().toISOString();
    return trajectory;
  }
}

function hashOf(value: unknown): string {
  return createHash("sha256").update(JSON.stringify(value)).digest("hex").slice(0, 16);
}
