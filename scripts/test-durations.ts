/**
 * `npm run test:durations` rewrites test/durations.json, the file lengths the suite's order falls back
 * on when vitest has no cache of an earlier run (a fresh checkout: test/support/longest-first.ts), from
 * this machine's last runs as vitest cached them: each test file's duration in ms, files of a second or
 * more, longest first. Run it after a whole `npm test` on a quiet machine; files this machine has not
 * run keep their recorded figure.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { createVitest } from "vitest/node";

const file = fileURLToPath(new URL("../test/durations.json", import.meta.url));
const recorded: Record<string, number> = JSON.parse(readFileSync(file, "utf8"));

const vitest = await createVitest("test", { run: true, watch: false });
const specs = await vitest.globTestSpecifications();
const durations = new Map<string, number>();
let measured = 0;
for (const spec of specs) {
  const path = spec.moduleId.slice(vitest.config.root.length + 1);
  const cached = vitest.cache.getFileTestResults(`${spec.project.name}:${path}`)?.duration;
  if (cached !== undefined) measured++;
  const ms = Math.round(cached ?? recorded[path] ?? 0);
  if (ms >= 1000) durations.set(path, ms);
}
await vitest.close();
const sorted = Object.fromEntries([...durations].sort((a, b) => b[1] - a[1]));
writeFileSync(file, `${JSON.stringify(sorted, null, 2)}\n`);
console.log(
  `test/durations.json: ${durations.size} files of 1 s or more, ${measured} of ${specs.length} measured here`,
);
