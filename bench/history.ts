/**
 * History benchmark: replays a fixed 40-step trajectory (generated deterministically from a seed: a real
 * session's mix of file windows, searches, edits and test runs) through each history processor, and
 * reports the prompt tokens sent over the run and `prefix_reuse`: the share of each request's prompt that
 * repeats the previous request's prompt from its start (what a provider's prompt cache can serve),
 * averaged over requests 2..40. Tokens are estimated as characters / 4 (worker/model/tokens.ts) over the
 * messages as sent; the prefix is measured on the serialised messages, in characters.
 * Ends with one JSON line; the default is the processor with the fewest tokens among those with
 * prefix_reuse >= 0.7 and at least 30% fewer tokens than full history.
 */
import { readFileSync } from "node:fs";
import { parse } from "yaml";
import type { ChatMessage } from "../src/shared/contracts.js";
import {
  collapsedIndexes,
  type HistoryEntry,
  type HistoryOptions,
  processHistory,
} from "../worker/agent/history.js";
import { bundlePromptValues } from "../worker/agent/prompts.js";
import { agentConfigSchema, type HistoryProcessorName } from "../worker/config/agent.js";
import { estimatePromptTokens } from "../worker/model/tokens.js";
import { prefixReuse, serialised } from "./prefix-reuse.js";

const STEPS = 40;

