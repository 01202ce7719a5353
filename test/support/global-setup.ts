/**
 * The e2e project's global setup (vitest.config.ts): runs once per vitest run that has an e2e or fault
 * file in it, before any file starts. It brings the built sources up to date (built-sources.ts) and
 * tells the test processes where they are, so the workers they spawn skip tsx's transform.
 */
import { BUILT_SOURCES_DIR, BUILT_SOURCES_ENV, buildSources } from "./built-sources.js";

export async function setup(): Promise<void> {
  const figures = await buildSources();
  // Inherited by the test processes, which vitest starts after this.
  process.env[BUILT_SOURCES_ENV] = BUILT_SOURCES_DIR;
  if (figures.built > 0 || figures.removed > 0)
    console.log(
      `[built-sources] ${figures.built} of ${figures.sources} files built, ${figures.removed} removed, in ${figures.ms} ms`,
    );
}
