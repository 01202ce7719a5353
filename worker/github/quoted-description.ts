import type { Trajectory } from "../../src/shared/contracts.js";
import type { LinkPolicy } from "../../src/shared/github/inert-links.js";
import { neutralise } from "../../src/shared/github/neutralise.js";

/**
 * The model's description of its change as a reply quotes it: a blank line and the text as a blockquote,
 * made inert (no live mentions, keywords or links); nothing when the model gave none. Only what it was
 * asked for as the description is published, never a thought it was not told would be.
 */
export function quotedDescription(trajectory: Trajectory, links: LinkPolicy): string[] {
  const account = neutralise(trajectory.info.description?.trim() ?? "", links);
  if (!account) return [];
  return [
    "",
    account
      .split("\n")
      .map((line) => `> ${line}`)
      .join("\n"),
  ];
}
