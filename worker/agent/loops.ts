/**
 * Warnings for an agent going round in circles: the same action several times in a row, a refused edit
 * sent again unchanged, or many scrolls in a row. The warning is appended to the observation. Whether an
 * edit was written is the tool result's `edited` field, not a reading of its text.
 */
import type { ToolResult } from "../../src/shared/contracts.js";
import { withEditOutcome } from "../aci/edit-outcome.js";
import type { AciToolName } from "../aci/tool-names.js";

const SCROLL_TOOLS: ReadonlySet<AciToolName> = new Set(["scroll_up", "scroll_down"]);

export class LoopWatcher {
  private lastKey = "";
  private repeats = 0;
  private scrolls = 0;
  private readonly rejectedEdits = new Set<string>();

  constructor(private readonly limits: { repeatedAction: number; scrolls: number }) {}

  /**
   * Call after each executed action with its result; returns the warning to append, or null. A bare
   * observation is taken as the ACI would have reported it.
   */
  observe(tool: AciToolName, args: unknown, result: ToolResult | string): string | null {
    const { edited } = typeof result === "string" ? withEditOutcome(tool, { observation: result }) : result;
    const key = `${tool} ${JSON.stringify(args)}`;
    this.repeats = key === this.lastKey ? this.repeats + 1 : 1;
    this.lastKey = key;
    this.scrolls = SCROLL_TOOLS.has(tool) ? this.scrolls + 1 : 0;

    const warnings: string[] = [];
    if (edited === false) {
      if (this.rejectedEdits.has(key)) {
        warnings.push(
          "WARNING: you sent this exact edit before and it was rejected for the same reason. Resending it will not work: read the error above, check the current lines of the file and their indentation, and change the edit.",
        );
      }
      this.rejectedEdits.add(key);
    }
    if (this.repeats >= this.limits.repeatedAction && warnings.length === 0) {
      warnings.push(
        `WARNING: you have run this same action ${this.repeats} times in a row. Repeating it will not give a different result: try a different approach (another file, a search, or a different command).`,
      );
    }
    if (this.scrolls >= this.limits.scrolls) {
      warnings.push(
        `WARNING: you have scrolled ${this.scrolls} times in a row. To reach a known line use goto <line_number>; to find text use search_file <search_term>.`,
      );
    }
    return warnings.length ? warnings.join("\n") : null;
  }
}
