/**
 * `npm run bench:load`: issue 15's load fault at full size. 50 issues labelled at once across 5
 * installations (the fifth, small, labelled last), two worker processes of concurrency 2, the
 * operator's 2 runs at once per installation; prints wall time, each worker's peak memory, the most
 * runs of one installation seen at once, and where the small installation's run started.
 */
import { runLoad } from "../test/faults/load-scenario.js";

const plan = { issues: [12, 12, 12, 12, 2], workers: 2, concurrency: 2, runsAtOnce: 2 };
const figures = await runLoad(plan);
const total = plan.issues.reduce((a, b) => a + b, 0);
console.log(
  `issues labelled:            ${total} over ${plan.issues.length} installations (${plan.issues.join(", ")})`,
);
console.log(
  `workers:                    ${plan.workers} processes x concurrency ${plan.concurrency}; ${plan.runsAtOnce} runs at once per installation`,
);
console.log(`wall time:                  ${(figures.wallMs / 1000).toFixed(1)} s`);
console.log(
  `runs / pull requests:       ${figures.runs} / ${figures.pullRequests} (not done: ${figures.notDone})`,
);
console.log(`most at once per install.:  ${JSON.stringify(figures.maxAtOnce)}`);
console.log(`small installation started: #${figures.smallStartIndex + 1} of ${figures.runs}`);
console.log(`worker peak memory (MiB):   ${figures.workerPeakMiB.join(", ")}`);
const held = Object.values(figures.maxAtOnce).every((most) => most <= plan.runsAtOnce);
if (figures.notDone > 0 || figures.runs !== total || figures.pullRequests !== total || !held)
  process.exitCode = 1;
