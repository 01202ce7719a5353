import { describe, expect, it } from "vitest";
import type { Trajectory } from "../../../../../src/shared/contracts.js";
import { GITHUB_COM_LINKS } from "../../../../../src/shared/github/inert-links.js";
import {
  CLOSING_KEYWORDS,
  neutralise as neutraliseWith,
} from "../../../../../src/shared/github/neutralise.js";
import { renderPullRequestBody } from "../../../../../worker/github/pr-body.js";
import { renderTrajectorySummary } from "../../../../../worker/github/summary.js";
import { liveClosingReferences, liveMentions } from "../../../../support/github/live-text.js";

// GitHub's documented closing keywords, as the docs list them (not imported from the code under test).
const GITHUB_KEYWORDS = [
  "close",
  "closes",
  "closed",
  "fix",
  "fixes",
  "fixed",
  "resolve",
  "resolves",
  "resolved",
];
const neutralise = (text: string) => neutraliseWith(text, GITHUB_COM_LINKS);
const REFERENCES = ["#2", "octo/other#3", "https://github.com/octo/other/issues/4"];

describe("neutralise: the model's text reaches GitHub inert", () => {
  it("covers GitHub's whole keyword list", () => {
    expect([...CLOSING_KEYWORDS].sort()).toEqual([...GITHUB_KEYWORDS].sort());
  });

  it("defuses every closing keyword, in any case, with or without a colon, before every reference form", () => {
    for (const keyword of GITHUB_KEYWORDS) {
      for (const spelled of [keyword, keyword.toUpperCase(), keyword[0]!.toUpperCase() + keyword.slice(1)]) {
        for (const reference of REFERENCES) {
          for (const text of [
            `${spelled} ${reference}`,
            `${spelled}: ${reference}`,
            `This ${spelled}\n${reference}.`,
          ]) {
            expect(liveClosingReferences(text), text).toHaveLength(1);
            const safe = neutralise(text);
            expect(liveClosingReferences(safe), text).toEqual([]);
            // Still reads the same to a person: only invisible joiners were added.
            expect(safe.replaceAll("\u200D", "")).toBe(text);
          }
        }
      }
    }
  });

  it("defuses mentions of people and teams, also written as HTML entities, and leaves plain prose alone", () => {
    const text = "Thanks @octocat and @octo-org/core (cc `@hubot`), also &#64;monalisa and &commat;defunkt.";
    expect(liveMentions(text)).toEqual(["octocat", "octo-org"]);
    const safe = neutralise(text);
    expect(liveMentions(safe)).toEqual([]);
    expect(liveMentions(safe.replaceAll("\u200D", ""))).toEqual(
      expect.arrayContaining(["octocat", "octo-org", "monalisa", "defunkt"]),
    );
    expect(safe).not.toMatch(/&#64;|&commat;/);
    expect(safe).toContain("\\@\u200Dmonalisa"); // the entity decoded, shown as a plain `@`
    expect(neutralise("It fixes the median; 3 # 4 and issue #2 stay as they are.")).toBe(
      "It fixes the median; 3 # 4 and issue #2 stay as they are.",
    );
    expect(neutralise(neutralise(text))).toBe(safe);
    // Links keep working (the `@` percent-encoded); email addresses mention no one and stay as they are.
    const links = "See https://github.com/orgs/@octokit/people or write to dev@example.com.";
    expect(neutralise(links)).toBe(
      "See https://github.com/orgs/%40octokit/people or write to dev@example.com.",
    );
    // A URL GitHub would not autolink cannot smuggle a mention either.
    expect(liveMentions(neutralise("https://a_b.c_d/x/@octocat"))).toEqual([]);
  });
});

const HOSTILE =
  "Done. cc @octocat. Fixes #2, closes octo/textstats#3, Resolved: https://github.com/octo/x/issues/9. Fixes #1";

function trajectoryWith(thought: string): Trajectory {
  const step = {
    thought,
    action: "bash",
    observation: "@octocat fixes #5",
    response: "",
    execution_time: 0.1,
    state: { open_file: "", working_dir: "/workspace" },
    tool: "bash",
    args: { command: "echo fixes #4 @hubot" },
    tokens: { sent: 1, received: 1 },
  };
  return {
    trajectory: [step],
    history: [],
    info: {
      exit_status: "submitted",
      submission: "",
      model_stats: { tokens_sent: 1, tokens_received: 1, api_calls: 1, instance_cost: 0 },
      gate: [{ attempt: 1, passed: true, output: "", durationMs: 1 }],
      model: "replay:x",
      config_hash: "",
      tool_bundle: "",
      aci_version: "",
      sandbox_image: "",
      started_at: "2026-01-01T00:00:00Z",
      finished_at: "2026-01-01T00:01:00Z",
    },
  };
}

describe("bodies and comments built from the model's text", () => {
  it("the pull request body closes only the run's own issue, once, and mentions no one", () => {
    const body = renderPullRequestBody({
      issueNumber: 1,
      issueTitle: "An issue",
      description: HOSTILE,
      patch: "",
      testCommand: "npm test",
      baselinePassed: true,
      gateAttempts: 1,
      model: "replay:x",
      proof: { testFiles: ["tests/@octocat fixes #7.py"], failedBefore: true, passedAfter: true },
    });
    expect(liveClosingReferences(body)).toEqual(["#1"]);
    expect(liveMentions(body)).toEqual([]);
    expect(body).toContain("cc @\u200Doctocat");
  });

  it("the trajectory summary (thoughts, arguments, tool output) closes nothing and mentions no one", () => {
    const summary = renderTrajectorySummary(trajectoryWith(HOSTILE));
    expect(liveClosingReferences(summary)).toEqual([]);
    expect(liveMentions(summary)).toEqual([]);
    expect(summary).toContain("octocat");
  });
});
