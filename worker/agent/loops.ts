/**
 * Warnings for an agent going round in circles: the same action several times in a row, a rejected edit
 * sent again unchanged, or many scrolls in a row. The warning is appended to the observation.
 */
const EDIT_TOOLS = new Set(["edit", "str_replace", "insert", "create"]);
const SCROLL_TOOLS = new Set(["scroll_up", "scroll_down"]);

/** The ACI's wording for an edit that was not written. */
function editWasRejected(observation: string): boolean {
  return /have NOT been applied|not applied|No replacement was performed|did not appear|matched \d+ times/i.test(
    observation,
  );
}

export class LoopWatcher {
  private lastKey = "";
  private repeats = 0;
  private scrolls = 0;
  private readonly rejectedEdits = new Set<string>();

  constructor(private readonly limits: { repeatedAction: number; scrolls: number }) {}

  /** Call after each executed action; returns the warning to append, or null. */
  observe(tool: string, args: unknown, observation: string): string | null {
    const key = `${tool} ${JSON.stringify(args)}`;
    this.repeats = key === this.lastKey ? this.repeats + 1 : 1;
    this.lastKey = key;
    this.scrolls = SCROLL_TOOLS.has(tool) ? this.scrolls + 1 : 0;

    const warnings: string[] = [];
    if (EDIT_TOOLS.has(tool)) {
      const rejected = editWasRejected(observation);
      if (rejected && this.rejectedEdits.has(key)) {
        warnings.push(
          "WARNING: you sent this exact edit before and it was rejected for the same reason. Resending it will not work: read the error above, check the line numbers and indentation in the current window, and change the edit.",
        );
      }
      if (rejected) this.rejectedEdits.add(key);
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
