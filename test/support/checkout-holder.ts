/**
 * A process that makes a host checkout root as a worker's run does (marked with its id), prints its
 * path, and holds it until killed: `node --import tsx test/support/checkout-holder.ts WORK_ROOT`.
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { makeCheckoutRoot } from "../../worker/run/open/work-dirs.js";

const root = await makeCheckoutRoot(process.argv[2]);
await writeFile(join(root, "work-in-progress.txt"), "a clone would be here\n");
console.log(root);
setInterval(() => {}, 60_000);
