/**
 * A suite whose tests run one after another (they share a sandbox, a branch, a stack) while the suite
 * itself runs beside its sibling suites, which share nothing with it. vitest's `concurrent` is inherited
 * by a suite's tests, so the suite that is concurrent with its siblings holds an inner sequential one.
 */
import { describe } from "vitest";

export function describeInOrder(name: string, body: () => void): void {
  describe.concurrent(name, () => {
    describe.sequential("in order", body);
  });
}
