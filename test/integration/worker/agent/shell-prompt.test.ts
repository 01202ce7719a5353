/**
 * The shell bundle (bash and submit only, the paper's "no ACI" ablation) must not describe tools it
 * lacks: the prompts the model receives name bash and submit and no tool of the other bundles.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Sandbox } from "../../../../src/shared/contracts.js";
import { modelConfigSchema } from "../../../../worker/config/model.js";
import { createOpenAIClient, OpenAIModel } from "../../../../worker/model/openai.js";
import { message, type OpenAIStandIn, startOpenAIStandIn } from "../../../support/openai-server.js";
import { runEpisode, startEnvironment } from "./harness.js";

const sandboxes: Sandbox[] = [];
let server: OpenAIStandIn;
/** Every tool of the aci and editor bundles that the shell bundle does not have. */
let otherTools: string[];

beforeAll(async () => {
  server = await startOpenAIStandIn();
  const names = new Set<string>();
  for (const bundle of ["aci", "editor"]) {
    const { sandbox, environment } = await startEnvironment({ bundle });
    sandboxes.push(sandbox);
    for (const tool of environment.tools) names.add(tool.name);
  }
  otherTools = [...names].filter((name) => name !== "bash" && name !== "submit");
});
afterAll(async () => {
  await server.close();
  await Promise.all(sandboxes.splice(0).map((sandbox) => sandbox.dispose()));
});

function model() {
  const config = modelConfigSchema.parse({
    baseUrl: server.url,
    prices: { asOf: "2025-08-15", models: { "gpt-test": { input: 2, cachedInput: 0.5, output: 8 } } },
    retry: { maxRetries: 0 },
  });
  return new OpenAIModel({ client: createOpenAIClient(config, {}), model: "gpt-test", config });
}

/** The system and instance messages of the first request, as text. */
function openingText(): string {
  const messages = server.requests[0]!.body.messages as { role: string; content: string }[];
  return messages
    .filter((entry) => entry.role === "system" || entry.role === "user")
    .map((entry) => entry.content)
    .join("\n");
}

function expectOnlyShellTools(text: string): void {
  expect(otherTools.length).toBeGreaterThan(10);
  const named = otherTools.filter((name) => new RegExp(`\\b${name}\\b`).test(text));
  expect(named).toEqual([]);
  expect(text).not.toMatch(/file viewer|file editor|search commands|edit command/i);
  expect(text).toMatch(/\bbash\b/);
  expect(text).toMatch(/\bsubmit\b/);
}

describe("the shell bundle's prompts", () => {
  it("function calling: the tools sent and the prompt name only bash and submit", async () => {
    server.requests.length = 0;
    server.enqueue(message(null, { name: "submit", arguments: {} }));
    await runEpisode({ model: model(), aci: { bundle: "shell" }, cleanup: sandboxes });
    const tools = server.requests[0]!.body.tools as { function: { name: string } }[];
    expect(tools.map((tool) => tool.function.name)).toEqual(["bash", "submit"]);
    expectOnlyShellTools(openingText());
  });

  it("thought_action: the command docs and the prompt name only bash and submit", async () => {
    server.requests.length = 0;
    server.enqueue(message("```\nsubmit\n```"));
    await runEpisode({
      model: model(),
      aci: { bundle: "shell" },
      agent: { actionFormat: "thought_action" },
      cleanup: sandboxes,
    });
    expect(server.requests[0]!.body.tools).toBeUndefined();
    expectOnlyShellTools(openingText());
  });
});
