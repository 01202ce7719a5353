import { describe, expect, it } from "vitest";
import { parseSetupSecrets, setupSecretsFor } from "../../../../worker/config/worker-env.js";

const bound = (repositoryId: number, installationId: number, secrets: Record<string, string>) => ({
  repositoryId,
  installationId,
  secrets,
});

describe("AGENT_FIX_SETUP_SECRETS", () => {
  it("binds each entry to a repository id and installation; name-only entries are set apart", () => {
    const config = parseSetupSecrets(
      JSON.stringify({ "octo/app": bound(11, 7, { NPM_TOKEN: "t" }), "octo/old": { NPM_TOKEN: "u" } }),
    );
    expect(config.bindings).toEqual([
      { name: "octo/app", repositoryId: 11, installationId: 7, secrets: { NPM_TOKEN: "t" } },
    ]);
    expect(config.unbound).toEqual(["octo/old"]);
  });

  it("refuses two entries bound to one repository, and keys that are no owner/repo", () => {
    const twice = { "octo/a": bound(11, 7, { A: "1" }), "octo/b": bound(11, 7, { B: "2" }) };
    expect(() => parseSetupSecrets(JSON.stringify(twice))).toThrow(
      /binds octo\/a and octo\/b to the same repository \(id 11, installation 7\)/,
    );
    expect(() => parseSetupSecrets(JSON.stringify({ app: bound(11, 7, {}) }))).toThrow(/not valid/);
    expect(() => parseSetupSecrets(JSON.stringify({ "octo/app": { repositoryId: "11" } }))).toThrow(
      /not valid/,
    );
  });

  it("gives a run the secrets of its repository's id and installation only, whatever it is named", () => {
    const { bindings } = parseSetupSecrets(JSON.stringify({ "octo/app": bound(11, 7, { NPM_TOKEN: "t" }) }));
    const warnings: string[] = [];
    const warn = (message: string) => void warnings.push(message);
    expect(setupSecretsFor(bindings, { id: 11, installationId: 7 }, "octo/app", warn)).toEqual({
      NPM_TOKEN: "t",
    });
    expect(warnings).toEqual([]);
    // Another repository under the name (deleted and re-created): nothing, nothing to say.
    expect(setupSecretsFor(bindings, { id: 12, installationId: 7 }, "octo/app", warn)).toEqual({});
    expect(warnings).toEqual([]);
    // The same repository transferred (or the app reinstalled): nothing, and the operator is told.
    expect(setupSecretsFor(bindings, { id: 11, installationId: 8 }, "else/app", warn)).toEqual({});
    expect(warnings.pop()).toContain(
      "bound to installation 7, and repository 11 (else/app) is now in installation 8",
    );
    // Renamed in place: the secrets follow the id; the stale name is logged.
    expect(setupSecretsFor(bindings, { id: 11, installationId: 7 }, "octo/app2", warn)).toEqual({
      NPM_TOKEN: "t",
    });
    expect(warnings.pop()).toContain("now named octo/app2");
  });
});