function random(seed: number) {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

function codeLines(rand: () => number, count: number, from: number): string {
  const words = ["total", "items", "config", "result", "value", "index", "parser", "token", "self", "return"];
  const pick = () => words[Math.floor(rand() * words.length)]!;
  return Array.from({ length: count }, (_, i) => {
    const indent = " ".repeat(4 * Math.floor(rand() * 3));
    return `${from + i}:${indent}${pick()} = ${pick()}(${pick()}, ${pick()})  # ${pick()}`;
  }).join("\n");
}

/** The fixed trajectory: [assistant turn, observation] pairs. */
export function fixedTrajectory(): { action: ChatMessage; observation: string }[] {
  const rand = random(20241130);
  const steps: { action: ChatMessage; observation: string }[] = [];
  for (let i = 1; i <= STEPS; i++) {
    const kind = ["open", "search", "edit", "bash", "scroll"][Math.floor(rand() * 5)]!;
    let call: string;
    let observation: string;
    if (kind === "open" || kind === "scroll") {
      const start = 1 + Math.floor(rand() * 300);
      call =
        kind === "open" ? `open {"path":"src/module_${i % 7}.py","line_number":${start}}` : "scroll_down {}";
      observation = `[File: src/module_${i % 7}.py (412 lines total)]\n(${start - 1} more lines above)\n${codeLines(rand, 100, start)}\n(${312 - start} more lines below)`;
    } else if (kind === "search") {
      const files = 3 + Math.floor(rand() * 12);
      call = `search_dir {"search_term":"token_${i}"}`;
      observation = `Found ${files * 2} matches for "token_${i}" in /workspace:\n${Array.from({ length: files }, (_, k) => `/workspace/src/pkg_${k}/file_${i}.py (2 matches)`).join("\n")}\nEnd of matches for "token_${i}" in /workspace`;
    } else if (kind === "edit") {
      const start = 1 + Math.floor(rand() * 300);
      call = `edit {"start_line":${start},"end_line":${start + 2},"replacement_text":"    value = parse(token)\\n    return value"}`;
      // The ACI's compact edit feedback: the changed lines with 3 lines of context (issue 12).
      const first = start - 3;
      observation = `[File: src/module_${i % 7}.py (411 lines total)]\n(${first - 1} more lines above)\n${codeLines(rand, 8, first)}\n(${411 - first - 7} more lines below)\nFile updated: the edited lines are now ${start}-${start + 1}. Please review the changes and make sure they are correct (correct indentation, no duplicate lines, etc). Edit the file again if necessary.`;
    } else {
      const lines = 10 + Math.floor(rand() * 60);
      call = `bash {"command":"python -m pytest tests/test_${i % 5}.py -x -q"}`;
      observation = Array.from(
        { length: lines },
        (_, k) => `tests/test_${i % 5}.py::test_case_${k} ${rand() < 0.9 ? "PASSED" : "FAILED"}`,
      ).join("\n");
    }
    observation += `\n(Open file: src/module_${i % 7}.py)\n(Current directory: /workspace)`;
    const [name, args] = [call.slice(0, call.indexOf(" ")), call.slice(call.indexOf(" ") + 1)];
    const thought = `Step ${i}: given the previous output, the next thing to check is ${name} on the code around the failure.`;
    steps.push({
      action: {
        role: "assistant",
        content: thought,
        tool_calls: [{ id: `call_${i}`, type: "function", function: { name, arguments: args } }],
      },
      observation,
    });
  }
  return steps;
}

/** The file and first line of a viewer observation, to tell when a later open shows the same lines. */
function viewOf(observation: string): { file: string; first: number } | null {
  const file = /^\[File: (\S+) /.exec(observation)?.[1];
  const first = /^(\d+):/m.exec(observation)?.[1];
  return file && first ? { file, first: Number(first) } : null;
}

function simulate(options: HistoryOptions, system: string, instance: string) {
  const steps = fixedTrajectory();
  const entries: HistoryEntry[] = [
    { kind: "system", message: { role: "system", content: system } },
    { kind: "instance", message: { role: "user", content: instance } },
  ];
  let tokens = 0;
  const requests: string[] = [];
  let views = 0;
  let reopened = 0;
  for (let request = 1; request <= STEPS; request++) {
    const messages = processHistory(entries, options);
    tokens += estimatePromptTokens(messages);
    requests.push(serialised(messages));
    const step = steps[request - 1]!;
    // Re-opening: this step shows lines of a file that an earlier, now collapsed, window showed.
    const view = viewOf(step.observation);
    if (view && !step.observation.includes("File updated")) {
      views++;
      const collapsed = collapsedIndexes(entries, options);
      const again = [...collapsed].some((index) => {
        const earlier = viewOf(entries[index]!.message.content ?? "");
        return earlier?.file === view.file && Math.abs(earlier.first - view.first) < 100;
      });
      if (again) reopened++;
    }
    entries.push({ kind: "action", message: step.action });
    entries.push({
      kind: "observation",
      message: { role: "tool", tool_call_id: `call_${request}`, content: step.observation },
    });
  }
  return {
    tokens,
    prefixReuse: prefixReuse(requests),
    reopenCollapsed: views === 0 ? 0 : reopened / views,
  };
}

const defaults = agentConfigSchema.parse(
  parse(readFileSync(new URL("../config/default.yaml", import.meta.url), "utf8")).agent,
);
const { keepLast, blockSize, budgetTokens, shortOutputLines } = defaults.history;
const system = defaults.prompts.system
  .replace(
    "{{tool_docs}}",
    "open <path> [<line_number>]\n    Opens the file at the given path in the editor.\n".repeat(12),
  )
  .replace("{{action_format_instructions}}", "Call exactly one function per reply.")
  .replace("{{interface_summary}}", bundlePromptValues("aci").interface_summary)
  .replace("{{bundle_tips}}", bundlePromptValues("aci").bundle_tips);
const instance = defaults.prompts.instance
  .replace("{{repo_name}}", "acme/widgets")
  .replace("{{issue_title}}", "parse_total returns the wrong sum for empty input")
  .replace(
    "{{issue_body}}",
    "When the list is empty the function raises instead of returning 0.\n".repeat(8),
  );

const results = {} as Record<
  HistoryProcessorName,
  { tokens: number; prefixReuse: number; reopenCollapsed: number }
>;
const base = { keepLast, blockSize, budgetTokens, shortOutputLines };
for (const processor of ["full", "last_n", "block"] as const) {
  results[processor] = simulate({ ...base, processor }, system, instance);
}
const full = results.full.tokens;
console.log(
  `history benchmark: ${STEPS} requests, keepLast ${keepLast}, blockSize ${blockSize}, budgetTokens ${budgetTokens}, shortOutputLines ${shortOutputLines}, tokens = chars / 4`,
);
const line = (name: string, r: { tokens: number; prefixReuse: number; reopenCollapsed: number }) =>
  `${name.padEnd(7)} tokens ${String(r.tokens).padStart(8)}  vs full ${(r.tokens / full).toFixed(3)}  prefix_reuse ${r.prefixReuse.toFixed(3)}  reopen_collapsed ${r.reopenCollapsed.toFixed(3)}`;
for (const [name, result] of Object.entries(results)) console.log(line(name, result));
for (const size of [5, 20]) {
  const variant = simulate({ ...base, processor: "block", blockSize: size }, system, instance);
  console.log(`${line(`block/${size}`, variant)}  (for comparison)`);
}
for (const budget of [6_000, 24_000]) {
  const variant = simulate({ ...base, processor: "block", budgetTokens: budget }, system, instance);
  console.log(`${line(`budget ${budget}`, variant)}  (for comparison)`);
}
const eligible = (["last_n", "block"] as const).filter(
  (name) => results[name].prefixReuse >= 0.7 && results[name].tokens <= 0.7 * full,
);
const chosen = eligible.sort((a, b) => results[a].tokens - results[b].tokens)[0] ?? "full";
console.log(
  `default: ${chosen} (config/default.yaml agent.history.processor is ${defaults.history.processor})`,
);
console.log(
  JSON.stringify({
    tokens_full: results.full.tokens,
    tokens_last5: results.last_n.tokens,
    tokens_block: results.block.tokens,
    prefix_reuse_full: Number(results.full.prefixReuse.toFixed(4)),
    prefix_reuse_last5: Number(results.last_n.prefixReuse.toFixed(4)),
    prefix_reuse_block: Number(results.block.prefixReuse.toFixed(4)),
    reopen_collapsed_last5: Number(results.last_n.reopenCollapsed.toFixed(4)),
    reopen_collapsed_block: Number(results.block.reopenCollapsed.toFixed(4)),
    default: chosen,
  }),
);
